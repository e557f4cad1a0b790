"""CPU lowerings of median, quantile, searchsorted, bincount and nonzero (ops/statistics.py).

median/quantile move the reduced axis last, sort each lane (``sorts.sort``, Numba's np.sort
compiled once per machine: NaNs last, as NumPy) and compute each result with NumPy's own arithmetic
in NumPy's dtypes: the median is np.mean of the middle one or two values, a sum from 0.0 (a zero
median is 0.0, never -0.0, as NumPy's; np.nanmedian of an n-d array along an axis shorter than
600 averages the middle value with itself, as NumPy's masked-array path does); quantile
'linear' is NumPy's ``_lerp`` (``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` for
``t >= 0.5``) with the virtual index ``(n - 1) * q`` and gamma computed as in
``_get_indexes``/``_get_gamma`` (a zero quantile of a lane holding zeros of both signs is
NumPy's own: which zeros it interpolates depends on NumPy's selection); a lane whose sorted last
value is NaN gives NaN. searchsorted is NumPy's binary search (each key from the previous
key's bounds) with its NaN-aware order; bincount and nonzero count first, then allocate the
data-dependent result and fill it.
Errors are NumPy's (negative bincount input, sorter out of range, empty quantile lanes).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu import sorts
from autostage.runtime.backends.cpu.codegen import Emitter, hashed_import, lowering, np_dtype
from autostage.runtime.ops.statistics import EMPTY_WEIGHTED

hashed_import(sorts, "cpu_sort")  # the median/quantile helpers read cpu_sort (HASHED_IMPORTS)


def _lanes(em: Emitter, x: ir.Value, axis: int | None) -> tuple[str, list[str]]:
    """A 2-d (lanes, n) array of ``x`` with ``axis`` last, and the kept dims' sizes."""
    x2 = em.fresh("lanes")
    if axis is None or x.type.ndim <= 1:
        source = s.full(em, ["1"], em.name(x)) if x.type.ndim == 0 else em.name(x)
        em.line(f"{x2} = {s.reshaped(em, source, ['1', '-1'])}")
        return x2, []
    sizes = s.dims(em, x)
    others = [a for a in range(x.type.ndim) if a != axis]
    perm = s.shape_tuple([str(a) for a in (*others, axis)])
    count = " * ".join(sizes[a] for a in others)
    em.line(f"{x2} = {s.reshaped(em, f'{em.name(x)}.transpose({perm})', [count, sizes[axis]])}")
    return x2, [sizes[a] for a in others]


def _result_shape(op: ir.Op, em: Emitter, lead: list[str], kept: list[str]) -> list[str]:
    x, axis = op.operands[0], op.attrs["axis"]
    if not op.attrs["keepdims"]:
        return lead + kept
    if axis is None:
        return lead + ["1"] * x.type.ndim
    rest = iter(kept)
    return lead + ["1" if a == axis else next(rest) for a in range(x.type.ndim)]


def _finish(op: ir.Op, em: Emitter, res: str, shape: list[str]) -> None:
    out = em.name(op.results[0])
    if op.results[0].type.ndim == 0:
        em.line(f"{out} = {s.flat(em, res)}[0]")
    else:
        em.line(f"{out} = {s.reshaped(em, res, shape)}")


def _lane_prelude(op: ir.Op, x_dtype: np.dtype) -> list[str]:
    """Sorts lane j into ``lane`` with ``k`` values (NaNs dropped for the nan variants) and
    ``has_nan`` (the lane's last sorted value is NaN)."""
    lines = ["        lane = cpu_sort.sort(x2[j])", "        k = lane.shape[0]",
             "        has_nan = False"]
    if x_dtype.kind == "f":
        if op.attrs["nan"]:
            lines += ["        while k > 0 and lane[k - 1] != lane[k - 1]:",
                      "            k -= 1"]
        else:
            lines += ["        has_nan = k > 0 and lane[k - 1] != lane[k - 1]"]
    return lines


def _zero_sign_from_numpy(x_dtype: np.dtype, r_type: str, indent: str, numpy_call: str
                          ) -> list[str]:
    """A zero result ``r`` of a float lane holding zeros of both signs takes its sign from
    NumPy's own computation: which zeros it interpolates depends on NumPy's selection."""
    if x_dtype.kind != "f":
        return []
    return [f"{indent}if r == 0 and cpu_sort.zeros_of_both_signs(lane, k):",
            f"{indent}    r = {r_type}({numpy_call})"]


def _check_real(op: ir.Op, em: Emitter) -> np.dtype:
    dtype = op.operands[0].type.dtype
    if dtype.kind == "c":
        raise s.unsupported(em, op, "the median of complex values is not compiled")
    return dtype


def _lane_input(em: Emitter, x2: str, dtype: np.dtype) -> str:
    """Bool lanes are sorted as uint8 (Numba sorts them as numbers: the same order)."""
    return s.astype(em, x2, np.uint8) if dtype == np.bool_ else x2


@lowering("median")
def lower_median(op: ir.Op, em: Emitter) -> None:
    x, result = op.operands[0], op.results[0]
    x_dtype = _check_real(op, em)
    r_dtype = result.type.dtype
    acc = np.dtype(np.float64) if x_dtype.kind in "biu" else x_dtype
    R, ACC = np_dtype(r_dtype), np_dtype(acc)  # noqa: N806 - dtype names in the template
    masked = op.attrs["nan"] and x_dtype.kind == "f" and op.attrs["axis"] is not None and (
        x.type.ndim > 1)
    double_odd = "x2.shape[1] < 600" if masked else "False"
    body = [
        "@numba.njit(**JIT)",
        "def {name}(x2):",
        "    m = x2.shape[0]",
        f"    out = cpu_new.empty((m,), {R})",
        f"    double_odd = {double_odd}",
        "    for j in range(m):",
        *_lane_prelude(op, x_dtype),
        "        if k == 0:",
        f"            out[j] = {R}(np.nan)",
        "            continue",
        "        h = k // 2",
        "        if k % 2 == 1 and not double_odd:",
        f"            r = {R}({ACC}(0) + {ACC}(lane[h]))",
        "        else:",
        "            lo = lane[h - 1] if k % 2 == 0 else lane[h]",
        f"            r = {R}(({ACC}(0) + {ACC}(lo) + {ACC}(lane[h])) / {ACC}(2))",
        "        if has_nan:",
        f"            r = {R}(np.nan)",
        "        out[j] = r",
        "    return out",
    ]
    key = f"median_{x_dtype}_{r_dtype}_{op.attrs['nan']}_{masked}"
    helper = em.helper(key, "\n".join(body))
    x2, kept = _lanes(em, x, op.attrs["axis"])
    res = em.fresh("med")
    em.line(f"{res} = {helper}({_lane_input(em, x2, x_dtype)})")
    _finish(op, em, res, _result_shape(op, em, [], kept))


@lowering("quantile")
def lower_quantile(op: ir.Op, em: Emitter) -> None:
    x, q = op.operands
    result = op.results[0]
    x_dtype = _check_real(op, em)
    q_dtype, r_dtype = q.type.dtype, result.type.dtype
    R, Q, A = np_dtype(r_dtype), np_dtype(q_dtype), np_dtype(x_dtype)  # noqa: N806
    empty_lane = ([f"                out[i, j] = {R}(np.nan)", "                continue"]
                  if op.attrs["nan"] else
                  ["                raise IndexError('index -1 is out of bounds for axis 0 "
                   "with size 0')"])
    if q_dtype.kind in "biu":  # integer quantiles (0 or 1): NumPy takes the element
        value = [
            "            v = (k - 1) * np.int64(q[i])",
            f"            r = {R}(lane[v])",
        ]
        if not op.attrs["nan"]:
            empty_lane = ["                raise IndexError('cannot do a non-empty take from "
                          "an empty axes.')"]
    else:
        nan_index = (["            if v != v:", f"                prev = {Q}(-1)",
                      f"                nxt = {Q}(-1)"] if x_dtype.kind == "f" else [])
        value = [
            f"            qi = {Q}(q[i])",
            f"            v = {Q}(k - 1) * qi",
            "            prev = np.floor(v)",
            f"            nxt = prev + {Q}(1)",
            f"            if v >= {Q}(k - 1):",
            f"                prev = {Q}(-1)",
            f"                nxt = {Q}(-1)",
            f"            if v < {Q}(0):",
            f"                prev = {Q}(0)",
            f"                nxt = {Q}(0)",
            *nan_index,
            "            pi = np.int64(prev)",
            "            ni = np.int64(nxt)",
            f"            t = {Q}(np.float64(v) - np.float64(pi))",
            "            if pi < 0:",
            "                pi += k",
            "            if ni < 0:",
            "                ni += k",
            "            a = lane[pi]",
            "            b = lane[ni]",
            f"            d = {A}(b - a)",
            f"            r = {R}(a) + {R}(d) * {R}(t)",
            "            if t >= 0.5:",
            f"                r = {R}(b) - {R}(d) * {R}({Q}(1) - t)",
        ]
    body = [
        "@numba.njit(**JIT)",
        "def {name}(x2, q):",
        "    m = x2.shape[0]",
        "    nq = q.shape[0]",
        f"    out = cpu_new.empty((nq, m), {R})",
        "    for j in range(m):",
        *_lane_prelude(op, x_dtype),
        "        for i in range(nq):",
        "            if k == 0:",
        *empty_lane,
        *value,
        "            if has_nan:",
        f"                r = {R}(np.nan)",
        *_zero_sign_from_numpy(x_dtype, R, "            ",
                               f"cpu_sort.numpy_quantile(x2[j], q[i], {op.attrs['nan']}, "
                               f"{q_dtype.kind in 'biu'})"),
        "            out[i, j] = r",
        "    return out",
    ]
    key = f"quantile_{x_dtype}_{q_dtype}_{r_dtype}_{op.attrs['nan']}"
    helper = em.helper(key, "\n".join(body))
    x2, kept = _lanes(em, x, op.attrs["axis"])
    res = em.fresh("qres")
    em.line(f"{res} = {helper}({_lane_input(em, x2, x_dtype)}, {s.raveled(em, q)})")
    _finish(op, em, res, _result_shape(op, em, s.dims(em, q), kept))


def _less(a: str, b: str, dtype: np.dtype) -> str:
    """NumPy's sort order ``a < b`` (NaNs last) for real ``dtype``."""
    if dtype.kind == "f":
        return f"({a} < {b} or ({b} != {b} and {a} == {a}))"
    return f"({a} < {b})"


@lowering("searchsorted")
def lower_searchsorted(op: ir.Op, em: Emitter) -> None:
    """NumPy's own binary search (``binsearch``/``argbinsearch`` in npysort): each key's search
    starts from the previous key's bounds, and a sorter index is checked only when the search
    reads it, so an unsorted ``a`` (filterpy's ``residual_resample`` searches one) or a sorter
    holding an unread bad index gives NumPy's indices, not another search's."""
    a, v = op.operands[:2]
    sorted_by = len(op.operands) == 3
    dtype = a.type.dtype

    def before(x: str, y: str) -> str:
        """NumPy's ``cmp(x, y)`` of this side: ``x < y`` left, ``x <= y`` right."""
        return _less(x, y, dtype) if op.attrs["side"] == "left" else f"not {_less(y, x, dtype)}"

    element = ["            j = sorter[mid]",
               "            if j < 0 or j >= n:",
               "                raise ValueError('Sorter index out of range.')",
               "            e = a[j]"] if sorted_by else ["            e = a[mid]"]
    checks = [
        "    if sorter.shape[0] != n:",
        "        raise ValueError('sorter.size must equal a.size')",
    ] if sorted_by else []
    body = [
        "@numba.njit(**JIT)",
        f"def {{name}}(a, keys{', sorter' if sorted_by else ''}):",
        "    n = a.shape[0]",
        *checks,
        "    out = cpu_new.empty((keys.shape[0],), np.int64)",
        "    lo = 0",
        "    hi = n",
        "    for i in range(keys.shape[0]):",
        "        key = keys[i]",
        f"        if i > 0 and {before('keys[i - 1]', 'key')}:",
        "            hi = n",
        "        else:",
        "            lo = 0",
        "            hi = hi + 1 if hi < n else n",
        "        while lo < hi:",
        "            mid = lo + ((hi - lo) >> 1)",
        *element,
        f"            if {before('e', 'key')}:",
        "                lo = mid + 1",
        "            else:",
        "                hi = mid",
        "        out[i] = lo",
        "    return out",
    ]
    key = f"searchsorted_{dtype}_{op.attrs['side']}_{sorted_by}"
    helper = em.helper(key, "\n".join(body))
    args = [em.name(a), s.raveled(em, v)] + ([em.name(op.operands[2])] if sorted_by else [])
    res = em.fresh("found")
    em.line(f"{res} = {helper}({', '.join(args)})")
    out = em.name(op.results[0])
    if v.type.ndim == 0:
        em.line(f"{out} = {res}[0]")
    else:
        em.line(f"{out} = {s.reshaped(em, res, s.dims(em, v))}")


@lowering("bincount")
def lower_bincount(op: ir.Op, em: Emitter) -> None:
    weighted = len(op.operands) == 2
    dtype = np_dtype(op.results[0].type.dtype)
    body = [
        "@numba.njit(**JIT)",
        f"def {{name}}(x{', w' if weighted else ''}):",
        "    n = x.shape[0]",
        *(["    if n == 0:", f"        raise ValueError({EMPTY_WEIGHTED!r})"] if weighted else []),
        f"    size = {op.attrs['minlength']}",
        "    for i in range(n):",
        "        v = np.int64(x[i])",
        "        if v < 0:",
        "            raise ValueError(\"'list' argument must have no negative elements\")",
        "        if v + 1 > size:",
        "            size = v + 1",
        *(["    if w.shape[0] != n:",
           "        raise ValueError(\"The weights and list don't have the same length.\")"]
          if weighted else []),
        f"    out = cpu_new.zeros((np.int64(size),), {dtype})",
        "    for i in range(n):",
        f"        out[np.int64(x[i])] += {'w[i]' if weighted else '1'}",
        "    return out",
    ]
    helper = em.helper(f"bincount_{op.operands[0].type.dtype}_{weighted}_"
                       f"{op.attrs['minlength']}", "\n".join(body))
    em.line(f"{em.name(op.results[0])} = {helper}("
            f"{', '.join(em.name(o) for o in op.operands)})")


@lowering("nonzero")
def lower_nonzero(op: ir.Op, em: Emitter) -> None:
    x = op.operands[0]
    name, sizes = em.name(x), s.dims(em, x)
    idx = s.fresh_indices(em, x.type.ndim)
    count, c = em.fresh("count"), em.fresh("c")
    test = f"{s.index_expr(name, idx)} != 0"
    em.line(f"{count} = 0")
    with s.loops(em, idx, sizes):
        em.line(f"if {test}:")
        with em.block():
            em.line(f"{count} += 1")
    for result in op.results:
        em.line(f"{em.name(result)} = {s.empty(em, [count], np.int64)}")
    em.line(f"{c} = 0")
    with s.loops(em, idx, sizes):
        em.line(f"if {test}:")
        with em.block():
            for i, result in zip(idx, op.results, strict=True):
                em.line(f"{em.name(result)}[{c}] = {i}")
            em.line(f"{c} += 1")
