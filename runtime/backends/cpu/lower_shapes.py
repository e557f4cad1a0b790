"""CPU lowerings of the shape ops: reshape, transpose, expand_dims, squeeze, concatenate, stack,
broadcast_to, copy.

Views stay views where Numba makes them cheaply (transpose, expand_dims and squeeze are basic
indexing), since the IR is functional and nothing writes through them (setitem copies first).
Numba reshapes only C-contiguous arrays, so reshape goes through ``np.ascontiguousarray`` (no
copy when the array already is). concatenate/stack/broadcast_to fill a new array by slice
assignment, which also converts dtypes and needs no ``np.concatenate`` typing of mixed inputs;
broadcast_to materializes (Numba's read-only broadcast views would not unify with other arrays).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import array_writes, run_errors
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, lowering


def staged_shape(em: Emitter, shape_attr: tuple, sizes: tuple[ir.Value, ...]) -> list[str]:
    """The size expressions of a ``shape`` attr: ints, and None taken from the staged sizes."""
    staged: Iterator[ir.Value] = iter(sizes)
    return [f"np.int64({em.name(next(staged))})" if d is None else str(d) for d in shape_attr]


@lowering("reshape")
def lower_reshape(op: ir.Op, em: Emitter) -> None:
    x, *sizes = op.operands
    result = op.results[0]
    out, xname = em.name(result), em.name(x)
    shape = staged_shape(em, op.attrs["shape"], tuple(sizes))
    if x.type.ndim == 0:  # one element: a -1 size is 1
        shape = ["1" if a == -1 else d for d, a in zip(shape, op.attrs["shape"], strict=True)]
        em.line(f"{out} = {xname}" if result.type.ndim == 0 else
                f"{out} = {s.full(em, shape, xname)}")
    elif result.type.ndim == 0:
        em.line(f"if {xname}.size != 1:")
        with em.block():
            em.line("raise ValueError('cannot reshape array into shape ()')")
        em.line(f"{out} = {s.first(xname, x.type.ndim)}")
    else:
        _check_reshape(op, em, shape)
        em.line(f"{out} = {s.reshaped(em, xname, shape)}")


def _check_reshape(op: ir.Op, em: Emitter, shape: list[str]) -> None:
    """NumPy's check of a reshape whose sizes are known only at run time: the sizes must
    multiply to the array's size, or divide it with a nonzero product around the -1. Numba's
    reshape accepted ``np.zeros(0).reshape(0, -1)`` (giving shape (0, 0))."""
    x, attr = op.operands[0], op.attrs["shape"]
    if (None not in x.type.shape and None not in attr) or op.attrs.get("checked"):
        return  # checked when the op was traced, or made by a pass from the array's own sizes
    if -1 in attr and None not in attr and np.prod([a for a in attr if a != -1]) == 1:
        return  # ``x.reshape(-1)``, ``x.reshape(1, -1)``: any size divides by one
    known = [d for d, a in zip(shape, attr, strict=True) if a != -1]
    rest = " * ".join(f"np.int64({d})" for d in known) or "np.int64(1)"
    size = f"{em.name(x)}.size"
    if -1 in attr:  # (a divisor of at least 1: both sides of `|` are evaluated)
        test = f"({rest} == 0) | ({size} % {s.int_max(rest, '1')} != 0)"
    else:
        test = f"{rest} != {size}"
    sizes = [size]
    parts = []
    for d, a in zip(shape, attr, strict=True):
        if a is None:
            parts.append(f"{{{len(sizes)}}}")
            sizes.append(d)
        else:
            parts.append("newaxis" if a == -1 else str(a))
    text = "(" + ",".join(parts) + ("," if len(parts) == 1 else "") + ")"
    # Formatted in Python when it fails (``run_errors``): ``str`` of an int in Numba compiled
    # its string machinery into the program (0.3-0.5 s per program).
    run_errors.check(em, op, test, ValueError, f"cannot reshape array of size {{0}} into shape "
                     f"{text}", sizes)


@lowering("transpose")
def lower_transpose(op: ir.Op, em: Emitter) -> None:
    axes = tuple(op.attrs["axes"])
    x = em.name(op.operands[0])
    if axes == tuple(range(len(axes))):
        em.line(f"{em.name(op.results[0])} = {x}")
    elif axes == tuple(reversed(range(len(axes)))):  # x.T: np.transpose(x, axes) took Numba 2 s
        em.line(f"{em.name(op.results[0])} = {x}.T")
    else:
        em.line(f"{em.name(op.results[0])} = np.transpose({x}, {s.shape_tuple(map(str, axes))})")


@lowering("expand_dims")
def lower_expand_dims(op: ir.Op, em: Emitter) -> None:
    x, result = op.operands[0], op.results[0]
    out = em.name(result)
    if x.type.ndim == 0:
        em.line(f"{out} = {s.full(em, ['1'] * result.type.ndim, em.name(x))}")
        return
    index = ["None" if i in op.attrs["axis"] else ":" for i in range(result.type.ndim)]
    em.line(f"{out} = {em.name(x)}[{', '.join(index)}]")


@lowering("squeeze")
def lower_squeeze(op: ir.Op, em: Emitter) -> None:
    x, result = op.operands[0], op.results[0]
    xname, sizes = em.name(x), s.dims(em, x)
    for a in op.attrs["axis"]:
        if x.type.shape[a] is None:
            em.line(f"if {sizes[a]} != 1:")
            with em.block():
                em.line("raise ValueError('cannot select an axis to squeeze out which has size "
                        "not equal to one')")
    index = ["0" if i in op.attrs["axis"] else ":" for i in range(x.type.ndim)]
    em.line(f"{em.name(result)} = {s.index_expr(xname, index)}")


def _assign_parts(em: Emitter, out: str, ndim: int, axis: int, parts: list[str],
                  lengths: list[str | None]) -> None:
    """``out[..., a:b, ...] = part`` for each part (``lengths`` None: one index, as stack)."""
    offset = em.fresh("off")
    em.line(f"{offset} = 0")
    for part, length in zip(parts, lengths, strict=True):
        index = [":"] * ndim
        index[axis] = offset if length is None else f"{offset}:{offset} + {length}"
        rank = ndim - (length is None)  # the part's, checked equal to the slot's
        if rank:
            array_writes.assign(em, s.index_expr(out, index), rank, part, rank)
        else:
            em.line(f"{s.index_expr(out, index)} = {part}")
        em.line(f"{offset} += {1 if length is None else length}")


@lowering("concatenate")
def lower_concatenate(op: ir.Op, em: Emitter) -> None:
    axis, result = op.attrs["axis"], op.results[0]
    out = em.name(result)
    lengths = [s.dims(em, v)[axis] for v in op.operands]
    first = s.dims(em, op.operands[0])
    _check_parts(em, op, axis)
    sizes = [" + ".join(lengths) if i == axis else d for i, d in enumerate(first)]
    sizes = [str(d) if d is not None else sizes[i] for i, d in enumerate(result.type.shape)]
    em.line(f"{out} = {s.empty(em, sizes, result.type.dtype)}")
    _assign_parts(em, out, result.type.ndim, axis, [em.name(v) for v in op.operands], lengths)


def _check_parts(em: Emitter, op: ir.Op, axis: int) -> None:
    """NumPy's error (with the sizes) when a part differs from the first off the axis."""
    first = op.operands[0]
    for i, part in enumerate(op.operands[1:], 1):
        for d in range(first.type.ndim):
            if d == axis or (first.type.shape[d] is not None
                             and first.type.shape[d] == part.type.shape[d]):
                continue
            a, b = s.dims(em, first)[d], s.dims(em, part)[d]
            run_errors.check(
                em, op, f"{a} != {b}", ValueError,
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly, but along dimension {d}, the array at index 0 has size {{0}} and "
                f"the array at index {i} has size {{1}}", [a, b])


@lowering("stack")
def lower_stack(op: ir.Op, em: Emitter) -> None:
    axis, result = op.attrs["axis"], op.results[0]
    out = em.name(result)
    sizes = s.dims(em, op.operands[0])
    sizes.insert(axis, str(len(op.operands)))
    sizes = [str(d) if d is not None else sizes[i] for i, d in enumerate(result.type.shape)]
    head = op.operands[0]
    first = s.dims(em, head)
    tests = [f"({a} != {b})" for part in op.operands[1:]
             for k, (a, b) in enumerate(zip(first, s.dims(em, part), strict=True))
             if not s.same_size(em, head, k, part, k)]
    if tests:  # (the slots' writes would broadcast a part of size 1)
        run_errors.check(em, op, " | ".join(tests), ValueError,
                         "all input arrays must have the same shape", [])
    em.line(f"{out} = {s.empty(em, sizes, result.type.dtype)}")
    parts = [em.name(v) for v in op.operands]
    _assign_parts(em, out, result.type.ndim, axis, parts, [None] * len(parts))


@lowering("broadcast_to")
def lower_broadcast_to(op: ir.Op, em: Emitter) -> None:
    x, *sizes = op.operands
    result = op.results[0]
    out, xname = em.name(result), em.name(x)
    shape = staged_shape(em, op.attrs["shape"], tuple(sizes))
    if result.type.ndim == 0:
        em.line(f"{out} = {xname}")
        return
    _check_broadcast_to(op, em, shape)
    em.line(f"{out} = {s.empty(em, shape, result.type.dtype)}")
    if x.type.ndim == 0:
        em.line(f"{out}[...] = {xname}")
    else:
        array_writes.assign(em, out, result.type.ndim, xname, x.type.ndim)


def _check_broadcast_to(op: ir.Op, em: Emitter, shape: list[str]) -> None:
    """NumPy's error when a size known only at run time does not broadcast (Numba's slice
    assignment would say "cannot assign slice of shape ...")."""
    x = op.operands[0]
    have, want = s.dims(em, x), shape
    offset = len(want) - len(have)
    tests = []
    for i, d in enumerate(x.type.shape):
        target = op.results[0].type.shape[offset + i]
        if d == 1 or (d is not None and d == target):
            continue
        tests.append(f"(({have[i]} != 1) & ({have[i]} != {want[offset + i]}))")
    if not tests:
        return

    def text(count: int, first: int) -> str:
        parts = ",".join(f"{{{first + i}}}" for i in range(count))
        return f"({parts}{',' if count == 1 else ''})"
    run_errors.check(
        em, op, " | ".join(tests), ValueError,
        "operands could not be broadcast together with remapped shapes [original->remapped]: "
        f"{text(len(have), 0)}  and requested shape {text(len(want), len(have))}",
        [*have, *want])


@lowering("copy")
def lower_copy(op: ir.Op, em: Emitter) -> None:
    x = op.operands[0]
    copy = em.name(x) if x.type.ndim == 0 else s.copy(em, em.name(x))
    em.line(f"{em.name(op.results[0])} = {copy}")


def _lower_identity(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = {em.name(op.operands[0])}")


# Markers for gradients only (ops/gradients.py): the value itself at run time.
lowering("stop_gradient")(_lower_identity)
lowering("custom_gradient")(_lower_identity)
