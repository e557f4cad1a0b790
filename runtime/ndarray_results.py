"""Which 0-d results NumPy holds as 0-d ndarrays rather than NumPy scalars.

Staged code computes a 0-d value the same way whatever NumPy would hand back, but the caller
sees a type: ufuncs, reductions and indexing give NumPy scalars (``np.float64``), while the
creation and shape functions give 0-d ``ndarray``s: ``np.zeros_like(s)``, ``np.copy(s)``,
``np.array(s)``, ``np.roll(s, 1)``, ``np.where(c, a, b)``, ``np.tensordot`` over every axis,
``x[..., i]``, ``v.reshape(())`` of an array. Some keep what their operand is: ``x.reshape(())``,
``np.transpose(x)``, ``x.astype(t)``, ``x.copy()`` are 0-d ndarrays for a 0-d ndarray ``x`` (a
0-d ndarray argument, or one of the above) or an array of higher rank, and NumPy scalars for a
NumPy scalar. This module records the fact per value (``value_info.mark_array``) at the
boundaries where user code calls NumPy (``numpy_dispatch`` and the tensor methods); the result
marshalling (``function_outputs.Outputs``) gives the caller an ``ndarray`` of shape () for such a
result.
A function that hands its 0-d ndarray operand back unchanged where NumPy gives a scalar
(``np.flip(a)``, ``a[()]``) gets a fresh value, so that the fact never leaks to it; so does one
that hands back a scalar operand where NumPy gives a 0-d ndarray (``np.asarray(s)``), so that
``s`` stays a scalar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import array_api, value_info
from autostage.runtime.tensor import Tensor

# NumPy functions whose 0-d results are always 0-d ndarrays.
ALWAYS: frozenset = frozenset({
    np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, np.array, np.asarray,
    np.broadcast_to, np.roll, np.where, np.tensordot, np.tile, np.cov, np.unique, np.zeros,
    np.ones, np.empty, np.full, np.real_if_close, np.asanyarray, np.broadcast_arrays,
    np.ascontiguousarray,
})
# ... 0-d ndarrays unless their operand (the first argument) is a NumPy scalar or a Python number.
KEEPS: frozenset = frozenset({
    np.reshape, np.transpose, np.squeeze, np.astype, np.moveaxis, np.swapaxes, np.real,
    np.imag,
})
# Tensor methods of the second kind.
KEEPS_METHODS = ("reshape", "transpose", "T", "astype", "copy", "squeeze", "view", "conj",
                 "conjugate", "swapaxes", "real", "imag", "mT")


def is_array(x: object) -> bool:
    """Whether NumPy would hold ``x`` as an ndarray (any rank): False for NumPy scalars,
    Python numbers, and staged values standing for them."""
    if isinstance(x, Tensor):
        return x.ndim > 0 or value_info.is_array(x.value)
    return isinstance(x, np.ndarray)


def _mark(result: Any, array: bool, operands: tuple) -> Any:
    """``result`` with its 0-d tensors marked 0-d ndarrays (``array``), or made NumPy scalars:
    a fresh value where one is an operand's 0-d ndarray handed back."""
    if isinstance(result, Tensor):
        if result.ndim != 0:
            return result
        if array:
            if not value_info.is_array(result.value) and any(
                    isinstance(o, Tensor) and o.value is result.value for o in operands):
                result = array_api.copy(result)  # a scalar operand itself: it stays a scalar
            value_info.mark_array(result.value)
        elif value_info.is_array(result.value):
            result = array_api.copy(result)  # the operand itself: NumPy gives a scalar
        return result
    if type(result) in (tuple, list):
        return type(result)(_mark(r, array, operands) for r in result)
    return result



def as_kind(x: Tensor, array: bool) -> Tensor:
    """``x`` as a 0-d ndarray (``array``) or a NumPy scalar: a fresh value where ``x`` is the
    other kind (``autostage.grad``: a 0-d argument's gradient has the argument's kind)."""
    return _mark(x, array, (x,))

# NumPy functions whose results are Python objects (ints, a bool), not NumPy values.
PYTHON_RESULTS: frozenset = frozenset({np.shape, np.ndim, np.size, np.allclose, np.array_equal,
                                     np.linalg.matrix_rank})  # (of a vector: an int)


def _numpy_value(result: Any) -> Any:
    """``result`` with its weak tensors (standing for Python numbers: ``x.shape[0]``,
    ``float(t)``) made NumPy values, as NumPy makes its results: ``np.sqrt(n)`` of a Python
    int is an ``np.float64``, whose dtype then counts in promotion (``f32 / np.sqrt(n)`` is
    float64); so are values that are Python numbers on some paths (``value_info.python_path``:
    ``np.sqrt(total)`` is an ``np.float64`` on every path)."""
    if isinstance(result, Tensor):
        python = value_info.is_weak(result.value) or value_info.python_path(result.value)
        return array_api.copy(result) if python else result
    if type(result) in (tuple, list):
        return type(result)(_numpy_value(r) for r in result)
    return result


def function_result(function: Callable, args: tuple, result: Any) -> Any:
    """``result`` of the NumPy ``function`` called on ``args`` with NumPy's 0-d kind."""
    if function not in PYTHON_RESULTS:
        result = _numpy_value(result)
    if function in ALWAYS:
        return _mark(result, True, args)
    if function in KEEPS:
        return _mark(result, bool(args) and is_array(args[0]), args)
    return _mark(result, False, args)


def method_result(self: Tensor, result: Any) -> Any:
    """``result`` of a ``KEEPS_METHODS`` method of ``self``."""
    return _mark(result, is_array(self), (self,))


def subscript_result(target: object, key: object, result: Any) -> Any:
    """``result`` of ``target[key]``: an index with an Ellipsis gives an array, others a
    scalar (a 0-d result)."""
    keys = key if type(key) is tuple else (key,)
    return _mark(result, any(k is Ellipsis for k in keys), (target,))


def wrap_method(name: str, method: Any) -> Any:
    """``method`` (a function or property of Tensor) with ``method_result`` applied."""
    if isinstance(method, property):
        getter = method.fget
        return property(lambda self: method_result(self, getter(self)))

    def wrapped(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return method_result(self, method(self, *args, **kwargs))
    wrapped.__name__ = name
    return wrapped
