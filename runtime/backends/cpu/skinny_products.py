"""Products with few columns: ``x @ w`` and ``x.T @ g`` for a (n, k) float matrix and a (k, m)
one whose m <= ``MAX_COLUMNS`` is known to the trace (``runtime/static_sizes``).

OpenBLAS's GEMM packs its operands for square-ish blocks; with m = 10 (a classifier's weight
matrix, a softmax gradient) most of that work is wasted, and on one thread a loop with one
accumulator per column does better (784x10 float32 weights, batch 200: ``x @ w`` 71 vs 103 us,
``x.T @ g`` 122 vs 154 us on an AMD EPYC; 44 vs 66 and 60 vs 74 us on an Intel Xeon). These
kernels run on one thread, so a trace uses them only when BLAS runs on one as it compiles
(``lower_linalg``; a call-time test cost Numba 0.2-0.3 s of compile time per program): on two
threads BLAS was as fast for ``x @ w`` (38 us) and faster for ``x.T @ g`` (44 vs 60 us), and the
SGD benchmark 1.2x slower through these kernels. Two kernels, generated per
dtype and m and compiled once per machine (``shared_helpers``):

* rows (``a`` C-contiguous): each row of ``a`` against the m columns of ``b``, with m running
  sums along k that LLVM vectorises (``fastmath`` reassociation: the sums are in a different
  order than BLAS's, which also differs from a sequential sum in the last bits);
* columns (``a`` a transposed C-contiguous array, as ``x.T``): ``a.T``'s rows scaled by
  ``b``'s entries and added into m rows of the result, each sum in order along k.

Any other layout, or other dtypes, takes the BLAS helper (``lower_linalg``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu.codegen import Emitter, np_dtype

MAX_COLUMNS = 16
FASTMATH = '{{"reassoc", "contract"}}'  # braces doubled: helper sources are format strings


def columns(a: ir.Value, b: ir.Value, result: ir.Value) -> int | None:
    """m when ``a @ b`` is a product these kernels compute: 2-d operands of the result's float
    dtype, m known and at most ``MAX_COLUMNS``; else None."""
    dtype = result.type.dtype
    if dtype not in (np.float32, np.float64) or a.type.dtype != dtype or b.type.dtype != dtype:
        return None
    if a.type.ndim != 2 or b.type.ndim != 2:
        return None
    m = b.type.shape[1]
    return m if m is not None and 1 <= m <= MAX_COLUMNS else None


def emit(em: Emitter, a: ir.Value, b: ir.Value, result: ir.Value, m: int, other) -> None:
    """``result = a @ b`` by the kernel that fits ``a``'s layout at run time, else ``other()``
    (which emits the general product)."""
    dtype = np_dtype(result.type.dtype)
    key = f"{result.type.dtype.name}_{m}"
    rows = em.helper(f"skinny_rows_{key}", _rows_source(m, dtype))
    cols = em.helper(f"skinny_columns_{key}", _columns_source(m, dtype))
    x, y, out = em.name(a), em.name(b), em.name(result)
    em.line(f"if {x}.flags.c_contiguous:")
    with em.block():
        em.line(f"{out} = {rows}({x}, {y})")
    em.line(f"elif {x}.T.flags.c_contiguous:")
    with em.block():
        em.line(f"{out} = {cols}({x}.T, {y})")
    em.line("else:")
    with em.block():
        other()


def _rows_source(m: int, dtype: str) -> str:
    cols = range(m)
    lines = [
        f"@numba.njit(**JIT, fastmath={FASTMATH})",
        "def {name}(a, b):",
        "    a = np.ascontiguousarray(a)",
        "    bt = np.ascontiguousarray(b.T)",
        "    n, k = a.shape",
        *[f"    b{j} = bt[{j}]" for j in cols],
        f"    out = np.empty((n, {m}), {dtype})",
        "    for i in range(n):",
        "        row = a[i]",
        *[f"        s{j} = {dtype}(0)" for j in cols],
        "        for p in range(k):",
        "            v = row[p]",
        *[f"            s{j} += v * b{j}[p]" for j in cols],
        *[f"        out[i, {j}] = s{j}" for j in cols],
        "    return out",
    ]
    return "\n".join(lines)


def _columns_source(m: int, dtype: str) -> str:
    cols = range(m)
    lines = [
        f"@numba.njit(**JIT, fastmath={FASTMATH})",
        "def {name}(at, b):",
        "    at = np.ascontiguousarray(at)",
        "    k, n = at.shape",
        f"    ot = np.zeros(({m}, n), {dtype})",
        *[f"    o{j} = ot[{j}]" for j in cols],
        "    for p in range(k):",
        *[f"        g{j} = b[p, {j}]" for j in cols],
        "        row = at[p]",
        "        for i in range(n):",
        "            v = row[i]",
        *[f"            o{j}[i] += g{j} * v" for j in cols],
        "    return np.ascontiguousarray(ot.T)",
    ]
    return "\n".join(lines)
