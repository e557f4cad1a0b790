"""Copy elision for ``setitem``: marks the writes that may go into their operand's buffer.

In the IR ``x[i] = v`` is ``x' = setitem(x, v, *index)``, a new array; lowered literally, every
element write copies the whole array (a DP table filled in a loop is cubic). This pass, run last
(after CSE, DCE and fusion, on the IR the backend lowers), sets ``in_place=True`` on a setitem
when nothing can observe the old value of ``x`` afterwards, so the backend may write into ``x``:

* ``x`` is *owned*: its buffer was allocated by this call of the function and no other live value
  refers to it. Results of ops declared fresh (ops/buffers.py) are owned; a ``cond`` result when
  each branch yields an owned value used by nothing else; a ``while`` carried value when its
  initial value is owned and dead after the loop and the body yields an owned value used by
  nothing else (a greatest fixpoint over the carried values). Parameters are not, except those
  whose arrays the function writes back (``Function.writes_back``: the caller's array is meant
  to change, and the call runs as Python when it shares memory with another input); constants,
  Variable reads, call results and list items never are.
* ``x`` is *dead after the write*: every other reader of ``x`` comes earlier in the same region,
  and every value those readers made that may share its buffer (any result of an op not
  declared fresh: views, lists holding it, region results) is itself dead by then. ``x`` is
  defined in the write's region, or captured into a ``cond`` branch and dead after the ``cond``;
  never captured into a loop body, whose next iteration would see the write.
* no other operand of the write reads ``x``'s buffer: when the value is a view of ``x`` (``x[1:]
  = x[:-1]``) it is still written in place but from a copy of the value (``copy_value=True``),
  as NumPy's overlap rule; an index that is a view of ``x`` keeps the copy of ``x``.

Otherwise the write copies, as before: Python's semantics when the old value is still used. The
pass recomputes the attributes each time it runs (a stale ``in_place`` is removed).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.ops import buffers
from autostage.runtime.ops import call as call_ops
from autostage.runtime.passes import analysis
from autostage.runtime.types import ListType, TensorType

NESTED = -1  # the slot of a use inside an op's regions (a captured value)
_LIST_UPDATES = frozenset({"list_append", "list_pop", "list_set"})
_LIST_MARKS = ("in_place", "reuse_inits", "reuse_yields")
_END = "end"  # the position of a region's yields


class _Uses:
    """Per region: value -> [(index of the top-level op that reads it, or len(ops) for the
    yields; operand slot, yield position, or NESTED)]."""

    def __init__(self) -> None:
        self._maps: dict[ir.Region, dict[ir.Value, list[tuple[int, int]]]] = {}

    def of(self, value: ir.Value, region: ir.Region) -> list[tuple[int, int]]:
        table = self._maps.get(region)
        if table is None:
            table = self._maps[region] = _use_table(region)
        return table.get(value, [])


def _use_table(region: ir.Region) -> dict[ir.Value, list[tuple[int, int]]]:
    table: dict[ir.Value, list[tuple[int, int]]] = {}
    for index, op in enumerate(region.ops):
        for slot, value in enumerate(op.operands):
            table.setdefault(value, []).append((index, slot))
        for inner in op.regions:
            for value in analysis.region_reads(inner):
                table.setdefault(value, []).append((index, NESTED))
    end = len(region.ops)
    for position, value in enumerate(region.results):
        table.setdefault(value, []).append((end, position))
    return table


class Analysis:
    """Ownership and liveness facts of one function (see the module docstring)."""

    def __init__(self, function: ir.Function):
        self.function = function
        self.uses = _Uses()
        self.parent: dict[ir.Region, tuple[ir.Op, ir.Region]] = {}  # region -> (op, op's region)
        self.index: dict[ir.Op, int] = {}
        self.region_of: dict[ir.Op, ir.Region] = {}
        self._carried: dict[ir.Op, set[int]] = {}  # while -> carried positions owned (final)
        self._given: dict[tuple[ir.Value, ir.Value], bool] = {}  # (result, array) -> _from
        self._assumed: dict[ir.Op, set[int]] = {}  # while -> positions assumed during a fixpoint
        self.written_params = {function.body.args[p] for p, _, _ in function.writes_back}
        self._index_region(function.body)

    def _index_region(self, region: ir.Region) -> None:
        for i, op in enumerate(region.ops):
            self.index[op] = i
            self.region_of[op] = region
            for inner in op.regions:
                self.parent[inner] = (op, region)
                self._index_region(inner)

    # -- liveness ------------------------------------------------------------------------------

    def dead_after(self, value: ir.Value, region: ir.Region, at: int,
                   allowed: frozenset[tuple[int, int]],
                   alias_allowed: frozenset[tuple[int, int]] = frozenset()) -> bool:
        """Whether nothing reads ``value`` (or a value that may share its buffer) at or after
        op ``at`` of ``region`` (``len(ops)``: the yields), except once at each ``allowed``
        (index, slot); readers before ``at`` must leave no live alias behind, except reads of
        those aliases at ``alias_allowed``."""
        seen: set[tuple[int, int]] = set()
        for index, slot in self.uses.of(value, region):
            if index < at:
                aliases = self._aliases(region.ops[index], value)
                if not all(self.dead_after(r, region, at, alias_allowed) for r in aliases):
                    return False
            elif (index, slot) in allowed and (index, slot) not in seen:
                seen.add((index, slot))
            else:
                return False
        return True

    def local(self, value: ir.Value, region: ir.Region, captured: list | None = None) -> bool:
        """Whether ``value`` may be treated as defined at the start of ``region``: defined
        there, or captured into a ``cond`` branch from where it is dead after the ``cond``.
        ``captured``: views of ``value`` made just outside the branch and read inside it are
        allowed too, and listed there (the caller checks they are dead after its write)."""
        if value.region is region:
            return True
        parent = self.parent.get(region)
        if parent is None:
            return False
        op, outer = parent
        return (op.name == "cond" and self.local(value, outer)
                and self._dead_but_nested(value, outer, self.index[op],
                                          captured if value.region is outer else None))

    def _dead_but_nested(self, value: ir.Value, region: ir.Region, at: int,
                         captured: list | None = None) -> bool:
        """``dead_after`` where any number of reads inside op ``at``'s regions are allowed (of
        views of ``value`` too, listed in ``captured``, when it is given)."""
        uses = [(i, s) for i, s in self.uses.of(value, region) if (i, s) != (at, NESTED)]
        for index, _slot in uses:
            if index >= at:
                return False
        for index, _ in uses:
            for alias in self._aliases(region.ops[index], value):
                if self.dead_after(alias, region, at, frozenset()):
                    continue
                if captured is None or not self._dead_but_nested(alias, region, at):
                    return False
                captured.append(alias)
        return True

    def _aliases(self, op: ir.Op, value: ir.Value) -> tuple[ir.Value, ...]:
        """The results of ``op`` (a reader of ``value``) that may refer to ``value``'s object:
        for a list only lists (its items are other objects), for an array every result of an
        op not declared fresh but a 0-d one (a value on every backend: a native scalar in
        compiled code, a copy in the interpreter), such as the flags and indices a ``cond`` or
        ``while`` reading the array gives; of a ``cond`` or ``while``, only the results some
        path gives from ``value`` (a loop copying an argument's elements into a new array
        reads the argument, but the array it carries is its own)."""
        if isinstance(value.type, ListType):
            return tuple(r for r in op.results if isinstance(r.type, ListType))
        if buffers.is_fresh(op):
            return ()
        return tuple(r for r in op.results
                     if not (isinstance(r.type, TensorType) and r.type.ndim == 0)
                     and (op.name not in ("cond", "while") or self._given_from(r, value)))

    def _given_from(self, result: ir.Value, value: ir.Value) -> bool:
        """``_from`` of a loop's or an if's result (asked again for each later reader)."""
        key = (result, value)
        if key not in self._given:
            self._given[key] = self._from(result, value, set())
        return self._given[key]

    def _from(self, x: ir.Value, value: ir.Value, seen: set) -> bool:
        """Whether ``x`` may be ``value`` or a view of it: through the results of ops not
        declared fresh (any of their operands), the paths of ``cond``s and the carried values
        of ``while`` loops (their first values and what their bodies yield)."""
        if x is value:
            return True
        if x in seen or isinstance(x.type, TensorType) and x.type.ndim == 0:
            return False
        seen.add(x)
        producer = x.producer
        if isinstance(producer, ir.Region):
            parent = self.parent.get(producer)
            if parent is None:  # another parameter
                return False
            producer = parent[0]
            if producer.name != "while":
                return True
        if producer.name == "while":
            return (self._from(producer.operands[x.index], value, seen)
                    or self._from(producer.regions[1].results[x.index], value, seen))
        if producer.name == "cond":
            return any(self._from(r.results[x.index], value, seen) for r in producer.regions)
        if buffers.is_fresh(producer):
            return False
        return bool(producer.regions) or any(self._from(operand, value, seen)
                                             for operand in producer.operands)

    def unshared_yield(self, value: ir.Value, region: ir.Region, position: int) -> bool:
        """Whether ``region`` yields ``value`` once, at ``position``, and nothing else it
        yields may share its buffer."""
        end = len(region.ops)
        captured: list[ir.Value] = []  # views of value read in this branch (``local``)
        return (self.local(value, region, captured)
                and self.dead_after(value, region, end, frozenset({(end, position)}))
                and all(self.dead_after(view, region, end, frozenset()) for view in captured))

    # -- ownership -----------------------------------------------------------------------------

    def owned(self, value: ir.Value) -> bool:
        """Whether ``value``'s buffer was allocated in this call and is referenced by nothing
        that outlives it (see the module docstring)."""
        producer = value.producer
        if isinstance(producer, ir.Region):
            parent = self.parent.get(producer)
            if parent is None:  # a function parameter
                return value in self.written_params
            if parent[0].name != "while":
                return False
            return value.index in self.carried(parent[0])
        if producer.name == "cond":
            return all(self.owned(r.results[value.index])
                       and self.unshared_yield(r.results[value.index], r, value.index)
                       for r in producer.regions)
        if producer.name == "while":
            return value.index in self.carried(producer)
        if producer.name == "call" and value.index in call_ops.written(producer).values():
            return True  # the argument's buffer, handed over (``decide_call``), or a copy
        return buffers.is_fresh(producer)

    def carried(self, loop: ir.Op) -> set[int]:
        """The carried positions of a ``while`` whose buffers the loop owns (a fixpoint)."""
        if loop in self._carried:
            return self._carried[loop]
        if loop in self._assumed:
            return self._assumed[loop]
        _cond, body = loop.regions
        outer, at = self.region_of[loop], self.index[loop]
        self._assumed[loop] = set(range(len(loop.operands)))  # optimistic while computing
        candidates = {
            k for k, init in enumerate(loop.operands)
            if self.owned(init) and self.local(init, outer)
            and self.dead_after(init, outer, at, frozenset({(at, k)}))}
        self._assumed[loop] = candidates
        changed = True
        while changed:
            changed = False
            for k in sorted(candidates):
                y = body.results[k]
                if not (self.owned(y) and self.unshared_yield(y, body, k)):
                    candidates.discard(k)
                    changed = True
        del self._assumed[loop]
        if not self._assumed:  # facts computed under no assumption are final
            self._carried[loop] = candidates
        return candidates

    # -- lists: which readers may reuse the list object ---------------------------------------

    def reusable(self, value: ir.Value, region: ir.Region, at: int, slot: int) -> bool:
        """Whether the reader at (``at``, ``slot``) of ``region`` (``len(ops)``: a yield) is
        the last use of the list ``value``, so it may update or hand on the object itself."""
        return (isinstance(value.type, ListType) and self.local(value, region)
                and self.dead_after(value, region, at, frozenset({(at, slot)})))

    def list_marks(self, op: ir.Op, region: ir.Region) -> dict:
        """The attrs that let the cpu lowering reuse list objects (lower_lists, lower_control):
        ``in_place`` on list updates; per region yield (``reuse_yields``) and, for ``while``,
        per initial value (``reuse_inits``)."""
        marks: dict = {}
        at = self.index[op]
        if op.name in _LIST_UPDATES:
            if self.reusable(op.operands[0], region, at, 0):
                marks["in_place"] = True
            return marks
        if op.name == "while":
            marks["reuse_inits"] = tuple(self.reusable(v, region, at, k)
                                         for k, v in enumerate(op.operands))
        regions = op.regions[1:] if op.name == "while" else op.regions
        marks["reuse_yields"] = tuple(
            tuple(self.reusable(v, r, len(r.ops), k) for k, v in enumerate(r.results))
            for r in regions)
        return marks

    # -- the decision --------------------------------------------------------------------------

    def decide(self, op: ir.Op, region: ir.Region) -> tuple[bool, bool]:
        """(in place, copy the value first) for the setitem ``op`` in ``region``."""
        x = op.operands[0]
        captured: list[ir.Value] = []  # views of x read in this branch (``local``)
        if x.type.ndim == 0 or not self.owned(x) or not self.local(x, region, captured):
            return False, False
        at = self.index[op]
        if not all(self.dead_after(view, region, at, frozenset()) for view in captured):
            return False, False
        if self.dead_after(x, region, at, frozenset({(at, 0)})):
            return True, False
        # The value (or x itself) read from x's buffer: write in place from a copy of it.
        if self._dead_but_value(x, region, at):
            return True, True
        return False, False

    def decide_call(self, op: ir.Op, region: ir.Region) -> tuple[int, ...]:
        """The operands of a ``call`` whose callee may write into them in place (as a setitem
        without a copy); the others are passed as copies."""
        at = self.index[op]
        out = []
        for k in call_ops.written(op):
            x = op.operands[k]
            captured: list[ir.Value] = []
            if (self.owned(x) and self.local(x, region, captured)
                    and all(self.dead_after(v, region, at, frozenset()) for v in captured)
                    and self.dead_after(x, region, at, frozenset({(at, k)}))):
                out.append(k)
        return tuple(out)

    def _dead_but_value(self, x: ir.Value, region: ir.Region, at: int) -> bool:
        """``dead_after`` where the write's value (slot 1) may also read ``x``'s buffer."""
        value_slot = frozenset({(at, 1)})
        return self.dead_after(x, region, at, frozenset({(at, 0)}) | value_slot, value_slot)


def run(module: ir.Module) -> bool:
    """Sets or clears ``in_place`` / ``copy_value`` on every setitem; returns whether any
    attribute changed.

    The attributes are cleared first and all decisions are made before any is set, so each
    setitem counts as a copy (fresh) for the others' analysis; that is sound because a write
    made in place leaves no reader of its operand after it.
    """
    before, decisions, lists = {}, {}, {}
    for function in module.functions.values():
        all_ops = list(_ops(function.body))
        writes = [(op, region) for region, op in all_ops if op.name == "setitem"]
        for op, _region in writes:
            before[op] = (op.attrs.pop("in_place", False), op.attrs.pop("copy_value", False))
        calls = [(op, region) for region, op in all_ops
                 if op.name == "call" and "writes" in op.attrs]
        for op, _region in calls:
            before[op] = op.attrs.pop("in_place_args", ())
        analysis = Analysis(function)
        for op, region in writes:
            decisions[op] = analysis.decide(op, region)
        for op, region in calls:
            decisions[op] = analysis.decide_call(op, region)
        for region, op in all_ops:
            if op.name in _LIST_UPDATES or op.name in ("cond", "while"):
                old = {k: op.attrs.pop(k) for k in _LIST_MARKS if k in op.attrs}
                marks = analysis.list_marks(op, region)  # only the facts that say "reuse"
                lists[op] = (old, {k: v for k, v in marks.items() if _any_true(v)})
    for op, decision in decisions.items():
        if op.name == "call":
            if decision:
                op.attrs["in_place_args"] = decision
            continue
        in_place, copy_value = decision
        if in_place:
            op.attrs["in_place"] = True
            if copy_value:
                op.attrs["copy_value"] = True
    for op, (_old, marks) in lists.items():
        op.attrs.update(marks)
    return (any(before[op] != decision for op, decision in decisions.items())
            or any(old != marks for old, marks in lists.values()))


def _any_true(mark: object) -> bool:
    return any(_any_true(m) for m in mark) if isinstance(mark, tuple) else bool(mark)


def _ops(region: ir.Region):
    for op in region.ops:
        yield region, op
        for inner in op.regions:
            yield from _ops(inner)
