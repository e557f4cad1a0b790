"""Indexing: ``getitem`` (NumPy basic and advanced indexing), the functional ``setitem``
(``x[index] = v`` as a new array: ``x = setitem(x, index, v)``) and ``scatter_add`` (a new array
``x`` with ``np.add.at(x, index, v)``: repeated positions of an advanced index accumulate; the
derivative of getitem emits it), with their VJPs.

The ``index`` attr is a tuple with one entry per index item: an int (static integer), None
(``np.newaxis``), ``"..."`` (Ellipsis), ``"?"`` (the next staged operand: a 0-d integer, an integer
array or a boolean mask), or a ``(start, stop, step)`` tuple for a slice whose parts are ints,
None or ``"?"`` (a staged 0-d integer). Operands: getitem ``x, *staged``; setitem ``x, v, *staged``
(``v`` already cast to x's dtype), scatter_add as setitem. Printed:
``getitem %x %i {index=("?", (1, None, None))}``.
Result shapes follow NumPy (advanced dimensions first when advanced indices are not adjacent);
a boolean mask gives an unknown dimension.
"""

from __future__ import annotations

import operator

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.autodiff import backprop, build
from autostage.runtime.ops import sorting  # noqa: F401 - take_along_axis, whose VJP is here
from autostage.runtime.types import TensorType

STAGED = "?"
ELLIPSIS = "..."
_INDEX_ERROR = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices")


def _classify(index: tuple, staged_types: list) -> list[tuple[str, object]]:
    """(kind, payload) per item: int, slice, newaxis, ellipsis, array (type) or mask (type)."""
    staged = iter(staged_types)
    items = []
    for entry in index:
        if entry is None:
            items.append(("newaxis", None))
        elif entry == ELLIPSIS:
            items.append(("ellipsis", None))
        elif isinstance(entry, tuple):
            parts = tuple(next(staged) if p == STAGED else p for p in entry)
            items.append(("slice", parts))
        elif entry == STAGED:
            t = next(staged)
            if t.dtype.kind == "b" and t.ndim > 0:
                items.append(("mask", t))
            elif t.dtype.kind not in "iu" or t.dtype.kind == "b":
                raise IndexError(_INDEX_ERROR)  # NumPy's message, exactly
            else:
                items.append(("int", t) if t.ndim == 0 else ("array", t))
        else:
            items.append(("int", entry))
    return items


def _expand(items: list, ndim: int) -> list:
    """Items with the Ellipsis (or the implicit trailing one) replaced by full slices."""
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(p.ndim if kind == "mask" else kind not in ("newaxis", "ellipsis")
                   for kind, p in items)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    full = [("slice", (None, None, None))] * (ndim - consumed)
    for i, (kind, _) in enumerate(items):
        if kind == "ellipsis":
            return items[:i] + full + items[i + 1:]
    return items + full


def _slice_length(parts: tuple, dim: int | None) -> int | None:
    if parts == (None, None, None):
        return dim
    if any(isinstance(p, TensorType) for p in parts) or dim is None:
        return None
    if parts[2] == 0:
        raise ValueError("slice step cannot be zero")
    return len(range(*slice(*parts).indices(dim)))


def index_shape(shape: tuple, index: tuple, staged_types: list) -> tuple:
    """The shape of ``x[index]`` for ``x`` of ``shape`` (NumPy's rules, unknown dims allowed)."""
    items = _expand(_classify(index, staged_types), len(shape))
    advanced = any(kind in ("array", "mask") for kind, _ in items)
    pieces: list = []  # result dims, with the marker ADV where advanced dims go
    adv_shapes, adv_positions, axis = [], [], 0
    for position, (kind, payload) in enumerate(items):
        if kind == "newaxis":
            pieces.append(1)
            continue
        dim = shape[axis]
        if kind == "slice":
            pieces.append(_slice_length(payload, dim))
        elif kind == "int" and not advanced:
            _check_bound(payload, dim, axis)
        else:
            adv_positions.append(position)
            pieces.append("ADV")
            adv_shapes.append(_advanced_shape(kind, payload, shape, axis))
        axis += payload.ndim if kind == "mask" else 1
    if not advanced:
        return tuple(pieces)
    adv = dtype_rules.broadcast_shapes(*adv_shapes)
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    first = pieces.index("ADV")
    rest = [d for d in pieces if d != "ADV"]
    return tuple(rest[:first] + list(adv) + rest[first:]) if adjacent else (*adv, *rest)


def _check_bound(entry: object, dim: int | None, axis: int) -> None:
    if isinstance(entry, int) and dim is not None and not -dim <= entry < dim:
        raise IndexError(f"index {entry} is out of bounds for axis {axis} with size {dim}")


def _advanced_shape(kind: str, payload: object, shape: tuple, axis: int) -> tuple:
    if kind == "int":
        _check_bound(payload, shape[axis], axis)
        return ()
    if kind == "mask":
        for i, d in enumerate(payload.shape):
            have = shape[axis + i]
            if d is not None and have is not None and d != have:
                raise IndexError(f"boolean index did not match indexed array along axis "
                                 f"{axis + i}; size of axis is {have} but size of corresponding "
                                 f"boolean axis is {d}")
        return (None,)
    return payload.shape


def build_index(index: tuple, staged_values: tuple) -> tuple:
    """The concrete NumPy index from the attr and the staged operands' values."""
    staged = iter(staged_values)
    result = []
    for entry in index:
        if entry == ELLIPSIS:
            result.append(Ellipsis)
        elif isinstance(entry, tuple):
            result.append(slice(*(operator.index(next(staged)) if p == STAGED else p
                                  for p in entry)))
        elif entry == STAGED:
            value = np.asarray(next(staged))
            result.append(operator.index(value) if value.ndim == 0 else value)
        else:
            result.append(entry)
    return tuple(result)


def _infer_getitem(operand_types: tuple, attrs: dict) -> tuple:
    x, *staged = operand_types
    return (TensorType(x.dtype, index_shape(x.shape, attrs["index"], staged)),)


def _infer_setitem(operand_types: tuple, attrs: dict) -> tuple:
    x, v, *staged = operand_types
    target = index_shape(x.shape, attrs["index"], staged)
    if v.dtype != x.dtype:
        raise TypeError(f"setitem: the value ({v}) must have the array's dtype {x.dtype}")
    value_shape = list(v.shape)
    while len(value_shape) > len(target) and value_shape[0] in (1, None):
        value_shape.pop(0)
    ok = len(value_shape) <= len(target) and all(
        have in (1, None, want) or want is None
        for have, want in zip(reversed(value_shape), reversed(target), strict=False))
    if not ok and None not in target:  # (else the sizes in the message come at run time)
        shapes = dtype_rules.format_shape(v.shape), dtype_rules.format_shape(target)
        if any(t.ndim for t in staged):  # NumPy's words for an advanced index
            raise ValueError("shape mismatch: value array of shape {} could not be broadcast "
                             "to indexing result of shape {}".format(*shapes))
        raise ValueError("could not broadcast input array from shape {} into shape {}".format(
            *shapes))
    return (x,)


def _evaluate_setitem(op, values: tuple, run) -> tuple:
    # in_place (passes/inplace.py): nothing reads the old x again, so write into it; NumPy's
    # own assignment handles a value that overlaps x (copy_value is for compiled code).
    x = values[0]
    in_place = op.attrs.get("in_place") and isinstance(x, np.ndarray) and x.ndim
    result = x if in_place else np.array(x, copy=True)
    result[build_index(op.attrs["index"], values[2:])] = values[1]
    return (result,)


def _evaluate_scatter_add(op, values: tuple, run) -> tuple:
    result = np.array(values[0], copy=True)
    np.add.at(result, build_index(op.attrs["index"], values[2:]), values[1])
    return (result,)


def _evaluate_getitem(op, values: tuple, run) -> tuple:
    # (a 0-d result, a view in NumPy for x[..., 0], is copied by the interpreter's loop)
    return (np.asarray(values[0][build_index(op.attrs["index"], values[1:])]),)


def _index_errors(x: TensorType, index: tuple) -> tuple:
    """What indexing ``x`` may raise at run time: nothing when every index is a literal int the
    static size shows in range (or a slice with a literal step); else IndexError, and ValueError
    too for a staged slice step (0 raises)."""
    consumed = sum(entry is not None and entry != ELLIPSIS for entry in index)
    may_fail = staged_step = False
    axis = 0
    for entry in index:
        if entry is None:
            continue
        if entry == ELLIPSIS:
            axis += x.ndim - consumed
            continue
        if isinstance(entry, tuple):
            staged_step |= entry[2] == STAGED
        else:
            may_fail |= (entry == STAGED or x.shape[axis] is None
                         or not -x.shape[axis] <= entry < x.shape[axis])
        axis += 1
    if staged_step:
        return (IndexError, ValueError)
    return (IndexError,) if may_fail else ()


def _getitem_raises(op) -> tuple:
    return _index_errors(op.operands[0].type, op.attrs["index"])


def _setitem_raises(op) -> tuple:
    """IndexError for any index (even one the sizes show in range), ValueError too for a staged
    step or a value whose shape may not broadcast into the indexed part (a size unknown when
    tracing)."""
    x, v, *staged = (operand.type for operand in op.operands)
    target = index_shape(x.shape, op.attrs["index"], staged)
    unknown = v.ndim and (None in v.shape or None in target)
    if unknown or ValueError in _index_errors(x, op.attrs["index"]):
        return (IndexError, ValueError)
    return (IndexError,)


def _getitem_fresh(op) -> bool:
    """Advanced indexing copies (NumPy and the cpu loops); a 0-d result is a scalar; basic
    indexing gives a view."""
    return op.results[0].type.ndim == 0 or any(v.type.ndim for v in op.operands[1:])


def _setitem_fresh(op) -> bool:
    """A copy with the write, unless the in-place pass let it write into its operand."""
    return not op.attrs.get("in_place")


op_registry.register(
    "getitem", _infer_getitem, _evaluate_getitem, raises=_getitem_raises,
    fresh_results=_getitem_fresh,
    doc="attrs: index (see ops/indexing.py); operands: x, staged index parts")
op_registry.register(
    "setitem", _infer_setitem, _evaluate_setitem, fresh_results=_setitem_fresh,
    raises=_setitem_raises,
    doc="attrs: index, and in_place / copy_value set by passes/inplace.py; operands: x, v "
        "(x's dtype), staged index parts; a new array x' with x'[index] = v (x is not "
        "modified, or, in_place, is dead and x' is x written into)")
op_registry.register(
    "scatter_add", _infer_setitem, _evaluate_scatter_add, fresh_results=True,
    raises=_setitem_raises,
    doc="attrs: index; operands: x, v (x's dtype), staged index parts; a new array x' = x "
        "with np.add.at(x', index, v): positions an advanced index repeats accumulate")


# -- reverse-mode derivatives (runtime/autodiff) -------------------------------------------------
def _newaxis_positions(index: tuple, staged: tuple, ndim: int) -> tuple[int, ...]:
    """The result axes that the newaxis entries of a basic ``index`` on an ``ndim``-d array
    make."""
    items = _expand(_classify(index, [v.type for v in staged]), ndim)
    positions, axis = [], 0
    for kind, _ in items:
        if kind == "newaxis":
            positions.append(axis)
        if kind in ("newaxis", "slice"):
            axis += 1
    return tuple(positions)


def _vjp_getitem(op, cts: tuple) -> tuple:
    """Basic index: zeros with the cotangent written at the index (newaxes squeezed out first);
    advanced: ``scatter_add`` into zeros, so positions read twice get both cotangents."""
    x, *staged = op.operands
    ct, index = cts[0], op.attrs["index"]
    none = (None,) * len(staged)
    if x.type.ndim == 0:  # x[()], x[None]...: the value itself, maybe with unit axes
        return (ct, *none)
    zeros = build.zeros_like(x)
    if any(v.type.ndim for v in staged):  # an integer array or a mask
        return (build.op1("scatter_add", zeros, ct, *staged, index=index), *none)
    newaxes = _newaxis_positions(index, tuple(staged), x.type.ndim)
    if newaxes:
        ct = build.op1("squeeze", ct, axis=newaxes)
        index = tuple(entry for entry in index if entry is not None)
    return (build.op1("setitem", zeros, ct, *staged, index=index), *none)


def _last_writes(x, staged: tuple, index: tuple, like):
    """1 where a position of ``x[index] = v`` (shaped like ``like``, the indexed target) is the
    write that stays, 0 where a later position of the index writes the same element (NumPy and
    the cpu loops write in C order, the last write winning): a second setitem of the positions'
    numbers, read back."""
    int64 = np.dtype(np.int64)
    count = build.op1("size", like)
    numbers = build.op1("arange", build.constant(0, int64), count, build.constant(1, int64),
                        dtype=int64)
    shape, sizes = build.shape_of(like)
    numbers = build.op1("reshape", numbers, *sizes, shape=shape)
    marks = build.op1("full_like", x, build.constant(-1, int64), dtype=int64)
    marks = build.op1("setitem", marks, numbers, *staged, index=index)
    kept = build.op1("equal", build.op1("getitem", marks, *staged, index=index), numbers)
    return build.cast(kept, like.type.dtype)


def _vjp_setitem(op, cts: tuple) -> tuple:
    """x: the cotangent with zeros where the write replaced x; v: the cotangent at the index, of
    the writes that stayed (a repeated position of an integer array index keeps the last)."""
    is_active = backprop.is_active
    x, v, *staged = op.operands
    ct, index = cts[0], op.attrs["index"]
    zero = build.constant(0, ct.type.dtype)
    ct_x = build.op1("setitem", ct, zero, *staged, index=index) if is_active(x) else None
    ct_v = None
    if is_active(v):
        at = build.op1("getitem", ct, *staged, index=index)
        if any(t.type.ndim and t.type.dtype.kind in "iu" for t in staged):
            at = build.mul(at, _last_writes(x, tuple(staged), index, at))
        ct_v = _adjust_rank(at, v)
    return (ct_x, ct_v, *(None,) * len(staged))


def _adjust_rank(found, v):
    """``found`` (the indexed target's shape) with the leading unit axes ``v`` may have beyond
    the target's rank (the sweep then sums it to ``v``'s shape)."""
    extra = v.type.ndim - found.type.ndim
    if extra > 0:
        found = build.op1("expand_dims", found, axis=tuple(range(extra)))
    return found


def _vjp_scatter_add(op, cts: tuple) -> tuple:
    x, v, *staged = op.operands
    ct, index = cts[0], op.attrs["index"]
    at = _adjust_rank(build.op1("getitem", ct, *staged, index=index), v)
    return (ct, at, *(None,) * len(staged))


def _vjp_take_along_axis(op, cts: tuple) -> tuple:
    """The cotangent added (``scatter_add``) into zeros at the positions read: the index of
    ``np.take_along_axis`` as NumPy builds it (an ``arange`` per other axis, broadcast)."""
    arr, indices = op.operands
    ct, axis = cts[0], op.attrs["axis"]
    int64 = np.dtype(np.int64)
    if axis is None:
        shape, sizes = build.shape_of(arr)
        flat = build.op1("reshape", arr, shape=(-1,))
        ct_flat = build.op1("scatter_add", build.zeros_like(flat), ct, indices, index=(STAGED,))
        return (build.op1("reshape", ct_flat, *sizes, shape=shape), None)
    axis = dtype_rules.normalize_axis(axis, arr.type.ndim)
    parts = []
    for i in range(arr.type.ndim):
        if i == axis:
            parts.append(build.cast(indices, int64))
            continue
        n = build.op1("dim", arr, axis=i)
        numbers = build.op1("arange", build.constant(0, int64), n, build.constant(1, int64),
                            dtype=int64)
        unit = tuple(k for k in range(arr.type.ndim) if k != i)
        parts.append(build.op1("expand_dims", numbers, axis=unit))
    index = (STAGED,) * arr.type.ndim
    return (build.op1("scatter_add", build.zeros_like(arr), ct, *parts, index=index), None)


op_registry.lookup("getitem").vjp = _vjp_getitem
op_registry.lookup("setitem").vjp = _vjp_setitem
op_registry.lookup("scatter_add").vjp = _vjp_scatter_add
op_registry.lookup("take_along_axis").vjp = _vjp_take_along_axis
