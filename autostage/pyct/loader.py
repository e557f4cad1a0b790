"""Loading generated code as real modules, and rebuilding converted functions around user state.

Generated source is written to ``<cache dir>/<prefix>_<content hash>.py`` and imported from there,
so ``inspect.getsource``, tracebacks and on-disk caches that need a real file (Numba's
``cache=True``) all work. The file name is the hash of the text: a file is written once, never
rewritten, and concurrent writers are safe (first one wins through ``os.link``). The cache
directory comes from ``set_root`` (autostage gives its configuration, ``config.CACHE_DIR``; pyct
imports nothing from autostage; used alone, pyct reads ``$AUTOSTAGE_CACHE_DIR`` itself), else
``$XDG_CACHE_HOME/autostage`` or ``~/.cache/autostage``; it
must be private (mode 0700), because whoever can write to it chooses the code that is imported.

``load_function`` builds a converted function that shares the original's globals dict and closure
cells, so globals defined later, free variables assigned later and ``nonlocal`` writes behave as in
the original function.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import linecache
import logging
import os
import sys
import tempfile
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import gast

from autostage.common import cache_directory
from autostage.pyct import naming, parser, templates, unparser

ENV_VAR = "AUTOSTAGE_CACHE_DIR"  # config.CACHE_DIR; read here only when pyct is used alone
DEFAULT_PREFIX = "autostage_gen"
_FACTORY = "autostage_factory"

logger = logging.getLogger(__name__)


_fallbacks: dict[str, str] = {}  # unsafe directory -> the private temporary one used instead
_root: list[Callable[[], str]] = []  # set_root's provider, if any


def set_root(provider: Callable[[], str]) -> None:
    """Where ``cache_dir`` puts generated code: ``provider()`` (asked at each use)."""
    _root[:] = [provider]


def cache_dir() -> str:
    """The private directory generated modules are written to; created (mode 0700) if missing.

    A directory that others could change (another owner, writable by group or others, or a
    parent that lets them replace it: ``autostage.common.cache_directory``, the same rules as the
    cpu backend's cache) is not used: a ``CacheDirectoryWarning`` says why, and a private
    temporary directory is used for this process instead.
    """
    path = _root[0]() if _root else os.environ.get(ENV_VAR)  # pyct on its own: the variable
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "autostage")
    path = os.path.abspath(path)
    if path in _fallbacks:
        return _fallbacks[path]
    try:
        cache_directory.check(Path(path), Path(path))
    except OSError as e:
        fallback = _fallbacks[path] = str(cache_directory.fallback(Path(path), e, stacklevel=3))
        return fallback
    return path


def _write_once(path: str, data: bytes) -> None:
    """Writes ``data`` to ``path`` unless it already holds exactly that; safe under concurrency."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
        logger.warning("replacing %s: its content does not match its hash", path)
        exists = True
    except FileNotFoundError:
        exists = False
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if exists:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)  # fails if another writer got there first: its text is the same
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _import(name: str, path: str) -> types.ModuleType:
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__file__", None) == path:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _delete_at_exit(path: str, source: str) -> None:
    # Keep the text for tracebacks printed after the file is gone (mtime None: never re-checked).
    linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)

    def delete() -> None:
        for p in (path, importlib.util.cache_from_source(path)):
            with contextlib.suppress(OSError):
                os.unlink(p)

    atexit.register(delete)


def load_source(source: str, delete_on_exit: bool = False, prefix: str = DEFAULT_PREFIX
                ) -> tuple[types.ModuleType, str]:
    """Writes ``source`` to the cache directory and imports it; returns ``(module, filename)``.

    The same text always gives the same file and module name, and is imported once per process.
    ``delete_on_exit`` removes the file when the process exits (other processes that share the
    cache directory may then have to write it again).
    """
    if not source.endswith("\n"):
        source += "\n"
    data = source.encode("utf-8")
    name = f"{prefix}_{hashlib.sha256(data).hexdigest()[:32]}"
    path = os.path.join(cache_dir(), name + ".py")
    _write_once(path, data)
    module = _import(name, path)
    if delete_on_exit:
        _delete_at_exit(path, source)
    return module, path


def load_ast(nodes: gast.AST | Sequence[gast.AST], delete_on_exit: bool = False,
             prefix: str = DEFAULT_PREFIX) -> tuple[types.ModuleType, str, str]:
    """Unparses ``nodes`` and loads the code; returns ``(module, source, filename)``."""
    source = unparser.unparse(nodes) + "\n"
    module, filename = load_source(source, delete_on_exit, prefix)
    return module, source, filename


def cells_of(fn: Callable) -> dict[str, types.CellType]:
    """The closure cells of a function, by free-variable name."""
    code = parser.code_of(fn)
    fn = getattr(fn, "__func__", fn)
    return dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))


class LoadedFunction(NamedTuple):
    """What ``load_function`` built: the function and where its code lives.

    ``nodes`` is the module AST that was unparsed into ``source``; pass it with ``source`` and
    ``filename`` to ``origin_info.create_source_map``.
    """

    function: types.FunctionType
    module: types.ModuleType
    source: str
    filename: str
    nodes: gast.Module


def _definition(definition: gast.AST | str, name: str) -> gast.AST:
    if isinstance(definition, str):
        body = parser.parse_str(definition, single_node=False).body
        if len(body) != 1:
            raise ValueError(f"expected the source of one function, found {len(body)} statements")
        definition = body[0].value if isinstance(body[0], gast.Expr) else body[0]
    if isinstance(definition, gast.Lambda):
        return definition
    if not isinstance(definition, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise ValueError(f"expected a function definition or a lambda, got {definition!r}")
    if definition.name != name:
        raise ValueError(f"expected a definition of {name!r}, found {definition.name!r}")
    if definition.decorator_list:
        raise ValueError(
            f"{name}: load_function builds the function from its code object, so decorators"
            " would not run; remove them and apply them to the loaded function")
    return definition


def _factory_module(node: gast.AST, name: str, params: list[str]) -> tuple[gast.Module, str]:
    """``def autostage_factory(<bindings>): <def>; return <it>``: bindings become free variables.

    The factory is never called. A function that refers to its own name reads it as a global (or
    its own closure cell), so its def is renamed inside the factory to keep that name free.
    """
    if isinstance(node, gast.Lambda):
        body = templates.replace(
            "def factory(params):\n    return fn", factory=_FACTORY, params=params, fn=node)
        return gast.Module(body, []), "<lambda>"
    inner = name
    if name not in params and any(
            isinstance(n, gast.Name) and n.id == name for n in gast.walk(node)):
        namer = naming.Namer(naming.collect_names(node) | set(params) | {_FACTORY})
        inner = namer.new_symbol(f"{name}_def")
    node = templates.copy_node(node)
    node.name = inner
    body = templates.replace(
        "def factory(params):\n    definition\n    return inner",
        factory=_FACTORY, params=params, definition=node, inner=inner)
    return gast.Module(body, []), inner


def _evaluate_defaults(node: gast.AST, globals_: dict, namespace: dict
                       ) -> tuple[tuple | None, dict | None]:
    args = node.args

    def value(expr: gast.expr) -> Any:
        return eval(unparser.unparse(expr), globals_, namespace)

    defaults = tuple(value(d) for d in args.defaults) or None
    kwdefaults = {a.id: value(d) for a, d in zip(args.kwonlyargs, args.kw_defaults,
                                                 strict=True) if d is not None} or None
    return defaults, kwdefaults


def load_function(definition: gast.AST | str, name: str, globals_: dict,
                  closure_cells: Mapping[str, types.CellType] | None = None,
                  extra_bindings: Mapping[str, Any] | None = None, *,
                  like: Callable | None = None, delete_on_exit: bool = False,
                  prefix: str = DEFAULT_PREFIX) -> LoadedFunction:
    """Loads a generated function definition as a live function bound to user state.

    Args:
      definition: a ``FunctionDef``/``AsyncFunctionDef``/``Lambda`` node or its source text.
      name: the function's name (checked against a def; a lambda keeps ``<lambda>``).
      globals_: the globals dict the function runs in, shared by reference (pass the original
        function's ``__globals__``).
      closure_cells: free-variable cells shared with the original function (see ``cells_of``).
      extra_bindings: other names the generated code needs (e.g. a module alias); each becomes a
        new cell.
      like: the original function; its defaults, keyword defaults, docstring, qualname, module and
        annotations are copied. Without it, default values are evaluated now from ``globals_``
        and the bindings.

    Raises:
      ValueError: a malformed definition, a name bound twice, or a free variable without a cell.
    """
    node = _definition(definition, name)
    cells = dict(closure_cells or {})
    extras = dict(extra_bindings or {})
    twice = sorted(set(cells) & set(extras))
    if twice:
        raise ValueError(f"{name}: {twice} are given both as closure cells and as extra bindings")
    cells.update((k, types.CellType(v)) for k, v in extras.items())
    module_node, inner = _factory_module(node, name, sorted(cells))
    origin = getattr(like, "__code__", None)
    if origin is not None:  # the same text from two files must not share one file's source map
        module_node.body.insert(0, gast.Expr(gast.Constant(
            f"Converted from {origin.co_filename}:{origin.co_firstlineno}.", None)))
    module, source, filename = load_ast(module_node, delete_on_exit, prefix)
    qualname = getattr(like, "__qualname__", name)
    code = _inner_code(getattr(module, _FACTORY).__code__, inner, name, qualname)
    missing = [v for v in code.co_freevars if v not in cells]
    if missing:
        raise ValueError(f"{name}: free variables {missing} have no closure cell or binding")
    closure = tuple(cells[v] for v in code.co_freevars)
    fn = types.FunctionType(code, globals_, code.co_name, None, closure or None)
    _copy_metadata(fn, node, like, globals_, cells)
    return LoadedFunction(fn, module, source, filename, module_node)


def _inner_code(factory: types.CodeType, inner: str, name: str, qualname: str
                ) -> types.CodeType:
    code = next(c for c in factory.co_consts
                if isinstance(c, types.CodeType) and c.co_name == inner)
    if inner not in (name, "<lambda>"):
        code = code.replace(co_name=name)
    if hasattr(code, "co_qualname"):  # Python 3.11+: tracebacks show it
        code = code.replace(co_qualname=qualname)
    return code


def _copy_metadata(fn: types.FunctionType, node: gast.AST, like: Callable | None,
                   globals_: dict, cells: dict) -> None:
    if like is None:
        namespace = {k: c.cell_contents for k, c in cells.items() if _is_filled(c)}
        fn.__defaults__, fn.__kwdefaults__ = _evaluate_defaults(node, globals_, namespace)
        fn.__qualname__ = fn.__name__
        return
    like = getattr(like, "__func__", like)
    fn.__defaults__ = like.__defaults__
    fn.__kwdefaults__ = dict(like.__kwdefaults__) if like.__kwdefaults__ else None
    fn.__doc__ = like.__doc__
    fn.__qualname__ = like.__qualname__
    fn.__module__ = like.__module__
    fn.__annotations__ = dict(getattr(like, "__annotations__", {}))


def _is_filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True
