"""``converted`` and ``converted_call``: how converted code calls anything.

User functions (and methods, lambdas, closures, callable objects) are converted recursively, once
per code object; builtins, NumPy, the standard library, autostage itself, functions marked
``do_not_convert`` and modules in ``config.do_not_convert_modules`` are called as they are.
Code that cannot be converted (no source, an unsupported construct) runs unconverted after one
clear warning.
"""

from __future__ import annotations

import functools
import logging
import random
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from autostage import config, conversion, errors
from autostage.operators import BUILTINS, random_method, str_format
from autostage.operators.nondeterministic import BY_FUNCTION as NONDETERMINISTIC_CALLS
from autostage.operators.random_overloads import RANDOM_OWNERS, stdlib_method_overload
from autostage.pyct import errors as pyct_errors
from autostage.runtime import Standin, holds_staged, stage_operator, staging_active, tracing

logger = logging.getLogger(__name__)

_DO_NOT_CONVERT = "__autostage_do_not_convert__"
_STDLIB = frozenset(sys.stdlib_module_names)
_warned: set[Any] = set()
# The types of BUILTINS' keys (builtins, classes, NumPy's Cython functions and bound methods):
# all hashed by identity.
_OVERLOADABLE = frozenset(type(f) for f in BUILTINS) - {types.FunctionType}
_AS_IS = object()  # cached decision: call the function as it is
_decisions: dict[int, Any] = {}  # id(function) -> its converted version, or _AS_IS


class AutostageWarning(UserWarning):
    """A function runs unconverted; its control flow stays plain Python (it is not staged)."""


def do_not_convert(fn: Callable) -> Callable:
    """Marks ``fn`` so that converted code calls it as it is, never converting it."""
    target = getattr(fn, "__func__", fn)
    try:
        setattr(target, _DO_NOT_CONVERT, True)
    except (AttributeError, TypeError):
        pass  # builtins and C functions are never converted anyway
    return fn


def is_user_function(fn: types.FunctionType) -> bool:
    if getattr(fn, _DO_NOT_CONVERT, False) or conversion.is_converted(fn):
        return False
    module = (getattr(fn, "__module__", None) or "").partition(".")[0]
    if module in _STDLIB or module in config.do_not_convert_modules:
        return False
    if conversion.is_generator_function(fn):
        logger.debug("%s is a generator or coroutine function; it runs as written", fn)
        return False
    return True


def _warn_unconverted(fn: types.FunctionType, reason: BaseException) -> None:
    key = fn.__code__
    if key in _warned:
        return
    _warned.add(key)
    code = fn.__code__
    warnings.warn(
        f"autostage could not convert {fn.__qualname__} ({code.co_filename}:"
        f"{code.co_firstlineno}), so it runs unconverted and its control flow will not be "
        f"staged: {reason}", AutostageWarning, stacklevel=tracing.user_stacklevel())


def _converted_function(fn: types.FunctionType) -> Callable | None:
    """The converted version of a plain function, or None to call it as it is (cached)."""
    decision = _decisions.get(id(fn))
    if decision is None:
        decision = _decide(fn) or _AS_IS
        # Keyed by id, a C-level lookup on the hot path; the entry leaves with the function, so
        # an id is never reused while its entry lives. Entries never refer to ``fn`` itself.
        _decisions[id(fn)] = decision
        weakref.finalize(fn, _decisions.pop, id(fn), None)
    return None if decision is _AS_IS else decision


def _decide(fn: types.FunctionType) -> Callable | None:
    inner = getattr(fn, "__autostage_converted__", None)
    if inner is not None:  # a to_graph result (`f = to_graph(f)`): skip its wrapper's frame
        return inner
    if not is_user_function(fn):
        return NONDETERMINISTIC_CALLS.get(fn)  # uuid.uuid4...: refused while tracing
    try:
        return conversion.convert_entity(fn)
    except (pyct_errors.PyCTError, errors.ConversionError, SyntaxError) as e:
        _warn_unconverted(fn, e)
        return None


def _target(f: Any) -> Callable | None:
    """What to call instead of ``f``, or None to call ``f`` itself."""
    if type(f) is types.FunctionType:
        return _converted_function(f)
    if type(f) is types.MethodType:
        if type(f.__func__) is types.FunctionType:
            converted = _converted_function(f.__func__)
            if converted is None and isinstance(f.__self__, random.Random):
                return stdlib_method_overload(f)  # random.gauss...: refused while tracing
            return None if converted is None else types.MethodType(converted, f.__self__)
        if isinstance(f.__self__, RANDOM_OWNERS):  # Cython methods of NumPy's generators
            return random_method(f)  # a draw: staged while tracing, never frozen
    # Only the kinds of callables the overloads are keyed by: a look-up of anything else would
    # run a user object's __hash__/__eq__, which Python's own call never does.
    overload = BUILTINS.get(f) if type(f) in _OVERLOADABLE else None
    if overload is not None:
        return overload
    if isinstance(f, functools.partial):
        inner = _target(f.func)
        return None if inner is None else functools.partial(inner, *f.args, **f.keywords)
    if _from_numba(type(f), "CPUDispatcher") and staging_active():  # an @numba.njit function
        return functools.partial(_call_numba, f)
    if _from_numba(f, "prange"):  # (outside Numba, a range)
        return BUILTINS.get(range)
    if isinstance(f, (type, types.BuiltinFunctionType, types.BuiltinMethodType)):
        owner = getattr(f, "__self__", None)
        if isinstance(owner, RANDOM_OWNERS):
            return random_method(f)  # a draw: staged while tracing, never frozen
        if isinstance(owner, random.Random):
            return stdlib_method_overload(f)  # random.random...: refused while tracing
        if type(owner) is str and f.__name__ == "format":
            return functools.partial(str_format, owner)  # of staged values: a template
        return None
    # A stand-in (runtime/captures.py) is called as the user's object it stands for.
    cls = f.__class__ if isinstance(f, Standin) else type(f)
    call = getattr(cls, "__call__", None)  # noqa: B004 - we need the function itself
    if type(call) is types.FunctionType:  # a callable object defined in Python
        converted = _converted_function(call)
        return None if converted is None else types.MethodType(converted, f)
    return None


def _from_numba(kind: Any, name: str) -> bool:
    """Whether ``kind`` is Numba's class ``name``, told without importing Numba."""
    return getattr(kind, "__name__", None) == name and getattr(
        kind, "__module__", "").startswith("numba.")


def _call_numba(f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """An ``@numba.njit`` function called while a function is traced: with staged values, its
    Python source (``py_func``) is converted and staged as any helper's (Numba compiles it for
    NumPy's semantics, which staged code has); with Python values only, the compiled function
    runs, as in Python. One declared with explicit signatures converts its arguments and result
    to their types: staged, the arguments must already have them (else a clear error) and the
    result is cast to the declared dtype; a scalar result is a Python number, as Numba boxes
    it."""
    if not (holds_staged(args) or holds_staged(kwargs)):
        return f(*args, **kwargs)
    declared = None if getattr(f, "_can_compile", True) else _declared_result(f, args, kwargs)
    return stage_operator("numba_result", converted(f.py_func)(*args, **kwargs), declared)


def _dtype_of(x: Any) -> np.dtype | None:
    if isinstance(x, bool | int | float | complex):  # (Numba's types of Python numbers)
        return np.dtype({bool: np.bool_, int: np.int64, float: np.float64,
                         complex: np.complex128}[type(x)])
    return getattr(x, "dtype", None)


def _declared_result(f: Any, args: tuple, kwargs: dict) -> np.dtype | None:
    """The dtype ``f`` (compiled for explicit signatures only) casts its result to (None: no
    NumPy dtype, such as none or a tuple), if every argument already has its declared type;
    else a StagingError."""
    from numba.np.numpy_support import as_dtype  # (Numba is imported: f is its dispatcher)

    given = [_dtype_of(x) for x in (*args, *kwargs.values())]
    for signature in f.nopython_signatures:
        try:
            wanted = [as_dtype(getattr(t, "dtype", t)) for t in signature.args]
        except Exception:  # noqa: BLE001 - (Numba's: a type without a NumPy dtype)
            continue
        if given == wanted:
            try:
                return as_dtype(getattr(signature.return_type, "dtype", signature.return_type))
            except Exception:  # noqa: BLE001 - (none, a tuple: nothing to cast)
                return None
    where = tracing.user_location()
    raise tracing.StagingError(
        f"{f'{where}: ' if where is not None else ''}`{getattr(f, '__name__', f)}` is an "
        "@numba.njit function with an explicit signature, called with staged values of other "
        "types than it declares: Numba converts the arguments to the declared types, which "
        "staging its Python source would not; convert them in the call (`np.float32(v)`, "
        "`a.astype(np.float32)`), or declare it without a signature (`@numba.njit`)")


def converted(f: Callable, /) -> Callable:
    """What converted code calls instead of ``f``: its converted version, or ``f`` itself.

    Generated code spells a call ``ag__.converted(f)(*args, **kwargs)``: the arguments are passed
    by Python itself, so evaluation order, argument errors and their messages are the original's.
    """
    decision = _decisions.get(id(f))  # fast path: a plain function seen before
    if decision is not None and type(f) is types.FunctionType:
        if decision is _AS_IS:
            return f
        # While a staged function is traced, user functions go through the staging runtime:
        # called with staged arguments they become `call` ops (one int read when not tracing).
        if staging_active():
            return stage_operator("converted_call", decision)
        return decision
    target = _target(f)
    if target is None:
        if type(f) is type and staging_active():  # its objects are the trace's own
            return stage_operator("construct", f, _converted_init(f))
        if isinstance(f, types.MethodType) and staging_active() and holds_staged(f.__self__):
            return stage_operator("method_call", f)  # (a Python number has no NumPy method)
        if staging_active() and (isinstance(f, (types.BuiltinFunctionType,
                                                types.BuiltinMethodType))
                                 or "cython_function" in f.__class__.__name__):
            return stage_operator("foreign_call", f)  # its errors on staged values: ours
        return f
    if staging_active() and conversion.is_converted(getattr(target, "__func__", target)):
        return stage_operator("converted_call", target)
    return target


def _converted_init(cls: type) -> Callable | None:
    """The converted ``__init__`` of a user class whose instances ``object.__new__`` makes (so
    that ``np.zeros(n)`` of a staged ``n`` in it stages), or None to call the class as it is."""
    init = getattr(cls, "__init__", None)
    if cls.__new__ is not object.__new__ or type(init) is not types.FunctionType or (
            init.__code__.co_filename.startswith("<")):  # (a dataclass's: made by exec)
        return None
    return _converted_function(init)


def converted_inline(f: Callable, /) -> Callable:
    """``f`` converted (or as it is), run inline while a staged function is traced, never as a
    staged call: its results may close over values of the caller's trace."""
    target = _target(f) or f
    return stage_operator("inline_call", target) if staging_active() else target


def converted_call(f: Callable, /, *args: Any, **kwargs: Any) -> Any:
    """Calls ``f(*args, **kwargs)``, converting ``f`` first if it is user code."""
    return converted(f)(*args, **kwargs)
