"""Products: ``matmul`` (the ``@`` operator; 1-d, 2-d and batched, integer and bool too), ``dot``
(np.dot's rules, including N-d) and ``einsum`` (attr ``subscripts``, always with an explicit
output, e.g. ``'ij,jk->ik'``; no ellipsis). Shapes follow NumPy with unknown dimensions; a
contraction of two known, different sizes is an error at trace time with NumPy's message.
"""

from __future__ import annotations

import functools

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.types import TensorType


def _contract(a: int | None, b: int | None, message: str) -> None:
    if a is not None and b is not None and a != b:
        raise ValueError(message)


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``a @ b`` (NumPy's matmul rules)."""
    for i, s in enumerate((a, b)):
        if not s:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             "(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) "
                             "requires 1)")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    _contract(a2[-1], b2[-2],
              f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
              f"signature (n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is different from {a2[-1]})")
    batch = dtype_rules.broadcast_shapes(a2[:-2], b2[:-2])
    rows = () if len(a) == 1 else (a2[-2],)
    cols = () if len(b) == 1 else (b2[-1],)
    return (*batch, *rows, *cols)


def dot_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``np.dot(a, b)``."""
    if not a or not b:
        return dtype_rules.broadcast_shapes(a, b)
    k_axis = 0 if len(b) == 1 else len(b) - 2
    _contract(a[-1], b[k_axis],
              f"shapes {dtype_rules.format_shape(a)} and {dtype_rules.format_shape(b)} not "
              f"aligned: {a[-1]} (dim {len(a) - 1}) != {b[k_axis]} (dim {k_axis})")
    return (*a[:-1], *b[:k_axis], *b[k_axis + 1:])


def _infer_binary(name: str, shape_rule, function):
    def infer(operand_types: tuple, attrs: dict) -> tuple:
        a, b = operand_types
        dtype = dtype_rules.common_dtype(function, (a.dtype, b.dtype))
        return (TensorType(dtype, shape_rule(a.shape, b.shape)),)
    return infer


op_registry.register(
    "matmul", _infer_binary("matmul", matmul_shape, np.matmul),
    lambda op, v, run: (np.asarray(np.matmul(*v)),), doc="a @ b (np.matmul); no attrs",
    fresh_results=True, raises=(ValueError,))  # sizes that do not match at run time
op_registry.register(
    "dot", _infer_binary("dot", dot_shape, np.dot),
    lambda op, v, run: (np.asarray(np.dot(*v)),), doc="np.dot(a, b); no attrs",
    fresh_results=True, raises=(ValueError,))


def parse_subscripts(subscripts: str, ndims: tuple[int, ...]) -> tuple[list[str], str]:
    """The input labels and output labels of an einsum (implicit output made explicit).

    Raises:
      ValueError: malformed subscripts, an ellipsis, or a label count not matching a rank.
    """
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise ValueError("autostage's einsum does not support '...' (ellipsis) subscripts; "
                         "write every axis label explicitly")
    inputs, arrow, output = spec.partition("->")
    labels = inputs.split(",")
    if len(labels) != len(ndims):
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(labels)} operands, "
                         f"but {len(ndims)} were given")
    for i, (label, ndim) in enumerate(zip(labels, ndims, strict=True)):
        if len(label) != ndim or not label.isalpha():
            raise ValueError(f"einsum(): operand {i} has {ndim} dimensions, but the subscripts "
                             f"{label!r} give {len(label)}")
    if not arrow:
        counts = "".join(labels)
        output = "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    return labels, output


@functools.cache
def _einsum_dtype(subscripts: str, dtypes: tuple, ndims: tuple) -> np.dtype:
    samples = [np.ones((1,) * n, d) for n, d in zip(ndims, dtypes, strict=True)]
    return np.asarray(np.einsum(subscripts, *samples)).dtype


def _infer_einsum(operand_types: tuple, attrs: dict) -> tuple:
    subscripts = attrs["subscripts"]
    labels, output = parse_subscripts(subscripts, tuple(t.ndim for t in operand_types))
    sizes: dict[str, int | None] = {}
    for label, t in zip(labels, operand_types, strict=True):
        for c, d in zip(label, t.shape, strict=True):
            if c in sizes and d is not None and sizes[c] is not None and sizes[c] != d:
                raise ValueError(f"einsum {subscripts!r}: size of label '{c}' is {sizes[c]} "
                                 f"for one operand and {d} for another")
            if sizes.get(c) is None:
                sizes[c] = d
    for c in output:
        if c not in sizes:
            raise ValueError(f"einsum(): output subscript '{c}' does not appear in the inputs")
    dtype = _einsum_dtype(subscripts, tuple(t.dtype for t in operand_types),
                          tuple(t.ndim for t in operand_types))
    return (TensorType(dtype, tuple(sizes[c] for c in output)),)


op_registry.register(
    "einsum", _infer_einsum,
    lambda op, v, run: (np.asarray(np.einsum(op.attrs["subscripts"], *v)),),
    doc="attrs: subscripts (str with explicit '->'); np.einsum over the operands",
    raises=(ValueError,))
