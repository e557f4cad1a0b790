"""Which tensor lists the cpu backend keeps as one growing buffer instead of a typed list.

A trajectory (``ys.append(y)`` in a loop, ``np.stack(ys)`` after it) kept as a
``numba.typed.List`` of arrays costs an allocation per append that can never be reused, about
0.1 us each, more than an ODE step's arithmetic; a typed list of scalars costs a call into
Numba's list runtime per append (11% of an ODE trajectory, measured). When a list is only
appended to,
measured (``len``) and stacked, its items can instead be copied into the rows of one buffer that
doubles when full: ``(buffer, count, mismatch)``, a Numba tuple that flows through loops and
branches like any value. Items are values in the IR (a write into an array another reference
holds is refused when tracing, runtime/array_identity.py), so copying an item when it is
appended is what Python's list of references shows. An item whose shape differs from the first
is not stored but sets ``mismatch``, and ``np.stack`` then raises NumPy's error, where Python
would; ``len`` stays exact. Scalar items (0-d) are the elements of a 1-d buffer and never
mismatch.

``find(function)`` returns the list values of such families: list values joined by the ops that
make one list from another (``list_append``; a ``while``'s initial, carried and final values; a
``cond``'s yields and results), all made by ``list_new`` and read only by ``list_append``,
``list_length``, ``list_stack`` and those joins. A list read any other way (indexed, popped,
passed to a call, returned, printed, made by ``undef`` or a call) stays a typed list.

``rows_in_place(function, buffers)`` finds the appends whose item a ``fused`` loop computes just
before, in the same block, from a list already made: that loop may write its elements straight
into the buffer's next row (``h = np.tanh(...); hs.append(h)`` as a hand-written loop writes
``out[t]``), so the append copies nothing; ``h`` is then a view of that row, which no later
append or stack changes (rows before the count are never written again); it may be read only
into new arrays, and a loop result it becomes is copied, so that no returned array shares
memory with the stacked list.

``reservations(function, buffers)`` finds loops that count ``i`` from a constant up to a bound
(``while i < n``, ``i += 1``: a ``for`` over a staged ``range``) and append to a new list once in
every iteration: the list starts with room for all their rows, so it never grows (no copies of
the rows so far, and the buffer is exactly the stacked result).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.ops import fused as fused_op
from autostage.runtime.passes import analysis
from autostage.runtime.types import ListType, TensorType

_READERS = frozenset({"list_append", "list_length", "list_stack", "while", "cond"})


def find(function: ir.Function) -> frozenset[ir.Value]:
    """The list values of ``function`` kept as buffers (see the module docstring)."""
    parent: dict[ir.Value, ir.Value] = {}

    def root(v: ir.Value) -> ir.Value:
        while parent.get(v, v) is not v:
            v = parent[v]
        return v

    def join(a: ir.Value, b: ir.Value) -> None:
        if _is_tensor_list(a) and _is_tensor_list(b):
            parent[root(a)] = root(b)

    bad: set[ir.Value] = set()  # values read or made in a way a buffer cannot serve
    for op in function.body.walk():
        _join_op(op, join)
        for slot, value in enumerate(op.operands):
            if _is_tensor_list(value) and not _allowed_read(op, slot):
                bad.add(value)
        for value in op.results:
            if _is_tensor_list(value) and op.name not in ("list_new", "list_append", "while",
                                                        "cond"):
                bad.add(value)
    bad.update(v for v in function.body.results if _is_tensor_list(v))
    bad.update(v for v in function.body.args if _is_tensor_list(v))
    values = _all_list_values(function)
    bad_roots = {root(v) for v in bad}
    return frozenset(v for v in values if root(v) not in bad_roots)


def rows_in_place(function: ir.Function, buffers: frozenset[ir.Value]
                  ) -> tuple[dict[ir.Value, ir.Op], dict[ir.Op, tuple[int, ...]]]:
    """(item -> its ``list_append``, while op -> positions of its results to copy after it),
    for appends to a buffer whose array item is the result of a ``fused`` loop (without a
    reduction) earlier in the same region, appended to a list value defined before that loop
    (an argument of the region or an earlier op's result, here or outside). The item, a view
    of the buffer's row, must not be seen elsewhere (a returned or stored row would share
    memory with the stacked list): it is read only by ops that make new arrays of it, and
    carried by a loop only into such readers; a loop result it may become is copied."""
    found: dict[ir.Value, ir.Op] = {}
    copies: dict[ir.Op, tuple[int, ...]] = {}
    for owner, region in [(None, function.body)] + [
            (op, r) for op in function.body.walk() for r in op.regions]:
        position = {op: i for i, op in enumerate(region.ops)}
        for op in region.ops:
            if op.name != "list_append" or op.results[0] not in buffers:
                continue
            lst, item = op.operands
            maker = item.producer
            if not (isinstance(maker, ir.Op) and maker.name == "fused" and maker in position
                    and position[maker] < position[op] and item.type.ndim > 0
                    and not fused_op.is_fusible_reduction(maker.regions[0].ops[-1])):
                continue
            source = lst.producer
            if isinstance(source, ir.Op) and source in position and (
                    position[source] > position[maker]):
                continue  # made after the loop: not there yet when the loop runs
            carried = _carried_only_into_new_arrays(owner, region, item, op)
            if carried is None:
                continue
            found[item] = op
            if carried:
                copies[owner] = tuple(sorted({*copies.get(owner, ()), *carried}))
    return found, copies


def _carried_only_into_new_arrays(loop: ir.Op | None, region: ir.Region, item: ir.Value,
                                  append: ir.Op) -> tuple[int, ...] | None:
    """The positions ``item`` is carried at when ``region`` is ``loop``'s body and every other
    reader (here, and of the carried value in the next iteration's test and body) makes new
    arrays of it; None when some reader may keep a view of it."""
    body = loop.regions[1] if loop is not None and loop.name == "while" else None
    carried = tuple(k for k, v in enumerate(region.results) if v is item)
    if carried and region is not body:
        return None
    if not analysis.read_into_new_arrays(region, item, frozenset({append}), yielded=True):
        return None
    cond = loop.regions[0] if carried else None
    for k in carried:
        if not (analysis.read_into_new_arrays(body, body.args[k])
                and analysis.read_into_new_arrays(cond, cond.args[k])):
            return None
    return carried


def reservations(function: ir.Function, buffers: frozenset[ir.Value]
                 ) -> dict[ir.Op, dict[int, tuple[ir.Value, int]]]:
    """while op -> {carried list position: (bound, start)}: the loop runs ``bound - start``
    times (at most) and appends once to that list in every iteration, which is new (made by
    ``list_new``) when the loop starts."""
    found: dict[ir.Op, dict[int, tuple[ir.Value, int]]] = {}
    for op in function.body.walk():
        if op.name != "while":
            continue
        counted = analysis.counted_loop(op)
        if counted is None:
            continue
        body = op.regions[1]
        lists = {}
        for k, init in enumerate(op.operands):
            step = body.results[k].producer
            if (init in buffers and isinstance(init.producer, ir.Op)
                    and init.producer.name == "list_new" and isinstance(step, ir.Op)
                    and step.name == "list_append" and step.operands[0] is body.args[k]
                    and step in body.ops):
                lists[k] = counted[1:]
        if lists:
            found[op] = lists
    return found


def _join_op(op: ir.Op, join) -> None:
    if op.name == "list_append":
        join(op.operands[0], op.results[0])
    elif op.name == "while":
        cond, body = op.regions
        for k, result in enumerate(op.results):
            for value in (op.operands[k], cond.args[k], body.args[k], body.results[k]):
                join(value, result)
    elif op.name == "cond":
        for region in op.regions:
            for result, value in zip(op.results, region.results, strict=True):
                join(value, result)


def _allowed_read(op: ir.Op, slot: int) -> bool:
    if op.name == "list_append":
        return slot == 0
    return op.name in _READERS


def _all_list_values(function: ir.Function) -> set[ir.Value]:
    values: set[ir.Value] = set()
    for op in function.body.walk():
        values.update(v for v in op.results if _is_tensor_list(v))
        for inner in op.regions:
            values.update(v for v in inner.args if _is_tensor_list(v))
    return values


def _is_tensor_list(value: ir.Value) -> bool:
    return isinstance(value.type, ListType) and isinstance(value.type.element, TensorType)

