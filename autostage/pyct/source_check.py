"""Checks that the source of a function on disk is still the source of the code Python runs.

Conversion reads a function's source from its file; if the file changed after the module was
imported, converting it would give a different function than the one Python runs, silently.
``check(code, lines, module_globals)`` compiles the file's current text as its module was compiled
(same file name, its own ``__future__`` imports, and the rewriting of an import hook that compiled
it, from ``rewriters``), finds the code object with the function's qualified name and first line,
and compares it with ``code``: bytecode, names, constants (nested code included) and line table.
A difference raises ``SourceChangedError`` naming the file.

The compiled file is cached per file name and text, so a file is compiled once however many of
its functions are converted. Layers above register in ``rewriters`` the import hooks they know
(pytest's assertion rewriting: see ``autostage.conversion``); pyct imports nothing outside stdlib.
"""

from __future__ import annotations

import ast
import contextlib
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

from autostage.pyct import errors

# A rewrite is ``rewrite(tree, text, filename)``, changing an ``ast.Module`` in place as the import
# hook that compiled the module did. A rewriter maps a module's globals to its rewrite, or None.
Rewrite = Callable[[ast.Module, str, str], None]
rewriters: list[Callable[[dict], Rewrite | None]] = []

_cache: dict[str, tuple[str, Any, dict | None]] = {}  # filename -> (text, rewrite, index)
_lock = threading.Lock()


def _key(code: types.CodeType) -> tuple[str, int]:
    return getattr(code, "co_qualname", code.co_name), code.co_firstlineno


def _index(module: types.CodeType) -> dict[tuple[str, int], list[types.CodeType]]:
    """Every code object compiled from a file, by qualified name and first line."""
    index: dict[tuple[str, int], list[types.CodeType]] = {}
    stack = [module]
    while stack:
        code = stack.pop()
        index.setdefault(_key(code), []).append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return index


@contextlib.contextmanager
def compile_warnings_ignored():
    """Reading a file again as Python read it at import: Python has already warned about its
    text (an invalid escape such as ``"\\d"`` is a DeprecationWarning, from 3.12 a
    SyntaxWarning), so a second parse must not warn again; under ``simplefilter("error")`` the
    warning would be raised as a SyntaxError, and the file would seem not to compile."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", SyntaxWarning)
        yield


def _compile(text: str, filename: str, rewrite: Rewrite | None) -> dict | None:
    """The index of the file's code as its module was compiled, or None if it does not compile."""
    try:
        with compile_warnings_ignored():
            if rewrite is not None:
                tree = ast.parse(text, filename=filename)
                rewrite(tree, text, filename)
                module = compile(tree, filename, "exec", dont_inherit=True)
            else:
                module = compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return _index(module)


def _rewrite_of(module_globals: dict | None) -> Rewrite | None:
    for rewriter in rewriters if module_globals else ():
        rewrite = rewriter(module_globals)
        if rewrite is not None:
            return rewrite
    return None


def _same_const(a: Any, b: Any) -> bool:
    if isinstance(a, types.CodeType) or isinstance(b, types.CodeType):
        return isinstance(a, types.CodeType) and isinstance(b, types.CodeType) and same_code(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, frozenset)):
        a, b = sorted(a, key=repr), sorted(b, key=repr)
        return len(a) == len(b) and all(map(_same_const, a, b))
    return repr(a) == repr(b)  # floats bit for bit enough: -0.0, nan


def same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects were compiled from the same source at the same place."""
    fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
              "co_kwonlyargcount", "co_posonlyargcount", "co_flags", "co_firstlineno",
              "co_linetable")
    if any(getattr(a, f, None) != getattr(b, f, None) for f in fields):
        return False
    return len(a.co_consts) == len(b.co_consts) and all(
        map(_same_const, a.co_consts, b.co_consts))


def check(code: types.CodeType, lines: list[str], module_globals: dict | None = None) -> None:
    """Raises SourceChangedError unless ``lines`` (its whole file) compile to ``code``.

    Args:
      code: the code object of the function (or lambda) being converted.
      lines: the current lines of its file, as ``inspect.findsource`` returned them.
      module_globals: the function's globals, which tell whether an import hook rewrote it.
    """
    filename = code.co_filename
    text = "".join(lines)
    rewrite = _rewrite_of(module_globals)
    with _lock:
        cached = _cache.get(filename)
        if cached is None or cached[0] != text or cached[1] != rewrite:
            cached = (text, rewrite, _compile(text, filename, rewrite))
            _cache[filename] = cached
    index = cached[2]
    candidates = [] if index is None else index.get(_key(code), [])
    if not any(same_code(code, candidate) for candidate in candidates):
        name, line = _key(code)
        raise errors.SourceChangedError(
            f"cannot convert {name} ({filename}:{line}): its source file changed since the "
            f"module was imported, so the source on disk is not the code Python runs. Reload "
            f"the module (importlib.reload) or restart Python, then convert again")
