"""Functional forms of ``if``, ``while`` and ``for`` that converted code calls.

The control-flow converter turns each statement into nested functions over its state variables
(``body(*state) -> new state tuple``); these operators run them. On Python values they behave
exactly like the statement (each test evaluated, and ``bool()``-ed, once per check; ``iter()``
called once; the iterator advanced only when the loop goes on). A staged condition or iterable is
handed to the runtime through ``stage_operator`` (see ``autostage.runtime.operator_hooks``).
``for``-``else`` and the loop variable after the loop are the converters' business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from autostage.runtime import Staged, checkpoint, shared_arrays, stage_operator

_EXHAUSTED = object()  # what next() returns once the iterator of for_stmt is used up


def if_stmt(cond: Any, body: Callable[..., tuple | None],
            orelse: Callable[..., tuple | None] | None, state: tuple = ()) -> tuple | None:
    """``if cond: body else: orelse``, returning the new state tuple of the branch that ran.

    ``orelse`` is None for an ``if`` without ``else``: the state passes through unchanged. Branch
    functions of a statement without state return nothing.
    """
    if isinstance(cond, Staged):
        shared = _shared(state)  # (a NumPy array the branches write is staged as a copy)
        with shared_arrays(shared):
            return stage_operator("if_stmt", cond, body, orelse, state)
    if cond:
        return body(*state)
    if orelse is None:
        return state
    return orelse(*state)


def if_branch(cond: Any, body: Callable[..., tuple | None],
              orelse: Callable[..., tuple | None] | None) -> Callable[..., tuple | None]:
    """``if cond: body else: orelse`` as the function to call with the state: ``if_branch(c, b,
    o)(*state)`` does what ``if_stmt(c, b, o, state)`` does.

    On a Python condition it returns the branch itself, so converted code calls the branch from
    the user's function and an ``if`` costs one Python frame, not two: recursion through
    converted branches reaches nearly the depth Python reaches. A staged condition returns a
    function that stages the whole statement through ``if_stmt``.
    """
    if cond is True:  # the usual case first: a comparison's result
        return body
    if cond is not False and isinstance(cond, Staged):
        return lambda *state: if_stmt(cond, body, orelse, state)
    if cond is not False and cond:
        return body
    return _unchanged if orelse is None else orelse


def _unchanged(*state: Any) -> tuple:
    """The missing ``else`` of an ``if``: the state passes through."""
    return state


def while_stmt(test: Callable[..., Any], body: Callable[..., tuple], state: tuple,
               opts: dict | None = None) -> tuple:
    """``while test: body``; ``opts`` (loop directives) only matter to a staged loop.

    A test that is (or becomes, after some Python iterations) staged hands the rest of the loop
    to the runtime: hook ``while_stmt(test, body, state, opts, cond, mark)``, where ``cond`` is
    the value ``test(*state)`` just returned and ``mark`` where the trace stood before it (the
    staged loop evaluates its test itself, so what this evaluation emitted is dropped: a test
    with side effects runs once per evaluation, as in Python). Inside a trace, a loop whose test
    is true as Python at first may be staged whole (hook ``while_python_test``, None to go on as
    Python): ``while t < t_end`` from ``t = 0.0``, whose body makes ``t`` staged, is then one
    loop body in the program, not a first iteration plus the loop.
    """
    traced = checkpoint() is not None  # tracing does not start or stop inside the loop
    first = traced
    while True:
        mark = checkpoint() if traced else None
        cond = test(*state)
        if isinstance(cond, Staged):
            shared = _shared(state)
            with shared_arrays(shared):
                return stage_operator("while_stmt", test, body, state, opts, cond, mark)
        if not cond:
            return state
        if first:
            first = False
            shared = _shared(state)
            with shared_arrays(shared):
                staged = stage_operator("while_python_test", test, body, state, opts, mark)
            if staged is not None:
                return staged
        state = body(*state) or ()  # a stateless body returns None


def for_stmt(iterable: Iterable, extra_test: Callable[..., Any] | None,
             body: Callable[..., tuple], state: tuple, opts: dict | None = None) -> tuple:
    """``for item in iterable: body``; ``body(item, *state)`` returns the new state.

    ``extra_test(*state)`` (from ``break``/``return`` lowering, or None) is checked before each
    ``next()``, so after a break the iterator (e.g. a generator) is not advanced again. A
    StopIteration raised by the body propagates, as in Python. A staged ``iterable`` goes to the
    runtime; so does the rest of a ``range``/list/tuple once ``extra_test`` (a break or return
    that depends on staged values) becomes staged. Over other Python iterables a staged
    ``extra_test`` meets ``bool()``, which the staged class refuses with its own error.
    Inside a trace, a long ``range`` may be staged instead of unrolled (hook ``for_range``,
    which returns None to unroll): whole when the state holds a staged value before the loop
    or the body uses one from outside it (one body in the program, not two: Numba's compile
    time grows with a function's length), else after its first iteration has run as Python (it
    may make the state staged).
    """
    if isinstance(iterable, Staged):
        shared = _shared(state)
        with shared_arrays(shared):
            return stage_operator("for_stmt", iterable, extra_test, body, state, opts)
    staging = type(iterable) is range and len(iterable) > 2 and checkpoint() is not None
    # (while tracing, a variable holding the list iterated: a staged append to it makes it a
    # staged list)
    watched = [j for j, value in enumerate(state) if value is iterable] \
        if type(iterable) is list and checkpoint() is not None else []
    if extra_test is None and not staging:
        for item in iterable:
            state = body(item, *state) or ()  # a stateless body returns None
            if watched:
                _check_iterated_list(watched, body, state)
        return state
    iterator = iter(iterable)
    position = 0
    while True:
        more = True if extra_test is None else extra_test(*state)
        if isinstance(more, Staged) and isinstance(iterable, (range, list, tuple)):
            # A break or return became staged during the Python iterations: the rest of the
            # loop is staged, from the current position.
            shared = _shared(state)
            with shared_arrays(shared):
                return stage_operator("for_stmt", iterable[position:], extra_test, body, state,
                                      opts)
        if not more:
            break
        if staging and position < 2:  # whole, or after a first iteration run as Python
            shared = _shared(state)
            with shared_arrays(shared):
                staged = stage_operator("for_range", iterable, position, extra_test, body,
                                        state, opts)
            if staged is not None:
                return staged
        item = next(iterator, _EXHAUSTED)
        if item is _EXHAUSTED:
            break
        state = body(item, *state) or ()  # a stateless body returns None
        if watched:
            _check_iterated_list(watched, body, state)
        position += 1
    return state


def _check_iterated_list(watched: list[int], body: Callable, state: tuple) -> None:
    """Refuses a body that made the iterated list's variable a staged list: Python's loop would
    read the items appended or changed there, this one the list it started with."""
    for j in watched:
        if isinstance(state[j], Staged):
            stage_operator("for_list_changed", body, len(state), j)


def _shared(state: tuple) -> list:
    """The NumPy arrays of ``state`` that something besides the loop's variables holds: a loop
    about to be staged may not write into them (``sole_holder``); none without an array."""
    if not any(type(value) is np.ndarray for value in state):
        return []
    from autostage.operators import sole_holder

    return sole_holder.shared_in_state(state)
