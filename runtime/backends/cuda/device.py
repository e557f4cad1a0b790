"""Finding ``numba.cuda`` and a GPU, with errors that say what to do.

``numba.cuda`` comes from the ``gpu`` extra (``numba-cuda[cu12]``: NVVM and libdevice in wheels,
no system CUDA). Without it, ``convert(target="cuda")`` fails when the function is converted;
with it but without a GPU, a call fails (tracing, PTX generation and ``--backend-source`` still
work), unless the CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1`` set before Python starts),
which runs kernels on the CPU, slowly.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading

INSTALL = "pip install 'autostage[gpu]'"


class CudaUnavailableError(RuntimeError):
    """The cuda target cannot run here: numba-cuda is not installed, or there is no GPU.

    Example: ``convert(target="cuda")`` on a machine without ``numba-cuda``. Fix: install the
    ``gpu`` extra, run on a machine with an NVIDIA GPU, or use ``target="cpu"``.
    """


def installed() -> bool:
    """Whether numba-cuda is installed (without importing it)."""
    return importlib.util.find_spec("numba_cuda") is not None


def require_installed() -> None:
    if not installed():
        raise CudaUnavailableError(
            f"autostage: target='cuda' needs numba-cuda, which is not installed: {INSTALL} "
            "(it brings NVVM and libdevice; no system CUDA toolkit is needed)")


def cuda_module():
    """``numba.cuda``, imported on first use."""
    require_installed()
    from numba import cuda

    _install_contraction_switch()
    return cuda


_separate = threading.local()


def _install_contraction_switch() -> None:
    """Makes NVVM compile ``a * b + c`` as two roundings, as NumPy computes it, while
    ``separate_roundings`` is on in this thread. NVVM contracts it into one ``fma`` by default
    (its ``-fma=1``), which changes results in the last bits and, where they cancel
    (``x * x - a`` near 0), in every bit; numba.cuda has no switch for it, so this wraps the
    function its code libraries call (``nvvm.compile_ir``) once per process."""
    from numba.cuda.cudadrv import nvvm

    if getattr(nvvm.compile_ir, "autostage_switch", False):
        return
    original = nvvm.compile_ir

    def compile_ir(llvmir, **options):
        if getattr(_separate, "on", False) and not options.get("fastmath"):
            options["fma"] = False
        return original(llvmir, **options)

    compile_ir.autostage_switch = True
    nvvm.compile_ir = compile_ir


@contextlib.contextmanager
def separate_roundings():
    """Kernels compiled inside (autostage's, on their first launch) do not contract to fma."""
    before = getattr(_separate, "on", False)
    _separate.on = True
    try:
        yield
    finally:
        _separate.on = before


def simulated() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def require_device():
    """``numba.cuda`` when kernels can run here (a GPU, or the simulator), else the error."""
    cuda = cuda_module()
    if not cuda.is_available():
        raise CudaUnavailableError(
            "autostage: target='cuda' found no usable NVIDIA GPU (numba.cuda.is_available() is "
            "False); run on a machine with one, set NUMBA_ENABLE_CUDASIM=1 before starting "
            "Python to run kernels on the CUDA simulator (slow), or use target='cpu'")
    return cuda
