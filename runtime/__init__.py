"""The staging runtime, imported as ``autostage.runtime``.

It knows nothing of ASTs or the compiler: it may import NumPy, Numba and llvmlite, never
``autostage.pyct``, ``autostage.converters`` or ``autostage.operators``.
"""
