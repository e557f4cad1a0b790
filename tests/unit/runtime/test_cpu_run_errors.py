"""Run-time errors of staged code on every target: NumPy's/Python's exception type, the operand
sizes in the message, and a note naming the op and the user's file and line
(``runtime/backends/cpu/run_errors.py``; the interpreter's notes are the reference)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autostage
from autostage import config

TARGETS = ["interpreter", "cpu"]


@pytest.fixture(autouse=True)
def _sizes_unknown():
    """Errors of compiled code at run time: with sizes the trace knows (``static_sizes``), the
    same errors are found while tracing (``test_the_message_is_numpys_or_pythons`` checks both)."""
    with config.STATIC_SIZES.override(0):
        yield


def _line(fn, text: str) -> str:
    """``file:line`` of the first line of ``fn`` containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def _raises(fn, args, kind, *words):
    with pytest.raises(kind) as info:
        fn(*args)
    message = str(info.value)
    notes = "\n".join(getattr(info.value, "__notes__", ()))
    for word in words:
        assert word in message, (word, message)
    assert type(info.value) is kind, type(info.value)
    return message, notes


def matmul(a, b):
    return a @ b


def dot(a, b):
    return np.dot(a, b)


def add(a, b):
    return a + b


def where(c, a, b):
    return np.where(c, a, b)


def chain(a, b):
    return np.tanh(a * 2.0 + b) - 1.0  # fused element-wise chain


def concat(a, b):
    return np.concatenate([a, b], axis=1)


def index(a, i):
    return a[i]


def fancy(a, i):
    return a[i]


def chain3(a, b, c):
    return np.tanh(a * b + c)


def raises(a):
    if a.sum() > 0:
        raise KeyError("positive sum")
    return a


def raises_after_a_product(a):
    p = a @ a  # a helper function in the generated module, before the raising function
    if p > 0:
        raise KeyError("positive product")
    return a


def asserts(a):
    assert a.sum() < 0, "must be negative"
    return a


def divides(a):
    n = a.shape[0]
    return a * (n // (n - 3))


def unnamed(a):
    if a.sum() > 0:
        return a * name_that_does_not_exist  # noqa: F821 - the point of the test
    return a


CASES = [
    (matmul, (np.ones((2, 3)), np.ones((4, 5))), ValueError, "a @ b",
     ["matmul", "core dimension 0", "size 4 is different from 3"]),
    (matmul, (np.ones(3), np.ones((4, 2))), ValueError, "a @ b",
     ["matmul", "size 4 is different from 3"]),
    (dot, (np.ones((2, 3)), np.ones((4, 5))), ValueError, "np.dot",
     ["shapes (2,3) and (4,5) not aligned: 3 (dim 1) != 4 (dim 0)"]),
    (add, (np.ones(3), np.ones(4)), ValueError, "a + b",
     ["operands could not be broadcast together with shapes (3,) (4,)"]),
    (add, (np.ones((2, 3)), np.ones((5, 1))), ValueError, "a + b",
     ["could not be broadcast", "(2,3)", "(5,1)"]),
    (where, (np.ones(3, bool), np.ones(3), np.ones(2)), ValueError, "np.where",
     ["could not be broadcast", "(3,)", "(2,)"]),
    (chain, (np.ones(3), np.ones(4)), ValueError, "np.tanh",
     ["could not be broadcast", "(3,)", "(4,)"]),
    (chain3, (np.ones(1), np.ones(3), np.ones(4)), ValueError, "np.tanh",
     ["could not be broadcast together with shapes", "(3,)", "(4,)"]),
    (chain3, (np.ones(3), np.ones(1), np.ones(0)), ValueError, "np.tanh",
     ["could not be broadcast together with shapes", "(3,)", "(0,)"]),
    (chain3, (np.ones((2, 1)), np.ones((1, 3)), np.ones((2, 2))), ValueError, "np.tanh",
     ["could not be broadcast together with shapes", "(2,2)"]),
    (concat, (np.ones((2, 3)), np.ones((3, 3))), ValueError, "np.concatenate",
     ["along dimension 0", "index 0 has size 2", "index 1 has size 3"]),
    (index, (np.ones(3), np.int64(5)), IndexError, "a[i]",
     ["index 5 is out of bounds for axis 0 with size 3"]),
    (index, (np.ones(3), np.int64(-4)), IndexError, "a[i]",
     ["index -4 is out of bounds for axis 0 with size 3"]),
    (fancy, (np.ones(3), np.array([0, 7])), IndexError, "a[i]",
     ["index 7 is out of bounds for axis 0 with size 3"]),
    (raises, (np.ones(3),), KeyError, "raise KeyError", ["positive sum"]),
    (raises_after_a_product, (np.ones(3),), KeyError, "raise KeyError", ["positive product"]),
    (asserts, (np.ones(3),), AssertionError, "assert a.sum", ["must be negative"]),
    (divides, (np.ones(3),), ZeroDivisionError, "n //", ["division or modulo by zero"]),
    (unnamed, (np.ones(3),), NameError, "name_that", ["name_that_does_not_exist"]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args,kind,at,words", CASES,
                         ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_run_time_error_names_the_users_line_and_sizes(target, fn, args, kind, at, words):
    staged = autostage.convert(fn, target=target)
    _, notes = _raises(staged, args, kind, *words)
    assert f"at {_line(fn, at)} (in {fn.__name__})" in notes, notes
    assert "error in `" in notes


@pytest.mark.parametrize("sizes", [0, 16])
@pytest.mark.parametrize("target", TARGETS)
def test_the_message_is_numpys_or_pythons(target, sizes):
    """The whole message equals what NumPy itself says for the same operands, found at run
    time or (sizes known to the trace) while tracing."""
    cases = [(matmul, (np.ones((2, 3)), np.ones((4, 5)))),
             (add, (np.ones(3), np.ones(4))),
             (concat, (np.ones((2, 3)), np.ones((3, 3)))),
             (index, (np.ones(3), np.int64(5)))]
    for fn, args in cases:
        with pytest.raises(Exception) as expected:
            fn(*args)
        with config.STATIC_SIZES.override(sizes), pytest.raises(type(expected.value)) as got:
            autostage.convert(fn, target=target)(*args)
        assert str(got.value) == str(expected.value)


def test_no_numba_paths_in_messages():
    """Numba's own broadcasting error names its file; the cpu target must not show that."""
    with pytest.raises(ValueError) as info:
        autostage.convert(add, target="cpu")(np.ones((2, 3)), np.ones((3, 3)))
    assert "numba" not in str(info.value) and ".py" not in str(info.value)


def test_errors_after_many_raises_stay_correct():
    """The message is formatted per raise from the run-time sizes (no stale text)."""
    staged = autostage.convert(index, target="cpu")
    for i in (3, 4, 9):
        with pytest.raises(IndexError, match=f"index {i} is out of bounds for axis 0 with size 3"):
            staged(np.ones(3), np.int64(i))
    assert staged(np.arange(3.0), np.int64(2)) == 2.0
