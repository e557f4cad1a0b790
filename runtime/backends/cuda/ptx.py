"""PTX of a module's kernels for a compute capability, without a GPU (NVVM from pip), and its
assembly with ``ptxas`` (from the nvcc wheel), which catches ISA and resource errors.

``module_kernels`` lists the kernels the executor can launch for a module, from the IR types
alone: each element-wise kernel in both its flat and its broadcasting form, each reduction in
its passes. ``compile_ptx`` types and compiles one for ``cc``; ``assemble`` runs ptxas.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cuda import device, executor, kernels, scalar_code
from autostage.runtime.ops import fused as fused_op
from autostage.runtime.types import TensorType


def _walk(module: ir.Module):
    for function in module.functions.values():
        stack = [function.body]
        while stack:
            region = stack.pop()
            for op in region.ops:
                yield op
                if op.name != "fused":
                    stack.extend(op.regions)


def _elementwise(ops, args, result, ranks) -> list[kernels.Kernel]:
    rank = result.type.ndim
    variants = [kernels.elementwise(ops, args, result, ranks, rank, False)]
    if all(r in (0, rank) for r in ranks):
        variants.append(kernels.elementwise(ops, args, result, ranks, rank, True))
    return variants


def _reduction_kernels(name: str, whole: bool, source: np.dtype, dtype: np.dtype):
    if whole:
        return [kernels.reduce_all(name, source, dtype), kernels.reduce_all(name, dtype, dtype)]
    return [kernels.reduce_rows(name, source, dtype)]


def op_kernels(op: ir.Op) -> list[kernels.Kernel]:
    """The kernels the executor may launch for ``op`` (none: a host op)."""
    if op.name not in executor.RULES or not executor._array_results(op):
        return []
    t = op.results[0].type
    if op.name == "fused":
        (body,) = op.regions
        last = body.ops[-1]
        reduction = last if fused_op.is_fusible_reduction(last) else None
        element_ops = body.ops[:-1] if reduction else body.ops
        if not all(scalar_code.supports(o) for o in element_ops):
            return []
        looped = reduction.operands[0] if reduction else body.results[0]
        found = []
        if element_ops and looped.type.ndim:
            found = _elementwise(element_ops, list(body.args), looped,
                                 [a.type.ndim for a in body.args])
        if reduction is not None:
            found += _reduction_kernels(reduction.name, reduction.attrs.get("axis") is None,
                                        looped.type.dtype, t.dtype)
        return found
    if op.name in ("sum", "max", "min"):
        if not executor.reduces_on_device(op):
            return []
        x = op.operands[0].type
        axis = op.attrs.get("axis")
        if axis is not None and axis[0] != x.ndim - 1:
            return [kernels.reduce_axis(op.name, x.dtype, t.dtype)]
        return _reduction_kernels(op.name, axis is None, x.dtype, t.dtype)
    if op.name == "mean":
        x = op.operands[0].type
        return (_reduction_kernels("sum", True, x.dtype, t.dtype)
                if op.attrs.get("axis") is None and x.dtype.kind == "f" else [])
    if op.name in ("matmul", "dot"):
        a, b = (v.type for v in op.operands)
        return ([kernels.matmul(t.dtype)] if a.dtype == b.dtype == t.dtype
                and t.dtype in (np.float32, np.float64) else [])
    if op.name == "transpose":
        return ([kernels.permute(tuple(op.attrs["axes"]), t.dtype)]
                if t.ndim >= 2 else [])
    if op.name in ("reshape", "expand_dims", "squeeze", "getitem"):
        return []  # views
    if op.name in ("full", "full_like"):
        return ([executor.fill_kernel(t.dtype, t.ndim)]
                if t.dtype.kind in "biuf" and t.dtype != np.float16 else [])
    if t.ndim and scalar_code.supports(op):
        return _elementwise([op], list(op.operands), op.results[0],
                            [v.type.ndim for v in op.operands])
    return []


def module_kernels(module: ir.Module) -> list[kernels.Kernel]:
    """Every kernel of ``module`` (optimized for the cuda target), each once."""
    found: dict[str, kernels.Kernel] = {}
    for op in _walk(module):
        for kernel in op_kernels(op):
            found.setdefault(kernel.source, kernel)
    return list(found.values())


def _numba_type(dtype: np.dtype, ndim: int):
    import numba

    scalar = numba.from_dtype(np.dtype(dtype))
    return scalar if ndim == 0 else numba.types.Array(scalar, ndim, "C")


def compile_ptx(kernel: kernels.Kernel, cc: tuple[int, int]) -> str:
    """The PTX of ``kernel`` for compute capability ``cc`` (no GPU needed)."""
    cuda = device.cuda_module()
    signature = tuple(_numba_type(d, n) for d, n in kernel.params)
    with device.separate_roundings():
        ptx, _ = cuda.compile_ptx(kernel.function(), signature, cc=cc)
    return ptx


def ptxas() -> Path | None:
    """The ``ptxas`` of the nvcc wheel, if installed."""
    try:
        import nvidia.cuda_nvcc as nvcc
    except ImportError:
        return None
    for root in nvcc.__path__:
        path = Path(root) / "bin" / "ptxas"
        if path.exists():
            return path
    return None


def assemble(ptx: str, cc: tuple[int, int]) -> None:
    """Assembles ``ptx`` for ``sm_<cc>`` with ptxas; raises RuntimeError with its message."""
    tool = ptxas()
    if tool is None:
        raise RuntimeError("ptxas not found: install the gpu extra (numba-cuda[cu12])")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernel.ptx"
        source.write_text(ptx)
        done = subprocess.run([str(tool), f"-arch=sm_{cc[0]}{cc[1]}", str(source), "-o",
                               str(Path(tmp) / "kernel.cubin")], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ptxas failed for sm_{cc[0]}{cc[1]}: {done.stderr.strip()}")


def module_ptx(module: ir.Module, cc: tuple[int, int]) -> str:
    """The PTX of every kernel of ``module``, each under a comment naming it."""
    return "\n".join(f"// kernel {k.name}\n{compile_ptx(k, cc)}" for k in module_kernels(module))


def is_kernel_op(op: ir.Op) -> bool:
    """Whether ``op`` runs on the device: a kernel, a view, or device-to-device copies."""
    if op.name in ("reshape", "expand_dims", "squeeze", "list_stack"):
        return isinstance(op.results[0].type, TensorType) and op.results[0].type.ndim > (
            op.name == "list_stack")
    if op.name == "getitem":  # integers, then a slice of step 1: a view
        entries = op.attrs["index"]
        steps = [e[2] for e in entries if isinstance(e, tuple)]
        return (all(v.type.ndim == 0 for v in op.operands[1:]) and "..." not in entries
                and None not in entries and len(steps) <= 1 and steps in ([], [None], [1])
                and (not steps or isinstance(entries[-1], tuple)))
    return bool(op_kernels(op))


def backend_source(module: ir.Module) -> str:
    """What ``--backend-source --target cuda`` prints: the kernels and the ops left on the host."""
    host = sorted({op.name for op in _walk(module) if not op.regions and not is_kernel_op(op)
                   and any(isinstance(v.type, TensorType) and v.type.ndim for v in op.results)})
    lines = [f"# cuda target, @{module.entry}: {len(module_kernels(module))} kernels; array ops "
             "without one run on the host with NumPy",
             f"# ops with array results on the host: {', '.join(host) or 'none'}"]
    for kernel in module_kernels(module):
        lines += ["", kernel.source.rstrip("\n")]
    return "\n".join(lines)
