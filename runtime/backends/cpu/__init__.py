"""The CPU backend: IR -> Python source -> numba.njit, cached on disk."""

from autostage.runtime.backends.cpu import numba_startup

numba_startup.install()  # before this backend makes Numba compile or load anything
