"""Converting one Python entity: parse, run the converter pipeline, load the result.

``convert_entity(fn)`` returns the converted function for a function or method; conversion is
cached per code object (a closure created many times is converted once and rebound to each
instance's cells). The pipeline order lives in ``PIPELINE``; the comments say where order matters.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import linecache
import os
import textwrap
import threading
import types
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import gast

from autostage import config, errors
from autostage.pyct import (
    anno,
    loader,
    mangling,
    naming,
    origin_info,
    parser,
    recursion,
    source_check,
    transformer,
    unparser,
)

AG_ALIAS = "ag__"
loader.set_root(config.cache_root)  # generated code goes where the configuration says
_NESTED_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)

# The converters of autostage/converters/, in the order they run.
PIPELINE = (
    "directives",  # first: loop options must be attached before loops are rewritten
    "break_statements",  # break, continue, return: lowered to flags while loops are still loops
    "continue_statements",
    "return_statements",  # after break/continue: its guards wrap their flag-guarded code
    "try_statements",  # after the jumps: a finally that can jump is an except clause by now
    "asserts",
    "string_formatting",  # before call_trees: a literal's `%` is not a call to convert
    "lists",  # lists and slices turn mutations into assignments, so that control flow sees
    "slices",  # the mutated names as loop variables and branch outputs
    "subscripts",  # after slices: its generated reads too; NumPy constants indexed by staged keys
    "comprehensions",  # before call_trees: the calls in its new lambdas are converted too
    "call_trees",  # before control flow: the generated loop and branch functions are not user calls
    "variables",  # before control flow: it reads the analyses of the code as the user wrote it
    "control_flow",
    "conditional_expressions",  # expressions after statements: control flow reads the originals
    "logical_expressions",
)


def converters(names: Sequence[str] = PIPELINE) -> tuple[types.ModuleType, ...]:
    return tuple(importlib.import_module(f"autostage.converters.{name}") for name in names)


class ConvertedCode(NamedTuple):
    """What converting one code object produced; shared by all functions with that code.

    The converted AST is not kept: its annotations make it large, and the source says it all.
    """

    source: str
    filename: str
    function: types.FunctionType
    source_map: dict


# Keyed by file and code: equal code objects of two files (code equality ignores the file) have
# different sources, which may change independently, and different lines for error messages.
_code_cache: dict[tuple[str, types.CodeType], ConvertedCode] = {}
_function_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()



def _pytest_assertion_rewriting(module_globals: dict) -> source_check.Rewrite | None:
    """How pytest compiled a module it rewrote (its test files): asserts become explanations."""
    if "@py_builtins" not in module_globals:  # a global the rewriting adds to every module
        return None
    return _rewrite_asserts


def _rewrite_asserts(tree: Any, text: str, filename: str) -> None:
    from _pytest.assertion.rewrite import rewrite_asserts

    rewrite_asserts(tree, text.encode(), filename, None)


source_check.rewriters.append(_pytest_assertion_rewriting)


def namespace_of(fn: types.FunctionType) -> dict[str, Any]:
    """The names a function sees: its globals, its closure values and the builtins."""
    namespace = dict(vars(builtins))
    namespace.update(fn.__globals__)
    namespace.update(
        (name, cell.cell_contents) for name, cell in loader.cells_of(fn).items()
        if is_filled(cell))
    return namespace


def is_filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises ValueError
    except ValueError:
        return False
    return True


def parse(fn: types.FunctionType) -> tuple[gast.AST, transformer.Context]:
    """Parses a function and builds the context the converters share."""
    node, source = parser.parse_entity(fn)
    origin_info.resolve_entity(node, source, fn)
    # Python mangled the private names of code written in a class; converted code lives outside.
    mangling.mangle(node, mangling.owning_class(getattr(fn.__code__, "co_qualname",
                                                        fn.__qualname__)))
    return node, context_for(node, source, inspect.getsourcefile(fn), namespace_of(fn),
                             free_names=loader.cells_of(fn))


def convert_source(node: gast.AST, source: str, filename: str,
                   namespace: dict[str, Any], class_name: str | None = None) -> str:
    """Converts a function parsed from a file (``source`` is the whole file) to source text.

    Used where the function object is not at hand (the CLI shows nested functions too).
    ``class_name`` is the innermost class the function is written in, whose name private names
    are mangled with.
    """
    origin_info.resolve(node, source, filename)
    mangling.mangle(node, class_name)
    namespace = {**vars(builtins), **namespace}
    return unparser.unparse(transform(node, context_for(node, source, filename, namespace)))


def context_for(node: gast.AST, source: str, filename: str | None,
                namespace: dict[str, Any], free_names: Iterable[str] = ()) -> transformer.Context:
    """The context of converting ``node``, which sees the names in ``namespace``; ``free_names``:
    its free variables, whose values the converters must not rely on (``EntityInfo``)."""
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        node.decorator_list = []  # the decorators were applied to the original already
        if is_generator_or_coroutine(node):
            raise errors.ConversionError(
                "generator and coroutine functions are not converted: call them from converted "
                "code, where they run as written", node)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        reader = _frame_reader(node, namespace)
        if reader is not None:
            fix = ("give it its namespaces (`eval(source, globals(), {'n': n})`)"
                   if _FRAME_READERS[reader.func.id] else "build the dictionary it should show")
            raise errors.ConversionError(
                f"{reader.func.id}() reads the local variables of the function calling it, "
                "which converted code keeps elsewhere (loop and branch bodies become functions, "
                "and generated names are added), so the function is not converted: converted "
                f"code calling it runs it as written; to convert it, {fix}", reader)
    _leave_generators_as_written(node)
    if AG_ALIAS in naming.collect_names(node):
        raise errors.ConversionError(
            f"the name {AG_ALIAS!r} is reserved for autostage's generated code", node)
    namer = naming.Namer.for_entity(node, namespace)
    namer.reserve([AG_ALIAS])
    name = getattr(node, "name", "<lambda>")
    info = transformer.EntityInfo(name=name, source_code=source, source_file=filename,
                                  future_features=(), namespace=namespace,
                                  free_names=frozenset(free_names))
    return transformer.Context(info, namer=namer, user=_options())


def _options() -> types.SimpleNamespace:
    """What converters may know of the layers above them (they import only pyct)."""
    from autostage import operators
    from autostage.converters import call_trees

    policy = call_trees.CallPolicy(overloads=operators.BUILTINS,
                                   as_is_modules=config.do_not_convert_modules)
    return types.SimpleNamespace(call_policy=policy)


# Builtins that read their caller's frame: with these arguments, its local variables.
_FRAME_READERS = {"eval": 1, "exec": 1, "locals": 0, "vars": 0, "dir": 0}


def _frame_reader(node: gast.AST, namespace: dict[str, Any]) -> gast.Call | None:
    """A call in ``node``'s own body of a builtin that reads the function's local variables
    (``locals()``, ``vars()``, ``dir()``, ``eval(s)``, ``exec(s)`` without a namespace)."""
    for n in _own_nodes_and_lambdas(node):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and (
                n.func.id in _FRAME_READERS and not n.keywords
                and len(n.args) <= _FRAME_READERS[n.func.id]
                and not any(isinstance(a, gast.Starred) for a in n.args)
                and namespace.get(n.func.id, getattr(builtins, n.func.id))
                is getattr(builtins, n.func.id)):
            return n
    return None


def is_generator_or_coroutine(node: gast.AST) -> bool:
    """Whether a def or lambda makes a generator, coroutine or async generator function."""
    if isinstance(node, gast.AsyncFunctionDef):
        return True
    return any(isinstance(n, (gast.Yield, gast.YieldFrom, gast.Await)) for n in _own_nodes(node))


def _leave_generators_as_written(root: gast.AST) -> None:
    """Marks the generator and coroutine functions nested in ``root`` to be left as written.

    Their bodies run lazily, one ``next()`` or ``send()`` at a time, so the functional forms of
    control flow (which run a whole branch or loop in one call) cannot express them; Python runs
    them exactly as the user wrote them. The analyses still see them (their reads and nonlocal
    writes matter to the code around them); every converter skips them.
    """
    stack = list(gast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)) and (
                is_generator_or_coroutine(node)):
            anno.setanno(node, anno.Basic.SKIP_PROCESSING, True)
            continue
        stack.extend(gast.iter_child_nodes(node))


def _own_nodes_and_lambdas(fn_node: gast.AST):
    """``_own_nodes``, and those of the lambdas in them (converted with the function)."""
    for node in _own_nodes(fn_node):
        yield node
        if isinstance(node, gast.Lambda):
            yield from _own_nodes_and_lambdas(node)


def _own_nodes(fn_node: gast.AST):
    """The nodes of a function body, not descending into nested functions, classes, lambdas."""
    stack = [fn_node.body] if isinstance(fn_node, gast.Lambda) else list(fn_node.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED_SCOPES):
            stack.extend(gast.iter_child_nodes(node))


def transform(node: gast.AST, ctx: transformer.Context,
              passes: Sequence[types.ModuleType] | None = None) -> gast.AST:
    """Runs converters (default: the whole pipeline) over a parsed entity, in order."""
    for converter in passes if passes is not None else converters():
        node = converter.transform(node, ctx)
    return node


def _ag_module() -> types.ModuleType:
    """``autostage.ag``, what converted code calls as ``ag__``, imported late: it re-exports the
    operators and ``converted_call``, which import this module."""
    from autostage import ag

    return ag


def load(node: gast.AST, fn: types.FunctionType) -> ConvertedCode:
    """Loads a converted AST as a function bound to ``fn``'s globals and closure."""
    ag = _ag_module()

    # The def's own name: a functools.wraps wrapper is named after the function it wraps.
    loaded = loader.load_function(
        node, fn.__code__.co_name, fn.__globals__, loader.cells_of(fn), {AG_ALIAS: ag}, like=fn)
    function = loaded.function
    if hasattr(function.__code__, "co_qualname"):  # Python 3.11+
        generated = {n.name for n in gast.walk(node)
                     if anno.hasanno(n, anno.Basic.GENERATED) and hasattr(n, "name")}
        renamed = {n.name: anno.getanno(n, anno.Basic.ORIGINAL_NAME) for n in gast.walk(node)
                   if anno.hasanno(n, anno.Basic.ORIGINAL_NAME)}
        function.__code__ = _user_qualnames(function.__code__, fn.__qualname__, generated,
                                            renamed)
    source_map = origin_info.create_source_map(loaded.nodes, loaded.source, loaded.filename)
    errors.register_source_map(loaded.filename, source_map)
    function.__autostage_origin__ = GeneratedOrigin(loaded.filename, loaded.source, source_map)
    return ConvertedCode(unparser.unparse(node), loaded.filename, function, source_map)


class GeneratedOrigin:
    """Where converted code came from (its generated file, source and source map), kept in the
    converted function's ``__dict__``. cloudpickle (Dask, Ray) pickles a function that is not
    importable by value, ``__dict__`` included: unpickling this registers the source map and
    lines in the new process, so the copy is known there as converted code (never converted
    again, errors mapped to the user's lines) without the user's source."""

    __slots__ = ("filename", "source", "source_map")

    def __init__(self, filename: str, source: str, source_map: dict) -> None:
        self.filename, self.source, self.source_map = filename, source, source_map

    def __reduce__(self) -> tuple:
        return _registered_origin, (self.filename, self.source, self.source_map)


def _registered_origin(filename: str, source: str, source_map: dict) -> GeneratedOrigin:
    """A ``GeneratedOrigin`` unpickled: its code registered in this process (once)."""
    if filename not in linecache.cache and not os.path.exists(filename):
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
    if not errors.is_generated_file(filename):
        errors.register_source_map(filename, source_map)
    return GeneratedOrigin(filename, source, source_map)


def _user_qualnames(code: types.CodeType, qualname: str, generated: set[str],
                    renamed: dict[str, str], user_scope: str | None = None) -> types.CodeType:
    """Gives nested code the names and qualified names it has in the user's code.

    Functions the user defines inside a generated branch or loop body are named as if the
    generated function were not there (``f.<locals>.helper``), so messages and reprs match; a
    def whose variable name was mangled (``__helper`` in a method) keeps its own name.
    """
    user_scope = qualname if user_scope is None else user_scope
    # Inside a class body, methods are `C.m`; inside a function, `f.<locals>.g`.
    separator = "." if not code.co_flags & inspect.CO_OPTIMIZED else ".<locals>."
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            name = renamed.get(const.co_name, const.co_name)
            child = f"{user_scope}{separator}{name}"
            scope = user_scope if const.co_name in generated else child
            const = _user_qualnames(const, child, generated, renamed, scope).replace(
                co_name=name)
        consts.append(const)
    return code.replace(co_qualname=qualname, co_consts=tuple(consts))


def convert_code(fn: types.FunctionType) -> ConvertedCode:
    """Converts ``fn``'s code object once; later calls return the cached result."""
    code = fn.__code__
    key = (code.co_filename, code)
    converted = _code_cache.get(key)
    if converted is None:
        with _lock:
            converted = _code_cache.get(key)
            if converted is None:
                converted = _convert(fn)
                _code_cache[key] = converted
    return converted


def _convert(fn: types.FunctionType) -> ConvertedCode:
    """Parses, transforms and loads ``fn``; code nested deeper than the recursion limit allows
    the tree walks (CPython compiles a sum of 1,000 terms) is converted again with room for
    its depth (``pyct.recursion``), up to a bound."""
    try:
        node, ctx = parse(fn)
        return load(transform(node, ctx), fn)
    except RecursionError:
        pass  # the tracebacks of both attempts would be thousands of frames: not chained
    try:
        levels = recursion.source_depth(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError):
        levels = 0
    if levels > recursion.MAX_DEPTH:
        raise errors.ConversionError(
            f"{fn.__qualname__} is nested {levels} syntax levels deep (an expression of that "
            f"many terms or nested calls); autostage converts code up to {recursion.MAX_DEPTH} "
            "levels deep: split the expression into several statements", fn=fn)
    with recursion.headroom(levels or recursion.MAX_DEPTH):
        node, ctx = parse(fn)
        return load(transform(node, ctx), fn)


def _rebind(template: types.FunctionType, fn: types.FunctionType) -> types.FunctionType:
    """The converted code of ``template`` with ``fn``'s own closure cells and defaults."""
    if template.__closure__ is None:
        cells = {}
    else:
        cells = dict(zip(template.__code__.co_freevars, template.__closure__, strict=True))
    cells.update(loader.cells_of(fn))
    closure = tuple(cells[name] for name in template.__code__.co_freevars) or None
    new = types.FunctionType(template.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                             closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__doc__, new.__qualname__, new.__module__ = fn.__doc__, fn.__qualname__, fn.__module__
    new.__dict__.update(template.__dict__)
    return new


def convert_entity(fn: Callable) -> Callable:
    """Returns the converted version of a function or bound method (cached per function)."""
    if inspect.ismethod(fn):
        return types.MethodType(convert_entity(fn.__func__), fn.__self__)
    converted = _function_cache.get(fn)
    if converted is None:
        # The code is converted once; each function object gets its own closure cells.
        converted = _rebind(convert_code(fn).function, fn)
        _function_cache[fn] = converted
    return converted


def seed(fn: types.FunctionType, code: types.CodeType, origin: GeneratedOrigin) -> None:
    """Caches ``code`` (converted code of ``fn``'s, from another process: ``pickling``) as the
    converted version of ``fn``, bound to ``fn``'s globals and closure."""
    cells = loader.cells_of(fn)
    cells.setdefault(AG_ALIAS, types.CellType(_ag_module()))
    template = types.FunctionType(code, fn.__globals__, fn.__name__, None, tuple(
        cells[name] for name in code.co_freevars) or None)
    template.__autostage_origin__ = origin
    _function_cache[fn] = _rebind(template, fn)


def wrap_converted(converted: Callable, original: Callable) -> Callable:
    """``to_graph``'s result: ``converted`` under ``original``'s name, adding a note with the
    user's lines to the exceptions that leave it."""
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return converted(*args, **kwargs)
        except Exception as e:
            try:
                errors.report(e)
            except RecursionError:  # this frame is at the recursion limit: no room for a note
                pass
            raise

    wrapper.__autostage_converted__ = converted
    return wrapper


def is_generator_function(fn: Any) -> bool:
    """Whether ``fn`` makes a generator, coroutine or async generator (it is never converted)."""
    return (inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn)
            or inspect.isasyncgenfunction(fn))


def is_converted(fn: Any) -> bool:
    """Whether ``fn`` is converted code (ours), which must never be converted again."""
    code = getattr(fn, "__code__", None)
    return isinstance(code, types.CodeType) and errors.is_generated(code)
