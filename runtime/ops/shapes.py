"""Shape ops: reshape, transpose, expand_dims, squeeze, concatenate, stack, broadcast_to, copy,
and the staged shape queries ``dim`` and ``size``.

A size that is known only at run time is a 0-d integer operand: the ``shape`` attr of reshape /
broadcast_to (and of creation ops) holds an int for each static size and ``None`` for each staged
one, which takes the next extra operand in order: ``reshape %x %n {shape=(None, -1)}``. Axes in
attrs are normalized (non-negative) by the front end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.autodiff import build
from autostage.runtime.types import TensorType

INDEX_DTYPE = np.dtype(np.int64)  # the dtype of staged sizes (NumPy's intp on 64-bit)


def fill_shape(shape_attr: tuple, sizes: Sequence[object]) -> tuple[int, ...]:
    """The concrete shape: ``shape_attr`` with each None replaced by the next staged size."""
    sizes = iter(sizes)
    return tuple(int(next(sizes)) if d is None else d for d in shape_attr)


def check_sizes(operand_types: tuple, shape_attr: tuple, what: str) -> None:
    """The staged sizes must be as many 0-d integer tensors as the Nones in ``shape_attr``."""
    if len(operand_types) != sum(d is None for d in shape_attr):
        raise TypeError(f"{what}: {len(operand_types)} staged sizes for shape {shape_attr}")
    for t in operand_types:
        if t.ndim != 0 or t.dtype.kind not in "iu":
            raise TypeError(f"{what}: a staged size must be a 0-d integer tensor, got {t}")


def _infer_reshape(operand_types: tuple, attrs: dict) -> tuple:
    x, *sizes = operand_types
    shape = attrs["shape"]
    check_sizes(tuple(sizes), shape, "reshape")
    if sum(d == -1 for d in shape) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = [d for d in shape if d is not None and d != -1]
    result = tuple(None if d is None else d for d in shape)
    if None not in x.shape and None not in shape:
        total = math.prod(x.shape)
        rest = math.prod(known)
        if (-1 not in shape and rest != total) or (-1 in shape and (rest == 0 or total % rest)):
            text = "(" + ",".join("newaxis" if d == -1 else str(d) for d in shape) + (
                ",)" if len(shape) == 1 else ")")  # NumPy's text for -1
            raise ValueError(f"cannot reshape array of size {total} into shape {text}")
    if -1 in shape:
        missing = None
        if None not in x.shape and None not in shape and math.prod(known):
            missing = math.prod(x.shape) // math.prod(known)
        result = tuple(missing if d == -1 else d for d in result)
    return (TensorType(x.dtype, result),)


def _evaluate_reshape(op, values: tuple, run) -> tuple:
    return (np.reshape(values[0], fill_shape(op.attrs["shape"], values[1:])),)


def _infer_transpose(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = operand_types
    axes = attrs["axes"]
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError("axes don't match array")
    return (TensorType(x.dtype, tuple(x.shape[a] for a in axes)),)


def _infer_expand_dims(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = operand_types
    ndim = x.ndim + len(attrs["axis"])
    dims = iter(x.shape)
    return (TensorType(x.dtype, tuple(1 if i in attrs["axis"] else next(dims)
                                      for i in range(ndim))),)


def _infer_squeeze(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = operand_types
    for a in attrs["axis"]:
        if x.shape[a] not in (1, None):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return (TensorType(x.dtype, tuple(d for i, d in enumerate(x.shape)
                                      if i not in attrs["axis"])),)


def _joined(operand_types: tuple, skip: int | None, what: str) -> list:
    """The dims all operands share (joined), except axis ``skip``; ranks must agree (NumPy's
    messages: concatenate names the arrays and sizes, stack only says the shapes differ)."""
    first = operand_types[0]
    dims = list(first.shape)
    conflicts: set[int] = set()  # axes whose known sizes differ where array 0's is unknown
    for index, t in enumerate(operand_types[1:], 1):
        if t.ndim != first.ndim:
            if what == "stack":
                raise ValueError("all input arrays must have the same shape")
            raise ValueError(f"all the input arrays must have same number of dimensions, but "
                             f"the array at index 0 has {first.ndim} dimension(s) and the array "
                             f"at index {index} has {t.ndim} dimension(s)")
        for i, d in enumerate(t.shape):
            if i == skip:
                continue
            if i in conflicts:
                continue
            if d is not None and dims[i] is not None and d != dims[i]:
                if first.shape[i] is None:  # NumPy's message names array 0's size: at run time
                    conflicts.add(i)
                    dims[i] = None
                    continue
                if what == "stack":
                    raise ValueError("all input arrays must have the same shape")
                raise ValueError(f"all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {i}, the array "
                                 f"at index 0 has size {first.shape[i]} and the array at index "
                                 f"{index} has size {d}")
            dims[i] = dims[i] if d is None else d
    return dims


def _infer_concatenate(operand_types: tuple, attrs: dict) -> tuple:
    axis = attrs["axis"]
    if not operand_types:
        raise ValueError("need at least one array to concatenate")
    if operand_types[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    dims = _joined(operand_types, axis, "concatenate")
    lengths = [t.shape[axis] for t in operand_types]
    dims[axis] = None if None in lengths else sum(lengths)
    dtype = dtype_rules.result_type_of(tuple(t.dtype for t in operand_types))
    return (TensorType(dtype, tuple(dims)),)


def _infer_stack(operand_types: tuple, attrs: dict) -> tuple:
    if not operand_types:
        raise ValueError("need at least one array to stack")
    dims = _joined(operand_types, None, "stack")
    dims.insert(attrs["axis"], len(operand_types))
    dtype = dtype_rules.result_type_of(tuple(t.dtype for t in operand_types))
    return (TensorType(dtype, tuple(dims)),)


def _infer_broadcast_to(operand_types: tuple, attrs: dict) -> tuple:
    x, *sizes = operand_types
    shape = attrs["shape"]
    check_sizes(tuple(sizes), shape, "broadcast_to")
    if len(shape) < x.ndim:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    for have, want in zip(reversed(x.shape), reversed(shape), strict=False):
        if have is not None and want is not None and have not in (1, want):
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {dtype_rules.format_shape(x.shape)}  and "
                             f"requested shape {dtype_rules.format_shape(shape)}")  # NumPy's 2
    return (TensorType(x.dtype, shape),)


def _infer_dim(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = operand_types
    dtype_rules.normalize_axis(attrs["axis"], x.ndim)
    return (TensorType(INDEX_DTYPE, ()),)


def _same(operand_types: tuple, attrs: dict) -> tuple:
    return (operand_types[0],)


def _scalar_index(operand_types: tuple, attrs: dict) -> tuple:
    return (TensorType(INDEX_DTYPE, ()),)


_OPS = {
    "reshape": (_infer_reshape, _evaluate_reshape,
                "attrs: shape (ints, -1 once, None = next staged size operand); operands x, sizes"),
    "transpose": (_infer_transpose,
                  lambda op, v, run: (np.transpose(v[0], op.attrs["axes"]),),
                  "attrs: axes (a permutation tuple)"),
    "expand_dims": (_infer_expand_dims,
                    lambda op, v, run: (np.expand_dims(v[0], op.attrs["axis"]),),
                    "attrs: axis (tuple of result axes)"),
    "squeeze": (_infer_squeeze, lambda op, v, run: (np.squeeze(v[0], op.attrs["axis"]),),
                "attrs: axis (tuple of axes; each must have size 1)"),
    "concatenate": (_infer_concatenate,
                    lambda op, v, run: (np.concatenate(v, axis=op.attrs["axis"]),),
                    "attrs: axis (int); operands: the arrays"),
    "stack": (_infer_stack, lambda op, v, run: (np.stack(v, axis=op.attrs["axis"]),),
              "attrs: axis (int, of the result); operands: arrays of one shape"),
    "broadcast_to": (_infer_broadcast_to,
                     lambda op, v, run: (np.broadcast_to(
                         v[0], fill_shape(op.attrs["shape"], v[1:])),),
                     "attrs: shape (ints, None = next staged size operand); operands x, sizes"),
    "copy": (_same, lambda op, v, run: (np.array(v[0], copy=True),), "np.copy(x); no attrs"),
    "dim": (_infer_dim,
            lambda op, v, run: (np.asarray(np.shape(v[0])[op.attrs["axis"]], INDEX_DTYPE),),
            "attrs: axis; x.shape[axis] as a 0-d int64 (weak: a Python int in user code)"),
    "size": (_scalar_index, lambda op, v, run: (np.asarray(np.size(v[0]), INDEX_DTYPE),),
             "x.size as a 0-d int64 (weak); no attrs"),
}
# Sizes known only at run time may not fit (reshape, broadcast_to...); the others' operand types
# and attrs, checked when tracing, suffice.
_CANNOT_FAIL = frozenset({"copy", "dim", "size", "transpose", "expand_dims"})
_FRESH = frozenset({"copy", "concatenate", "stack", "dim", "size"})  # the others may return views
# (dim and size give an int: no view)
for _name, (_infer, _evaluate, _doc) in _OPS.items():
    op_registry.register(_name, _infer, _evaluate, doc=_doc, fresh_results=_name in _FRESH,
                         raises=() if _name in _CANNOT_FAIL else (ValueError,))


# -- reverse-mode derivatives (runtime/autodiff): cotangent of each operand given the result's ---
def axis_slice(ndim: int, axis: int, start: object, stop: object) -> tuple[tuple, list]:
    """A getitem index taking ``start:stop`` along ``axis`` of an ``ndim``-d array (each bound an
    int, None or a staged 0-d value): the ``index`` attr and its staged operands."""
    parts, staged = [], []
    for bound in (start, stop):
        if bound is None or isinstance(bound, int):
            parts.append(bound)
        else:
            parts.append("?")
            staged.append(bound)
    full = (None, None, None)
    return (*(full,) * axis, (*parts, None), *(full,) * (ndim - axis - 1)), staged


def _vjp_reshape(op, cts: tuple) -> tuple:
    x = op.operands[0]
    shape, sizes = build.shape_of(x)
    ct = build.op1("reshape", cts[0], *sizes, shape=shape)
    return (ct, *(None,) * (len(op.operands) - 1))


def _vjp_transpose(op, cts: tuple) -> tuple:
    inverse = tuple(int(i) for i in np.argsort(op.attrs["axes"]))
    return (build.op1("transpose", cts[0], axes=inverse),)


def _vjp_expand_dims(op, cts: tuple) -> tuple:
    return (build.op1("squeeze", cts[0], axis=tuple(op.attrs["axis"])),)


def _vjp_squeeze(op, cts: tuple) -> tuple:
    return (build.op1("expand_dims", cts[0], axis=tuple(op.attrs["axis"])),)


def _vjp_concatenate(op, cts: tuple) -> tuple:
    """Each operand's slice of the cotangent along the axis; offsets static where the lengths
    are, else staged sums of ``dim``s."""
    axis, ct = op.attrs["axis"], cts[0]
    found, start = [], 0
    for x in op.operands:
        n = x.type.shape[axis]
        length = n if n is not None else build.op1("dim", x, axis=axis)
        stop = start + length if isinstance(start, int) and isinstance(length, int) else (
            build.add(_staged(start), _staged(length)))
        index, staged = axis_slice(ct.type.ndim, axis, start, stop)
        found.append(build.op1("getitem", ct, *staged, index=index))
        start = stop
    return tuple(found)


def _staged(n):
    return build.constant(n, INDEX_DTYPE) if isinstance(n, int) else n


def _vjp_stack(op, cts: tuple) -> tuple:
    axis = op.attrs["axis"]
    lead = ((None, None, None),) * axis
    return tuple(build.op1("getitem", cts[0], index=(*lead, i)) for i in range(len(op.operands)))


def _vjp_broadcast_to(op, cts: tuple) -> tuple:
    """The sweep sums the cotangent to x's shape (``build.like``)."""
    return (cts[0], *(None,) * (len(op.operands) - 1))


for _name, _vjp in (("reshape", _vjp_reshape), ("transpose", _vjp_transpose),
                    ("expand_dims", _vjp_expand_dims), ("squeeze", _vjp_squeeze),
                    ("concatenate", _vjp_concatenate), ("stack", _vjp_stack),
                    ("broadcast_to", _vjp_broadcast_to),
                    ("copy", lambda op, cts: (cts[0],)),
                    ("dim", op_registry.NO_GRADIENT), ("size", op_registry.NO_GRADIENT)):
    op_registry.lookup(_name).vjp = _vjp
