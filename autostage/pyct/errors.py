"""Errors raised by the pyct toolkit. Each refines the builtin it subclasses."""

from __future__ import annotations

from typing import Any

from autostage.common.cache_directory import CacheDirectoryWarning  # noqa: F401 - re-export


class PyCTError(Exception):
    """Base class of pyct errors."""


class SourceUnavailableError(PyCTError, OSError):
    """The source code of an entity cannot be found.

    Example: ``exec("def f(x): return x")`` builds ``f`` without a file, so
    ``parser.parse_entity(f)`` raises this. Fix: define ``f`` in a ``.py`` file.
    """


class SourceChangedError(SourceUnavailableError):
    """The source file of a function changed after its module was imported.

    Example: a module is imported, then its file is edited; converting one of its functions would
    convert the edited source, not the code Python runs. Fix: ``importlib.reload`` the module (or
    restart Python) and convert the reloaded function.
    """


class AmbiguousSourceError(PyCTError, ValueError):
    """Several lambdas on one line could match a lambda and cannot be told apart.

    Example: ``f, g = lambda x: x, lambda x: x`` on Python 3.10. Fix: put each lambda on its own
    line, or give it a name with ``def``.
    """


class TemplateError(PyCTError, ValueError):
    """A template substitution does not fit its placeholder (e.g. a statement list where an
    expression is required)."""


class ConversionError(PyCTError, ValueError):
    """Code cannot be converted; the message names the user's file and line.

    Example: ``autostage.to_graph(gen)`` where ``gen`` contains ``yield``. Fix: call generator
    functions from converted code instead (they run as written), or mark them
    ``autostage.do_not_convert``.
    """

    def __init__(self, message: str, node: Any = None, fn: Any = None):
        self.filename, self.lineno, self.source_line = _location(node, fn)
        where = f"{self.filename}:{self.lineno}: " if self.filename else ""
        text = f"{where}{message}"
        if self.source_line:
            text += f"\n    {self.source_line.strip()}"
        super().__init__(text)


def _location(node: Any, fn: Any) -> tuple[str | None, int | None, str | None]:
    """File, line and source line of a node (from its origin annotation) or function."""
    from autostage.pyct import anno  # late: anno imports nothing of ours, but keep errors leaf

    origin = anno.getanno(node, anno.Basic.ORIGIN, None) if node is not None else None
    if origin is not None:
        return origin.loc.filename, origin.loc.lineno, origin.source_code_line
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code.co_filename, getattr(node, "lineno", None) or code.co_firstlineno, None
    return None, getattr(node, "lineno", None), None
