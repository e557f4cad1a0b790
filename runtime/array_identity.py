"""Which Python array object each staged value is, to refuse reading an array's old state.

Staged writes are functional: ``x[i] = v`` becomes ``x = setitem(x, i, v)``, a new value, while in
Python the array object itself changes and every other reference to it (``y = x``, a view
``x[1:3]`` made before, a list holding ``x``) sees the change. A staged program that reads such an
older reference after the write would silently compute with the old contents, so it is a clear
``StagingError`` naming both lines.

Each value carries *tokens*, ``(object, version)`` pairs: the Python objects it may be (the IR
value that created the object stands for it) and the state of each it holds. A new op result is
its own object at version 0 (no entry is kept for it). A write (``setitem``, an in-place
operator) gives its result its operand's objects at fresh versions, which become their current
versions. Views share their base's tokens; a tensor list holds the tokens of its elements and an
element read from it the list's. A cond's results get their branch yields' tokens, each branch
traced from the same versions; a loop's block arguments their initial values' tokens. A use
(an op's operand, a function result) of a token whose version is not the current one is the
error. Loops: a value from outside the loop read in its body or test before the body writes the
same object would read the written object from the second iteration on: an error when the body
has been traced. The tables hang off the ``Trace`` (weakly), so they die with it.
"""

from __future__ import annotations

import dis
import itertools
import linecache
import re
import sys
import weakref
from dataclasses import dataclass, field

from autostage.runtime import argument_writes, ir, tracing
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.types import ListType

_LIST_ELEMENT_OPS = frozenset({"list_get", "list_pop"})
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})
_counter = itertools.count(1)


@dataclass(slots=True)
class _Write:
    loc: ir.Location | None
    code: object  # the user's code object and instruction offset (the name written, lazily)
    offset: int


@dataclass(slots=True)
class _Loop:
    depth: int  # len(trace.regions) when the loop's regions were opened
    before: dict
    reads: dict = field(default_factory=dict)  # token -> (version, value, location) read


@dataclass(slots=True)
class _Table:
    tokens: dict = field(default_factory=dict)  # Value -> frozenset of (token, version)
    versions: dict = field(default_factory=dict)  # token -> current version (absent: 0)
    writes: dict = field(default_factory=dict)  # token -> _Write (the last one)
    branches: dict = field(default_factory=dict)  # cond region -> versions at its end
    extras: dict = field(default_factory=dict)  # loop slot key -> tokens its arg also holds
    loops: list = field(default_factory=list)  # _Loop, innermost last


_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()




def _table(create: bool = True) -> _Table | None:
    trace = tracing.current()
    if trace is None:
        return None
    table = _tables.get(trace)
    if table is None and create:
        table = _tables[trace] = _Table()
    return table


def tokens_of(value: ir.Value) -> frozenset:
    """The ``(object, version)`` pairs ``value`` may be (see the module doc)."""
    table = _table(False)
    found = None if table is None else table.tokens.get(value)
    return frozenset(((value, 0),)) if found is None else found


def _tokens(table: _Table, value: ir.Value) -> frozenset:
    found = table.tokens.get(value)
    return frozenset(((value, 0),)) if found is None else found


def share(result: ir.Value, *bases: ir.Value) -> None:
    """``result`` is (a view of, or a list holding) the objects of ``bases``, as they are now;
    a cond's or loop's result keeps the objects its paths gave it (``cond_results``,
    ``loop_results``: an argument it may be a view of is among them, at its current state)."""
    table = _table()
    if table is not None:
        table.tokens.setdefault(result, frozenset().union(*(_tokens(table, b) for b in bases)))


def _user_frame():
    frame = sys._getframe(2)
    while frame is not None and tracing._location_of(frame) is None:
        frame = frame.f_back
    return frame


def written(old: ir.Value, new: ir.Value) -> None:
    """``new`` is ``old``'s array objects after a write into them (``x[i] = v``, ``x += 1``):
    every other value holding their old state is stale from now on."""
    table = _table()
    if table is None:
        return
    frame = _user_frame()
    write = _Write(tracing.user_location(),
                   frame.f_code if frame is not None else None,
                   frame.f_lasti if frame is not None else -1)
    tokens = []
    for token, _ in _tokens(table, old):
        version = next(_counter)
        table.versions[token] = version
        table.writes[token] = write
        tokens.append((token, version))
    table.tokens[new] = frozenset(tokens)
    argument_writes.wrote(old, new)


def param_objects(params: tuple, value: ir.Value) -> tuple[int, ...]:
    """The indices of the ``params`` whose array objects ``value`` may be (or view)."""
    index = {param: k for k, param in enumerate(params)}
    return tuple(sorted({index[token] for token, _ in tokens_of(value) if token in index}))


def _stale(table: _Table, value: ir.Value) -> object | None:
    for token, version in _tokens(table, value):
        if table.versions.get(token, 0) != version:
            return token
    return None


def check_operands(name: str, operands: tuple, trace: tracing.Trace) -> None:
    """Raises StagingError if an operand holds an array's state from before a write into it;
    records reads of values from outside the loops being traced (``tracing.emit`` calls it)."""
    table = _tables.get(trace)
    if table is None:
        return
    if table.versions:
        for value in operands:
            token = _stale(table, value)
            if token is not None:
                _raise(table, token, value, tracing.user_location())
    for loop in table.loops:
        outer = trace.regions[:loop.depth]
        for value in operands:
            if value.region in outer:
                loc = None
                for token, version in _tokens(table, value):
                    if token not in loop.reads:
                        loc = loc or tracing.user_location()
                        loop.reads[token] = (version, value, loc)


def check_use(value: ir.Value) -> None:
    """Raises StagingError if ``value`` (a function result) holds an overwritten state."""
    table = _table(False)
    if table is not None and table.versions:
        token = _stale(table, value)
        if token is not None:
            _raise(table, token, value, None, " as the function's result")


def check_identity(value: ir.Value) -> None:
    """Raises StagingError if ``value``, compared by ``is``, holds an overwritten state: after
    ``y = x; y[0] = 5`` Python's ``y is x`` is True (one object), but the write made ``y`` a new
    staged value and left ``x`` the old one."""
    table = _table(False)
    if table is not None and table.versions:
        token = _stale(table, value)
        if token is not None:
            _raise(table, token, value, tracing.user_location(), " in an `is` test")


def after_emit(op: ir.Op) -> None:
    """Gives the results of list ops their objects (``tracing.emit`` calls it)."""
    if op.name.startswith("list_") and op.name != "list_stack" and op.operands:
        table = _table()
        for result in op.results:
            if isinstance(result.type, ListType):
                table.tokens[result] = frozenset().union(
                    *(_tokens(table, v) for v in op.operands))
            elif op.name in _LIST_ELEMENT_OPS:
                table.tokens[result] = _tokens(table, op.operands[0])


# Control flow -------------------------------------------------------------------------------

def snapshot() -> dict | None:
    """The current versions (to trace another path, or a loop round, from the same state)."""
    table = _table()
    return None if table is None else dict(table.versions)


def restore(versions: dict | None) -> None:
    table = _table(False)
    if table is not None and versions is not None:
        table.versions = dict(versions)


def end_branch(region: ir.Region, before: dict | None) -> None:
    """A cond path traced into ``region`` ends: its versions are kept, the state goes back."""
    table = _table(False)
    if table is not None:
        table.branches[region] = table.versions
        table.versions = dict(before or {})


def join_branches(regions: tuple[ir.Region, ir.Region]) -> None:
    """After both paths: an object written on either has a new version after the cond."""
    table = _table(False)
    if table is None:
        return
    a, b = (table.branches.get(r, table.versions) for r in regions)
    joined = dict(table.versions)
    for token in a.keys() | b.keys():
        if a.get(token, 0) != b.get(token, 0) or a.get(token, 0) != joined.get(token, 0):
            joined[token] = next(_counter)
    table.branches[regions] = joined
    table.versions = joined


def _carry(table: _Table, tokens: frozenset, at_end: dict, after: dict) -> set:
    """``tokens`` as of ``at_end`` (a path's last versions), renamed to ``after``'s versions
    where they were current; an already stale one stays stale."""
    out = set()
    for token, version in tokens:
        if at_end.get(token, 0) == version:
            out.add((token, after.get(token, 0)))
        else:
            out.add((token, version))
    return out


def cond_results(regions: tuple[ir.Region, ir.Region], results: tuple) -> None:
    """Each cond result is the objects either branch yields for it."""
    argument_writes.cond_results(regions, results)
    table = _table(False)
    if table is None or regions not in table.branches:
        return
    after = table.branches.pop(regions)
    ends = [table.branches.pop(r, after) for r in regions]
    for k, result in enumerate(results):
        tokens = set()
        for region, end in zip(regions, ends, strict=True):
            tokens |= _carry(table, _tokens(table, region.results[k]), end, after)
        if tokens != {(result, 0)}:
            table.tokens[result] = frozenset(tokens)


def enter_loop() -> dict | None:
    """A loop round starts (before its test and body are traced): reads of outer values are
    recorded from now on. Returns the versions to restore before the next round."""
    trace = tracing.current()
    table = _table()
    if table is None:
        return None
    table.loops.append(_Loop(len(trace.regions), dict(table.versions)))
    return table.loops[-1].before


def block_arg(arg: ir.Value, init: ir.Value | None, key: object) -> None:
    """A loop's block argument is the objects of its initial value (and those a previous
    round found the body gives it: ``loop_extras``)."""
    argument_writes.block_arg(arg, init)
    table = _table(False)
    if table is None:
        return
    tokens = _tokens(table, init) if init is not None else frozenset()
    extra = table.extras.get(key)
    if extra:
        before = table.loops[-1].before if table.loops else table.versions
        tokens = tokens | {(t, before.get(t, 0)) for t in extra}
    if tokens:
        table.tokens[arg] = frozenset(tokens)


def loop_extras(pairs: list, before: dict | None) -> bool:
    """After a round: ``pairs`` of (slot key, block argument, yield) per carried slot.
    A yield holding an object from before the loop that its argument does not, that the body
    writes and that another yield holds too (``y = x``, ``lst.append(x)``; an object merely
    moved to another variable, as in ``a, b = b, a``, is not shared), is that argument's object
    in later iterations: True if the round must be
    traced again with the argument holding it (so that its stale uses are found)."""
    table = _table(False)
    if table is None:
        return False
    written = {t for t in table.versions if table.versions[t] != (before or {}).get(t, 0)}
    held: dict = {}  # a written object -> how many yields hold it (moved, or shared)
    for _, _, out in pairs:
        for t in {t for t, _ in _tokens(table, out)} if out is not None else ():
            held[t] = held.get(t, 0) + 1
    shared = {t for t in written if held.get(t, 0) > 1}
    grown = False
    for key, arg, out in pairs:
        if out is None:
            continue
        have = {t for t, _ in _tokens(table, arg)}
        new = {t for t, _ in _tokens(table, out)} & shared - have
        new = {t for t in new if isinstance(t, ir.Value) and _outer(t)}
        if new - table.extras.get(key, set()):
            table.extras.setdefault(key, set()).update(new)
            grown = True
    return grown


def _outer(token: ir.Value) -> bool:
    return token.region in tracing.current().regions


def retrace_loop() -> None:
    """The round being traced will be traced again (it changed Python state, a staged array
    written by a call among it, that the next round carries): its reads prove nothing."""
    table = _table(False)
    if table is not None and table.loops:
        table.loops[-1].reads.clear()


def leave_loop(ok: bool = True) -> None:
    """The loop's test and body have been traced (``ok``; False: tracing failed): a value
    from outside the loop read in them whose object the body writes would see the write from
    the second iteration on."""
    table = _table(False)
    if table is None or not table.loops:
        return
    loop = table.loops.pop()
    if not ok:
        return
    for token, (_, value, loc) in loop.reads.items():
        if table.versions.get(token, 0) != loop.before.get(token, 0):
            _raise(table, token, value, loc, " (in a later iteration of the loop)")


def loop_results(before: dict | None, at_end: dict | None, inits: list, yields: list,
                 results: tuple) -> None:
    """After the loop: objects its body wrote have new versions; each result is the objects of
    its initial value and of the body's yield (``at_end``: the versions the body ended with)."""
    argument_writes.loop_results(inits, yields, results)
    table = _table(False)
    if table is None or before is None or at_end is None:
        return
    after = dict(before)
    for token in at_end.keys() | before.keys():
        if at_end.get(token, 0) != before.get(token, 0):
            after[token] = next(_counter)
    for init, out, result in zip(inits, yields, results, strict=True):
        tokens = _carry(table, _tokens(table, init), before, after)
        tokens |= _carry(table, _tokens(table, out), at_end, after)
        if tokens != {(result, 0)}:
            table.tokens[result] = frozenset(tokens)
    table.versions = after


# Messages -----------------------------------------------------------------------------------

def _written_name(write: _Write) -> str | None:
    if write.code is None or write.offset < 0:
        return None
    for instruction in dis.get_instructions(write.code):
        if instruction.offset > write.offset:  # the store of the call's result, if one
            return instruction.argval if instruction.opname in _STORES else None
    return None


def _stale_name(value: ir.Value) -> str | None:
    frame = _user_frame()
    for name, obj in (frame.f_locals.items() if frame is not None else ()):
        if isinstance(obj, Staged) and getattr(obj, "value", None) is value:
            return name
    return None


def _raise(table: _Table, token: object, value: ir.Value, loc: ir.Location | None,
           when: str = "") -> None:
    write = table.writes.get(token)
    written_at = f" at {write.loc}" if write is not None and write.loc is not None else ""
    name = _written_name(write) if write is not None else None
    stale = _stale_name(value)
    what = f"`{name}`" if name else "an array"
    ref = f" (`{stale}`)" if stale and stale != name else ""
    where = f" at {loc}" if loc is not None else ""
    fix = f"`{stale or 'y'} = {name or 'x'}.copy()`"
    holder = " (another name, a view of it, or a list holding it)"
    if stale and not _written_by_user(stale, loc):  # (a name the converter made: `item_1` of
        a = name or "a"  # `a[0], a[1] = a[1], a[0]`, whose second value NumPy reads changed)
        ref, holder = "", ", a view on the right of a tuple assignment,"
        fix = f"`{a}[0], {a}[1] = {a}[1].copy(), {a}[0].copy()` swaps two rows"
    raise tracing.StagingError(
        f"{what} was changed in place{written_at}, but an older reference to the same array"
        f"{ref}{holder} is used{where}{when}; staged code cannot make that reference see the "
        f"change: copy explicitly ({fix}) or use {'`' + name + '`' if name else 'the array'} "
        "itself")


def _written_by_user(name: str, loc: ir.Location | None) -> bool:
    """Whether ``name`` appears in the user's line ``loc`` (else the converter made it)."""
    line = linecache.getline(loc.filename, loc.lineno) if loc is not None else ""
    return not line or re.search(rf"\b{re.escape(name)}\b", line) is not None


tracing.operand_checks.append(check_operands)
tracing.result_hooks.append(after_emit)
