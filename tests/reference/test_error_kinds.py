"""The leak classifier the fuzzer and reference suites use (``error_kinds.py``), on known
refusals, Python's exceptions and known leaks, and on real staged errors of both targets."""

from __future__ import annotations

import error_kinds
import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu.compile import CpuCompileError
from autostage.runtime.interpreter import TypeRuleMismatchError
from autostage.runtime.tensor import StagingTypeError

import autostage

USER = "/home/u/model.py"


@pytest.mark.parametrize("exc,kind", [
    (StagingTypeError("x is f32 in one branch at /home/u/model.py:12"), "refused"),
    (ValueError("operands could not be broadcast together with shapes (3,) (4,) "), "python"),
    (ZeroDivisionError("division by zero"), "python"),
    (StagingTypeError("x is f32 in one branch"), "leak"),  # names no user line
    (numba.core.errors.TypingError("No implementation of function"), "leak"),
    (CpuCompileError("could not compile `add` at /home/u/model.py:3; this is a bug in "
                     "autostage"), "leak"),
    (TypeRuleMismatchError("op 'add' computed a float64 value"), "leak"),
    (ValueError('unable to broadcast argument 1 to output array\nFile "/x/site-packages/'
                'numba/np/npyimpl.py", line 373, '), "leak"),
    (IndexError('in /c/cpu_py311/stage_0123456789abcdef0123.py'), "leak"),
])
def test_classify(exc, kind):
    assert error_kinds.classify(exc, USER)[0] == kind


def broadcast(a, b):
    return a + b


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_staged_run_time_errors_are_not_leaks(target):
    with pytest.raises(ValueError) as info:
        autostage.convert(broadcast, target=target)(np.ones((2, 3)), np.ones((3, 3)))
    assert error_kinds.assert_no_leak(info.value, __file__) == "python"


def test_assert_no_leak_fails_on_a_leak():
    with pytest.raises(AssertionError, match="leaked out of autostage"):
        error_kinds.assert_no_leak(numba.core.errors.TypingError("raw"), USER, "prog")
