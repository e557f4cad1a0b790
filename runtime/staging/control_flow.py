"""Staging hooks of ``if_stmt``, ``if_exp``, ``and_``, ``or_`` and ``not_`` on staged values.

A staged ``if`` traces both branches, each from the same inputs, into the two regions of a
``cond`` op and merges the state (``merge``). ``a if c else b`` is the same with one value;
``a and b`` / ``a or b`` are ``cond``s too (``b`` computed only on the path Python would compute
it, so its staged side effects keep Python's laziness; results are operands, not bools, as in
Python). Python code of the branches and operands runs at trace time, for both: each path starts
from the same Python state, and what it changes (``self.n``, ``d['k']``, a closure's
``nonlocal``) is merged like a variable, or refused with a ``PythonSideEffectError``
(``side_effects``). An exception raised while tracing one path becomes a ``raise`` op there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_api,
    array_identity,
    array_shapes,
    ir,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging import (
    errors,
    logic,
    merge,
    raises,
    side_effects,
    tensor_lists,
    values,
)
from autostage.runtime.staging.python_state import Entry
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.types import DTYPES, ListType, join


def predicate(x: object, what: str = "the condition") -> Tensor:
    """``bool(x)`` of a staged value as a ``bool[]`` tensor (Python's truth value)."""
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    if isinstance(x, TensorList):
        return predicate(tensor_lists.length(x) > 0, what)
    if isinstance(x, Staged) and not isinstance(x, Tensor):
        raise errors.StagingTypeError(
            f"{what}{errors.at()} is a staged {type(x).__name__}, which has no truth value")
    if not isinstance(x, Tensor):
        return values.to_tensor(bool(x))
    if x.ndim != 0:
        return predicate(_only_element(x), what)
    if x.dtype == np.bool_:
        return x
    result = x != 0
    return result


# NumPy's errors for the truth value of an array that does not have exactly one element.
_EMPTY = ("The truth value of an empty array is ambiguous. Use `array.size > 0` to check that "
          "an array is not empty.")
_MANY = ("The truth value of an array with more than one element is ambiguous. Use a.any() or "
         "a.all()")


def _only_element(x: Tensor) -> Tensor:
    """The element whose truth value is an array's (NumPy's ``bool(a)`` of a one-element
    array); NumPy's ``ValueError`` where the array is empty or holds more, raised when the
    path runs."""
    shape = x.type.shape
    size = int(np.prod(shape)) if None not in shape else x.size

    def empty() -> tuple:
        raise ValueError(_EMPTY)

    def many() -> tuple:
        raise ValueError(_MANY)

    # (staged even where the shape is known, so that what follows is traced, and refused or
    # not, whatever the sizes a trace knows)
    if not isinstance(size, int) or size != 1:
        for test, fail in ((size == 0, empty), (size > 1, many)):
            stage_if(test if isinstance(test, Tensor) else values.to_tensor(test), fail, None, ())
    if isinstance(size, int) and size == 0:
        return values.to_tensor(False)  # (the path raised above)
    return x.reshape(-1)[0]


def _join_types(a: object, b: object) -> object:
    if isinstance(a, ListType):
        return ListType(join(a.element, b.element))
    return join(a, b)


def emit_cond(pred: Tensor, regions: tuple[ir.Region, ir.Region],
              merged: Sequence[merge.Merged]) -> tuple:
    """Emits the ``cond`` with the merged yields and rebuilds each variable from its results."""
    regions[0].results = tuple(v for m in merged for v in m.yields[0])
    regions[1].results = tuple(v for m in merged for v in m.yields[1])
    types = tuple(_join_types(a.type, b.type)
                  for a, b in zip(regions[0].results, regions[1].results, strict=True))
    raw = tracing.emit("cond", (pred.value,), {"result_types": types}, regions)
    array_identity.cond_results(regions, raw)
    results = iter(raw)
    return tuple(m.build(results) for m in merged)


def _state_names(body: Callable, orelse: Callable | None, n: int) -> tuple[str, ...]:
    names = errors.param_names(body) or errors.param_names(orelse)
    if len(names) != n:
        names = errors.output_names(body, n) or errors.output_names(orelse, n) or ()
    return names if len(names) == n else tuple(f"state[{i}]" for i in range(n))


def prepare_state(names: Sequence[str], state: Sequence[object]) -> tuple:
    """State as staged control flow carries it: Python lists become tensor lists, NumPy
    arrays made at trace time staged arrays (a branch writing into one writes the staged
    array, not the NumPy one at trace time on every path; one something else holds too is
    marked, and a write into it refused: ``_array_tensor``). An array of a dtype autostage does
    not stage (filterpy's KalmanFilter holds ``z``, an object array of None) stays a Python
    value: a branch or loop that leaves it alone runs, one that assigns it says so."""
    return tuple(tensor_lists.from_python(x, name) if isinstance(x, list) else
                 _array_tensor(name, x) if type(x) is np.ndarray and x.dtype in DTYPES else x
                 for name, x in zip(names, state, strict=True))


def _array_tensor(name: str, x: np.ndarray) -> Tensor:
    """A NumPy array of a loop's or a staged if's state as a constant tensor, marked when
    something besides the variable holds it (``value_info.shared_arrays``: the loop or branch
    may not write it); one the variable alone holds whose elements are all one value (``out =
    np.zeros((h, w))`` to fill) as a new array filled at run time instead, as a write into it
    would make it (``array_shapes.setitem``), not a constant the program holds and copies. A 0-d
    one stays a 0-d ndarray (``value_info.mark_array``)."""
    shared = value_info.is_shared_array(x)
    tensor = None
    if not shared and x.base is None and x.flags.writeable:
        tensor = array_shapes.filled_copy(x)
    if tensor is None:
        tensor = constant(x)
    if shared:
        value_info.mark_shared(tensor.value, name)
    if x.ndim == 0:  # (np.zeros(()) is a 0-d ndarray, not a NumPy scalar)
        value_info.mark_array(tensor.value)
    return tensor


@dataclass
class _Paths:
    """Two traced paths of a staged choice: their regions, results, whether each raised, and
    the Python state either changed (entry, value after the first path, after the second)."""

    regions: tuple[ir.Region, ir.Region]
    outs: list
    raised: list
    entries: list[tuple[Entry, object, object]]


def _trace_paths(watch: side_effects.Watch, paths: tuple[Callable, Callable], pred: Tensor
                 ) -> _Paths:
    """Traces each path into its own region from the same Python state (``side_effects``),
    each assuming its side of ``pred`` (``logic.assuming``: a variable assigned where the
    condition holds may be read there).

    A path that raises becomes a ``raise`` op (``raises``); the Python state it changed does
    not matter (it never completes), so it takes the other path's."""
    regions, outs, raised, changes = [], [], [], []
    before = array_identity.snapshot()
    p = logic.of(pred.value)
    try:
        for path, condition in zip(paths, (p, logic.not_(p)), strict=True):
            latest = argument_writes.snapshot()
            with tracing.region() as region, watch.recording(), logic.assuming(condition):
                out, exc = raises.trace_branch(path)
            if exc is not None and argument_writes.provisional():
                argument_writes.restore(latest)  # (a recursive call, not an error: its writes
                # are traced in the next pass)
            out = _states_now(out)
            array_identity.end_branch(region, before)
            changes.append(watch.changes())
            watch.restore()
            regions.append(region)
            outs.append(out)
            raised.append(exc)
    finally:
        watch.restore()
    array_identity.join_branches(tuple(regions))
    if raised[0] is not None:
        changes[0] = changes[1]
    elif raised[1] is not None:
        changes[1] = changes[0]
    watch.check_branches(changes[0], changes[1])
    entries = []
    for ident in {**changes[0].values, **changes[1].values}:
        entry = (changes[0].values.get(ident) or changes[1].values[ident])[0]
        before = entry.get()
        a, b = (c.values[ident][1] if ident in c.values else before for c in changes)
        if raised[0] is not None:
            a = raises.placeholder(b, regions[0])
        elif raised[1] is not None:
            b = raises.placeholder(a, regions[1])
        entries.append((entry, a, b))
    return _Paths(tuple(regions), outs, raised, entries)


def _states_now(out: object) -> object:
    """A path's results with each tensor as it is at the path's end: a tensor the path's calls
    wrote into (``staged_calls``) is Python state the watch puts back before the next path."""
    if type(out) is Tensor:
        return Tensor(out.value)
    if type(out) is tuple:
        return tuple(_states_now(x) for x in out)
    return out


def _merge_state(watch: side_effects.Watch, paths: _Paths, pred: Tensor, where: str
                 ) -> list[merge.Merged]:
    """The merges of the Python state the paths changed; a staged one must be kept local."""
    p = logic.of(pred.value)
    merged = []
    for entry, a, b in paths.entries:
        m = merge.merge(entry.name, a, b, paths.regions, p, where)
        watch.check_kept(entry, bool(m.yields[0]))
        merged.append(m)
    return merged


def _assign_state(paths: _Paths, values: Sequence[object]) -> None:
    for (entry, _, _), value in zip(paths.entries, values, strict=True):
        entry.set(value)


def stage_if(cond: object, body: Callable, orelse: Callable | None, state: tuple = ()
             ) -> tuple | None:
    """Hook of ``if_stmt``: a ``cond`` op whose results are the new state."""
    pred = predicate(cond)
    state = prepare_state(_state_names(body, orelse, len(state)), state)
    watch = side_effects.Watch((body, orelse), "if",
                               zip(_state_names(body, orelse, len(state)), state, strict=True))
    paths = _trace_paths(watch, (lambda: body(*state),
                                 lambda: state if orelse is None else orelse(*state)), pred)
    (out_then, out_else), (raised_then, raised_else) = paths.outs, paths.raised
    regions = paths.regions
    if raised_then and raised_else:
        raise errors.AlwaysRaisesError(
            f"both branches of the staged if{errors.at()} raise an exception; autostage cannot "
            "stage an if that always raises: raise after the if instead")
    if raised_then:
        out_then = raises.placeholder(out_else, regions[0])
    elif raised_else:
        out_else = raises.placeholder(out_then, regions[1])
    composite = _merge_state(watch, paths, pred, "if")
    if out_then is None and (orelse is None or out_else is None):
        _assign_state(paths, emit_cond(pred, regions, composite))
        return None
    out_then = state if out_then is None else out_then
    out_else = state if out_else is None else out_else
    if len(out_then) != len(out_else):
        raise errors.StagingValueError(f"the branches of the staged if{errors.at()} return "
                                       f"{len(out_then)} and {len(out_else)} values")
    names = _state_names(body, orelse, len(out_then))
    p = logic.of(pred.value)
    merged = [merge.merge(name, a, b, regions, p)
              for name, a, b in zip(names, out_then, out_else, strict=True)]
    results = emit_cond(pred, regions, merged + composite)
    _assign_state(paths, results[len(merged):])
    return results[:len(merged)]


def _select(pred: Tensor, if_true: Callable[[], object], if_false: Callable[[], object],
            name: str, where: str) -> object:
    """One value computed by ``if_true`` or ``if_false`` depending on ``pred`` (a cond).

    Like a staged if: each operand traced from the same Python state, its changes threaded or
    refused, and an exception raised while tracing one only raised where it is evaluated."""
    watch = side_effects.Watch((if_true, if_false), where)
    paths = _trace_paths(watch, (if_true, if_false), pred)
    (a, b), regions = paths.outs, paths.regions
    if paths.raised[0] and paths.raised[1]:
        raise errors.AlwaysRaisesError(
            f"both operands of the staged {where}{errors.at()} raise an exception; autostage "
            "cannot stage an expression that always raises")
    if paths.raised[0]:
        a = raises.placeholder(b, regions[0])
    elif paths.raised[1]:
        b = raises.placeholder(a, regions[1])
    merged = merge.merge(name, a, b, regions, logic.of(pred.value), where)
    composite = _merge_state(watch, paths, pred, where)
    results = emit_cond(pred, regions, [merged, *composite])
    _assign_state(paths, results[1:])
    return results[0]


def stage_if_exp(cond: object, if_true: Callable[[], object], if_false: Callable[[], object]
                 ) -> object:
    """Hook of ``if_exp``: ``a if c else b`` as a cond."""
    return _select(predicate(cond), if_true, if_false, "the value of 'a if c else b'",
                   "conditional expression")


def _empty_list(a: object) -> bool:
    """Whether ``a`` is a list known to be empty while tracing (never appended to on this path:
    ``while stack and stack[-1] < v`` before the first append): false as in Python, so the
    right operand of ``and`` is not traced, where its ``stack[-1]`` has nothing to read."""
    return isinstance(a, TensorList) and a.value is None


def stage_and(a: object, b_fn: Callable[[], object]) -> object:
    """Hook of ``and_``: ``b if a else a``, computing ``b`` only where ``a`` is true."""
    if _empty_list(a):
        return a
    result = _select(predicate(a, "the left operand of 'and'"), b_fn, lambda: a,
                     "the value of 'a and b'", "'and'")
    return result


def stage_or(a: object, b_fn: Callable[[], object]) -> object:
    """Hook of ``or_``: ``a if a else b``, computing ``b`` only where ``a`` is false."""
    if _empty_list(a):
        return b_fn()
    return _select(predicate(a, "the left operand of 'or'"), lambda: a, b_fn,
                   "the value of 'a or b'", "'or'")


def stage_and_test(a: object, b_truth: Callable[[], object]) -> object:
    """Hook of ``and_test``: ``b``'s truth (``b_truth()``) where ``a`` is true, else False."""
    if _empty_list(a):
        return False
    return _select(predicate(a, "the left operand of 'and'"), b_truth, lambda: False,
                   "the truth of 'a and b'", "'and'")


def stage_or_test(a: object, b_truth: Callable[[], object]) -> object:
    """Hook of ``or_test``: True where ``a`` is true, else ``b``'s truth (``b_truth()``)."""
    if _empty_list(a):
        return b_truth()
    return _select(predicate(a, "the left operand of 'or'"), lambda: True, b_truth,
                   "the truth of 'a or b'", "'or'")


def stage_truth(a: object) -> Tensor:
    """Hook of ``truth``: a ``bool[]`` (as Python's ``bool``)."""
    return predicate(a, "an operand of 'and' or 'or'")


def stage_not(a: object) -> Tensor:
    """Hook of ``not_``: a ``bool[]`` (Python's ``not`` always gives a bool)."""
    pred = predicate(a, "the operand of 'not'")
    result = array_api.ufunc("logical_not", pred)  # never `~`: a weak bool's ~ is an int
    value_info.mark_weak(result.value)  # (a Python bool, whatever `a` was)
    logic.record(result.value, logic.not_(logic.of(pred.value)))
    return result


def stage_ld(x: object) -> object:
    """Hook of ``ld`` (a read of a variable that may be unassigned): a ``MaybeUnbound`` read
    where the enclosing branches' conditions imply it assigned (``if not break_: ... j`` after
    a staged ``if`` that assigns ``j`` or breaks) is its value; elsewhere it stays maybe
    assigned (an assignment passes it on, any other use is refused)."""
    if not isinstance(x, values.MaybeUnbound) or not logic.holds(x.defined):
        return x
    return TensorList(x.value) if isinstance(x.type, ListType) else Tensor(x.value)


register_operator_hook("if_stmt", stage_if)
register_operator_hook("ld", stage_ld)
register_operator_hook("if_exp", stage_if_exp)
register_operator_hook("and_", stage_and)
register_operator_hook("or_", stage_or)
register_operator_hook("not_", stage_not)
register_operator_hook("and_test", stage_and_test)
register_operator_hook("or_test", stage_or_test)
register_operator_hook("truth", stage_truth)
