"""Products: ``matmul`` (the ``@`` operator; 1-d, 2-d and batched, integer and bool too), ``dot``
(np.dot's rules, including N-d) and ``einsum`` (attr ``subscripts``, always with an explicit
output, e.g. ``'ij,jk->ik'``; no ellipsis). Shapes follow NumPy with unknown dimensions; a
contraction of two known, different sizes is an error at trace time with NumPy's message.
"""

from __future__ import annotations

import functools

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.autodiff import backprop, build
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
        if len(label) != ndim or (label and not label.isalpha()):
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


def _swap(v):
    n = v.type.ndim
    return build.op1("transpose", v, axes=(*range(n - 2), n - 1, n - 2))


def _vjp_matmul(op, cts: tuple) -> tuple:
    """Through ``a @ b`` with 1-d operands made 2-d (and the cotangent with them): ct @ b.T and
    a.T @ ct, summed over broadcast batch axes and reshaped back; only for active operands (a
    product nothing needs would still run: it may fail, so DCE keeps it). A vector and a
    matrix: ``_vjp_matrix_vector``."""
    a, b = op.operands
    ct = cts[0]
    if {a.type.ndim, b.type.ndim} == {1, 2}:
        return _vjp_matrix_vector(a, b, ct)
    if a.type.ndim == 1:
        ct = build.op1("expand_dims", ct, axis=(ct.type.ndim - (b.type.ndim != 1),))
    if b.type.ndim == 1:
        ct = build.op1("expand_dims", ct, axis=(ct.type.ndim,))
    ct_a = ct_b = None
    if backprop.is_active(a):
        b2 = build.op1("expand_dims", b, axis=(1,)) if b.type.ndim == 1 else b
        ct_a = build.op1("matmul", ct, _swap(b2))
        if a.type.ndim == 1:
            ct_a = build.op1("squeeze", ct_a, axis=(ct_a.type.ndim - 2,))
    if backprop.is_active(b):
        a2 = build.op1("expand_dims", a, axis=(0,)) if a.type.ndim == 1 else a
        ct_b = build.op1("matmul", _swap(a2), ct)
        if b.type.ndim == 1:
            ct_b = build.op1("squeeze", ct_b, axis=(ct_b.type.ndim - 1,))
    return (ct_a, ct_b)


def _vjp_matrix_vector(a, b, ct) -> tuple:
    """``x @ w`` or ``w @ x`` (a vector and a matrix): the vector's cotangent is a
    matrix-vector product (``w @ ct``, ``ct @ w``: BLAS gemv on ``w`` as it lies, where a
    1-row product with ``w.T`` packs all of ``w`` for a gemm) and the matrix's an outer
    product: a broadcast ``multiply``, which fuses with the addition into the matrix's running
    cotangent (one pass where a product, then an addition, wrote two arrays; a zero product may
    have the other sign: -0.0 for 0.0)."""
    vector_first = a.type.ndim == 1
    x, w = (a, b) if vector_first else (b, a)
    ct_x = ct_w = None
    if backprop.is_active(x):
        ct_x = build.op1("matmul", *((w, ct) if vector_first else (ct, w)))
    if backprop.is_active(w):
        column, row = (x, ct) if vector_first else (ct, x)
        ct_w = build.mul(build.op1("expand_dims", column, axis=(1,)),
                         build.op1("expand_dims", row, axis=(0,)))
    return (ct_x, ct_w) if vector_first else (ct_w, ct_x)


op_registry.lookup("matmul").vjp = _vjp_matmul


def einsum_vjp(subscripts: str, operands: tuple, ct, wanted) -> list:
    """The cotangents of ``operands`` of ``einsum(subscripts)`` given the result's ``ct`` (None
    where ``wanted(operand)`` is false): for each operand an einsum of ``ct`` with the other
    operands onto the operand's labels; labels only that operand has (summed by the forward
    einsum) come back by broadcasting.

    Raises:
      GradientError: an operand repeats a label (a diagonal, ``'ii->i'``).
    """
    labels, output = parse_subscripts(subscripts, tuple(v.type.ndim for v in operands))
    found = []
    for i, (x, mine) in enumerate(zip(operands, labels, strict=True)):
        if not wanted(x):
            found.append(None)
            continue
        if len(set(mine)) != len(mine):
            raise backprop.GradientError(
                f"autostage cannot differentiate einsum {subscripts!r} with respect to operand "
                f"{i} yet: it repeats a label (a diagonal); take the diagonal with np.diagonal "
                "first")
        others = [(lab, v) for k, (lab, v) in enumerate(zip(labels, operands, strict=True))
                  if k != i]
        seen = set(output).union(*(set(lab) for lab, _ in others))
        kept = "".join(c for c in mine if c in seen)
        spec = ",".join([output, *(lab for lab, _ in others)]) + "->" + kept
        ct_x = build.op1("einsum", ct, *(v for _, v in others), subscripts=spec)
        if kept != mine:  # broadcast along the labels only this operand has
            ct_x = build.op1("expand_dims", ct_x, axis=tuple(
                k for k, c in enumerate(mine) if c not in seen))
            ct_x = build.add(ct_x, build.zeros_like(x))
        found.append(ct_x)
    return found


def _vjp_einsum(op, cts: tuple) -> tuple:
    is_active = backprop.is_active
    return tuple(einsum_vjp(op.attrs["subscripts"], op.operands, cts[0], is_active))


def dot_subscripts(a_ndim: int, b_ndim: int) -> str:
    """``np.dot`` of arrays of these ranks (both at least 1-d) as einsum subscripts: the last
    axis of a with the second-to-last of b (its only one when b is 1-d)."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    a = "".join(next(letters) for _ in range(a_ndim))
    b = [next(letters) for _ in range(b_ndim)]
    b[0 if b_ndim == 1 else b_ndim - 2] = a[-1]
    b = "".join(b)
    return f"{a},{b}->{a[:-1]}{b.replace(a[-1], '')}"


def _vjp_dot(op, cts: tuple) -> tuple:
    """A 0-d operand: a product; otherwise the einsum of ``np.dot``."""
    is_active = backprop.is_active
    a, b = op.operands
    if a.type.ndim == 0 or b.type.ndim == 0:
        return (build.mul(cts[0], b), build.mul(cts[0], a))
    subscripts = dot_subscripts(a.type.ndim, b.type.ndim)
    return tuple(einsum_vjp(subscripts, op.operands, cts[0], is_active))


op_registry.lookup("einsum").vjp = _vjp_einsum
op_registry.lookup("dot").vjp = _vjp_dot


# --- the batched input product of a loop (passes/batched_products.py) ---------------------------


def _infer_batched(operand_types: tuple, attrs: dict) -> tuple:
    rows, w = operand_types
    if not (isinstance(rows, TensorType) and isinstance(w, TensorType) and rows.ndim in (2, 3)
            and w.ndim == 2 and rows.dtype == w.dtype and rows.dtype.kind == "f"):
        raise TypeError(f"batched_product needs 2-d or 3-d rows and a 2-d matrix of one float "
                        f"dtype, got {rows} and {w}")
    return (TensorType(rows.dtype, (None, *rows.shape[1:-1], w.shape[1])),)


def batched_fits(rows_shape: tuple, w_shape: tuple, limit: int) -> bool:
    """Whether ``batched_product`` computes the product: the contracted sizes agree and it has
    at most ``limit`` elements (counted in float64, as the compiled code counts them)."""
    elements = float(w_shape[1])
    for size in rows_shape[:-1]:
        elements *= float(size)
    return rows_shape[-1] == w_shape[0] and elements <= limit


def _evaluate_batched(op, values: tuple, run) -> tuple:
    rows, w = values
    *outer, k = rows.shape
    if not batched_fits(rows.shape, w.shape, op.attrs["limit"]):
        return (np.zeros((0, *outer[1:], w.shape[1]), rows.dtype),)
    cells = int(np.prod(outer))  # (not -1: NumPy cannot infer a size next to k = 0)
    return (np.asarray(np.matmul(rows.reshape(cells, k), w)).reshape(*outer, w.shape[1]),)


op_registry.register(
    "batched_product", _infer_batched, _evaluate_batched,
    doc="rows @ w for every row of a 2-d/3-d array at once (a loop's input product, made by "
        "passes/batched_products.py), or an array of no rows where the contracted sizes differ "
        "or it would have more than attr limit elements; attrs: limit",
    fresh_results=True, raises=(),
    exemptions={"vjp": "made by the batched_products pass after tracing; gradients are taken "
                       "while tracing"})
