"""Cases for calls that already staged before the surface list (kept as the format's example)."""

import numpy as np
from surface_harness import cases


def sum_axis0(x):
    return np.sum(x, axis=0)


CASES = cases("np.sum", sum_axis0, (np.arange(6.0).reshape(2, 3),),
              (np.arange(6, dtype=np.int32).reshape(3, 2),), (np.ones(4, np.float32),))
