"""``compile_module``: an IR module -> a runner ``run(args: list) -> tuple`` backed by Numba.

Generates the module's source (``codegen``), writes and imports it through the disk cache
(``module_cache``), and returns a closure that calls the entry function's dispatcher (compiled
without Numba's front end where it can: ``direct``). All work
that does not depend on the argument values is done here once, so a call is: unwrap 0-d
arguments to scalars, append the Variables' storage, call, re-wrap the results as the NumPy
values the interpreter returns. The first call compiles explicitly (``Dispatcher.compile``), so
that a Numba error is told apart from a run-time error of the program: a Numba typing or
lowering error becomes a ``CpuCompileError`` naming the op and the user's line (Numba's text is
kept as a note), and a cache entry Numba fails to load is purged and compiled again.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
import re
import time
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from autostage.runtime import collector, ir, tracing
from autostage.runtime.backends.cpu import (
    allocator,
    checks,
    codegen,
    limits,
    llvm_lock_events,
    lower_py_function,
    module_cache,
    run_errors,
    strict_dispatch,
)
from autostage.runtime.types import GeneratorType, ListType, TensorType

logger = logging.getLogger(__name__)
_loaded_lowerings = False


class CpuCompileError(tracing.StagingError, TypeError):
    """Numba could not compile code autostage generated for an accepted program (a bug of the
    CPU backend, reported in the user's terms).

    Example: an op whose lowering Numba cannot type for some dtype. Fix: run the function with
    ``target="interpreter"`` meanwhile, and report the error with its notes.
    """


def load_lowerings() -> None:
    """Imports every ``lower_*`` module of this package, registering their rules."""
    global _loaded_lowerings
    if _loaded_lowerings:
        return
    importlib.import_module("autostage.runtime.ops")  # every op kind the rules attach to
    package = importlib.import_module("autostage.runtime.backends.cpu")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("lower_"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    _loaded_lowerings = True


class Generated:
    """The source of a module and what running it needs."""

    __slots__ = ("source", "line_ops", "helper_ops", "entry")

    def __init__(self, source: str, line_ops: dict[int, ir.Op], entry: str,
                 helper_ops: dict[str, list[ir.Op]] | None = None):
        self.source = source
        self.line_ops = line_ops  # generated line number -> the op it was emitted for
        self.helper_ops = helper_ops or {}  # helper function name -> the ops calling it
        self.entry = entry        # the entry function's Python name


def generate(module: ir.Module) -> Generated:
    """The Python source of ``module`` (raises ``LoweringError`` for an op without a rule)."""
    load_lowerings()
    emitter = codegen.Emitter(module)
    bodies = [emitter.function(f) for f in module.functions.values()]
    entry = emitter.function_names[module.entry]
    source, line_ops = emitter.module_source(bodies)
    return Generated(source, line_ops, entry, emitter.helper_ops)


def compile_module(module: ir.Module) -> Callable[[list], tuple]:
    """A runner for ``module``'s entry function: ``run(args) -> tuple`` of NumPy results,
    compiling on its first call (from Numba's disk cache when another process did already)."""
    allocator.tune()
    generated = generate(module)
    try:
        python_module = module_cache.load(generated.source)
    except SyntaxError as e:
        raise limits.nested_blocks_error(e, generated) or e from None
    dispatcher = getattr(python_module, generated.entry)
    params = module.main.body.args
    scalars = [i for i, v in enumerate(params) if _scalar(v.type)]
    variables = _state(module)  # their storage arrays trail the arguments
    # The Python functions of py_function ops: bound for each run (never baked into the code).
    callables = [module.live_callable(i) for i in range(len(module.callables))]
    convert = _result_converter(module.main.result_types)

    def failed(e: Exception) -> Exception:
        """What a run's exception becomes: a Numba error (a later specialisation failed to
        compile) a ``CpuCompileError`` naming the op; the program's run-time error itself, noted
        with the op and the user's line."""
        if isinstance(e, numba.core.errors.NumbaError):
            return translate(e, generated, python_module)
        if isinstance(e, checks.SiteFailure):
            return checks.site_error()
        run_errors.locate(e, module, python_module.__file__, generated.line_ops,
                          generated.helper_ops)
        return e

    def run_arrays(args: list) -> tuple:  # no scalar parameter, no Variable: the common case
        try:
            results = dispatcher(*args)
        except Exception as e:
            error = failed(e)
            if error is e:
                raise
            raise error from None
        return results if convert is None else convert(results)

    def run(args: list) -> tuple:
        for i in scalars:
            args[i] = args[i][()]  # 0-d arrays and NumPy scalars alike become scalars
        if variables:
            args = [*args, *[var._storage for var in variables]]
        if callables:
            return lower_py_function.running(callables, run_arrays, args)
        return run_arrays(args)

    def compile_for(args: list) -> None:
        """Compiles for the types of ``args`` without running (``ConcreteFunction`` does it on a
        tiered start's background thread, with the arguments of the call that started it)."""
        nonlocal convert
        prepared = [a[()] if i in scalars else a for i, a in enumerate(args)]
        prepared += [var._storage for var in variables]
        with limits.headroom(module), collector.deferred():  # (callees compile recursively)
            signature = _compile(dispatcher, prepared, generated, python_module)
        if not _may_return_constants(dispatcher, signature):
            convert = _result_converter(module.main.result_types, arrays=False)
        cell[0] = run if scalars or variables or callables else run_arrays
        if not variables and not callables:
            runner.entry = (convert, failed, frozenset(scalars), lambda: (
                *strict_dispatch.strict(dispatcher), strict_dispatch.Refused),
                functools.partial(strict_dispatch.compiled_entry, dispatcher))

    def first_call(args: list) -> tuple:
        compile_for(args)
        return cell[0](args)

    cell = [first_call]
    runner = lambda args: cell[0](args)  # noqa: E731 - attributes below are for inspection
    runner.compile_for = compile_for
    # Once compiled, without Variables or py_functions: (the results' converter or None,
    # failed(e), the scalar parameters' positions, strict() -> the njit dispatcher's strict copy,
    # its catch_up() and the exception it raises, compiled_entry(values) -> the compiled entry
    # point for values of these types and what each must be, or None), for StagedFunction's
    # fast path (fast_calls).
    runner.entry = None
    runner.dispatcher = dispatcher  # stats (cache hits), inspect_llvm()
    runner.path = python_module.__file__
    runner.source = generated.source
    runner.release = lambda: module_cache.release(python_module)  # the trace was dropped
    return runner


def _compile(dispatcher: object, args: list, generated: Generated, python_module: object
             ) -> tuple:
    """Compiles (or loads from Numba's cache) the signature of ``args``, which it returns;
    retries once after purging a cache entry that fails to load."""
    signature = tuple(dispatcher.typeof_pyval(a) for a in args)
    start = time.perf_counter()
    for attempt in (0, 1):
        try:
            with llvm_lock_events.quiet():
                dispatcher.compile(signature)
            break
        except Exception as e:  # noqa: BLE001 - sorted out below
            cached = module_cache.numba_cache_files(Path(python_module.__file__))
            if attempt or not cached:  # compiled from scratch: a real compile error
                if isinstance(e, numba.core.errors.NumbaError):
                    raise translate(e, generated, python_module) from None
                raise
            # Loaded from Numba's cache and failed (pickle, EOF, OS errors, or wrapped by
            # Numba in a typing error for a callee): a damaged entry. Purge it, compile again.
            logger.warning("autostage: Numba's cache of %s failed to load (%s: %s); compiling "
                           "again", python_module.__file__, type(e).__name__, e)
            module_cache.purge_numba_cache(Path(python_module.__file__))
    logger.debug("compiled %s%s in %.3f s (cache hits %s)", generated.entry, signature,
                 time.perf_counter() - start, dispatcher.stats.cache_hits)
    return signature


def _may_return_constants(dispatcher: object, signature: tuple) -> bool:
    """Whether the compiled ``signature`` returns a read-only array: array constants are Numba's
    read-only globals (whatever the argument types), so when this specialisation returns none,
    no other does, and results need no writable copy."""
    overload = dispatcher.overloads.get(signature)
    if overload is None:  # pragma: no cover - compiled just before
        return True
    returned = overload.signature.return_type
    parts = getattr(returned, "types", None) or (returned,)
    return any(isinstance(t, numba.types.Array) and not t.mutable  # (a list buffer: a tuple)
               or isinstance(t, numba.types.BaseTuple) for t in parts)


def llvm_ir(module: ir.Module) -> str:
    """The LLVM IR Numba makes of ``module``'s entry function for its parameter types (C-
    contiguous arrays), e.g. for the CLI's ``--llvm``."""
    runner = compile_module(module)
    # Numba cannot show the LLVM IR of code loaded from its cache: compile a fresh copy.
    dispatcher = numba.njit(error_model="numpy")(runner.dispatcher.py_func)
    signature = [_numba_type(v.type) for v in module.main.body.args]
    signature += [numba.typeof(var._storage) for var in _state(module)]
    try:
        dispatcher.compile(tuple(signature))
    except numba.core.errors.NumbaError as e:
        raise translate(e, generate(module), importlib.import_module(
            dispatcher.py_func.__module__)) from None
    return dispatcher.inspect_llvm(tuple(signature))


def _state(module: ir.Module) -> list:
    """The live Variables of ``module``'s state table (UnboundStateError for a parsed one)."""
    return [module.live_state(i) for i in range(len(module.state))]


def _numba_type(type_: object) -> object:
    if isinstance(type_, ListType):
        raise TypeError("a tensor list argument has no LLVM signature")
    if isinstance(type_, GeneratorType):
        return numba.typeof(np.random.default_rng(0))
    dtype = numba.from_dtype(type_.dtype)
    return dtype if type_.is_scalar else numba.types.Array(dtype, type_.ndim, "C")


def _scalar(type_: object) -> bool:
    return isinstance(type_, TensorType) and type_.is_scalar


def _result_converter(result_types: tuple, arrays: bool = True
                      ) -> Callable[[tuple], tuple] | None:
    """Turns the njit function's results into what the interpreter returns: 0-d values as
    NumPy scalars of their dtype (Numba returns Python scalars), writable arrays (not checked
    when ``arrays`` is False: none can be a read-only constant), lists; None when the results
    need nothing."""
    converters = [_converter(t, arrays) for t in result_types]
    if all(c is None for c in converters):
        return None
    if len(converters) == 1:
        (only,) = converters
        return lambda results: (only(results[0]),)
    pairs = [(i, c) for i, c in enumerate(converters) if c is not None]

    def convert(results: tuple) -> tuple:
        out = list(results)
        for i, c in pairs:
            out[i] = c(out[i])
        return tuple(out)

    return convert


def _converter(type_: object, arrays: bool = True) -> Callable | None:
    if isinstance(type_, ListType):
        return lambda items: [_writable(item) for item in items]
    if _scalar(type_):
        return type_.dtype.type
    return _writable if arrays else None


def _writable(value: object) -> object:
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()  # a constant: the interpreter hands out copies too
    return value


_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def translate(error: Exception, generated: Generated, python_module: object) -> CpuCompileError:
    """A Numba error as a ``CpuCompileError`` naming the op and user line it comes from."""
    text = str(error)
    path = str(Path(python_module.__file__).name)
    op = None
    places = [(m.group(1), int(m.group(2))) for m in _LINE.finditer(text)]
    loc = getattr(error, "loc", None)
    if loc is not None and getattr(loc, "filename", None):
        places.append((loc.filename, loc.line))
    for filename, line in places:
        if Path(filename).name == path:
            op = generated.line_ops.get(line, op)
    if op is None:
        what = "the generated code"
    else:
        what = f"`{op.name}` at {codegen.where(op)}"
    result = CpuCompileError(
        f"autostage: the CPU backend could not compile {what}; this is a bug in autostage, "
        "please report it (meanwhile use target='interpreter')")
    result.add_note(f"autostage: Numba said ({type(error).__name__}, in "
                    f"{python_module.__file__}):\n{text}")
    return result
