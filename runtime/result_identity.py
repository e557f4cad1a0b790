"""Object identity of a staged function's results, as Python gives it.

In Python ``f(x) is x`` holds only when ``f`` returns its argument itself; ``x.T``,
``x.reshape(-1)``, ``x[...]`` are new view objects (of ``x``'s memory), ``x + 1`` is a new array,
and ``y = x + 1; return y, y`` returns one object twice. Compiled code may differ: the passes fold
a view that changes nothing into its operand (a 1-d ``x.T``), Numba hands back an argument's own
object for such a value, CSE merges two equal expressions into one array, and Numba boxes one
array returned twice as two objects. ``plan`` records, per result when tracing (before any
pass), what Python returns; ``keeping_identity`` wraps a backend's runner with the few fixes the
prepared module needs (none for most traces: then the runner is returned as it is, so the call
path pays nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from autostage.runtime import ir, tracing, value_info

# Per result: (PARAM, j) the argument j itself; (SAME, k) the object of the earlier result k;
# (VIEW, j) a new view of argument j; (FRESH, None) a new object (an array or view of a value
# the function computed). (PARAM_0D, j) / (VIEW_0D, j): the same for a 0-d ndarray result
# (``ndarray_results``), which backends hand back as a scalar: the argument itself, a 0-d view
# of it (an argument of size 1: its only element).
PARAM, SAME, VIEW, FRESH = "param", "same", "view", "fresh"
PARAM_0D, VIEW_0D = "param_0d", "view_0d"
# (PARAM_PATHS, j): the argument j itself, yielded by both paths of a staged ``if``: handed back
# as the argument's object, whatever the backend returns for the value.
PARAM_PATHS = "param_paths"
# (PARAM_MAYBE, js): one of the arguments js on some paths of a staged ``if``, a new array on
# the others: the argument's object where the backend's result is its memory. A negative j
# (``viewed(k)``) stands for a view of argument k on some path: where that argument shares
# memory with the one the result matches, which of the two Python returns is unknown: an error.
PARAM_MAYBE = "param_maybe"
# (PARAM_IF, (j, f)): a 0-d result that is argument j itself where the flag result f holds (a 0-d
# ndarray argument a staged loop that ran makes a NumPy scalar: ``value_info.array_flag``).
PARAM_IF = "param_if"
# ``np.broadcast_to`` results, NumPy's read-only views (backends make a new array): (BROADCAST,
# j) of argument j itself, made again from the argument; (READ_ONLY, None) of an array the
# function made (no other result or argument holds that memory): the new array, read-only.
BROADCAST, READ_ONLY = "broadcast", "read_only"


def plan(params: Sequence[ir.Value], results: Sequence[ir.Value],
         written: dict[ir.Value, int] | None = None, flags: Sequence[ir.Value] = ()) -> tuple:
    """What Python returns at each result position (see the module doc), from the trace;
    ``written``: the final states of arguments the function writes into -> their parameter
    index (the argument itself, handed back by ``argument_writes.writing_back``); ``flags``:
    the results after ``results`` (``function_outputs``)."""
    index = {value: j for j, value in enumerate(params)}
    index.update(written or {})
    first: dict[ir.Value, int] = {}
    entries = []
    for i, value in enumerate(results):
        if value in first:
            entries.append((SAME, first[value]))
            continue
        first[value] = i
        array = value_info.marked_array(value)  # (a mixed one: returned by its flag)
        if value in index:
            entries.append((PARAM_0D if array else PARAM, index[value]))
        elif (broadcast := _broadcast(value, index, results)) is not None:
            entries.append(broadcast)
        elif (kept := _kept_where_array(value, index)) is not None:
            entries.append((PARAM_IF, (kept, len(results) + list(flags).index(
                value_info.array_flag(value)))))
        elif (kept := _through_paths(value, index)) is not None:
            entries.append((PARAM_0D, kept[1]) if array and kept[0] == PARAM_PATHS else kept)
        elif index.get(base := value_info.view_base(value)) is not None and all(
                value_info.view_base(p) is base for p in _paths(value)):  # (on every path)
            entries.append((VIEW_0D if array else VIEW, index[base]))
        else:
            entries.append((FRESH, None))
    return tuple(entries)


def _broadcast(value: ir.Value, index: dict[ir.Value, int], results: Sequence[ir.Value]
               ) -> tuple | None:
    """For an ``np.broadcast_to`` result (NumPy's read-only view of its operand): (BROADCAST,
    j) of argument j, (READ_ONLY, None) of memory the function made and hands back in no
    writable result (other broadcasts of it are read-only too); a view of an argument, or of
    memory another result shares, cannot be handed back as Python does: an error. None for any
    other value."""
    if not (is_broadcast(value) and value.type.ndim):
        return None
    source = value.producer.operands[0]
    if source in index:
        return BROADCAST, index[source]
    holder = value_info.view_base(source) or source
    writable = {value_info.view_base(r) or r for r in results if not is_broadcast(r)}
    if holder not in index and holder not in writable:
        return READ_ONLY, None
    owner = value_info.aliased_argument(source)
    what = f"argument `{owner}`" if owner else "another returned array"
    raise tracing.StagingError(
        f"this function returns np.broadcast_to of a view of {what}: NumPy returns a read-only "
        "view of that memory, which staged code cannot hand back (it returns a new array). "
        "Return np.broadcast_to(...).copy(), or broadcast the array itself")


def viewed(j: int) -> int:
    """The PARAM_MAYBE candidate that stands for a view of argument ``j`` (its own inverse)."""
    return -j - 1


def is_broadcast(value: ir.Value) -> bool:
    """Whether ``value`` is an ``np.broadcast_to`` result (NumPy's read-only view)."""
    return isinstance(value.producer, ir.Op) and value.producer.name == "broadcast_to"


def _paths(value: ir.Value) -> set[ir.Value]:
    """The values ``value`` may be, through the branches of staged ``if``s (a branch that
    raises yields placeholders: left out) and staged loops whose body raises (what they were
    given: the body never completes a round)."""
    op = value.producer
    if isinstance(op, ir.Op) and op.name == "undef":
        return set()  # (what a path that returned earlier yields: never this value)
    if isinstance(op, ir.Op) and op.name == "while" and op.regions[1].raises():
        return _paths(op.operands[value.index])
    if isinstance(op, ir.Op) and op.name == "while" and value_info.view_base(value) is not None:
        # (a loop that may run zero times, of a value begun from an argument: its result is
        # marked a view of it; one the trace knows runs, with fresh values, is not)
        return _loop_paths(op, value.index)
    if not (isinstance(op, ir.Op) and op.name == "cond"):
        return {value}
    out: set[ir.Value] = set()
    for region in op.regions:
        if not region.raises():
            out |= _paths(region.results[value.index])
    return out


def _loop_paths(op: ir.Op, index: int) -> set[ir.Value]:
    """The values result ``index`` of staged loop ``op`` may be: what the loop was given (it
    may run zero times: ``for x in xs: h = f(h, x)`` returns ``h`` itself for an empty
    ``xs``, as in Python) and what its body yields, a body argument followed to the value it
    carries (``a, b = b, a``)."""
    body = op.regions[1]
    out: set[ir.Value] = set()
    seen, todo = set(), [index]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        out |= _paths(op.operands[k])
        for p in _paths(body.results[k]):
            if p.producer is body:  # (a body argument: the value the loop carries there)
                todo.append(p.index)
            else:
                out.add(p)
    return out


def _through_paths(value: ir.Value, index: dict[ir.Value, int]) -> tuple | None:
    """For a staged ``if``'s result: (PARAM_PATHS, j) when every path yields argument j
    (``t = c if b.sum() > 0 else c`` is ``c`` itself, as in Python); (PARAM_MAYBE, j) when the
    others yield new arrays (``t = a * 2 if ... else a``: ``a`` itself on that path only);
    None otherwise."""
    paths = _paths(value)
    params = tuple(sorted({index[p] for p in paths if p in index}))
    if not params or paths == {value}:
        return None
    if len(params) == 1 and all(p in index for p in paths):
        return PARAM_PATHS, params[0]
    if getattr(value.type, "ndim", 0) > 0:  # (views of arguments: see keeping_identity)
        bases = {index.get(value_info.view_base(p)) for p in paths if p not in index}
        return PARAM_MAYBE, params + tuple(viewed(j) for j in sorted(bases - {None}))
    return None


def _kept_where_array(value: ir.Value, index: dict[ir.Value, int]) -> int | None:
    """For a 0-d result that is a 0-d ndarray where its flag holds (``value_info.array_flag``)
    and on its paths is one argument j or values that are no 0-d ndarray: j (where the flag
    holds it is that argument itself); None otherwise."""
    if value_info.array_flag(value) is None:
        return None
    paths = _paths(value)
    params = {index[p] for p in paths if p in index}
    others = [p for p in paths if p not in index]
    if len(params) != 1 or any(value_info.marked_array(p) or value_info.mixed(p) is not None
                               for p in others):
        return None
    return params.pop()


def keeping_identity(runner: Callable[[list], tuple], entries: tuple,
                     params: Sequence[ir.Value], results: Sequence[ir.Value],
                     name: str = "the function") -> Callable[[list], tuple]:
    """``runner`` with its results' identities made Python's (``entries`` from ``plan``;
    ``params``/``results``: the prepared module's, after the passes; ``name``: the staged
    function's, for its errors)."""
    views = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == VIEW)
    same = tuple((i, k) for i, (kind, k) in enumerate(entries) if kind == SAME)
    # A new array in Python that the passes merged with another result or an argument: a copy
    # (compiled code would hand back one memory twice).
    seen = set(params)
    copies = []
    for i, (kind, _) in enumerate(entries):
        if kind == FRESH and results[i] in seen:
            copies.append(i)
        seen.add(results[i])
    views_0d = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == VIEW_0D)
    # the argument itself: for a 0-d one (a backend hands back its scalar), or one yielded by
    # every path of an ``if`` the passes kept
    params_kept = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == PARAM_0D or (
        kind == PARAM_PATHS and results[i] is not params[j]))
    params_maybe = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == PARAM_MAYBE)
    params_if = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == PARAM_IF)
    # the staged if or loop choosing each such result, for its errors
    chosen_at = {i: _at(getattr(results[i].producer, "loc", None)) for i, _ in params_maybe}
    broadcasts = tuple((i, j) for i, (kind, j) in enumerate(entries) if kind == BROADCAST)
    read_only = tuple(i for i, (kind, _) in enumerate(entries) if kind == READ_ONLY)
    if not (views or same or copies or views_0d or params_kept or params_maybe or params_if
            or broadcasts or read_only):
        return runner
    # a runner whose results may be GPU arrays copies them its way (numba.cuda's have no copy())
    copy = getattr(runner, "copy_result", _copy)

    def run(args: list) -> tuple:
        # (runners may replace 0-d arguments by their scalars)
        given = list(args) if (views_0d or params_kept or params_maybe or params_if
                               or broadcasts) else args
        out = list(runner(args))
        for i, j in views:  # the argument's own object where Python has a new view
            if out[i] is args[j]:
                out[i] = out[i].view(out[i].dtype)  # (a numba.cuda array's view needs it)
        for i in copies:
            out[i] = copy(out[i])
        for i, j in params_kept:
            out[i] = given[j]
        for i, (j, f) in params_if:
            if out[f]:
                out[i] = given[j]
        for i, candidates in params_maybe:
            held = [j for j in candidates if j >= 0 and _same_memory(out[i], given[j])]
            if held and any(given[viewed(k)] is given[held[0]] or np.may_share_memory(
                    given[viewed(k)], given[held[0]]) for k in candidates if k < 0):
                raise tracing.StagingError(
                    f"a result of {name} has the memory and layout of argument "
                    f"#{held[0] + 1}, which it is on some paths of the staged if or loop"
                    f"{chosen_at[i]}, while on others it is a view of an argument sharing that "
                    "memory (`return x if c else x[::-1]`): staged code cannot tell which one "
                    "Python returns; return x.copy() on that path, or a view on every path")
            if len(held) == 1 or len(held) > 1 and all(given[j] is given[held[0]] for j in held):
                out[i] = given[held[0]]
            elif held:  # (distinct arguments with one memory and layout: which, Python knows)
                raise tracing.StagingError(
                    f"a result of {name} is one of the arguments "
                    f"{', '.join(f'#{j + 1}' for j in held)} (by the path the staged if or loop"
                    f"{chosen_at[i]} took), "
                    "which are distinct objects with the same memory: staged code cannot tell "
                    "which one Python returns; pass one of them, or return a copy")
        for i, j in views_0d:  # the result is the only element of argument j
            arg = given[j]
            if type(arg) is np.ndarray and arg.size == 1 and arg.dtype == np.asarray(
                    out[i]).dtype:
                out[i] = arg.reshape(())
        for i, j in broadcasts:
            if type(out[i]) is np.ndarray:
                out[i] = np.broadcast_to(given[j], out[i].shape)
        for i in read_only:
            if type(out[i]) is np.ndarray:
                out[i].flags.writeable = False
        for i, k in same:
            out[i] = out[k]
        return tuple(out)

    return wrapping(run, runner)


def wrapping(run: Callable[[list], tuple], runner: Callable[[list], tuple]
             ) -> Callable[[list], tuple]:
    """``run`` (which calls ``runner``) with what ConcreteFunction asks of a runner."""
    for name in ("release", "compile_for"):
        if hasattr(runner, name):
            setattr(run, name, getattr(runner, name))
    return run


def _at(loc: ir.Location | None) -> str:
    return f" at {loc}" if loc is not None else ""  # (at run time: no current user line)


def _same_memory(result: object, arg: object) -> bool:
    """Whether ``result`` is ``arg``'s memory, as ``arg`` sees it (a new array never is)."""
    return type(result) is np.ndarray and type(arg) is np.ndarray and (
        result.__array_interface__ == arg.__array_interface__)


def _copy(value: np.ndarray) -> np.ndarray:
    return value.copy()
