"""Compiles autostage's Numba functions without Numba's front end where it can (issue 14, goal 5).

Numba spends most of a small function's compile in Python before LLVM sees it: bytecode
analysis, its IR and ~25 passes over it, constraint-based type inference, and lowering one IR
instruction at a time (the GRU encoder's function: ~0.55 s of its 1.1 s). The functions
autostage compiles (the generated entries, the shared helpers, the runtime's own modules) are
mostly a small, regular subset of Python, so ``direct_types`` types one in a walk of its syntax
tree and ``direct_lowering`` emits it in a second walk, both asking Numba's typing and target
contexts for each operation: the compiled code is Numba's own.

``Compiler`` is the Numba compiler class (``pipeline_class``) of every function whose cache
autostage ties (``numba_cache.tie_data_files``): it compiles the function directly and hands
Numba a compile result like its own (the same calling convention, wrappers, library, disk
cache); a function outside the subset (``Unsupported``), or any failure, is compiled by Numba's
own pipeline, as before. Callers see no difference: a callee is compiled (typed by a caller)
through its own dispatcher, by whichever path takes it.

``AUTOSTAGE_DIRECT=0`` (``config.DIRECT``) turns it off; ``stamp()`` is part of those functions'
cache keys, so code compiled by a changed ``direct`` is never loaded again.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pathlib
import threading

from autostage.runtime import config
from autostage.runtime.backends.cpu import (
    direct_arrays,
    direct_lowering,
    direct_types,
    llvm_worker,
    loop_hints,
    wrapper_objects,
)
from autostage.runtime.backends.cpu.direct_types import FunctionTypes
from llvmlite.ir import IRBuilder
from numba.core import bytecode, compiler, funcdesc, types, typing
from numba.core.environment import Environment
from numba.core.targetconfig import ConfigStack

logger = logging.getLogger(__name__)
METADATA_KEY = "autostage_direct"  # in a compile result's metadata: compiled directly
_typing = threading.local()  # .functions: the functions this thread is typing directly


def enabled() -> bool:
    """Whether functions compile through ``direct`` (``config.DIRECT``)."""
    return config.DIRECT.value()


def typing_a_caller() -> bool:
    """Whether this thread compiles a callee for the typing of a function (its code is not
    needed until the caller's is)."""
    return bool(getattr(_typing, "functions", None))


@functools.cache
def _digest() -> str:
    sources = hashlib.sha256()
    for module in (direct_types, direct_lowering, direct_arrays, loop_hints, wrapper_objects):
        sources.update(pathlib.Path(module.__file__).read_bytes())
    sources.update(pathlib.Path(__file__).read_bytes())
    return sources.hexdigest()[:16]


def stamp() -> str:
    """The part of a cache key that names how functions compile: ``direct``'s sources, or that
    it is off."""
    return f"direct-{_digest()}" if enabled() else "direct-off"


class Compiler(compiler.Compiler):
    """Numba's compiler, compiling a function through ``direct`` when it can."""

    def compile_extra(self, func):
        state = self.state
        if enabled() and not state.flags.force_pyobject and not state.flags.no_compile \
                and state.return_type is None and not state.locals:
            result = _compiled(state, func)
            if result is not None:
                return result
        return super().compile_extra(func)


def _compiled(state, func) -> object | None:
    """``func`` compiled directly for ``state.args`` (a Numba compile result), or None."""
    functions = _typing.__dict__.setdefault("functions", set())
    if func in functions:  # recursion: Numba's inference types it
        return None
    try:
        tree = direct_types.function_tree(func)
        # Typing and lowering under the function's flags, as Numba's pipeline: the overloads
        # (typed lists' methods...) they compile are cached per flags, and lowering asks again.
        with ConfigStack().enter(state.flags.copy()):
            functions.add(func)
            try:
                typed = FunctionTypes(tree, func.__globals__, state.typingctx, state.args,
                                      frozenset(functions),
                                      direct_types.CodeOptions.of_flags(state.flags))
            finally:
                functions.discard(func)
            return _lowered(state, func, typed)
    except Exception as e:  # noqa: BLE001 - Unsupported, or any failure: Numba compiles it
        logger.debug("autostage: direct compile of %s%s refused: %s: %s", func.__qualname__,
                     state.args, type(e).__name__, e)
        return None


def _lowered(state, func, typed: FunctionTypes) -> object:
    """The compile result of ``typed``, built as Numba's lowering and back end build theirs."""
    flags, targetctx = state.flags, state.targetctx
    state.func_id = func_id = bytecode.FunctionIdentity.from_function(func)
    library = state.library
    if library is None:
        library = targetctx.codegen().create_library(func_id.func_qualname)
        library.enable_object_caching()  # (as Numba's: its code is cached)
    descriptor = _descriptor(func_id, typed, state)
    with targetctx.push_code_library(library):
        module = library.create_ir_module(descriptor.unique_name)
        environment = Environment.from_fndesc(descriptor)
        context = targetctx.subtarget(environment=environment, fndesc=descriptor)
        # Its wrappers unpickle the objects they embed once per process (wrapper_objects).
        context.get_python_api = functools.partial(wrapper_objects.PythonAPI, context)
        context.declare_env_global(module, context.get_env_name(descriptor))
        function = context.declare_function(module, descriptor)
        builder = IRBuilder(function.append_basic_block("entry"))
        call_helper = context.call_conv.init_call_helper(builder)
        arguments = context.call_conv.decode_arguments(builder, descriptor.argtypes, function)
        direct_lowering.Lowering(context, builder, typed, arguments,
                                 func.__code__.co_filename).lower()
        context.post_lowering(module, library)
        library.add_ir_module(module)
        if not flags.no_cpython_wrapper:
            context.create_cpython_wrapper(library, descriptor, environment, call_helper,
                                           release_gil=flags.release_gil)
        if not flags.no_cfunc_wrapper \
                and not any(isinstance(t, types.Omitted) for t in state.args):
            context.create_cfunc_wrapper(library, descriptor, environment, call_helper)
    library.may_defer = True  # (while a caller is typed, LLVM's work on it: llvm_worker)
    library.finalize()
    entry = llvm_worker.entry(library, functools.partial(
        targetctx.get_executable, library, descriptor, environment))
    targetctx.insert_user_function(entry, descriptor, [library])
    state.reload_init.extend(library._reload_init)
    state.metadata[METADATA_KEY] = True
    return compiler.compile_result(
        typing_context=state.typingctx, target_context=targetctx, entry_point=entry,
        typing_error=None, type_annotation=None, library=library, call_helper=call_helper,
        signature=typing.signature(typed.return_type, *state.args), objectmode=False,
        lifted=(), fndesc=descriptor, environment=environment, metadata=state.metadata,
        reload_init=state.reload_init)


def _descriptor(func_id, typed: FunctionTypes, state) -> funcdesc.PythonFunctionDescriptor:
    """Numba's descriptor of the function (its names and symbol, as Numba's lowering makes
    them: the same mangled name, so callers and the cache find it the same way)."""
    flags, func = state.flags, func_id.func
    return funcdesc.PythonFunctionDescriptor(
        native=True, modname=func.__module__, qualname=func_id.func_qualname,
        unique_name=func_id.unique_name, doc=func.__doc__ or "", typemap={},
        restype=typed.return_type, calltypes={}, args=tuple(typed.parameters), kws=(),
        mangler=state.targetctx.mangler, argtypes=tuple(state.args),
        inline=flags.forceinline, noalias=flags.noalias,
        abi_tags=[flags.get_mangle_string()], uid=func_id.unique_id)
