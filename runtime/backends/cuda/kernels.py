"""The CUDA kernels of the cuda target, generated as readable ``numba.cuda`` source.

Four shapes of kernel, each a function of the IR it computes (so the same op on the same types
is one kernel, compiled once per process):
- ``elementwise``: a chain of element-wise ops (a ``fused`` op's body, or one op) computed one
  element per thread in a grid-stride loop over the flat index, unravelled over the result's
  shape. The ``direct`` form reads every array operand at that index (they all have the
  result's shape, the common case); the other broadcasts each operand (an axis of extent 1
  reads 0).
- ``reduce_all``: a sum/max/min of a contiguous array, in two deterministic passes (each block
  reduces a fixed grid-stride slice through a shared-memory tree; one block then reduces the
  blocks' partials): the same grid for the same size, so the same result on every run.
- ``reduce_rows``: the same over the last axis of a 2-D view, one block per row;
  ``reduce_axis`` over another axis, one thread per output element.
- ``matmul``: a 16×16 shared-memory tiled product of C-contiguous matrices.
Kernels use only ``math`` and NumPy scalar constructors: no device-function calls, which PTX
generation without a GPU cannot link (TOOLCHAIN.md), and no fast-math.
"""

from __future__ import annotations

import hashlib
import linecache
import math
from dataclasses import dataclass

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cuda import device, scalar_code
from autostage.runtime.backends.cuda.scalar_code import dtype_name

THREADS = 256  # threads per block of element-wise and reduction kernels (a power of two)
TILE = 16  # matmul tile edge
MAX_BLOCKS = 4096  # grid-stride loops cover larger arrays
PARTIALS = 1024  # blocks of a reduction's first pass, at most


@dataclass(frozen=True, slots=True)
class Kernel:
    """A generated kernel: its name, its source, and its parameters as (dtype, ndim) pairs
    (ndim 0: a scalar), from which ``ptx`` builds the signature."""

    name: str
    source: str
    params: tuple[tuple[np.dtype, int], ...]

    def compiled(self):
        """The ``numba.cuda`` dispatcher of this kernel (compiled on its first launch)."""
        found = _COMPILED.get(self.source)
        if found is None:
            found = _COMPILED[self.source] = _define(self)
        return found

    def function(self):
        """The kernel's Python function (what ``numba.cuda.compile_ptx`` takes)."""
        return _define(self, jit=False)


_COMPILED: dict[str, object] = {}


def _define(kernel: Kernel, jit: bool = True):
    cuda = device.cuda_module()
    filename = f"<autostage-cuda {kernel.name}>"
    linecache.cache[filename] = (len(kernel.source), None, kernel.source.splitlines(True),
                                 filename)  # tracebacks and the simulator show the source
    namespace = {"cuda": cuda, "math": math, "np": np}
    exec(compile(kernel.source, filename, "exec"), namespace)  # noqa: S102 - our own source
    function = namespace[kernel.name]
    return cuda.jit(function) if jit else function


def _named(stem: str, lines: list[str], params) -> Kernel:
    body = "\n".join(lines)
    digest = hashlib.sha1(body.encode()).hexdigest()[:8]
    name = f"{stem}_{digest}"
    return Kernel(name, body.replace("KERNEL", name, 1) + "\n", tuple(params))


def elementwise(ops: list[ir.Op], args: list[ir.Value], result: ir.Value, arg_ranks: list[int],
                rank: int, direct: bool) -> Kernel:
    """The kernel computing ``result`` from ``args`` through ``ops`` (element-wise, in order),
    into ``out`` of rank ``rank``. ``arg_ranks`` are the operands' ranks as passed (0: a scalar
    parameter); ``direct``: every array operand has the result's shape (no broadcasting)."""
    names = [f"a{k}" if r else f"s{k}" for k, r in enumerate(arg_ranks)]
    axes = [f"i{k}" for k in range(rank)]
    lines = [f"def KERNEL(out, n, {', '.join(names)}):" if names else "def KERNEL(out, n):",
             "    start = cuda.grid(1)",
             "    step = cuda.gridsize(1)",
             "    for i in range(start, n, step):"]
    indent = " " * 8
    if rank == 1:
        axes = ["i"]
    else:
        lines.append(f"{indent}rest = i")
        for k in range(rank - 1, 0, -1):
            lines.append(f"{indent}{axes[k]} = rest % out.shape[{k}]")
            lines.append(f"{indent}rest //= out.shape[{k}]")
        lines.append(f"{indent}{axes[0]} = rest")
    element: dict[ir.Value, str] = {}
    for k, (arg, r) in enumerate(zip(args, arg_ranks, strict=True)):
        if r == 0:
            element[arg] = names[k]
            continue
        own = axes[rank - r:]
        read = ", ".join(own) if direct else ", ".join(
            f"({a} if {names[k]}.shape[{j}] != 1 else 0)" for j, a in enumerate(own))
        lines.append(f"{indent}e{k} = {names[k]}[{read}]")
        element[arg] = f"e{k}"
    for j, op in enumerate(ops):
        expr = scalar_code.expression(op, [element[v] for v in op.operands])
        lines.append(f"{indent}v{j} = {expr}")
        element[op.results[0]] = f"v{j}"
    lines.append(f"{indent}out[{', '.join(axes)}] = {element[result]}")
    stem = "_".join(dict.fromkeys(op.name for op in ops)) or "copy"
    params = [(result.type.dtype, rank), (np.dtype(np.int64), 0)]
    params += [(a.type.dtype, r) for a, r in zip(args, arg_ranks, strict=True)]
    return _named(stem[:40], lines, params)


def _identity(name: str, dtype: np.dtype) -> str:
    if name == "sum":
        return f"{dtype_name(dtype)}(0)"
    low = name == "max"
    if dtype.kind == "f":
        return f"{dtype_name(dtype)}({'-' if low else ''}math.inf)"
    if dtype == np.bool_:
        return str(not low)
    info = np.iinfo(dtype)
    return f"{dtype_name(dtype)}({info.min if low else info.max})"


def _combine(name: str, dtype: np.dtype, a: str, b: str) -> str:
    if name == "sum":
        return f"{dtype_name(dtype)}({a} + {b})"
    compare = ">" if name == "max" else "<"  # NaN sticks: a NaN ``b`` replaces, a NaN ``a`` stays
    return f"({a} if {a} {compare} {b} or {a} != {a} else {b})"


def _running(name: str, dtype: np.dtype) -> np.dtype:
    """The dtype of one thread's running value: a float32 (complex64) sum runs in float64
    (complex128), so that a thread adding thousands of values in order (a long row) stays within
    an ulp of the pairwise sum NumPy computes (in float32: 4e-5 off after 1024 values of 0.1)."""
    if name == "sum" and dtype in (np.float32, np.complex64):
        return np.dtype(np.float64 if dtype == np.float32 else np.complex128)
    return dtype


def _thread_sum(name: str, source: np.dtype, dtype: np.dtype, read: str) -> tuple[str, str]:
    """The identity and the combining expression of a thread's running value."""
    running = _running(name, dtype)
    element = scalar_code.cast(read, source, dtype)
    if running != dtype:
        element = scalar_code.cast(element, dtype, running)
    return _identity(name, running), _combine(name, running, "acc", element)


def _tree(dtype: np.dtype, name: str, indent: str) -> list[str]:
    """The shared-memory tree of one block over ``buf`` (its ``THREADS`` partial values)."""
    return [f"{indent}buf[t] = {dtype_name(dtype)}(acc)",
            f"{indent}cuda.syncthreads()",
            f"{indent}width = {THREADS // 2}",
            f"{indent}while width > 0:",
            f"{indent}    if t < width:",
            f"{indent}        buf[t] = {_combine(name, dtype, 'buf[t]', 'buf[t + width]')}",
            f"{indent}    cuda.syncthreads()",
            f"{indent}    width //= 2"]


def reduce_all(name: str, source: np.dtype, dtype: np.dtype) -> Kernel:
    """``partial[block]`` = the ``name`` reduction of the block's grid-stride slice of ``x``."""
    identity, combine = _thread_sum(name, source, dtype, "x[i]")
    lines = ["def KERNEL(x, n, partial):",
             f"    buf = cuda.shared.array({THREADS}, {dtype_name(dtype)})",
             "    t = cuda.threadIdx.x",
             f"    i = cuda.blockIdx.x * {THREADS} + t",
             f"    step = cuda.gridDim.x * {THREADS}",
             f"    acc = {identity}",
             "    while i < n:",
             f"        acc = {combine}",
             "        i += step",
             *_tree(dtype, name, "    "),
             "    if t == 0:",
             "        partial[cuda.blockIdx.x] = buf[0]"]
    return _named(f"{name}_all", lines, [(source, 1), (np.dtype(np.int64), 0), (dtype, 1)])


def reduce_rows(name: str, source: np.dtype, dtype: np.dtype) -> Kernel:
    """``out[r]`` = the ``name`` reduction of row ``r`` of the 2-D ``x``, one block per row."""
    identity, combine = _thread_sum(name, source, dtype, "x[r, j]")
    lines = ["def KERNEL(x, out):",
             f"    buf = cuda.shared.array({THREADS}, {dtype_name(dtype)})",
             "    t = cuda.threadIdx.x",
             "    r = cuda.blockIdx.x",
             "    while r < x.shape[0]:",
             f"        acc = {identity}",
             "        j = t",
             "        while j < x.shape[1]:",
             f"            acc = {combine}",
             f"            j += {THREADS}",
             *_tree(dtype, name, "        "),
             "        if t == 0:",
             "            out[r] = buf[0]",
             "        cuda.syncthreads()",
             "        r += cuda.gridDim.x"]
    return _named(f"{name}_rows", lines, [(source, 2), (dtype, 1)])


def reduce_axis(name: str, source: np.dtype, dtype: np.dtype) -> Kernel:
    """``out[o * inner + j]`` = the ``name`` reduction of ``x[o, :, j]`` for the 3-D view ``x``
    (outer, reduced, inner), one thread per output element adding in order, as NumPy does
    along an axis that is not the last."""
    element = scalar_code.cast("x[o, r, j]", source, dtype)
    lines = ["def KERNEL(x, out, n):",
             "    start = cuda.grid(1)",
             "    step = cuda.gridsize(1)",
             "    for i in range(start, n, step):",
             "        o = i // x.shape[2]",
             "        j = i % x.shape[2]",
             f"        acc = {_identity(name, dtype)}",
             "        for r in range(x.shape[1]):",
             f"            acc = {_combine(name, dtype, 'acc', element)}",
             "        out[i] = acc"]
    return _named(f"{name}_axis", lines, [(source, 3), (dtype, 1), (np.dtype(np.int64), 0)])


def matmul(dtype: np.dtype) -> Kernel:
    """``out = a @ b`` for C-contiguous 2-D ``a`` (m, k) and ``b`` (k, n) of ``dtype``."""
    t, zero = dtype_name(dtype), f"{dtype_name(dtype)}(0)"
    lines = ["def KERNEL(a, b, out):",
             # one shared array per line: the simulator aliases two declared on one line
             f"    sa = cuda.shared.array(({TILE}, {TILE}), {t})",
             f"    sb = cuda.shared.array(({TILE}, {TILE}), {t})",
             "    tx = cuda.threadIdx.x",
             "    ty = cuda.threadIdx.y",
             f"    row = cuda.blockIdx.y * {TILE} + ty",
             f"    col = cuda.blockIdx.x * {TILE} + tx",
             "    m = a.shape[0]",
             "    k = a.shape[1]",
             f"    acc = {zero}",
             f"    for base in range(0, k, {TILE}):",
             "        if row < m and base + tx < k:",
             "            sa[ty, tx] = a[row, base + tx]",
             "        else:",
             f"            sa[ty, tx] = {zero}",
             "        if col < b.shape[1] and base + ty < k:",
             "            sb[ty, tx] = b[base + ty, col]",
             "        else:",
             f"            sb[ty, tx] = {zero}",
             "        cuda.syncthreads()",
             f"        for q in range({TILE}):",
             "            acc += sa[ty, q] * sb[q, tx]",
             "        cuda.syncthreads()",
             "    if row < m and col < b.shape[1]:",
             "        out[row, col] = acc"]
    return _named("matmul", lines, [(dtype, 2), (dtype, 2), (dtype, 2)])


def blocks(n: int) -> int:
    """Blocks of ``THREADS`` for a grid-stride loop over ``n`` elements."""
    return max(1, min(-(-n // THREADS), MAX_BLOCKS))


def permute(axes: tuple[int, ...], dtype: np.dtype) -> Kernel:
    """``out = x.transpose(axes)`` into a C-contiguous ``out``, one element per thread."""
    rank = len(axes)
    lines = ["def KERNEL(x, out, n):",
             "    start = cuda.grid(1)",
             "    step = cuda.gridsize(1)",
             "    for i in range(start, n, step):",
             "        rest = i"]
    for k in range(rank - 1, 0, -1):
        lines += [f"        i{k} = rest % out.shape[{k}]", f"        rest //= out.shape[{k}]"]
    lines.append("        i0 = rest")
    source = [f"i{axes.index(k)}" for k in range(rank)]  # out axis j reads x axis axes[j]
    out = ", ".join(f"i{k}" for k in range(rank))
    lines.append(f"        out[{out}] = x[{', '.join(source)}]")
    return _named("transpose", lines, [(dtype, rank), (dtype, rank), (np.dtype(np.int64), 0)])
