"""Whether a NumPy array that converted code writes with a staged value is held by the user's
variable alone (``slices.setitem``): then staging the write on a copy, which the variable then
holds, is what Python does; were anything else holding it, that holder would not see the write.

CPython counts references, and the count is compared with the references this module can name
as the variable's own:

* the variable's slot in the frame that writes, and the calls between it and the count
  (``_BASE``, measured once in the same call shape);
* the same variable in the user function around that frame, when a loop operator called it: a
  converted loop is a nested function the operator calls with the variable's value
  (``loop_body(i, out)``), so while it runs the enclosing function's ``out`` holds the array
  too, and so does the operator's state tuple (``control_flow.for_stmt``: ``state =
  body(item, *state)``). A nested function called directly (the user's own, or a branch of a
  Python ``if``, which converted code calls itself) is not followed: a caller that passed the
  array in would see the write;
* the ``f_locals`` snapshots this check itself makes of those frames.

Only references found so count: another name, a list, an attribute, a closure cell, a view, a
caller that passed the array in, the tracing runtime all make the count larger, and the write is
refused; so is a write in a loop whose enclosing variable a closure reads (the closure would
see the unwritten array while the loop runs). The walk up the frames stops at the first frame
that is neither a loop operator nor the function around the body that operator called (its
code holds the body's code object).
"""

from __future__ import annotations

import gc
import os
import sys
from types import CellType, FrameType, FunctionType, GeneratorType
from typing import Any

import numpy as np

from autostage.operators import control_flow

# The frames of for_stmt, while_stmt and if_stmt (control_flow imports this module).
_OPERATORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "control_flow.py")


def held_by_the_variable_only(array: Any) -> bool:
    """Whether ``array``, the target of ``setitem`` (called from ``slices.setitem``, called
    from converted code), is held by nothing but the user's variable."""
    if _view_of_a_held_array(array):
        return False
    if not _CALIBRATED:
        return sys.getrefcount(array) <= _BASE  # the writing frame's own slot only
    named = _named_references(array, sys._getframe(2))
    count = sys.getrefcount(array)
    return count <= _BASE + named


def shared_in_state(state: tuple) -> list:
    """The NumPy arrays of a loop operator's ``state`` (called by ``for_stmt``/``while_stmt``
    before it stages the loop) that something besides the loop's variable holds: the staged
    loop may not write into them (``value_info.shared_arrays``), since it writes a copy."""
    caller = sys._getframe(3)  # the converted code that called the operator (via _shared;
    while caller.f_code.co_filename == _OPERATORS:  # an if_branch's lambda calls if_stmt)
        caller = caller.f_back
    shared, seen = [], set()
    for k in range(len(state)):
        if type(state[k]) is not np.ndarray or id(state[k]) in seen:
            continue
        seen.add(id(state[k]))
        if _view_of_a_held_array(state[k]) or not _CALIBRATED or _loop_unexplained(
                state[k], caller) > 0:
            shared.append(state[k])
    return shared


def _view_of_a_held_array(array: np.ndarray) -> bool:
    """Whether ``array`` is a view of an array that something else holds too (``v = a[:1]``
    with ``a`` a variable): a write staged on a copy of the view would not reach it. A view of
    an array only the view holds (``np.zeros(4).reshape(2, 2)``) is the variable's alone."""
    base = array.base
    return isinstance(base, np.ndarray) and sys.getrefcount(base) > 3  # (base, the call, view)


def _loop_unexplained(array: Any, caller: FrameType) -> int:
    """References to ``array`` (in a loop operator's state) that are not the variable's: its
    slots in ``caller`` and the functions around it, the operator's state tuple."""
    local = caller.f_locals
    closed = {*caller.f_code.co_cellvars, *caller.f_code.co_freevars}
    if any(value is array and name in closed for name, value in local.items()) and (
            _closure_holds(array)):
        return 1  # a closure reads the variable: it would see the unwritten array
    named = _named_references(array, caller)
    count = sys.getrefcount(array)
    return count - _LOOP_BASE - named


def _unexplained(array: Any) -> int:
    """``held_by_the_variable_only``'s count less what it names (the calibration's probe)."""
    named = _named_references(array, sys._getframe(2))
    count = sys.getrefcount(array)
    return count - _BASE - named


def _named_references(array: Any, frame: FrameType) -> int:
    """The references to ``array`` that the frames above the writing ``frame`` hold for the
    same variable, and the ``f_locals`` entries this walk makes of them (each one reference)."""
    names = {name for name, value in frame.f_locals.items() if value is array}
    named = len(names)  # the writing frame's snapshot (its slots are in _BASE)
    states: set[int] = set()  # the state tuples counted (one may be in several frames)
    below, parent, via_operator = frame, frame.f_back, False
    while parent is not None:
        local = parent.f_locals
        entries = sum(value is array for value in local.values())
        if parent.f_code.co_filename == _OPERATORS:  # a loop or branch operator
            tuples = {id(v): v for v in local.values() if type(v) is tuple and id(v) not in states}
            states.update(tuples)
            carried = sum(_count_in(v, array) for v in tuples.values())  # in its state
            # (its call's copies of the state, per item it carries: none if it carries none)
            named += entries + carried * (1 + _CALL_COPIES.get(parent.f_code, 0))
            via_operator = True
        elif via_operator and below.f_code in parent.f_code.co_consts:
            # The user function around a loop or branch body an operator called (a nested
            # function of the user's own, called with the array, is a caller: not followed).
            own = {name for name, value in local.items() if value is array}
            shared = {*parent.f_code.co_cellvars, *parent.f_code.co_freevars}
            if not own <= names or own & shared and _closure_holds(array):  # another name,
                # or one a closure made so far reads
                return named + entries  # (during the loop it would read the unwritten array)
            named += 2 * len(own)  # its slot and its snapshot's entry
            below, via_operator = parent, False
        else:
            return named
        parent = parent.f_back
    return named


def _closure_holds(array: Any) -> bool:
    """Whether a function made so far reads ``array`` through a closure cell. Converted code
    makes a branch or loop body a nested function at the statement, so a variable a later
    statement's body reads is a cell while an earlier loop writes it (the kNN vote's `counts`
    was refused), though no function can read it yet."""
    for cell in gc.get_referrers(array):
        if type(cell) is not CellType:
            continue
        for holder in gc.get_referrers(cell):
            if type(holder) is GeneratorType or type(holder) is tuple and any(
                    type(f) is FunctionType and f.__closure__ is holder
                    for f in gc.get_referrers(holder)):
                return True  # (a generator expression running: its frame holds the cell)
    return False


def _count_in(state: tuple, array: Any) -> int:
    return sum(value is array for value in state)


# --- calibration: counts that depend on the Python version and the operators' code ----------


def _references_of_a_local() -> int:
    """``sys.getrefcount`` in ``held_by_the_variable_only`` of an array only a local name
    holds, passed as converted code passes it."""
    def like_setitem(target: Any, key: Any, value: Any) -> int:
        count = _like_check(target)
        return count

    local = _fresh()
    return like_setitem(local, 0, 0)


def _like_check(array: Any) -> int:
    count = sys.getrefcount(array)
    return count


def _like_setitem(target: Any, key: Any, value: Any) -> int:
    """``slices.setitem``'s call of the check, in the same shape."""
    extra = _unexplained(target)
    return extra


def _fresh() -> Any:
    return np.zeros(1)


def _references_in_a_loop_state() -> int:
    """``_loop_unexplained``'s count less what it names, for an array only a local name and
    the state tuple of an operator shaped like ``for_stmt`` hold."""
    def like_operator(iterable: Any, extra_test: Any, body: Any, state: tuple) -> int:
        found = _like_shared(state)
        return found

    out = _fresh()
    return like_operator(range(1), None, None, (out,))


def _like_shared(state: tuple) -> int:
    """``control_flow._shared``'s call, in the same shape."""
    return _like_shared_in_state(state)


def _like_shared_in_state(state: tuple) -> int:
    caller = sys._getframe(3)
    for k in range(len(state)):
        return _like_loop_count(state[k], caller)
    return 0


def _like_loop_count(array: Any, caller: FrameType) -> int:
    named = _named_references(array, caller)
    count = sys.getrefcount(array)
    return count - named


def _operator_copies() -> dict:
    """References each loop operator's frame holds, per item of its state, for the body's call
    besides its locals (a call tuple ``(item, *state)`` on its stack): measured by running each
    as converted code runs it, with the one variable in its state, through ``_unexplained``."""
    found: dict = {}

    def loop_body(i, out):
        found[control_flow.for_stmt.__code__] = _like_setitem(out, 0, 0)
        return (out,)

    def while_test(out, n):
        return n < 1

    def while_body(out, n):
        found[control_flow.while_stmt.__code__] = _like_setitem(out, 0, 0)
        return (out, n + 1)

    def if_body(out):
        found[control_flow.if_stmt.__code__] = _like_setitem(out, 0, 0)
        return (out,)

    out = _fresh()
    out, = control_flow.for_stmt(range(1), None, loop_body, (out,))
    out, _ = control_flow.while_stmt(while_test, while_body, (out, 0))
    out, = control_flow.if_stmt(True, if_body, None, (out,))
    return found


_BASE = _references_of_a_local()
_LOOP_BASE = _references_in_a_loop_state()
_CALL_COPIES: dict = {}
_CALL_COPIES = _operator_copies()
# A negative count would mean the walk names a reference that is not there (it could then let a
# real holder through): the walk is not used at all then.
_CALIBRATED = len(_CALL_COPIES) == 3 and min(_CALL_COPIES.values()) >= 0
