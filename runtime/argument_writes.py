"""Writes into the caller's arrays: ``out[i] = v`` or ``out += v`` on an array argument.

In Python such a write changes the caller's array. Staged writes are functional (``out =
setitem(out, ...)``), so a function that writes into an array argument gets one more result per
such argument, its final state, and ``Function.writes_back`` pairs the parameter with it. The
in-place pass (``passes/inplace.py``) treats those parameters as owned by the call, so the writes
go into the caller's memory as they happen (an exception raised halfway leaves the writes made
so far, as in Python); ``check_in_place`` refuses a function whose final state would be another
buffer, and the runner (``writing_back``) hands back the caller's own object where the function
returns the argument. Calls where a written argument is read-only or may share memory with
another input (``out`` given as ``x`` too, or a view of it) raise ``RunAsPython``: the staged
function then runs as Python, whose semantics depend on that aliasing.

Only a top-level function traced for a target that writes back (``Target.writes_back``: cpu and
interpreter) does, and only into an argument as a whole: the parameter itself or a later state of
it (after a write, a ``cond`` whose paths both yield it, a loop that carries it). Writes through a
view of an argument, into an argument of a staged callee or on other targets stay the clear
errors of ``array_shapes.check_writable``.
The tables hang off the ``Trace`` (weakly), so they die with it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from autostage.runtime import ir, tracing
from autostage.runtime.ops import call as call_ops


class RunAsPython(Exception):  # noqa: N818 - a signal to the caller, not an error
    """This call's arguments alias in a way the trace did not assume: run the function as
    Python."""


@dataclass(slots=True)
class _Table:
    names: dict = field(default_factory=dict)  # parameter Value -> argument name
    whole: dict = field(default_factory=dict)  # Value -> the parameter it is, whole
    latest: dict = field(default_factory=dict)  # parameter -> its state after the last write
    captured: set = field(default_factory=set)  # parameters of arrays read through objects


_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _table() -> _Table | None:
    trace = tracing.current()
    return None if trace is None else _tables.get(trace)


def allow(param: ir.Value, name: str, captured: bool = False) -> None:
    """Lets the traced code write into array argument ``name`` (parameter ``param``; an array
    the code reads through an object or a container where ``captured``)."""
    trace = tracing.current()
    table = _tables.get(trace)
    if table is None:
        table = _tables[trace] = _Table()
    table.names[param] = name
    table.whole[param] = param
    if captured:
        table.captured.add(param)


def captured_state(value: ir.Value) -> bool:
    """Whether ``value`` is the current state of an array the code reads through an object
    (``self.acc``), which code reaches by reading it again, not through a variable: a write
    into it (``self.acc[i] = v``) is staged where it is made (``Tensor.__setitem__``)."""
    table = _table()
    param = None if table is None else table.whole.get(value)
    if param is None or param not in table.captured:
        return False
    return table.latest.get(param, param) is value


def enabled() -> bool:
    """Whether the function being traced writes back into its array arguments."""
    return _table() is not None


def wrote_any() -> bool:
    """Whether the function being traced has written into an array argument so far (an
    exception raised at trace time after it must leave the writes made: ``raises``)."""
    table = _table()
    return table is not None and bool(table.latest)


def snapshot() -> dict | None:
    """The latest state of each written argument (an abandoned attempt to stage a loop is
    undone with ``restore``)."""
    table = _table()
    return None if table is None else dict(table.latest)


def restore(latest: dict | None) -> None:
    table = _table()
    if table is not None and latest is not None:
        table.latest = dict(latest)


def writable(value: ir.Value) -> bool:
    """Whether a write into ``value`` is one into a whole argument that may be written back."""
    table = _table()
    return table is not None and value in table.whole


def param_of(value: ir.Value) -> ir.Value | None:
    """The parameter ``value`` is the whole array of (itself, or its state after writes)."""
    table = _table()
    return None if table is None else table.whole.get(value)


def latest(param: ir.Value) -> ir.Value | None:
    """The state of array parameter ``param`` after the writes traced so far, if any."""
    table = _table()
    return None if table is None else table.latest.get(param)


def captured_write_error(name: str, at: ir.Value) -> tracing.StagingError:
    """The error for a write into a captured array (``self.acc``) inside a staged ``if`` or
    loop that nothing carries out of it (``FunctionTrace.capture``, ``finals``)."""
    return tracing.StagingError(
        f"{_located(at)}this write changes `{name}`, an array the function reads through an "
        "object or a container, inside a staged `if` or loop (one whose condition or "
        "bounds are staged values), and nothing carries it out: writes into such an array are "
        "written back where they are made outside staged control flow, or through a local "
        f"name. Read it into a local name first (`a = {name}`), write through that name inside "
        f"the `if` or loop, and store it after (`{name} = a`)")


def wrote(old: ir.Value, new: ir.Value) -> None:
    """``new`` is ``old`` after a write (``array_identity.written``)."""
    trace = tracing.current()
    table = None if trace is None else _tables.get(trace)
    param = None if table is None else table.whole.get(old)
    if param is not None:
        table.whole[new] = param
        table.latest[param] = new
        follow = getattr(trace, "follow_write", None)
        if follow is not None and new.region is param.region:  # (outside staged control flow)
            follow(param, new)


def _same_param(table: _Table, values: Sequence[ir.Value]) -> ir.Value | None:
    params = {table.whole.get(v) for v in values}
    return params.pop() if len(params) == 1 else None


def cond_results(regions: tuple[ir.Region, ir.Region], results: Sequence[ir.Value]) -> None:
    """A cond result is the whole argument when both paths yield it whole; it is the latest
    state when a path wrote it."""
    table = _table()
    if table is None:
        return
    for k, result in enumerate(results):
        # (a path that raises yields placeholders: the argument is what the other yields,
        # provided the raising path did not write into it)
        raising = [r for r in regions if r.raises()]
        param = _same_param(table, [r.results[k] for r in regions if r not in raising])
        if param is None:
            continue
        for region in raising:
            write = _write_in(region, table, param)
            if write is not None and not provisional():
                raise tracing.StagingError(
                    f"{_located(write)}this write into the "
                    f"argument `{table.names[param]}` is on a path of a staged `if` that then "
                    "raises: it could not be written back into the caller's array. Raise "
                    "before writing, or copy the argument first "
                    f"(`{table.names[param]} = {table.names[param]}.copy()`)")
        table.whole[result] = param
        latest = table.latest.get(param)
        if latest is not None and latest.region in regions:
            table.latest[param] = result


def provisional() -> bool:
    """Whether this is a first pass of a staged recursion, where a path that raises stands for
    a recursive call whose types are not known yet (``staged_calls``), not for an error."""
    return bool(getattr(getattr(tracing.current(), "shared", None), "unknown", None))


def _write_in(region: ir.Region, table: _Table, param: ir.Value) -> ir.Op | None:
    """The first op in ``region`` (or nested in it) that makes a state of argument ``param``."""
    return next((op for op in region.walk()
                 if any(table.whole.get(v) is param for v in op.results)), None)


def block_arg(arg: ir.Value, init: ir.Value | None) -> None:
    """A loop's block argument starts as the whole argument if its initial value is one: assumed
    for the body, checked against what the body yields (``loop_results``)."""
    table = _table()
    param = None if table is None or init is None else table.whole.get(init)
    if param is not None:
        table.whole[arg] = param


def loop_results(inits: Sequence[ir.Value], yields: Sequence[ir.Value],
                 results: Sequence[ir.Value]) -> None:
    """A loop result is the whole argument when its initial value and the body's yield are;
    a body that wrote into its argument but yields something else is refused."""
    table = _table()
    if table is None:
        return
    for init, out, result in zip(inits, yields, results, strict=True):
        param = table.whole.get(init)
        if param is None:
            continue
        latest = table.latest.get(param)
        written_inside = latest is not None and latest.region is not result.region
        if table.whole.get(out) is not param:
            if written_inside:
                raise tracing.StagingError(
                    f"{_at()}a staged loop writes into the argument `{table.names[param]}` and "
                    "then gives its variable another array: the writes could not be written "
                    "back into the caller's array. Write into the argument itself, or copy it "
                    f"first (`{table.names[param]} = {table.names[param]}.copy()`)")
            continue
        table.whole[result] = param
        if written_inside:
            table.latest[param] = result


def _located(where: ir.Op | ir.Value) -> str:
    """``file:line: `` of an op or value, else of the user's current line."""
    return f"{where.loc}: " if where.loc is not None else _at()


def _at() -> str:
    loc = tracing.user_location()
    return f"{loc}: " if loc is not None else ""


def finals(function: ir.Function) -> list[tuple[int, ir.Value, str]]:
    """(parameter index, final state, argument name) of each argument the traced code wrote
    into.

    Raises:
      StagingError: a write's final state is not visible at the end of the function (a path
        wrote into the argument where the other gave the variable another array).
    """
    table = _table()
    if table is None or not table.latest:
        return []
    out = []
    for param, value in table.latest.items():
        if value.region is not function.body and param in table.captured:
            raise captured_write_error(table.names[param], value)
        if value.region is not function.body:
            raise tracing.StagingError(
                f"{_located(value)}the argument `{table.names[param]}` is written into on one "
                "path of a staged `if` or loop and its variable holds another array on the "
                "other: the writes could not be written back into the caller's array. Write into "
                "the "
                f"argument itself on every path, or copy it first (`{table.names[param]} = "
                f"{table.names[param]}.copy()`)")
        out.append((function.body.args.index(param), value, table.names[param]))
    return out


def result_params(function: ir.Function) -> dict[ir.Value, int]:
    """Final states (``writes_back``) -> the index of their parameter."""
    return {function.body.results[r]: p for p, r, _ in function.writes_back}


# -- after the passes ----------------------------------------------------------------------------

def check_in_place(module: ir.Module) -> None:
    """Raises StagingError unless each written-back argument's final state (of the entry or of
    a callee) is the argument's own buffer (every write into it made in place by
    ``passes/inplace.py``), naming the line of a write that is not."""
    for function in module.functions.values():
        _check_function(function)


def _check_function(function: ir.Function) -> None:
    for p, r, argument in function.writes_back:
        param, final = function.body.args[p], function.body.results[r]
        blocked = _not_in_buffer(final, param)
        if blocked is not None:
            where = f"{blocked.loc}: " if blocked.loc is not None else f"{function.name}: "
            raise tracing.StagingError(
                f"{where}this write into the argument `{argument}` cannot go into the "
                "caller's array as it happens (the array's old contents, or a view of them, "
                "are still read after it), so it cannot be written back; copy the argument "
                f"first (`{argument} = {argument}.copy()`) and return the result")


def drop_finals(function: ir.Function) -> None:
    """Drops the final states from the results once ``check_in_place`` has shown each to be its
    argument's own buffer, written as the code runs: nothing is left to return (Numba would box
    each as a new array object at every call). ``writes_back`` still names them, in the trace."""
    if function.writes_back:
        function.body.results = function.body.results[:function.writes_back[0][1]]


def _not_in_buffer(value: ir.Value, param: ir.Value) -> ir.Op | ir.Value | None:
    """None if ``value`` is ``param``'s buffer (``param`` itself, or in-place writes, conds and
    loops of it); else the op (or block argument) that makes another buffer."""
    seen: set[tuple[ir.Value, ir.Value]] = set()
    pending = [(value, param)]
    while pending:
        value, param = pending.pop()
        if value is param or (value, param) in seen:
            continue
        seen.add((value, param))
        producer = value.producer
        if isinstance(producer, ir.Region):  # another block argument (``a, b = b, a``)
            return value
        if producer.name == "setitem" and producer.attrs.get("in_place"):
            pending.append((producer.operands[0], param))
        elif producer.name == "cond":  # (a path that raises made no write: ``cond_results``)
            pending += [(r.results[value.index], param)
                        for r in producer.regions if not r.raises()]
        elif producer.name == "while":
            body = producer.regions[1]
            pending += [(producer.operands[value.index], param),
                        (body.results[value.index], body.args[value.index])]
        elif producer.name == "call" and (k := _handed_over(producer, value.index)) is not None:
            pending.append((producer.operands[k], param))
        else:
            return producer
    return None


def _handed_over(call: ir.Op, result: int) -> int | None:
    """The operand whose buffer the call's ``result`` (a final state) is: one the caller hands
    over to the callee, not a copy (``ops/call.py``)."""
    k = next((p for p, r in call_ops.written(call).items() if r == result), None)
    return None if k is None or k in call_ops.copied(call) else k


# -- at each call --------------------------------------------------------------------------------

def writing_back(runner: Callable[[list], tuple], function: ir.Function,
                 frozen: Sequence[tuple[weakref.ref, bytes]] = ()) -> Callable[[list], tuple]:
    """``runner`` (of ``function`` as traced, its final states dropped by ``drop_finals``) for
    a function that writes into arguments: the call runs as Python (``RunAsPython``) when a
    written argument is read-only or may share memory with another input or with an array the
    trace froze in (``frozen``: ``Trace.guards``); the results are the function's own, with the
    caller's own object where the function returns the argument."""
    written = tuple(p for p, _, _ in function.writes_back)
    count = function.writes_back[0][1]
    finals = result_params(function)
    returned = tuple((i, finals[v]) for i, v in enumerate(function.body.results[:count])
                     if v in finals)

    def run(args: list) -> tuple:
        for p in written:
            target = args[p]
            if not target.flags.writeable or any(
                    k != p and type(other) is np.ndarray and np.may_share_memory(target, other)
                    for k, other in enumerate(args)) or any(
                    ref() is not None and np.may_share_memory(target, ref())
                    for ref, _ in frozen):
                raise RunAsPython
        out = runner(args)
        if returned:
            out = list(out)
            for i, p in returned:
                out[i] = args[p]
        return tuple(out)

    # What a call's fast path (``fast_calls``) calls itself once it has tested the aliasing
    # above, and the results it replaces by arguments.
    run.inner, run.returned = runner, returned
    return run
