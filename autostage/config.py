"""Configuration: every option has one name here and one ``AUTOSTAGE_...`` environment variable.

``do_not_convert_modules``: top-level modules whose functions ``converted_call`` always calls as
they are (never converted). Extend it with ``AUTOSTAGE_DO_NOT_CONVERT=pkg1,pkg2`` or by adding to
the set at run time. The standard library, builtins and autostage itself are never converted.
"""

from __future__ import annotations

import os

do_not_convert_modules: set[str] = {
    "autostage", "numpy", "numba", "llvmlite", "gast", "scipy", "pandas", "torch", "jax",
    "jaxlib", "tensorflow", "pytest", "_pytest", "hypothesis",
}
do_not_convert_modules.update(
    name.strip() for name in os.environ.get("AUTOSTAGE_DO_NOT_CONVERT", "").split(",")
    if name.strip())
