"""Overloads of the NumPy functions that cannot dispatch on a staged tensor.

``np.zeros(n)`` with a staged ``n``, ``np.array([t1, t2])`` or ``np.arange(n)`` never call a
tensor's ``__array_function__`` (NumPy converts their arguments first), so the call-trees
converter routes calls of these functions here (``ag__.np_zeros(n)``). On Python values each
overload is the NumPy function itself; while a function is traced, a call with a staged argument
(directly, or inside a list or tuple argument such as a shape) goes to the runtime hook
``numpy_call`` with the function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autostage.operators.py_builtins import BUILTINS
from autostage.runtime import Staged, is_tracing, stage_operator
from autostage.runtime.numpy_dispatch import OF_AN_ARRAY


def _has_staged(values: Any) -> bool:
    """Whether a value, or an item of a (nested) list or tuple among them, is staged."""
    for value in values:
        if isinstance(value, Staged):
            return True
        if isinstance(value, (list, tuple)) and _has_staged(value):
            return True
    return False


def _overload(function: Callable[..., Any]) -> Callable[..., Any]:
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing() and (_has_staged(args) or _has_staged(kwargs.values())):
            return stage_operator("numpy_call", function, *args, **kwargs)
        return function(*args, **kwargs)

    return register(function, overload, f"np.{function.__name__}",
                    "staged when an argument is staged")


def register(function: Callable[..., Any], overload: Callable[..., Any], spelled: str,
             when: str) -> Callable[..., Any]:
    """Names ``overload`` after ``function`` (as ``spelled`` in user code) and makes converted
    code call it in its place."""
    overload.__name__ = overload.__qualname__ = spelled.replace(".", "_")
    overload.__doc__ = f"``{spelled}``, {when}."
    overload.__wrapped__ = function
    BUILTINS[function] = overload
    return overload


np_array = _overload(np.array)
np_asarray = _overload(np.asarray)
np_asanyarray = _overload(np.asanyarray)
np_ascontiguousarray = _overload(np.ascontiguousarray)
np_zeros = _overload(np.zeros)
np_ones = _overload(np.ones)
np_empty = _overload(np.empty)
np_full = _overload(np.full)
np_arange = _overload(np.arange)
np_eye = _overload(np.eye)
# np.concatenate's dispatcher hands its list to C code, which cannot iterate a tensor list
np_concatenate = _overload(np.concatenate)
np_identity = _overload(np.identity)
np_tri = _overload(np.tri)
np_linspace = _overload(np.linspace)  # a staged num does not dispatch


def _of_an_array(function: Callable[..., Any]) -> Callable[..., Any]:
    """``np.max([a, b])`` of staged scalars: NumPy makes the array itself, which a staged value
    cannot join; staged, the list is a staged array first (``np.array``'s rules:
    ``numpy_dispatch``). A tensor or a tensor list dispatches as it does without this."""
    def overload(a: Any, *args: Any, **kwargs: Any) -> Any:
        if is_tracing() and isinstance(a, (list, tuple)) and _has_staged(a):
            return stage_operator("numpy_call", function, a, *args, **kwargs)
        return function(a, *args, **kwargs)

    return register(function, overload, f"np.{function.__name__}",
                    "staged when its list holds a staged value")


SEQUENCE_REDUCTIONS = {f"np_{f.__name__}": _of_an_array(f) for f in OF_AN_ARRAY}
# a NumPy array with staged sizes or counts (`np.broadcast_to(np.ones(1), x.shape)`, astropy's
# circstats): NumPy dispatches on the array only
np_broadcast_to = _overload(np.broadcast_to)
np_reshape = _overload(np.reshape)
np_tile = _overload(np.tile)
np_repeat = _overload(np.repeat)
np_isscalar = _overload(np.isscalar)  # pure Python: it would see the Tensor object
# Their dispatchers iterate the argument, and NumPy replaces the staged value's refusal with
# "dispatcher for __array_function__ did not return an iterable": refused here instead.
np_roots = _overload(np.roots)
np_poly = _overload(np.poly)
# Iterators and stride tricks that take arrays without dispatching: refused here by name (NumPy
# would fail inside with a message about its own machinery).
np_nditer = _overload(np.nditer)
np_ndenumerate = _overload(np.ndenumerate)
np_as_strided = _overload(np.lib.stride_tricks.as_strided)
np_unravel_index = _overload(np.unravel_index)  # it dispatches on the indices alone, not shape

# NumPy scalar types: ``np.float64(i)`` of a staged ``i`` is a cast.
np_float64 = _overload(np.float64)
np_float32 = _overload(np.float32)
np_float16 = _overload(np.float16)
np_int64 = _overload(np.int64)
np_int32 = _overload(np.int32)
np_int16 = _overload(np.int16)
np_int8 = _overload(np.int8)
np_uint64 = _overload(np.uint64)
np_uint32 = _overload(np.uint32)
np_uint16 = _overload(np.uint16)
np_uint8 = _overload(np.uint8)
np_bool = _overload(np.bool_)
np_complex128 = _overload(np.complex128)
np_complex64 = _overload(np.complex64)
