"""Warnings autostage emits are attributed to the user's line (``tracing.user_stacklevel``):
the line that called the staged function, however many autostage frames lie between."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from autostage.runtime.function import RetracingWarning

import autostage

TARGETS = ["interpreter", "cpu"]


def scale(x, k):
    return x * k


@pytest.mark.parametrize("target", TARGETS)
def test_retracing_warning_points_at_the_call(target):
    f = autostage.convert(scale, target=target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(8):
            f(np.ones(2), k)  # the call line
    retraces = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert retraces, [str(w.message) for w in caught]
    line = inspect.currentframe().f_lineno - 3
    assert (retraces[0].filename, retraces[0].lineno) == (__file__, line)


def test_a_retrace_for_a_big_endian_array_names_its_native_type():
    """(astropy's sigma_clip tests: formatting the warning raised TypeError for `>f8`.)"""
    f = autostage.convert(scale, target="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for dtype in ("f8", "f4", "i8", "i4", "i2"):
            f(np.arange(3).astype(dtype), 2)
        out = f(np.arange(3).astype(">f8"), 2)
    assert out.tolist() == [0.0, 2.0, 4.0]
    assert any("changed from i16[?] to f64[?]" in str(w.message) for w in caught)
