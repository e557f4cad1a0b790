"""Errors raised by the pyct toolkit. Each refines the builtin it subclasses."""


class PyCTError(Exception):
    """Base class of pyct errors."""


class SourceUnavailableError(PyCTError, OSError):
    """The source code of an entity cannot be found.

    Example: ``exec("def f(x): return x")`` builds ``f`` without a file, so
    ``parser.parse_entity(f)`` raises this. Fix: define ``f`` in a ``.py`` file.
    """


class AmbiguousSourceError(PyCTError, ValueError):
    """Several lambdas on one line could match a lambda and cannot be told apart.

    Example: ``f, g = lambda x: x, lambda x: x`` on Python 3.10. Fix: put each lambda on its own
    line, or give it a name with ``def``.
    """


class TemplateError(PyCTError, ValueError):
    """A template substitution does not fit its placeholder (e.g. a statement list where an
    expression is required)."""


class CacheDirectoryError(PyCTError, PermissionError):
    """The cache directory for generated code is unsafe to import from.

    Example: ``AUTOSTAGE_CACHE_DIR=/tmp`` (writable by every user, so anyone could plant the module
    that autostage imports next). Fix: point it at a directory of your own, or unset it to use the
    per-user default.
    """
