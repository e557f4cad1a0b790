"""Configuration: every option has one name here and one ``AUTOSTAGE_...`` environment variable.

``do_not_convert_modules``: top-level modules whose functions ``converted_call`` always calls as
they are (never converted). Extend it with ``AUTOSTAGE_DO_NOT_CONVERT=pkg1,pkg2`` or by adding to
the set at run time. The standard library, builtins and autostage itself are never converted.

``traceback_mode()``: ``"filtered"`` (the default: errors leaving autostage show the user's frames
and hide autostage's, Numba's and generated code's) or ``"full"`` (every frame), from
``AUTOSTAGE_TRACEBACK``, read when an error is reported so it can be changed at run time.

``max_traces``: how many traces a staged function keeps (default 32, ``AUTOSTAGE_MAX_TRACES``;
0 keeps all). A function traced for more (e.g. once per value of a Python constant) drops the
least recently run, with its compiled code; calling it with those arguments again traces again
(the CPU target then loads the compiled code from the disk cache). Set it with
``set_max_traces(n)``; it applies to traces made afterwards.
"""

from __future__ import annotations

import os

from autostage.runtime import staged_function as _staged_function

do_not_convert_modules: set[str] = {
    "autostage", "numpy", "numba", "llvmlite", "gast", "scipy", "pandas", "torch", "jax",
    "jaxlib", "tensorflow", "pytest", "_pytest", "hypothesis",
}
do_not_convert_modules.update(
    name.strip() for name in os.environ.get("AUTOSTAGE_DO_NOT_CONVERT", "").split(",")
    if name.strip())


TRACEBACK_MODES = ("filtered", "full")


def traceback_mode() -> str:
    """``"filtered"`` or ``"full"``, from ``AUTOSTAGE_TRACEBACK`` (unknown values: filtered)."""
    mode = os.environ.get("AUTOSTAGE_TRACEBACK", "filtered").strip().lower()
    return mode if mode in TRACEBACK_MODES else "filtered"


def max_traces() -> int:
    """How many traces each staged function keeps (0: all)."""
    return _staged_function.max_traces


def set_max_traces(n: int) -> None:
    """Keeps at most ``n`` traces per staged function (0: all; see the module docstring)."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"max_traces must be an int >= 0, not {n!r}")
    _staged_function.max_traces = n
