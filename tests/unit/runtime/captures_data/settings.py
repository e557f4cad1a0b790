"""A user module whose attributes a staged function reads (tests/unit/runtime/test_captures.py)."""

import numpy as np

SCALE = 2.0
OFFSET = np.zeros(2)
