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
"""

from __future__ import annotations

from autostage.runtime import ir
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

