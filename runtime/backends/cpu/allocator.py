"""Big temporaries without page faults: malloc keeps the blocks they free for the next call.

Compiled code allocates arrays through Numba's runtime, that is the C library's ``malloc``. glibc
serves a block of more than 128 KiB-32 MiB with a fresh ``mmap`` and unmaps it when it is freed, so
a call that makes a 32 MiB temporary touches 8,192 new pages, a page fault each: ``hs * hs`` of a
128x128x256 float64 array took 14 ms in compiled code against NumPy's 3 ms (NumPy asks for huge
pages). With malloc's mmap and trim thresholds at 1 GiB, freed blocks stay in the heap and the
next call reuses them: 1.5 ms (NumPy's, in the same process: 1.2 ms).

``tune()`` runs once, when the CPU backend first compiles; only where the C library is glibc.
``AUTOSTAGE_MALLOC_TUNING=0`` leaves malloc as it is. The cost: memory that big arrays free stays
with the process (reused by later allocations, not returned to the system), as with the caching
allocators of PyTorch and JAX.
"""

from __future__ import annotations

import ctypes
import platform

from autostage.runtime import config

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
THRESHOLD = 1 << 30  # blocks larger than this are still mapped and unmapped each time
_done: list[bool] = []


def tune() -> bool:
    """Raises glibc malloc's mmap and trim thresholds (once); whether they are raised."""
    if _done:
        return _done[0]
    _done.append(False)
    if not config.MALLOC_TUNING.value() or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # (the process's C library: no ldconfig run)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    _done[0] = bool(mallopt(_M_MMAP_THRESHOLD, THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, THRESHOLD))
    return _done[0]
