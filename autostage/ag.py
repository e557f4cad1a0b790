"""The flat namespace that converted code calls through the alias ``ag__``.

Generated code spells ``ag__.if_stmt(...)``, ``ag__.print_(...)``...; the loader binds ``ag__`` to
this module, which re-exports ``autostage.operators`` and adds ``converted`` (``ag__.converted(f)``
is what a call ``f(...)`` in user code becomes when ``f`` may be user code to convert).
"""

from autostage.calls import converted
from autostage.operators import *  # noqa: F403
from autostage.operators import __all__ as _operators_all

__all__ = [*_operators_all, "converted"]
