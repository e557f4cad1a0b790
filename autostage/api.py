"""The user API: ``to_graph``, ``to_code``, ``convert`` and ``do_not_convert``.

``to_graph(fn)`` returns the converted function: with Python values it behaves exactly like
``fn``; the operators it calls dispatch staged values to the runtime. Exceptions leaving it carry
a note pointing at the user's own lines.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

from autostage import conversion, errors
from autostage.calls import do_not_convert
from autostage.pickling import PortableFunction

TARGETS = ("cpu", "interpreter", "cuda")

__all__ = ["to_graph", "to_code", "convert", "do_not_convert"]


def _function_of(entity: Any) -> tuple[types.FunctionType, Any]:
    """The Python function behind an entity, and the object to bind it to (or None)."""
    if isinstance(entity, (staticmethod, classmethod)):
        entity = entity.__func__
    if inspect.ismethod(entity):
        if isinstance(entity.__func__, types.FunctionType):
            return entity.__func__, entity.__self__
        entity = entity.__func__  # (a method wrapped by functools.cache...)
    elif isinstance(entity, types.FunctionType):
        return entity, None
    elif not isinstance(entity, type):
        # A callable object: its class's __call__, bound as Python binds it (no self for a
        # staticmethod, the class for a classmethod).
        call = inspect.getattr_static(type(entity), "__call__", None)
        bound_to = (None if isinstance(call, staticmethod) else
                    type(entity) if isinstance(call, classmethod) else entity)
        call = call.__func__ if isinstance(call, (staticmethod, classmethod)) else call
        if isinstance(call, types.FunctionType):
            return call, bound_to
    raise TypeError(
        f"autostage can convert Python functions, methods, lambdas and callable objects, not "
        f"{type(entity).__name__} objects like {entity!r}")


def to_graph(entity: Callable) -> Callable:
    """Returns the converted version of a function, method, lambda or callable object.

    Generator, coroutine and async generator functions are returned as they are: they run
    lazily, one step per ``next()``/``send()``, which converted control flow cannot express, so
    Python runs them as written (the same holds for those nested in converted code).

    Raises:
      ConversionError: the function uses a construct autostage cannot convert (file and line
        in the message).
      SourceUnavailableError: its source code is not available.
    """
    fn, bound_to = _function_of(entity)
    if conversion.is_generator_function(fn) or hasattr(fn, "__autostage_converted__"):
        # (a to_graph result already: converting its wrapper would stage autostage's own try)
        return fn if bound_to is None else types.MethodType(fn, bound_to)
    # A function that converted code created (a closure a converted factory returned) is
    # converted code already: converting it again would parse generated source.
    converted = fn if conversion.is_converted(fn) else conversion.convert_entity(fn)
    wrapped = conversion.wrap_converted(converted, fn)
    return wrapped if bound_to is None else types.MethodType(wrapped, bound_to)


def to_code(entity: Callable) -> str:
    """Returns the converted source code of a function, method, lambda or callable object."""
    fn, _ = _function_of(entity)
    return conversion.convert_code(fn).source


def convert(fn: Callable | None = None, *, input_signature: Sequence[Any] | None = None,
            target: str = "cpu") -> Callable:
    """Decorator: ``@autostage.convert``, ``@autostage.convert()`` or
    ``convert(fn, input_signature=[TensorSpec(...), ...], target=...)``.

    Returns a ``StagedFunction`` over ``to_graph(fn)``: NumPy arrays and scalars among the
    arguments are staged (one trace per dtype and rank), other arguments are compile-time
    constants; each call runs the trace on the target and returns NumPy values.

    Targets: ``"cpu"`` (the default) compiles the IR with Numba (cached on disk across
    processes); ``"interpreter"`` runs it on the NumPy reference interpreter (for debugging: the
    semantic oracle the compiled code is tested against); ``"cuda"`` runs array ops as CUDA
    kernels on an NVIDIA GPU, driven from the host (needs the ``gpu`` extra; README "CUDA").

    Raises:
      ValueError: an unknown target.
      NotImplementedError: a target whose backend does not exist yet.
      TypeError: an ``input_signature`` that is not TensorSpecs matching the parameters.
      ConversionError: ``fn`` is a generator, coroutine (``async def``) or async generator
        function, which cannot be staged (file and line in the message).
    """
    from autostage.runtime.function import StagedFunction, backend_for

    backend_for(target, stacklevel=2)  # an unknown or missing backend fails here, not later

    def decorate(f: Callable) -> Callable:
        original, _ = _function_of(f)
        if conversion.is_generator_function(original):
            kind = "an async" if inspect.iscoroutinefunction(original) or (
                inspect.isasyncgenfunction(original)) else "a generator"
            raise errors.ConversionError(
                f"autostage.convert cannot stage {original.__qualname__}: it is {kind} function, "
                "which runs lazily, one step at a time, so there is no single computation to "
                "compile. Stage the functions it calls, or use autostage.to_graph (which leaves "
                "it as written)", fn=original)
        return StagedFunction(to_graph(f), name=original.__name__,
                              input_signature=input_signature, target=target,
                              error_hook=errors.report, tiered=True,
                              by_value=PortableFunction)

    return decorate if fn is None else decorate(fn)
