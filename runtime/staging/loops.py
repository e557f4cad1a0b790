"""Staging hooks of ``while_stmt`` and ``for_stmt``: staged loops become ``while`` ops.

The loop's state variables become slots (``loop_state``); the test and the body are traced into
the ``cond`` and ``body`` regions over the carried slots, again while a slot changes (a Python
number that becomes a tensor, a widened dimension, a list's first element type), at most
``MAX_ROUNDS`` times. A ``for`` over a staged iterable is a ``while`` over an ``i64`` index,
with ``extra_test`` (from ``break``/``return`` lowering) in its condition. A variable the loop
assigns but that was unassigned before it is carried with an ``undef`` placeholder; after the
loop it is a plain tensor if provably assigned (e.g. exactly when the ``do_return`` flag is set,
which a later ``if not do_return:`` completes), else a ``MaybeUnbound`` that raises on use.
Python code in the body runs at trace time, once per round, each round from the same Python
state; the Python places the body assigns (``self.n``, ``d['k']``, a closure's ``nonlocal``) are
carried like variables, or refused (``side_effects``). A user exception the body raises while
traced becomes a ``raise`` op in the body (``raises``), raised on the calls where the body runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_api,
    array_identity,
    config,
    ir,
    pytree,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import Staged, any_staged, register_operator_hook
from autostage.runtime.passes import analysis
from autostage.runtime.staging import (
    errors,
    iteration,
    list_elements,
    logic,
    loop_flags,
    python_paths,
    python_state,
    raises,
    side_effects,
    tensor_lists,
    values,
)
from autostage.runtime.staging.control_flow import predicate, stage_if
from autostage.runtime.staging.control_flow import prepare_state as prepare_branch_state
from autostage.runtime.staging.loop_state import (
    Slot,
    initial_slot,
    refine,
    refine_alias,
    refine_kind,
)
from autostage.runtime.staging.python_state import ABSENT, Entry
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.types import ListType, TensorType, scalar, strong

MAX_ROUNDS = 6


@dataclass
class _Traced:
    cond: ir.Region
    body: ir.Region
    outs: tuple


# The role of a flag that carries where a 0-d loop variable is a 0-d ndarray (``_kind_flags``).
ARRAY = "ndarray"


@dataclass(eq=False)
class _Flag:
    """A slot that carries where loop variable ``partner`` is a Python number of the kind its
    type holds (``role`` MATCH) or of another kind (OTHER): ``python_paths``; or a 0-d
    ndarray, not a NumPy scalar (ARRAY: ``_kind_flags``)."""

    partner: Slot
    role: str
    slot: Slot
    kind: type | None  # the Python type of the OTHER paths
    # The Python number the OTHER paths hold, while the body always makes the variable a NumPy
    # value (the number is then the one it starts as); None once the body may give another.
    python: object = None

    @property
    def partner_type(self) -> TensorType:
        return _held_type(self.partner)


def _held_type(slot: Slot) -> TensorType:
    """The slot's type, weak where it is a Python number on every path."""
    return replace(slot.type, weak=slot.weak)


def _new_flags(slots: Sequence[Slot], outs: Sequence[object], flags: list[_Flag]) -> bool:
    """Adds the flag slots that the variables' values before the loop and after one traced body
    need; True if there are new ones (the loop is traced again)."""
    have = {(f.partner.name, f.role) for f in flags}
    new = False
    for slot, out in zip(slots[:len(slots) - len(flags)], outs, strict=False):
        if not isinstance(slot.type, TensorType) or slot.type.ndim != 0:
            continue
        type_ = _held_type(slot)
        for role in python_paths.roles([slot.init, out], type_):
            if (slot.name, role) not in have:
                init = python_paths.flag(slot.init, role, type_)
                flags.append(_Flag(slot, role, Slot(f"{slot.name} ({role})", init,
                                                    scalar(np.bool_)),
                                   python_paths.kind_of([slot.init, out], type_),
                                   python_paths.known_number(slot.init)
                                   if role == python_paths.OTHER else None))
                new = True
    return new


def _kind_flags(slots: Sequence[Slot], outs: Sequence[object], flags: list[_Flag]) -> bool:
    """Adds an ARRAY flag slot for each 0-d variable the body makes the other kind than it
    starts as (``y = np.zeros(())`` then ``y = y + v``, a NumPy scalar): after the loop Python's
    is the kind it starts as if the loop ran zero times, the body's if it ran, which the flag
    says at run time (``value_info.array_flag``: returning it follows it). Drops one whose
    variable the body makes of unknown kind (a staged ``if`` in it: refused where its kind
    matters). True if one was added or dropped (the loop is traced again)."""
    flag_slots = {id(f.slot) for f in flags}
    changed = False
    for slot, out in zip(slots, outs, strict=True):
        if id(slot) in flag_slots or not isinstance(slot.type, TensorType) or slot.type.ndim:
            continue
        have = next((f for f in flags if f.partner is slot and f.role == ARRAY), None)
        known = values.array_flag(slot.init) is not None and values.array_flag(out) is not None
        if have is not None and not known:
            flags.remove(have)
            changed = True
        elif have is None and known and values.MIXED == values.join_kinds(
                values.kind_0d(slot.init), values.kind_0d(out)):
            flag = Slot(f"{slot.name} ({ARRAY})", values.array_flag(slot.init), scalar(np.bool_))
            flags.append(_Flag(slot, ARRAY, flag, None))
            changed = True
    return changed


def _flag_out(f: _Flag, out: object) -> bool | Tensor:
    """The body's out for flag ``f``, from its variable's ``out`` (an unknown kind: False, and
    ``_kind_flags`` drops the flag)."""
    if f.role != ARRAY:
        return python_paths.flag(out, f.role, f.partner_type)
    flag = values.array_flag(out)
    return False if flag is None else flag


def _mark_flag(f: _Flag, value: ir.Value, flag: ir.Value, where: str) -> None:
    """Marks ``value``, the variable of flag ``f`` (a body argument or the loop's result), with
    the flag's ``flag`` there."""
    if f.role == ARRAY:
        if value_info.mixed(value) is not None:  # (not where its kind is known: `runs`)
            value_info.mark_array_where(value, flag)
        return
    python_paths.settle(value, {f.role: flag}, errors.describe(f.partner.name), where, f.kind,
                        f.partner.init, f.python)


def _body_keeps_numbers(slots: Sequence[Slot], outs: Sequence[object],
                        flags: list[_Flag]) -> bool:
    """Forgets the known Python number of each flag whose variable the body may leave another
    Python number (not a NumPy value, nor the number it was given: ``continue`` before changing
    it); True if one was forgotten (the loop is traced again)."""
    forgot = False
    for f in flags:
        if f.python is None or outs[slots.index(f.slot)] is False:
            continue
        out = python_paths.known_number(outs[slots.index(f.partner)])
        if (type(out), out) != (type(f.python), f.python):
            f.python, forgot = None, True
    return forgot


def _state_objects(slots: Sequence[Slot], args: Sequence[ir.Value],
                   hypotheses: loop_flags.Hypotheses, flags: Sequence[_Flag] = (),
                   where: str = "loop") -> tuple:
    arg_of = {id(s): a for s, a in zip([s for s in slots if s.carried], args, strict=True)}
    facts = {sid: logic.atom(a) for sid, a in arg_of.items()}
    flagged = {f.partner.name for f in flags if f.role == ARRAY}
    state = []
    for slot in slots:
        if not slot.carried:
            state.append(slot.init)
            continue
        arg = arg_of[id(slot)]
        _mark(slot, arg)
        init = _init_value(slot.init)
        if init is not None and value_info.shared_name(init) is not None:
            value_info.mark_shared(arg, slot.name)  # a shared array: writing into it is refused
        # a 0-d ndarray stays one (`+=` changes it; refused on arguments), unless it is mixed
        values.mark_kind(arg, slot.kind, errors.describe(slot.name), where,
                         returned=slot.name in flagged)
        if slot.alias is not None:
            value_info.mark_view(arg, slot.alias)
        array_identity.block_arg(arg, _init_value(slot.init), id(slot))
        if slot.maybe:  # assigned when its own atom or an assumed flag literal says so
            defined = hypotheses.defined(slot, logic.atom(arg), facts)
            state.append(values.MaybeUnbound(arg, defined, slot.name, errors.location(),
                                             values.is_none(slot.init)))
        elif isinstance(slot.type, ListType):
            state.append(TensorList(arg))
        else:
            state.append(Tensor(arg))
    for f in flags:  # (the Python number on the first iteration, or one the body gave)
        _mark_flag(f, arg_of[id(f.partner)], arg_of[id(f.slot)], where)
    return tuple(state)


def _init_value(x: object) -> ir.Value | None:
    return getattr(x, "value", None) if isinstance(x, (Tensor, TensorList,
                                                         values.MaybeUnbound)) else None


def _trace(slots: Sequence[Slot], test: Callable, body: Callable,
           hypotheses: loop_flags.Hypotheses, before: dict | None,
           flags: Sequence[_Flag] = (), where: str = "loop") -> _Traced:
    """Traces the test and the body over ``slots``, the last ``len(flags)`` of which carry
    where a variable is a Python number (``python_paths``): the body's outs for them are
    derived from its variables' outs."""
    types = [s.type for s in slots if s.carried]
    n = len(slots) - len(flags)
    array_identity.restore(before)
    array_identity.enter_loop()
    ok = False
    try:
        with tracing.region(types) as cond_region:
            state = _state_objects(slots, cond_region.args, hypotheses, flags, where)
            go = predicate(test(*state[:n]), "the loop condition")
            cond_region.results = (go.value,)
        with tracing.region(types) as body_region:
            outs = body(*_state_objects(slots, body_region.args, hypotheses, flags,
                                        where)[:n]) or ()
            if len(outs) == n:
                outs = (*outs, *[_flag_out(f, outs[slots.index(f.partner)]) for f in flags])
        ok = True
    finally:
        array_identity.leave_loop(ok)
    if len(outs) != len(slots):
        raise errors.StagingValueError(f"a loop body returned {len(outs)} values for "
                                       f"{len(slots)} loop variables{errors.at()}")
    return _Traced(cond_region, body_region, tuple(outs))


def _value_of(slot: Slot, x: object, what: str) -> tuple[ir.Value, logic.Formula]:
    """``x`` as a value of the slot's type in the current region, with its definedness."""
    if isinstance(x, values.MaybeUnbound):
        return x.value, x.defined
    if isinstance(x, Tensor):
        return x.value, logic.TRUE
    if isinstance(x, TensorList):
        return x.materialize(slot.type.element), logic.TRUE
    if isinstance(x, list):  # a list the body assigns: a tensor list (``loop_state``)
        return tensor_lists.from_python(x, slot.name).materialize(slot.type.element), logic.TRUE
    if values.is_unset(x):
        return values.placeholder(slot.type), logic.FALSE
    if isinstance(x, np.ndarray):
        return constant(x).value, logic.TRUE
    return values.weak_constant(x, slot.type.dtype, what).value, logic.TRUE


def _emit(slots: Sequence[Slot], traced: _Traced, hypotheses: loop_flags.Hypotheses,
          before: dict | None, runs: bool, where: str, flagged: set[str]) -> tuple:
    carried = [s for s in slots if s.carried]
    outs = [traced.outs[slots.index(s)] for s in carried]
    with values.in_region(traced.body):
        yields = [_value_of(s, x, f"loop variable {s.name!r}") for s, x in zip(carried, outs,
                                                                               strict=True)]
    traced.body.results = tuple(v for v, _ in yields)
    at_end = array_identity.snapshot()
    array_identity.restore(before)
    inits = [_value_of(s, s.init, f"loop variable {s.name!r}") for s in carried]
    results = tracing.emit("while", [v for v, _ in inits],
                           # types only: the slot's weak-ness marks the results (``_mark``)
                           {"carried_types": tuple(strong(s.type) for s in carried)},
                           (traced.cond, traced.body))
    array_identity.loop_results(before, at_end, [v for v, _ in inits],
                                list(traced.body.results), results)
    loc = errors.location()
    by_slot = {}
    for i, (slot, result) in enumerate(zip(carried, results, strict=True)):
        none = values.is_none(slot.init) or values.is_none(outs[i])
        # a loop that runs ends with what its body yields: a fresh array is no view of the
        # argument the variable started as (Python returns a new object, not the argument)
        alias = values.alias_base(yields[i][0]) if runs else slot.alias
        by_slot[id(slot)] = _result(slot, result, inits[i][1], yields[i][1],
                                    traced.body.args[i], loc, none, runs, alias)
        # what the body makes it (`y += v` keeps a 0-d ndarray, `y = y + v` makes a NumPy
        # scalar) where the body runs; if it may run zero times and the kind differs from the
        # one it starts as, mixed: an ARRAY flag says which at run time (``_kind_flags``)
        kind = values.kind_0d(outs[i])
        if not runs or kind == values.MIXED:
            kind = values.join_kinds(values.kind_0d(slot.init), kind)
        values.mark_kind(result, kind, errors.describe(slot.name), where,
                         returned=slot.name in flagged)
    facts = {id(s): loop_flags.fact(by_slot[id(s)]) for s in carried}
    ended = _exit_fact(traced.cond, carried, by_slot)
    for slot in carried:  # assigned when an assumed flag literal holds (``loop_flags``)
        result = by_slot[id(slot)]
        if isinstance(result, values.MaybeUnbound):
            defined = hypotheses.defined(slot, result.defined, facts)
            proven = logic.equivalent(logic.ite(ended, defined, logic.TRUE), logic.TRUE)
            by_slot[id(slot)] = _assigned(slot, result.value) if proven else (
                values.MaybeUnbound(result.value, defined, slot.name, loc, result.none))
    return tuple(by_slot.get(id(s), s.init) for s in slots)


def _exit_fact(cond: ir.Region, carried: Sequence[Slot], by_slot: dict[int, object]
               ) -> logic.Formula:
    """What holds once the loop has ended: its condition is false of the results. A
    ``while True:`` left by ``return`` only is ``while not do_return``, so after it
    ``do_return`` is set, and ``retval_`` with it. (An atom of anything else stays unknown.)"""
    test = logic.of(cond.results[0])
    for slot, arg in zip(carried, cond.args, strict=True):
        result = by_slot[id(slot)]
        if isinstance(result, Tensor):
            test = logic.substitute(test, logic.atom(arg), logic.of(result.value))
    return logic.not_(test)


def _assigned(slot: Slot, value: ir.Value) -> Tensor | TensorList:
    return TensorList(value) if isinstance(slot.type, ListType) else Tensor(value)


def _mark(slot: Slot, value: ir.Value) -> None:
    """Records what the slot's values stand for on ``value`` (a block argument or result)."""
    if slot.weak:
        values.mark_weak(value)
    if isinstance(slot.type, ListType):
        list_elements.record(value, slot.elements.named(slot.name))


def _result(slot, result, init_def, out_def, arg, loc, none, runs, alias) -> object:
    """The variable after the loop: assigned, or maybe unbound. ``runs``: the body runs at least
    once, so a variable it assigns whether or not it was assigned before is assigned after;
    ``alias``: the argument the result may be a view of."""
    _mark(slot, result)
    if alias is not None:
        value_info.mark_view(result, alias)
    if not slot.maybe:
        return _assigned(slot, result)
    if logic.equivalent(init_def, logic.TRUE) and logic.equivalent(
            logic.substitute(out_def, logic.atom(arg), logic.TRUE), logic.TRUE):
        return _assigned(slot, result)
    if runs and logic.equivalent(logic.substitute(out_def, logic.atom(arg), logic.FALSE),
                                 logic.TRUE):
        return _assigned(slot, result)
    return values.MaybeUnbound(result, logic.atom(result), slot.name, loc, none)


def run_loop(names: Sequence[str], state: Sequence[object], test: Callable, body: Callable,
             watched: Sequence[Callable | None], where: str, runs: bool = False,
             wanted: Callable[[_Traced], bool] | None = None) -> tuple:
    """Stages a loop over ``state`` (see module doc) and returns the state after it; ``runs``:
    the body is known to run at least once; ``wanted``: asked with the traced regions once the
    types settle, before anything is emitted or assigned: False raises ``_PythonTest``.

    A variable the body sets to a tuple (``retval_ = (i, x[i])`` from an early ``return a, b``)
    is carried as one slot per item (its *structure*), found from what the body gives back.
    Python state the body changes (``self.n``, ``d['k']``, a closure's ``nonlocal``: see
    ``side_effects``) is carried too, after the variables, in slots of its own (``_PythonState``).
    """
    structs: list[_Struct] = [_struct_of(x) for x in state]
    groups = [_slots_of(n, x, st) for n, x, st in zip(names, state, structs, strict=True)]
    raw: list[tuple] = []
    watch = side_effects.Watch(watched, where, zip(names, state, strict=True))
    python = _PythonState(watch)

    def flat_test(*flat: object) -> object:
        flat = python.enter(flat)
        result = test(*_unflatten(structs, flat))
        python.check_test()
        return result

    def flat_body(*flat: object) -> tuple:
        flat = python.enter(flat)
        state = _unflatten(structs, flat)
        # A user exception while tracing the body: Python raises it only if the body runs, so
        # the body region raises it at run time (``raises``); the state passes through unread.
        with tensor_lists.recording_changes() as changed:
            outs, raised = raises.trace_branch(lambda: body(*state) or ())
        outs = state if raised is not None else outs
        extra = python.leave()
        if python.new:
            array_identity.retrace_loop()
        raw.append(tuple(outs))
        _refuse_changed_shared_lists(names, state, outs, changed, where)
        if len(outs) != len(structs):
            return tuple(outs)
        if any(_grow(st, x, n, where) != st
               for st, x, n in zip(structs, outs, names, strict=True)):
            return (None,) * (len(flat) + len(extra))  # traced again with the new structure
        return tuple(leaf for st, x in zip(structs, outs, strict=True)
                     for leaf in _flatten(st, x)) + extra

    hypotheses = loop_flags.Hypotheses()
    before = array_identity.snapshot()
    rounds = 0
    flags: list[_Flag] = []
    while rounds < MAX_ROUNDS:
        rounds += 1
        slots = [s for g in groups for s in g] + python.slots
        by_name = {s.name: s for s in slots}  # (slots are made again when a structure grows)
        flags = [f for f in flags if f.partner.name in by_name]
        for f in flags:
            f.partner = by_name[f.partner.name]
        slots += [f.slot for f in flags]
        hypotheses.choose(slots)
        raw.clear()
        try:
            with watch.recording():
                traced = _trace(slots, flat_test, flat_body, hypotheses, before, flags, where)
        finally:
            watch.restore()
        grown = python.grow()
        for k, out in enumerate(raw[-1]):
            st = _grow(structs[k], out, names[k], where)
            if st != structs[k]:
                structs[k], grown = st, True
                groups[k] = _slots_of(names[k], state[k], st)
        if grown:
            continue
        changed = [refine(s, out, where) | refine_alias(s, out) | refine_kind(s, out)
                   for s, out in zip(slots, traced.outs, strict=True)]
        kinds = _kind_flags(slots, traced.outs, flags)  # (before _new_flags: it adds slots)
        if any(changed) or kinds or _new_flags(slots, traced.outs, flags) or (
                _body_keeps_numbers(slots, traced.outs, flags)):
            continue
        carried = [s for s in slots if s.carried]
        # (The return value is set as the loop ends: no later round writes what it holds.)
        if array_identity.loop_extras(
                [(id(s), arg, _init_value(traced.outs[slots.index(s)]))
                 for s, arg in zip(carried, traced.body.args, strict=True)
                 if not s.name.startswith("retval_")], before):
            continue
        if hypotheses.check(slots, traced.outs):
            rounds -= 1  # a rejected hypothesis: not a change of types (each pair at most once)
            continue
        python.check_kept()
        if wanted is not None and not wanted(traced):
            raise _PythonTest()
        results = _emit(slots, traced, hypotheses, before, runs, where,
                        {f.partner.name for f in flags if f.role == ARRAY})
        results = _settle(slots, results, flags, where,
                          traced.outs if runs else None)
        n = len(results) - len(python.slots)
        python.assign(results[n:])
        values = _unflatten(structs, results[:n])
        for group in _shared_lists(names, raw[-1]):
            tensor_lists.mark_shared([values[j] for j in group], [names[j] for j in group],
                                     where)
        return values
    raise errors.StagingTypeError(
        f"the types of the variables of the {where}{errors.at()} did not settle after "
        f"{MAX_ROUNDS} traces of its body: "
        + ", ".join(f"{s.name}: {s.type}" for g in groups for s in g if s.carried))


def _settle(slots: Sequence[Slot], results: tuple, flags: Sequence[_Flag], where: str,
            outs: Sequence[object] | None = None) -> tuple:
    """The variables' values after the loop, marked with where each is a Python number (one
    staged code cannot hold raises where it is used): ``python_paths``; or a 0-d ndarray
    (``_kind_flags``); the flags dropped. ``outs``: the body's, where it is known to run: a
    Python-number flag its last run leaves False while tracing marks nothing (`tot = 0.0`
    before `for t in range(4): tot += x[t]` is a NumPy value after it, as in Python)."""
    for f in flags:
        if outs is not None and f.role != ARRAY and outs[slots.index(f.slot)] is False:
            continue
        result = results[slots.index(f.partner)]
        if f.role == python_paths.OTHER:
            tracing.mark_staged_only(f"{f.partner.name!r} is a Python number before a staged "
                                     "loop and a value of another type after it")
        _mark_flag(f, result.value, results[slots.index(f.slot)].value, where)
    return results[:len(results) - len(flags)]


class _PythonState:
    """The Python places a staged loop's body changes, carried as loop slots.

    Before the test or body is traced, each place is set to the slot's value in that region;
    after the body its new value is the slot's output; the watch then puts the Python state
    back. A place first changed in a trace becomes a slot for the next one."""

    def __init__(self, watch: side_effects.Watch):
        self.watch = watch
        self.entries: list[Entry] = []
        self.slots: list[Slot] = []
        self.new: dict[tuple, Entry] = {}
        self.entered: tuple = ()

    def enter(self, flat: tuple) -> tuple:
        """Sets the places to their values in the region being traced; the variables' part."""
        n = len(flat) - len(self.entries)
        self.entered = flat[n:]
        for entry, value in zip(self.entries, self.entered, strict=True):
            entry.set(ABSENT if isinstance(value, values.Unbound) else value)
        return flat[:n]

    def check_test(self) -> None:
        changes = self.watch.changes()
        self.watch.check_loop(changes)
        mine = {e.ident: v for e, v in zip(self.entries, self.entered, strict=True)}
        for ident, (entry, value) in changes.values.items():
            entered = mine.get(ident, ABSENT)
            same_state = entry.kind == "tensor" and entered.value is value.value
            if entered is not value and not same_state:
                raise errors.PythonSideEffectError(
                    f"{entry.describe()} is assigned by the test of the staged "
                    f"{self.watch.where}{errors.at()}; a staged loop test can only compute its "
                    "condition: assign it in the loop body instead")

    def leave(self) -> tuple:
        """The places' values after the body (noting places it changed that are not slots)."""
        changes = self.watch.changes()
        self.watch.check_loop(changes)
        known = {e.ident for e in self.entries}
        for ident, (entry, _) in changes.values.items():
            if ident not in known:
                self.new.setdefault(ident, entry)
        return tuple(e.get() for e in self.entries)

    def grow(self) -> bool:
        """Adds the places first changed by the last trace as slots; True if any. A NumPy
        array held there is a staged array from then on, as a variable's is (``prepare_state``):
        ``kf.P = F @ kf.P @ F.T + Q`` (filterpy's KalmanFilter made in the function) computes a
        new NumPy array at trace time from the old, which no loop can carry."""
        new, self.new = list(self.new.values()), {}
        for entry in new:
            self.entries.append(entry)
            value = entry.get()
            value = values.Unbound(entry.name) if value is ABSENT else value
            if type(value) is np.ndarray:
                value = prepare_branch_state((entry.name,), (value,))[0]
            self.slots.append(initial_slot(entry.name, value))
        return bool(new)

    def check_kept(self) -> None:
        for entry, slot in zip(self.entries, self.slots, strict=True):
            self.watch.check_kept(entry, slot.carried)

    def assign(self, results: Sequence[object]) -> None:
        for entry, value in zip(self.entries, results, strict=True):
            entry.set(ABSENT if isinstance(value, values.Unbound) else value)


_Struct = object  # None: one slot; a tuple of _Structs: a tuple variable, one slot per leaf


def _is_struct_tuple(x: object) -> bool:
    return type(x) is tuple and any(
        isinstance(v, Staged) or values.is_unset(v) or _is_struct_tuple(v) for v in x)


def _struct_of(x: object) -> _Struct:
    return tuple(_struct_of(v) for v in x) if _is_struct_tuple(x) else None


def _leaves(st: _Struct) -> int:
    return 1 if st is None else sum(_leaves(s) for s in st)


def _flatten(st: _Struct, x: object) -> list:
    if st is None:
        return [x]
    if values.is_unset(x):
        return [x] * _leaves(st)
    return [leaf for s, v in zip(st, x, strict=True) for leaf in _flatten(s, v)]


def _unflatten(structs: Sequence[_Struct], flat: Sequence[object]) -> tuple:
    items = iter(flat)

    def build(st: _Struct) -> object:
        return next(items) if st is None else tuple(build(s) for s in st)

    return tuple(build(st) for st in structs)


def _grow(st: _Struct, out: object, name: str, where: str) -> _Struct:
    """The structure that holds both ``st`` and the body's value ``out``."""
    if values.is_unset(out) or not (st is not None or _is_struct_tuple(out)):
        return st
    if not isinstance(out, tuple) or (st is not None and len(st) != len(out)):
        have = "a tuple" if not isinstance(out, tuple) else f"a tuple of {len(out)} items"
        raise errors.StagingTypeError(
            f"{errors.describe(name)} is a tuple of {_leaves(st) if st else 0} items before "
            f"the {where}{errors.at()} and {have} after its body; a loop variable must keep "
            "its structure")
    old = st if st is not None else (None,) * len(out)
    return tuple(_grow(s, v, name, where) for s, v in zip(old, out, strict=True))


def _slots_of(name: str, init: object, st: _Struct) -> list[Slot]:
    if st is None:
        return [initial_slot(name, init)]
    paths = _paths(st, name)
    if not values.is_unset(init) and not (isinstance(init, tuple) and len(init) == len(st)):
        raise errors.StagingTypeError(
            f"{errors.describe(name)} is {init!r} before the loop{errors.at()} and a tuple of "
            f"{len(st)} items after its body; a loop variable must keep its structure")
    return [initial_slot(n, x) for n, x in zip(paths, _flatten(st, init), strict=True)]


def _paths(st: _Struct, name: str) -> list[str]:
    if st is None:
        return [name]
    return [p for i, s in enumerate(st) for p in _paths(s, f"{name}[{i}]")]


def prepare_state(names: Sequence[str], state: Sequence[object]) -> tuple:
    """Loop state as a staged loop carries it: lists become tensor lists, and NumPy arrays made
    before the loop become tensors (the body may index or update them with staged values)."""
    return prepare_branch_state(names, state)


def _names(body: Callable, n: int, skip: int = 0) -> tuple[str, ...]:
    names = errors.param_names(body, skip)
    return names if len(names) == n else tuple(f"state[{i}]" for i in range(n))


def stage_while(test: Callable, body: Callable, state: tuple, opts: dict | None = None,
                cond: object = None, mark: tuple | None = None) -> tuple:
    """Hook of ``while_stmt``; ``cond`` (the test already evaluated outside) is traced again
    inside the loop's cond region, so the ops emitted since ``mark`` (that evaluation: a print
    in the test would run once too often) are dropped."""
    tracing.rollback(mark)
    names = _names(body, len(state))
    state = prepare_state(names, state)
    return run_loop(names, state, test, body, (test, body), "while loop")


class _PythonTest(Exception):  # noqa: N818 - a signal, caught by stage_python_while
    """A loop staged whole whose test the first iteration does not make staged (a Python
    counter, ``while n < 4``): it runs as Python instead, as before."""


def stage_python_while(test: Callable, body: Callable, state: tuple, opts: dict | None,
                       mark: tuple) -> tuple | None:
    """Hook of ``while_stmt`` inside a trace when the loop's test is true as Python before its
    first iteration: the whole loop staged, if the state holds a staged value (or the loop uses
    one from outside it: ``params = np.array([a0, b0])`` updated from arguments) and the test is
    staged after one iteration run as Python would run it (``while t < t_end`` from ``t = 0.0``
    with a body that makes ``t`` staged); else None, and the loop goes on as Python, which
    stages it from its second iteration or unrolls it (``while n < 4`` over a Python counter),
    as before. What an attempt traced is dropped and its Python state put back
    (``side_effects.Watch``), as for ``stage_range``. A test that emitted ops when it was
    evaluated (``mark``: where the trace stood before) is left to Python: they must stay if the
    loop goes on as Python."""
    if tracing.checkpoint() != mark:
        return None
    staged = any_staged(pytree.flatten(state)[0])
    if not staged and _first_bound_inside(state):
        return None
    if python_state.reaches_irreversible((test, body), ()):
        return None  # (an attempt would advance it for good: Python runs the loop)
    attempt = _Attempt()
    staged_after_one: list[bool] = []

    def probed(*state: object) -> tuple | None:
        """The body; the first time (the first round, where the Python numbers of the state are
        still Python numbers, as in the first iteration), the test of what it returns too."""
        outs = body(*state)
        if not staged_after_one:
            at = tracing.checkpoint()
            try:
                after = test(*(state if outs is None else outs))
            except Exception:  # noqa: BLE001 - then Python decides, iteration by iteration
                after = None
            finally:
                tracing.rollback(at)  # (the test runs again in the loop's cond region)
            staged_after_one.append(isinstance(after, Staged))
        return outs

    try:
        names = _names(body, len(state))
        return run_loop(names, prepare_state(names, state), test, probed, (test, body),
                        "while loop", runs=True,
                        wanted=lambda traced: staged_after_one == [True] and (
                            staged or uses_staged_values(traced)))
    except errors.IrreversibleSideEffectError:
        raise  # (running the loop as Python now would miss the items the attempt read)
    except Exception:  # noqa: BLE001 - any failure: the loop runs as Python
        attempt.undo()
        return None


def stage_for(iterable: object, extra_test: Callable | None, body: Callable, state: tuple,
              opts: dict | None = None, watched: Sequence[Callable] = (),
              where: str = "for loop", runs: bool = False,
              wanted: Callable[[_Traced], bool] | None = None) -> tuple:
    """Hook of ``for_stmt``: a ``while`` over an index into a staged iterable. ``watched``:
    more functions the body calls whose captured containers must not change; ``runs``: the
    body is known to run at least once; ``wanted``: as for ``run_loop``."""
    source = iteration.source(iterable)
    if iteration.known_empty(source):
        return tuple(state)  # the body never runs (as Python's for over an empty list)
    names = _names(body, len(state), skip=1)
    # (the loop's own variables that hold a list it iterates: its body must not change them)
    iterated = [j for j, value in enumerate(state)
                if any(value is lst for lst in iteration.iterated_lists(source))]
    state = prepare_state(names, state)

    def test(index: Tensor, *inner: object) -> object:
        more = source.more(index)
        if extra_test is None:
            return more
        return predicate(extra_test(*inner), "the loop condition") & more

    def step(index: Tensor, *inner: object) -> tuple:
        out = body(source.item(index), *inner)
        for j in iterated if out is not None else ():
            if out[j] is not inner[j]:
                _refuse_changed_iterable(names[j])
        return (index + 1, *(inner if out is None else out))

    index = values.to_tensor(0)
    result = run_loop(("<loop index>", *names), (index, *state), test, step,
                      (extra_test, body, *watched), where, runs, wanted)
    if isinstance(source, iteration.StagedZip) and source.strict:
        _check_strict_zip(source, extra_test, result)
    return result[1:]


def _shared_lists(names: Sequence[str], outs: Sequence[object]) -> list[list[int]]:
    """The groups of the loop's variables that the body leaves holding one staged list
    (``prev = cur``): one list in Python after the body, one per variable in the staged loop."""
    groups: dict[int, list[int]] = {}
    for j, x in enumerate(outs[:len(names)]):
        if isinstance(x, (TensorList, list)):
            groups.setdefault(id(x), []).append(j)
    return [group for group in groups.values() if len(group) > 1]


def _refuse_changed_shared_lists(names: Sequence[str], state: Sequence[object],
                                 outs: Sequence[object], changed: set[int], where: str) -> None:
    """Refuses a body that changes a list its variable holds on entry (``cur.append(x)``) and
    leaves it one list with another variable (``prev = cur``): from the second iteration on,
    Python's change is seen through both names, the staged loop's through one."""
    for group in _shared_lists(names, outs):
        if any(id(state[j]) in changed for j in group if j < len(state)):
            shown = ", ".join(f"`{names[j]}`" for j in group)
            raise errors.StagingError(
                f"the variables {shown} of a staged {where}{errors.at()} are one list at the "
                "end of its body, which changes that list: Python's names hold one list from "
                "the second iteration on and see the change, the staged loop carries a list per "
                f"variable; copy the list where one name is bound to the other "
                f"(`{names[group[1]]} = {names[group[0]]}[:]`)")


def refuse_changed_list(body: Callable, n: int, j: int) -> None:
    """Hook of ``for_stmt`` running over a Python list: the body made the list's variable
    (state ``j`` of ``n``) a staged list, which Python's loop, reading the list object it
    started with, would see change."""
    _refuse_changed_iterable(_names(body, n, skip=1)[j])


def _refuse_changed_iterable(name: str) -> None:
    raise errors.StagingError(
        f"the list {name!r} is changed (appended to, popped, written or assigned) by staged "
        f"code in the body of a for loop that iterates it{errors.at()}: Python's loop reads "
        "each next item from the list as it is then (items appended during the loop are "
        "visited too), autostage's would read the list it started with; iterate with an index, "
        f"as `i = 0` / `while i < len({name}):` / `x = {name}[i]` ... `i += 1`")


def _check_strict_zip(source: iteration.StagedZip, extra_test: Callable | None,
                      result: tuple) -> None:
    """``zip(..., strict=True)``: Python raises ``ValueError`` when the loop asks for the item
    after the shortest argument's last one and the lengths differ (not after a break/return)."""
    exhausted = predicate(array_api.ufunc("logical_not", source.more(result[0])),
                          "the loop condition")
    if extra_test is not None:
        exhausted = exhausted & predicate(extra_test(*result[1:]), "the loop condition")
    for condition, message in iteration.strict_zip_errors(source):
        if isinstance(condition, (bool, np.bool_)) and not condition:
            continue

        def fail(message: str = message) -> tuple:
            raise ValueError(message)

        stage_if(exhausted & predicate(condition), fail, None, ())


def stage_range(whole: range, start: int, extra_test: Callable | None, body: Callable,
                state: tuple, opts: dict | None = None) -> tuple | None:
    """Hook of ``for_stmt`` inside a trace for a Python ``range`` from its item ``start`` (0, or
    1 after a first iteration run as Python): staged like a range with staged bounds (one body
    in the IR, its variable a staged int) when the whole range is longer than
    ``config.UNROLL_LIMIT`` and the state holds a staged value, or (from item 0) the body uses
    a staged value from outside the loop (``out = np.zeros((h, w))`` of Python sizes filled from
    an argument: run as Python, the first iteration would make the state staged, and the rest
    of the loop would be staged after it, a second copy of the body); None (unroll) otherwise.

    Unrolling a training loop of a hundred steps made a program a hundred bodies long, which
    Numba compiles in time worse than linear. The staged loop computes what the unrolled one
    does (the variable is a weak int, as a Python int is), unless the body needs Python values:
    then staging it fails (a type that changes per iteration, a Python list it grows, an object
    it changes...), what the attempt traced is dropped, its Python state was put back
    (``side_effects.Watch``), and the loop unrolls. One difference remains, and it is an error,
    never a value: a Python int the loop carries becomes int64, so one that outgrows int64
    raises OverflowError (naming the line) where unrolled Python ints would have grown.
    """
    if len(whole) <= config.UNROLL_LIMIT.value():
        return None
    staged = any_staged(pytree.flatten(state)[0])
    if not staged and (start > 0 or _first_bound_inside(state)):
        return None
    if python_state.reaches_irreversible((extra_test, body), ()):
        return None  # (an attempt would advance it for good: Python unrolls the loop)
    attempt = _Attempt()
    try:
        # (for_stmt called the hook after its ``extra_test`` said go on: the body runs)
        return stage_for(whole[start:], extra_test, body, state, opts, runs=True,
                         wanted=None if staged else uses_staged_values)
    except errors.IrreversibleSideEffectError:
        raise  # (running the loop as Python now would miss the items the attempt read)
    except Exception:  # noqa: BLE001 - any failure: Python's unrolled loop decides
        attempt.undo()
        return None


class _Attempt:
    """An attempt to stage a loop that Python may run instead: ``undo`` drops what it traced
    and puts back the versions of arrays (``array_identity``) and the states of written
    arguments (``argument_writes``) it changed, as if it never ran (else the loop run as Python
    would read an array the attempt wrote as an older reference)."""

    __slots__ = ("mark", "versions", "latest")

    def __init__(self):
        self.mark = tracing.checkpoint()
        self.versions = array_identity.snapshot()
        self.latest = argument_writes.snapshot()

    def undo(self) -> None:
        tracing.rollback(self.mark)
        array_identity.restore(self.versions)
        argument_writes.restore(self.latest)


def _first_bound_inside(state: tuple) -> bool:
    """Whether a variable of the loop may be first bound inside it (unset before it, or None,
    as a return value is before the loop returns). From a Python state, such a loop keeps a
    first iteration run as Python, which binds it (or says on which paths it is bound: ``y``
    assigned where no ``return`` was taken)."""
    return any(values.is_unset(x) for x in state)


def uses_staged_values(traced: _Traced) -> bool:
    """Whether a loop's regions use a value from outside them that is not a trace-time constant
    (a staged argument, or a value computed from one): a body of Python values only (a table
    filled from Python numbers) unrolls into constants instead of being staged."""
    loop = (traced.cond, traced.body)
    inside = {*loop, *(inner for region in loop for op in region.walk() for inner in op.regions)}
    return any(v.region not in inside and not (isinstance(v.producer, ir.Op)
                                               and v.producer.name == "constant")
               for region in loop for v in analysis.region_reads(region))


register_operator_hook("while_stmt", stage_while)
register_operator_hook("while_python_test", stage_python_while)
register_operator_hook("for_range", stage_range)
register_operator_hook("for_stmt", stage_for)
register_operator_hook("for_list_changed", refuse_changed_list)
