"""The VJP of the ``numpy_linalg`` op (ops/numpy_linalg.py), one rule per NumPy function.

The rules are the standard matrix-calculus formulas, written with staged ops that have VJPs
themselves (``matmul``, ``numpy_linalg`` inv/solve/eigh, ``einsum``...), so second derivatives
work. Functions of the lower triangle (``eigh``, ``eigvalsh`` and ``cholesky`` read only one
triangle, as NumPy's LAPACK calls do) get the derivative with respect to the entries they read:
zero on the other triangle. Functions without a rule here raise ``GradientError`` saying why
(complex results, rank-dependent results, sign conventions).
"""

from __future__ import annotations

from autostage.runtime import op_registry
from autostage.runtime.autodiff import backprop, build
from autostage.runtime.ops import linalg
from autostage.runtime.ops import numpy_linalg as _numpy_linalg  # noqa: F401 - registers the op


def _call(function: str, *operands, kwargs: tuple = ()):
    return build.emit("numpy_linalg", operands, {"function": function, "kwargs": kwargs})


def _mT(v):  # noqa: N802 - the matrix transpose, as NumPy's ``.mT``
    n = v.type.ndim
    return build.op1("transpose", v, axes=(*range(n - 2), n - 1, n - 2))


def _matmul(*factors):
    result = factors[0]
    for f in factors[1:]:
        result = build.op1("matmul", result, f)
    return result


def _unit(v, count: int):
    """``v`` with ``count`` trailing unit axes (``v[..., None, None]``)."""
    n = v.type.ndim
    return build.op1("expand_dims", v, axis=tuple(range(n, n + count)))


def _eye_like(square):
    """The identity matrix of ``square``'s (last two axes') size."""
    b = build
    n = square.type.shape[-1]
    sizes = [] if n is not None else [b.op1("dim", square, axis=square.type.ndim - 1)] * 2
    return b.op1("eye", *sizes, shape=(n, n), k=0, dtype=square.type.dtype)


def _one_triangle(sym, uplo: str):
    """The derivative with respect to the entries of one triangle of a function of a symmetric
    matrix whose symmetric-perturbation gradient is ``sym``: off-diagonal entries stand for two
    (a_ij and a_ji), the other triangle for none."""
    b = build
    tri = "tril" if uplo.upper() == "L" else "triu"
    doubled = b.op1(tri, b.scale(sym, 2), k=0)
    return b.sub(doubled, b.mul(sym, _eye_like(sym)))


def _symmetric(x):
    b = build
    return b.scale(b.add(x, _mT(x)), 0.5)


def _inv(op, cts):
    b = build
    y = op.results[0]
    return (b.neg(_matmul(_mT(y), cts[0], _mT(y))),)


def _solve(op, cts):
    """x = solve(a, c): c gets solve(a.T, ct), a gets -(c's cotangent) x.T (outer products for
    a vector c, which NumPy recognizes by c being 1-d)."""
    b = build
    a, c = op.operands
    x, ct = op.results[0], cts[0]
    vector = c.type.ndim == 1
    if vector:
        ct, x = _unit(ct, 1), _unit(x, 1)
    (ct_c,) = _call("linalg.solve", _mT(a), ct)
    ct_a = b.neg(_matmul(ct_c, _mT(x)))
    if vector:
        ct_c = b.op1("squeeze", ct_c, axis=(ct_c.type.ndim - 1,))
    return (ct_a, ct_c)


def _det(op, cts):
    b = build
    (a,), (y,) = op.operands, op.results
    (inverse,) = _call("linalg.inv", a)
    return (b.mul(_unit(b.mul(cts[0], y), 2), _mT(inverse)),)


def _slogdet(op, cts):
    """Only the log of |det| has a derivative (the sign is piecewise constant)."""
    b = build
    ct = cts[1]
    if ct is None:
        return (None,)
    (inverse,) = _call("linalg.inv", op.operands[0])
    return (b.mul(_unit(ct, 2), _mT(inverse)),)


def _kwargs(op) -> dict:
    return dict(op.attrs["kwargs"])


def _eigvalsh(op, cts):
    """d w = diag(V.T dA V): the gradient V diag(ct) V.T, on the triangle NumPy reads."""
    b = build
    a = op.operands[0]
    uplo = _kwargs(op).get("UPLO", "L")
    _, v = _call("linalg.eigh", a, kwargs=(("UPLO", uplo),))
    sym = _matmul(b.mul(v, b.op1("expand_dims", cts[0], axis=(cts[0].type.ndim - 1,))), _mT(v))
    return (_one_triangle(sym, uplo),)


def _eigh(op, cts):
    """V (diag(ct_w) + F * (V.T ct_V)) V.T with F_ij = 1 / (w_j - w_i) off the diagonal (the
    symmetric part, on the triangle NumPy reads); repeated eigenvalues give inf or NaN."""
    b = build
    w, v = op.results
    ct_w, ct_v = cts
    uplo = _kwargs(op).get("UPLO", "L")
    inner = b.zeros_like(v)
    if ct_w is not None:
        inner = b.add(inner, b.mul(b.op1("expand_dims", ct_w, axis=(ct_w.type.ndim - 1,)),
                                   _eye_like(v)))
    if ct_v is not None:
        eye = _eye_like(v)
        gaps = b.sub(b.op1("expand_dims", w, axis=(w.type.ndim - 1,)),
                     b.op1("expand_dims", w, axis=(w.type.ndim,)))  # w_j - w_i at (i, j)
        f = b.div(b.sub(b.constant(1, eye.type.dtype), eye), b.add(gaps, eye))
        inner = b.add(inner, b.mul(f, _matmul(_mT(v), ct_v)))
    return (_one_triangle(_symmetric(_matmul(v, inner, _mT(v))), uplo),)


def _svdvals(op, cts, s_index: int = 0):
    """d s = diag(U.T dA V): the gradient U diag(ct) Vh (distinct singular values)."""
    b = build
    a, ct = op.operands[0], cts[s_index]
    u, _, vh = _call("linalg.svd", a, kwargs=(("full_matrices", False),))
    scaled = b.mul(u, b.op1("expand_dims", ct, axis=(ct.type.ndim - 1,)))
    return (_matmul(scaled, vh),)


def _svd(op, cts):
    kw = _kwargs(op)
    if kw.get("hermitian", False):
        return _refuse(op, "with hermitian=True")
    if not kw.get("compute_uv", True):
        return _svdvals(op, cts)
    if cts[0] is not None or cts[2] is not None:
        return _refuse(op, "with respect to the singular vectors (their signs are a "
                       "convention); only the singular values (np.linalg.svdvals) are")
    return _svdvals(op, cts, 1)


def _cholesky(op, cts):
    """Murray's formula: S = L^-T Phi(L^T ct) L^-1 (Phi: the lower triangle, diagonal halved),
    on the lower triangle NumPy reads."""
    b = build
    (l_,), ct = op.results, cts[0]
    if _kwargs(op).get("upper", False):
        return _refuse(op, "with upper=True")
    product = _matmul(_mT(l_), ct)
    phi = b.sub(b.op1("tril", product, k=0), b.scale(b.mul(product, _eye_like(product)), 0.5))
    (inverse,) = _call("linalg.inv", l_)
    return (_one_triangle(_symmetric(_matmul(_mT(inverse), phi, inverse)), "L"),)


def _pinv(op, cts):
    """Golub and Pereyra's derivative, exact where the rank does not change under small
    perturbations (a full-rank matrix): -P.T ct P.T + (I - A P) ct.T P P.T
    + P.T P ct.T (I - P A), with P = pinv(A)."""
    b = build
    (a,), (p,), ct = op.operands, op.results, cts[0]
    if _kwargs(op).get("hermitian", False):
        return _refuse(op, "with hermitian=True")
    ct_t, p_t = _mT(ct), _mT(p)
    left = _matmul(ct_t, p, p_t)  # (I - A P) ct.T P P.T = left - A P left
    right = _matmul(p_t, p, ct_t)  # P.T P ct.T (I - P A) = right - right P A
    total = b.neg(_matmul(p_t, ct, p_t))
    total = b.add(total, b.sub(left, _matmul(a, p, left)))
    return (b.add(total, b.sub(right, _matmul(right, p, a))),)


def _matrix_power(op, cts):
    """d(A^n) = sum over k of A^k dA A^(n-1-k); a negative power: a GradientError."""
    b = build
    a, ct = op.operands[0], cts[0]
    n = int(_kwargs(op)["n"])
    if n < 0:
        return _refuse(op, "with a negative power; write np.linalg.matrix_power("
                       "np.linalg.inv(a), -n)")
    if n == 0:
        return (b.zeros_like(a),)
    powers = [_call("linalg.matrix_power", a, kwargs=(("n", k),))[0] for k in range(n)]
    total = None
    for k in range(n):
        term = _matmul(_mT(powers[k]), ct, _mT(powers[n - 1 - k]))
        total = term if total is None else b.add(total, term)
    return (total,)


def _multi_dot(op, cts):
    """The product as one einsum: its VJP (a first 1-d array is a row, a last one a column)."""
    ndims = [v.type.ndim for v in op.operands]
    if len(ndims) == 2:
        return _dot_like(op, cts, linalg.dot_subscripts(*ndims) if all(ndims) else None)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    labels, prev = [], next(letters)
    for i, n in enumerate(ndims):
        if i == 0 and n == 1:
            labels.append(prev)
            continue
        nxt = next(letters)
        labels.append(prev + nxt if n == 2 else prev)
        prev = nxt
    first = labels[0][0] if ndims[0] == 2 else ""
    last = labels[-1][-1] if ndims[-1] == 2 else ""
    return _dot_like(op, cts, ",".join(labels) + "->" + first + last)


def _dot_like(op, cts, subscripts: str | None):
    is_active = backprop.is_active
    b = build
    if subscripts is None:  # a 0-d operand: a product
        x, y = op.operands
        return (b.mul(cts[0], y), b.mul(cts[0], x))
    return tuple(linalg.einsum_vjp(subscripts, op.operands, cts[0], is_active))


def _inner(op, cts):
    x, y = op.operands
    if not x.type.ndim or not y.type.ndim:
        return _dot_like(op, cts, None)
    letters = "abcdefghijklmnopqrstuvwxyz"
    k = letters[-1]
    first, second = letters[:x.type.ndim - 1], letters[x.type.ndim - 1:][:y.type.ndim - 1]
    return _dot_like(op, cts, f"{first}{k},{second}{k}->{first}{second}")


def _tensordot(op, cts):
    x, y = op.operands
    axes = _kwargs(op).get("axes", 2)
    if isinstance(axes, int):
        x_axes, y_axes = list(range(x.type.ndim - axes, x.type.ndim)), list(range(axes))
    else:
        x_axes, y_axes = ([a] if isinstance(a, int) else list(a) for a in axes)
    x_axes = [a % x.type.ndim for a in x_axes]
    y_axes = [a % y.type.ndim for a in y_axes]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    first = [next(letters) for _ in range(x.type.ndim)]
    second = [next(letters) for _ in range(y.type.ndim)]
    for i, j in zip(x_axes, y_axes, strict=True):
        second[j] = first[i]
    out = [c for i, c in enumerate(first) if i not in x_axes]
    out += [c for j, c in enumerate(second) if j not in y_axes]
    return _dot_like(op, cts, f"{''.join(first)},{''.join(second)}->{''.join(out)}")


def _vdot(op, cts):
    """Of the flattened arrays (real): each gets the other, flattened, times ct, in its shape."""
    b = build
    x, y = op.operands
    found = []
    for mine, other in ((x, y), (y, x)):
        flat = b.op1("reshape", other, shape=(-1,))
        shape, sizes = b.shape_of(mine)
        found.append(b.op1("reshape", b.mul(cts[0], flat), *sizes, shape=shape))
    return tuple(found)


_RULES = {
    "linalg.inv": _inv, "linalg.solve": _solve, "linalg.det": _det, "linalg.slogdet": _slogdet,
    "linalg.eigvalsh": _eigvalsh, "linalg.eigh": _eigh, "linalg.svdvals": _svdvals,
    "linalg.svd": _svd, "linalg.cholesky": _cholesky, "linalg.pinv": _pinv,
    "linalg.matrix_power": _matrix_power,
    "linalg.multi_dot": _multi_dot, "inner": _inner, "tensordot": _tensordot, "vdot": _vdot,
}
# Why the others have none.
_REFUSED = {
    "linalg.qr": "yet",
    "linalg.eig": "(its results are complex)", "linalg.eigvals": "(its results are complex)",
    "linalg.lstsq": "(its results depend on the rank; use np.linalg.solve(a.T @ a, a.T @ b) "
                    "or np.linalg.pinv)",
    "linalg.cond": "yet; compute it from np.linalg.svdvals",
    "linalg.matrix_rank": "(an integer)",
}


def _refuse(op, why: str) -> tuple:
    where = f" (at {op.loc})" if op.loc is not None else ""
    raise backprop.GradientError(
        f"autostage cannot differentiate np.{op.attrs['function']} {why}{where}")


def _vjp_numpy_linalg(op, cts: tuple) -> tuple:
    rule = _RULES.get(op.attrs["function"])
    if rule is None:
        return _refuse(op, _REFUSED.get(op.attrs["function"], "yet"))
    return rule(op, cts)


op_registry.lookup("numpy_linalg").vjp = _vjp_numpy_linalg
