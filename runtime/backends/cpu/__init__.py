"""The CPU backend: IR -> Python source -> numba.njit, cached on disk."""

from autostage.runtime.backends.cpu import (
    implementation_lookup,
    llvm_lock_events,
    numba_startup,
    registry_refresh,
)

numba_startup.install()  # before this backend makes Numba compile or load anything
registry_refresh.install()
llvm_lock_events.install()
implementation_lookup.install()
