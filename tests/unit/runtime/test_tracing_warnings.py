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
