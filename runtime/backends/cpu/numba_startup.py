"""Numba's start-up in a process, without the SciPy import its BLAS probe costs.

Numba loads its implementations (``numba.np.arraymath`` among them) at the first compile or cache
load of a process, and ``arraymath`` probes at import whether BLAS is usable by importing
``scipy.linalg.cython_blas``: that imports all of ``scipy.linalg`` (and, through SciPy's array-API
layer, ``numpy.f2py``), 0.13 s of the 0.28 s Numba's start-up took on this machine, paid by every
process that compiles, or loads from the cache, anything. Generated code calls BLAS through NumPy's
own library (``blas``); SciPy's is needed only where Numba's own ``np.dot`` or ``np.linalg`` code
is compiled, and those call the real probe again when they are lowered (importing SciPy then).

So during that first load the probe only asks whether the module is installed (a file next to
SciPy's package), without importing it; the answer is the one the import would give on a working
install. Afterwards Numba's own probe is back in place.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

from numba.core import cpu

_BLAS_MODULE = "arraymath"  # numba.np.<this> probes at import


def _scipy_blas_installed() -> bool:
    """Whether SciPy's BLAS bindings are installed (their extension module, not only its
    Cython declarations), without importing them."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.origin:
        return False
    linalg = os.path.join(os.path.dirname(spec.origin), "linalg")
    return any(os.path.isfile(os.path.join(linalg, "cython_blas" + suffix))
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _probe() -> None:
    """Numba's ``ensure_blas`` during the first load: its ImportError, without the import."""
    if not _scipy_blas_installed():
        raise ImportError("scipy 0.16+ is required for linear algebra")


def install() -> None:
    """Makes the first load of Numba's implementations in this process probe BLAS without
    importing SciPy (idempotent; nothing to do once they are loaded)."""
    if f"numba.np.{_BLAS_MODULE}" in sys.modules or \
            getattr(cpu.CPUContext.load_additional_registries, "deferred_blas_probe", False):
        return
    original = cpu.CPUContext.load_additional_registries

    def load_additional_registries(self) -> None:
        if f"numba.np.{_BLAS_MODULE}" in sys.modules:
            cpu.CPUContext.load_additional_registries = original
            return original(self)
        from numba.np import linalg
        probe = linalg.ensure_blas
        linalg.ensure_blas = _probe
        try:
            return original(self)
        finally:
            linalg.ensure_blas = probe
            cpu.CPUContext.load_additional_registries = original

    load_additional_registries.deferred_blas_probe = True
    cpu.CPUContext.load_additional_registries = load_additional_registries
