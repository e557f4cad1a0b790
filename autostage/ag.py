"""The flat namespace that converted code calls through the alias ``ag__``.

Generated code spells ``ag__.if_stmt(...)``, ``ag__.print_(...)``...; the loader binds ``ag__`` to
this module, which re-exports ``autostage.operators`` and adds ``converted`` (``ag__.converted(f)``
is what a call ``f(...)`` in user code becomes when ``f`` may be user code to convert) and
``AUTOSTAGE_ERRORS``, the errors autostage raises itself (re-raised before any user handler).
"""

from autostage.calls import converted
from autostage.operators import *  # noqa: F403
from autostage.operators import __all__ as _operators_all
from autostage.pyct.errors import PyCTError
from autostage.runtime import OWN_ERRORS

# What autostage raises itself while converting and tracing: errors about the program (or
# autostage), never the program's own exceptions. Converted ``try`` statements re-raise them
# before any user handler (converters/try_statements.py), and ``with_region`` never lets a
# context manager swallow them.
AUTOSTAGE_ERRORS = (*OWN_ERRORS, PyCTError)

__all__ = [*_operators_all, "converted", "AUTOSTAGE_ERRORS"]
