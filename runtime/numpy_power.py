"""NumPy's shortcuts for ``**`` and ``np.power``: where NumPy 2 computes sqrt, square or
reciprocal instead of C's ``pow``, whose values differ (``sqrt(-0.0)`` is -0.0 and
``sqrt(-inf)`` nan where ``pow(x, 0.5)`` gives 0.0 and inf; ``x * x`` and ``1 / x`` are rounded
correctly, libm's ``pow`` not always).

* ``a ** e`` of a float or complex ndarray ``a`` (any rank, not a NumPy scalar) and a Python int
  -1 or 2 or a Python float 0.5 (of exactly those types; not ``np.float64(0.5)``) is
  ``reciprocal(a)``, ``square(a)`` or ``sqrt(a)`` (NumPy's ``fast_scalar_power``; complex values
  take no other shortcut); of a bool ndarray and a Python int 2 it is ``square(a)``, whose
  result is int8 where the power loop's is int64 (its other shortcuts are for floats).
* The float32/float64 power loop (``np.power``, and ``**`` with an ndarray operand) given a 0-d
  exponent (a scalar or 0-d array: a stride-0 operand) takes it by value in the loop dtype:
  -1, 0, 0.5, 1, 2 give ``1 / x``, 1, ``sqrt(x)``, ``x``, ``x * x``.

``**`` of NumPy scalars and Python numbers (``x[0] ** 0.5``: no ndarray operand) is C's
``pow``, as the ``power`` op computes. An exponent known only at run time is tested at run time.
Not matched: a size-1 exponent array NumPy broadcasts over a longer base, which its loop sees as
a scalar too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from autostage.runtime import array_api, dtype_rules, tracing, value_info
from autostage.runtime.tensor import StagingTypeError, Tensor

# ``a ** e`` of a float or complex ndarray: (Python type of e, e) -> op
_OPERATOR = {(int, -1): "reciprocal", (int, 2): "square", (float, 0.5): "sqrt"}
# the float32/float64 loop with a 0-d exponent: its value -> op (None: 1 everywhere)
_LOOP = {-1.0: "reciprocal", 0.0: None, 0.5: "sqrt", 1.0: "positive", 2.0: "square"}


def _is_ndarray(x: object) -> bool:
    """Whether NumPy holds ``x`` as an ndarray (a 0-d one included), not a scalar."""
    if isinstance(x, Tensor):
        return x.ndim > 0 or value_info.is_array(x.value) or (
            not value_info.is_weak(x.value) and value_info.stands_for_ndarray(x.value))
    return isinstance(x, np.ndarray)


def _python_kind(x: object) -> type | None:
    """int or float where ``x`` is exactly a Python int or float (a constant or weak value)."""
    if isinstance(x, Tensor):
        kind = dtype_rules.weak_kind(x.dtype) if value_info.is_weak(x.value) else None
        return kind if kind in (int, float) else None
    return type(x) if type(x) in (int, float) else None


def _shortcut(name: str | None, x: Tensor) -> Tensor:
    return array_api.where(True, 1, x) if name is None else array_api.ufunc(name, x)


def _by_value(x: Tensor, e: object, table: dict, general: Callable[[], Tensor]) -> Tensor:
    """``table[e](x)``, ``general()`` for any other value of ``e`` (a constant, or a staged 0-d
    value tested at run time: then with pow's gradient, ``_with_powers_gradient``)."""
    if not isinstance(e, Tensor):
        return _shortcut(table[e], x) if e in table else general()
    result = powered = general()
    for value, name in table.items():
        result = array_api.where(array_api.ufunc("equal", e, value), _shortcut(name, x), result)
    return _with_powers_gradient(result, x, e, powered)


def _with_powers_gradient(result: Tensor, x: object, e: Tensor, powered: Tensor) -> Tensor:
    """``result`` (the value NumPy computes, its shortcut chosen at run time) with the gradient
    of ``powered = x ** e`` (the power op's rule: ``e * x ** (e - 1)``, 0 where e == 0; ``y *
    log(x)``, 0 where x == 0). Through the chain of ``where``s the exponent would get no
    gradient where it is 0.5, 2, ..., and the branches not taken NaNs (sqrt' at 0)."""
    from autostage.runtime.autodiff.tape import mark_custom_gradient

    staged = [v for v in (x, e) if isinstance(v, Tensor)]

    def grad_fn(dy: Tensor) -> list:
        found = []
        if isinstance(x, Tensor):
            slope = e * array_api.ufunc("power", x, e - 1)
            found.append(dy * array_api.where(array_api.ufunc("equal", e, 0), 0, slope))
        zero = array_api.ufunc("equal", x, 0)
        log = array_api.ufunc("log", array_api.where(zero, 1, x))
        found.append((dy * array_api.where(zero, 0, powered * log)).sum())
        return found

    return mark_custom_gradient(result, staged, grad_fn)


def operator_power(a: object, b: object) -> Tensor:
    """``a ** b`` (and ``a **= b``) where not both are Python numbers."""
    kind = _python_kind(b)
    if kind is not None and _is_ndarray(a) and a.dtype.kind in "fc":
        table = {e: name for (k, e), name in _OPERATOR.items() if k is kind}
        return _by_value(a, b, table, lambda: ufunc_power(a, b))
    if kind is int and _is_ndarray(a) and a.dtype == np.bool_:
        return _bool_power(a, b)
    if _is_ndarray(a) or _is_ndarray(b):
        return ufunc_power(a, b)
    return array_api.ufunc("power", a, b)  # NumPy scalars: C's pow


def _bool_power(a: Tensor, b: object) -> Tensor:
    """``a ** n`` of a bool ndarray and a Python int: ``square(a)`` (int8) for 2, else the
    power loop (int64). An ``n`` known only at run time may not be 2: its result's dtype would
    depend on its value."""
    if not isinstance(b, Tensor):
        return array_api.ufunc("square", a) if b == 2 else ufunc_power(a, b)
    test = array_api.ufunc("equal", b, 2)
    tracing.emit("raise_if", (test.value,), {"exception": StagingTypeError(
        f"`bool array ** n`{tracing.at()} with n == 2 at run time: NumPy computes it as "
        "np.square, whose result is int8, where the int64 traced for other n is used. Square "
        "the array yourself for 2, or cast it to an integer dtype first")})
    return ufunc_power(a, b)


def ufunc_power(a: object, b: object) -> Tensor:
    """``np.power(a, b)``: NumPy's loop, with its shortcuts for a 0-d real exponent."""
    dtype = array_api.result_dtype("power", a, b)
    ndim = b.ndim if isinstance(b, Tensor) else np.ndim(b)
    if dtype not in (np.float32, np.float64) or ndim != 0 or np.iscomplexobj(
            np.zeros(0, b.dtype) if isinstance(b, Tensor) else b):
        return array_api.ufunc("power", a, b)
    x = array_api.as_tensor(a, dtype)
    e = array_api.as_tensor(b, dtype) if isinstance(b, Tensor) else float(dtype.type(b))
    return _by_value(x, e, _LOOP, lambda: array_api.ufunc("power", a, b))
