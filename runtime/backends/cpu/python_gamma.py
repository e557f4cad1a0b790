"""CPython's ``math.gamma`` and ``math.lgamma`` for compiled code: called back into Python.

CPython computes these with its own Lanczos approximation, not libm's ``tgamma``/``lgamma``,
and Numba's ``math.gamma``/``math.lgamma`` give other values: 146 and 127 of 200 points in
[0.1, 30] differed from CPython's, ``lgamma(-2.5)`` by ~50 ulp (found running nolds'
``expected_rs``, 1 ulp off). Compiled code calls Python's own functions instead, through C
functions made with ctypes (which take the GIL), registered with LLVM under fixed names at import
(``llvmlite.binding.add_symbol``), as ``sorts`` calls NumPy: a Python call per value (~0.3 µs),
exact by construction. Python's errors are the ``raise_if`` checks of the front end
(``runtime/python_math.py``), which read the result: a domain error returns nan here, a range
error infinity.

Generated modules import this module as ``cpu_gamma`` (``hashed_import``).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable

from llvmlite import binding as llvm
from numba import types


def _python(function: Callable[[float], float]) -> ctypes._CFuncPtr:
    @ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)
    def back(x: float) -> float:
        try:
            return function(x)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf
    return back


_BACK = {name: _python(getattr(math, name)) for name in ("gamma", "lgamma")}  # (kept alive)
for _name, _back in _BACK.items():
    llvm.add_symbol(f"autostage_python_{_name}", ctypes.cast(_back, ctypes.c_void_p).value)
gamma = types.ExternalFunction("autostage_python_gamma", types.float64(types.float64))
lgamma = types.ExternalFunction("autostage_python_lgamma", types.float64(types.float64))
