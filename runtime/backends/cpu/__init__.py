"""The CPU backend: IR -> Python source -> numba.njit, cached on disk."""
