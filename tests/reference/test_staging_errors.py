"""Staging errors: code that cannot be staged raises a clear error naming the variable and the
user's file:line (DESIGN: "a converted or staged function gives the same result as the plain
Python function, or raises a clear error that names the user's file, line and variable").

Every program below runs fine (or fails differently) in plain Python for some inputs; staged, the
result would depend on data the trace cannot see, so staging must refuse. Expected lines are
computed from the source with ``inspect.getsourcelines``, never written as numbers. Where two
lines are equally the user's line (the statement that defines a variable on one path only, and
the statement that reads it afterwards), either is accepted; the variable name must be exact
(quoted, as ``'y'``).
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import autostage


def _errors():
    from autostage.runtime import tracing
    from autostage.runtime.staging import errors

    return tracing, errors


def _line(fn, text: str) -> int:
    """The line number of the one line of ``fn``'s source that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    hits = [start + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, f"{text!r} occurs {len(hits)} times in {fn.__name__}"
    return hits[0]


def _where(fn, *texts: str) -> list[str]:
    filename = os.path.basename(inspect.getsourcefile(fn))
    return [f"{filename}:{_line(fn, t)}" for t in texts]


def _stage_and_call(fn, *args):
    return autostage.convert(fn, target="interpreter")(*args)


def _check_message(exc: BaseException, name: str | None, places: list[str]) -> None:
    message = str(exc)
    if name is not None:
        assert f"'{name}'" in message, f"the message does not name variable {name!r}: {message}"
    assert any(p in message for p in places), (
        f"the message names none of the user's lines {places}: {message}")


# ---------------------------------------------------------------------------------------------
# A variable defined on one path only and used after


def defined_in_one_branch(x):
    if x > 0:
        y = x * 2
    return y


def defined_in_if_elif(x):
    if x > 0:
        label = np.int64(1)
    elif x < 0:
        label = np.int64(-1)
    return label


def defined_in_loop_body_only(x):
    for i in range(x.shape[0]):
        last = x[i] * 2
    return last


def defined_before_break_only(x):
    for v in x:
        if v > 2:
            hit = v
            break
    return hit


@pytest.mark.parametrize("fn, name, args, lines", [
    (defined_in_one_branch, "y", (np.float64(1.0),), ("y = x * 2", "return y", "if x > 0:")),
    (defined_in_if_elif, "label", (np.float64(1.0),),
     ("label = np.int64(-1)", "return label", "if x > 0:", "elif x < 0:")),
    (defined_in_loop_body_only, "last", (np.array([1.0, 2.0]),),
     ("last = x[i] * 2", "return last", "for i in range(x.shape[0]):")),
    (defined_before_break_only, "hit", (np.array([1.0, 3.0]),),
     ("hit = v", "return hit", "for v in x:", "if v > 2:")),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_variable_defined_on_one_path_only(fn, name, args, lines):
    _, errors = _errors()
    fn(*args)  # plain Python succeeds for these inputs: the path that defines it is taken
    with pytest.raises(errors.StagingUnboundError) as info:
        _stage_and_call(fn, *args)
    assert isinstance(info.value, UnboundLocalError)
    _check_message(info.value, name, _where(fn, *lines))


# ---------------------------------------------------------------------------------------------
# A loop variable whose dtype or rank changes


def dtype_changes_in_while(x, n):
    acc = np.int64(0)
    i = np.int64(0)
    while i < n:
        acc = acc + x
        i += 1
    return acc


def dtype_changes_in_for(x):
    total = np.float32(0)
    for v in x:
        total = total + v
    return total


def rank_changes_in_while(v, n):
    i = np.int64(0)
    while i < n:
        v = v * np.ones((2, 1))
        i += 1
    return v


def rank_changes_in_for(x):
    state = x[0, 0]
    for row in x:
        state = state + row
    return state


@pytest.mark.parametrize("fn, name, args, lines", [
    (dtype_changes_in_while, "acc", (np.float64(0.5), np.int64(3)),
     ("acc = acc + x", "while i < n:")),
    (dtype_changes_in_for, "total", (np.array([1.0, 2.0]),),
     ("total = total + v", "for v in x:")),
    (rank_changes_in_while, "v", (np.array([1.0, 2.0]), np.int64(2)),
     ("v = v * np.ones((2, 1))", "while i < n:")),
    (rank_changes_in_for, "state", (np.array([[1.0, 2.0], [3.0, 4.0]]),),
     ("state = state + row", "for row in x:")),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_loop_variable_changes_dtype_or_rank(fn, name, args, lines):
    tracing, _ = _errors()
    fn(*args)  # plain Python runs: the variable just changes type
    with pytest.raises(tracing.StagingError) as info:
        _stage_and_call(fn, *args)
    _check_message(info.value, name, _where(fn, *lines))
    message = str(info.value)
    assert ("dtype" in message) or ("rank" in message) or ("ndim" in message), message


# ---------------------------------------------------------------------------------------------
# A tensor used as a Python bool in code that was not converted


@autostage.do_not_convert
def _absolute_unconverted(v):
    positive = v > 0
    if positive:
        return v
    return -v


def calls_unconverted_helper(x):
    return _absolute_unconverted(x) * 2


@autostage.do_not_convert
def _raise_to_unconverted(v, lo):
    while v < lo:
        v = v * 2
    return v


def calls_unconverted_loop(x):
    return _raise_to_unconverted(x, np.float64(10.0))


@pytest.mark.parametrize("fn, helper, name, args, line", [
    (calls_unconverted_helper, _absolute_unconverted, "positive", (np.float64(-2.0),),
     "if positive:"),
    (calls_unconverted_loop, _raise_to_unconverted, None, (np.float64(3.0),), "while v < lo:"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_tensor_as_python_bool_in_unconverted_code(fn, helper, name, args, line):
    from autostage.runtime.tensor import StagingTypeError

    fn(*args)
    with pytest.raises(StagingTypeError) as info:
        _stage_and_call(fn, *args)
    assert isinstance(info.value, TypeError)
    # The user's line is the helper's `if`/`while` (the bool conversion happens there). The
    # variable is named when the tensor is bound to a local of the helper (``positive``); the
    # anonymous ``v < lo`` has no name.
    _check_message(info.value, name, _where(helper, line))


# ---------------------------------------------------------------------------------------------
# A variable whose dtype differs between the branches of a staged if


def dtype_differs_between_branches(x):
    if x[0] > 0:
        y = x * 2
    else:
        y = x / 2
    return y


def test_branch_variable_dtype_differs():
    tracing, _ = _errors()
    args = (np.array([1, 2], dtype=np.int32),)
    dtype_differs_between_branches(*args)
    with pytest.raises(tracing.StagingError) as info:
        _stage_and_call(dtype_differs_between_branches, *args)
    _check_message(info.value, "y", _where(dtype_differs_between_branches, "if x[0] > 0:"))


# ---------------------------------------------------------------------------------------------
# Python side effects that cannot be staged


_SEEN: list = []
_SQUARES: list = []


def appends_to_global_in_staged_branch(x):
    total = x[0] * 0
    for v in x:
        if v > 0:
            _SEEN.append(v)
        total = total + v
    return total


def appends_to_global_in_staged_loop(x):
    i = np.int64(0)
    while i < x.shape[0]:
        _SQUARES.append(x[i] * x[i])
        i += 1
    return i


@pytest.mark.parametrize("fn, name, args, line", [
    (appends_to_global_in_staged_branch, "_SEEN", (np.array([1.0, -2.0]),), "_SEEN.append(v)"),
    (appends_to_global_in_staged_loop, "_SQUARES", (np.array([1.0, 2.0]),),
     "_SQUARES.append(x[i] * x[i])"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_python_side_effect_in_staged_control_flow(fn, name, args, line):
    tracing, _ = _errors()
    fn(*args)
    _SEEN.clear()
    _SQUARES.clear()
    try:
        with pytest.raises(tracing.StagingError) as info:
            _stage_and_call(fn, *args)
        _check_message(info.value, name, _where(fn, line))
    finally:
        _SEEN.clear()
        _SQUARES.clear()


_LEAKED = None


def stores_tensor_in_global(x):
    global _LEAKED
    y = x * 2
    _LEAKED = y
    return y


def uses_stored_global(x):
    return x + _LEAKED


def test_tracer_leak_through_a_global():
    """A tensor kept in a global by one staged call and used by a later staged call."""
    tracing, _ = _errors()
    global _LEAKED
    try:
        first = autostage.convert(stores_tensor_in_global, target="interpreter")
        # The tensor escapes when the trace ends: a clear error at once, naming the global and
        # where the tensor was created (not a failure in a later call).
        with pytest.raises(tracing.TracerLeakError) as info:
            first(np.array([1.0, 2.0]))
        _check_message(info.value, "_LEAKED", _where(stores_tensor_in_global, "y = x * 2"))
    finally:
        _LEAKED = None


def test_staging_error_points_at_user_file_not_generated_code():
    """The reported file is the user's, not converted code's generated module."""
    _, errors = _errors()
    with pytest.raises(errors.StagingUnboundError) as info:
        _stage_and_call(defined_in_one_branch, np.float64(1.0))
    assert os.path.basename(__file__) in str(info.value)
