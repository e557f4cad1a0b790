"""NumPy functions applied to staged tensors: ``__array_ufunc__``, ``__array_function__``, and the
table of NumPy functions the compiler may stage even when no argument dispatches.

``FUNCTIONS`` maps each supported NumPy function to its staging; any other NumPy function
called on a tensor raises ``StagingTypeError`` naming it ("np.fft.fft is not supported on
staged tensors"). ``np.array``/``np.asarray``/``np.zeros``/``np.arange``... do not dispatch
(NumPy converts their arguments with ``__array__``/``__index__``, which raise); converted code
reaches their staged versions through ``staged_function`` (``CREATION``), called by the
compiler's ``converted_call`` when an argument is staged.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    array_api,
    array_shapes,
    integer_conversions,
    ndarray_results,
    numpy_grids,
    numpy_interp,
    numpy_linalg,
    numpy_power,
    numpy_shapes,
    numpy_statistics,
    python_numbers,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.ops.elementwise import OP_OF_UFUNC
from autostage.runtime.tensor import StagingTypeError, Tensor
from autostage.runtime.tracing import at as _at  # " at file:line" for messages


def numpy_name(function: Any) -> str:
    """``np.fft.fft`` for numpy.fft.fft: how users write the function."""
    module = getattr(function, "__module__", None) or "numpy"
    module = "np" + module[len("numpy"):] if module.startswith("numpy") else module
    module = "np" if module.startswith("np._core") or module.startswith("np.core") else module
    return f"{module}.{getattr(function, '__name__', function)}"


def unsupported(what: str) -> StagingTypeError:
    """The error for a NumPy function autostage does not stage, naming the user's line."""
    return StagingTypeError(f"{what} is not supported on staged tensors{_at()}")


def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
                ) -> Tensor:
    """NumPy calls this for ``np.<ufunc>(..., tensor, ...)`` (and ndarray op tensor)."""
    if getattr(np, ufunc.__name__, None) is not ufunc:  # (a Numba @vectorize one named "tanh")
        raise unsupported(f"the ufunc {ufunc.__name__!r}, which is not NumPy's (a Numba "
                          "@vectorize function, scipy.special...),")
    name = f"np.{ufunc.__name__}"
    if method != "__call__":
        return _ufunc_method(self, ufunc, method, inputs, kwargs)
    if kwargs.get("out") is not None:
        out = kwargs["out"]
        if type(out) is tuple and len(out) == 1 and out[0] is inputs[0] and type(
                inputs[0]) is np.ndarray and ufunc.__name__ in _SYMBOLS:
            raise _in_place_refusal(ufunc, inputs[0])
        raise StagingTypeError(
            f"{name}(..., out=...){_at()} cannot be staged (this includes `array op= tensor` "
            "on a NumPy array): staged values are immutable. Use the returned value instead")
    if kwargs:
        raise StagingTypeError(f"{name}: the argument {next(iter(kwargs))}= is not supported "
                               f"on staged tensors{_at()}")
    if ufunc.__name__ == "matmul":
        return ndarray_results.function_result(ufunc, inputs, array_api.matmul(*inputs))
    op = OP_OF_UFUNC.get(ufunc.__name__)
    if op is None:
        raise unsupported(name)
    if op == "power":
        result = numpy_power.ufunc_power(*inputs)
    elif op == "signbit" and len(inputs) == 1 and _integral(inputs[0]):
        result = array_api.ufunc("less", inputs[0], 0)
    elif op == "square" and len(inputs) == 1 and python_numbers.complex_numpy_scalar(inputs[0]):
        result = array_api.scalar_math("square", inputs[0])  # (NumPy's scalar math, unfused)
    else:
        result = array_api.ufunc(op, *inputs)
    return ndarray_results.function_result(ufunc, inputs, result)


def _integral(x: Any) -> bool:
    """Whether ``x`` holds bools or integers: their ``np.signbit`` is ``x < 0`` (NumPy converts
    them to a float type holding every value exactly, float16 for 8 bits, which has no CPU
    lowering)."""
    dtype = x.dtype if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.result_type(x)
    return dtype.kind in "biu"


# The in-place operator of each ufunc (``S *= x`` is ``np.multiply(S, x, out=S)``).
_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/",
            "floor_divide": "//", "power": "**", "remainder": "%", "bitwise_and": "&",
            "bitwise_or": "|", "bitwise_xor": "^", "left_shift": "<<", "right_shift": ">>",
            "matmul": "@"}


def _in_place_refusal(ufunc: np.ufunc, array: np.ndarray) -> StagingTypeError:
    """``S op= x`` of a NumPy array (made while tracing, of Python-number sizes) and a staged
    value: NumPy would write into ``S`` itself, which staged code cannot do."""
    frame = sys._getframe(1)
    while frame is not None and tracing._location_of(frame) is None:
        frame = frame.f_back
    names = [n for n, v in frame.f_locals.items() if v is array] if frame is not None else []
    name = names[0] if names else "a"  # (an attribute or an item: no local name)
    symbol = _SYMBOLS[ufunc.__name__]
    which = f"the NumPy array `{name}`" if names else "a NumPy array"
    return StagingTypeError(
        f"`{symbol}=`{_at()} changes {which} in place with a staged value; it was made while "
        "tracing (its sizes are Python numbers), so staged code cannot write into it: write "
        f"`{name} = {name} {symbol} ...` (or make it from a staged size, `np.ones(x.shape[0])`)")


# ufunc methods that are NumPy functions with axis 0 by default: np.add.reduce(x) is
# np.sum(x, axis=0) (np.sum is add.reduce), np.multiply.accumulate(x) np.cumprod(x, axis=0).
_METHODS = {
    ("reduce", "add"): np.sum, ("reduce", "multiply"): np.prod, ("reduce", "maximum"): np.max,
    ("reduce", "minimum"): np.min, ("reduce", "logical_and"): np.all,
    ("reduce", "logical_or"): np.any, ("accumulate", "add"): np.cumsum,
    ("accumulate", "multiply"): np.cumprod,
}


def _ufunc_method(self: Tensor, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict
                  ) -> Any:
    """``np.add.reduce``, ``np.multiply.accumulate``, ``np.subtract.outer``... of staged values."""
    function = _METHODS.get((method, ufunc.__name__))
    if function is not None and len(inputs) == 1:
        kwargs.setdefault("axis", 0)
        return ndarray_results.function_result(function, inputs,
                                               FUNCTIONS[function](*inputs, **kwargs))
    if method == "outer" and len(inputs) == 2 and not kwargs:  # a[..., None, ...] op b
        a, b = (array_api.as_tensor(x) for x in inputs)
        a = array_shapes.getitem(a, (Ellipsis, *([None] * b.ndim)))
        return array_ufunc(self, ufunc, "__call__", a, b)
    raise unsupported(f"np.{ufunc.__name__}.{method}")


def array_function(self: Tensor, func: Callable, types: tuple, args: tuple, kwargs: dict
                   ) -> Any:
    """NumPy calls this for array functions (np.sum, np.where...) with a tensor argument."""
    implementation = FUNCTIONS.get(func)
    if implementation is None:
        raise unsupported(numpy_name(func))
    check_arguments(numpy_name(func), implementation, args, kwargs)
    return ndarray_results.function_result(func, args, implementation(*args, **kwargs))


@functools.cache
def _signature(implementation: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(implementation)
    except (TypeError, ValueError):  # (a builtin without one: its own error stands)
        return None


def check_arguments(name: str, implementation: Callable, args: tuple, kwargs: dict,
                    skip: int = 0) -> None:
    """A clear error, naming the NumPy function or method (``name``) and the user's line, for
    arguments its staged version does not take (``np.dot(a, b, out=c)``, ``x.clip(0, 1,
    out=x)``): Python's own would name autostage's function; ``skip``: leading parameters the
    caller does not pass (a method's ``self``)."""
    signature = _signature(implementation)
    if signature is None:
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as e:
        taken = ", ".join(list(signature.parameters)[skip:])
        raise StagingTypeError(f"{name}(){_at()} on staged values: {e}; the arguments staged "
                               f"code takes are ({taken})") from None


def _reduction(name: str, with_dtype: bool = False, with_ddof: bool = False) -> Callable:
    if with_ddof:
        def reduction(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
            return array_api.reduce(name, a, axis, dtype, out, keepdims, ddof, **kw)
    elif with_dtype:
        def reduction(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
            return array_api.reduce(name, a, axis, dtype, out, keepdims, **kw)
    else:
        def reduction(a, axis=None, out=None, keepdims=False, **kw):
            return array_api.reduce(name, a, axis, None, out, keepdims, **kw)
    return reduction


def _where(condition, *xy):
    if not xy:
        return numpy_statistics.nonzero(condition)
    if len(xy) != 2:
        raise ValueError("either both or neither of x and y should be given")
    return array_api.where(condition, *xy)


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    if out is not None or kwargs:
        raise StagingTypeError(f"np.clip{_at()}: out= and other keyword arguments are not "
                               "supported on staged tensors")
    return array_api.clip(a, a_min if a_min is not None else min,
                          a_max if a_max is not None else max)


def _like(fill: object, function: Callable = np.zeros_like) -> Callable:
    def like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if shape is not None or kwargs:
            raise StagingTypeError(f"shape= and device= are not supported on staged tensors{_at()}")
        check_order(order, np.ndim(a), np.zeros_like, np.zeros(1), name=f"np.{function.__name__}")
        return array_shapes.full_like(a, fill, dtype)
    return like


def _join(function: Callable) -> Callable:
    def join(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
        if out is not None or dtype is not None:
            raise StagingTypeError(f"out= and dtype= are not supported on staged tensors{_at()}")
        return function(arrays, axis)
    return join


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise StagingTypeError("np.reshape is staged with order='C' only")
    return array_shapes.reshape(a, shape if shape is not None else newshape)


def check_order(order: object, ndim: int, function: Callable, *probe: object,
             name: str | None = None) -> None:
    """Checks a creation's ``order=``: NumPy's own error for a bad one (``function`` called on
    ``probe`` with it), and a clear refusal of ``'F'`` for a result of 2 dimensions or more:
    staged arrays are C-ordered. (``'K'``
    and ``'A'`` keep an operand's order, which for a staged operand is C; a Fortran-ordered
    argument's results come back C-ordered, with the same values.)"""
    if order is None:
        return
    function(*probe, order=order)
    if str(order).upper() == "F" and ndim > 1:
        raise StagingTypeError(f"{name or 'np.' + function.__name__}(..., order={order!r}){_at()}: "
                               "staged arrays are C-ordered; make the Fortran-ordered array "
                               "from the result outside staged code (np.asfortranarray)")


def _rank(shape: object) -> int:
    """The rank of an array of ``shape`` (a tuple, a number, or a staged 1-d shape)."""
    if isinstance(shape, (tuple, list)):
        return len(shape)
    if isinstance(shape, Tensor) and shape.ndim == 1:
        return shape.type.shape[0] if shape.type.shape[0] is not None else 2
    return 1


def _creation_keywords(function: Callable, device: object = None, like: object = None) -> None:
    """``device=`` (NumPy allows "cpu" only) and ``like=`` (another array library's array) of a
    creation function: ``like=`` is refused, as NumPy would hand the call to that library."""
    if device is not None and device != "cpu":
        function(0, device=device)  # NumPy's ValueError
    if like is not None:
        raise StagingTypeError(f"np.{function.__name__}(..., like=...){_at()} is not supported "
                               "on staged tensors")


_NO_COPY = ("Unable to avoid copy while creating an array as requested.\nIf using "
            "`np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy when "
            "needed (no behavior change in NumPy 1.x).\nFor more details, see "
            "https://numpy.org/devdocs/numpy_2_0_migration_guide.html#adapting-to-changes-in-"
            "the-copy-keyword.")


def _array(obj, dtype=None, *, copy=True, order="K", subok=True, ndmin=0, like=None):
    """np.array / np.asarray of a tensor, of a (nested) list with tensors or of a tensor list:
    ``copy`` True always copies, None copies where needed, False raises NumPy's ValueError
    where a copy is needed; ``ndmin`` prepends 1-dims (a view where nothing was copied)."""
    _creation_keywords(np.array, like=like)
    if isinstance(copy, np._CopyMode):  # (array_api_compat's asarray(copy=None) passes one)
        copy = {np._CopyMode.ALWAYS: True, np._CopyMode.NEVER: False}.get(copy)
    if copy is not None:
        copy = bool(copy)
    given, fresh = obj, True  # stacking makes a new array: no copy needed
    if isinstance(obj, (list, tuple)):
        if dtype is not None:
            integer_conversions.check_python_ints(obj, np.dtype(dtype))
        obj = array_shapes.stack([_array(o, copy=None) for o in obj])
    elif callable(getattr(obj, "as_array", None)) and isinstance(obj, Staged):
        obj = obj.as_array()  # a range with a staged bound: its items
    elif isinstance(obj, Staged) and not isinstance(obj, Tensor):
        obj = np.stack(obj)  # a tensor list (staged list state): its __array_function__ stacks
    else:
        obj, fresh = array_api.as_tensor(obj), False
        # A Python number (weak) made into an array is a NumPy value: a new, strong value.
        if value_info.is_weak(obj.value):
            if copy is False:
                raise ValueError(_NO_COPY)
            copy = True
    if dtype is not None and obj.dtype != np.dtype(dtype):
        obj, fresh = array_api.astype(obj, dtype), True
    elif copy and not fresh:
        obj, fresh = array_api.copy(obj), True
    if copy is False and (fresh or obj is not given):
        raise ValueError(_NO_COPY)
    check_order(order, max(obj.ndim, ndmin), np.array, 0)
    if not fresh and str(order).upper() == "C":
        obj = _c_ordered(obj, "np.array/np.asarray(..., order='C')", copy is False)
    return numpy_shapes.atleast_nd(obj, ndmin) if ndmin > obj.ndim else obj


def _c_ordered(x: Tensor, what: str, no_copy: bool = False) -> Tensor:
    """``x`` as a C-ordered array, NumPy's way: ``x`` itself where it is C-contiguous, else a
    copy. Known while tracing for an array the function computed (C-ordered); for an argument or
    a view, only at run time: then a copy, marked so that writing into it or returning it (what
    tells it from ``x`` itself) is refused (``value_info.mark_copied_item``)."""
    if x.ndim == 0 or (value_info.view_base(x.value) is None
                       and value_info.aliased_argument(x.value) is None):
        return x  # (made by the function: C-ordered)
    if no_copy:
        raise StagingTypeError(
            f"{what}{_at()} with copy=False: whether NumPy needs a copy (and raises) depends "
            "on the array's layout, known only at run time; leave copy= out")
    result = array_api.copy(x)
    value_info.mark_copied_item(result.value, (
        f"the result of {what}{_at()}, which NumPy makes the array itself where it is "
        "C-contiguous and a copy where not, known only at run time (staged code holds a copy): "
        "write `.copy()` for a copy, or use the array itself"))
    return result


def _contiguous(a, dtype=None, like=None):
    """np.ascontiguousarray: np.asarray of at least one dimension, C-ordered (``_c_ordered``)."""
    array = _array(a, dtype, copy=None, like=like)
    if array.ndim == 0:  # (one element: C-contiguous, a view of it as NumPy's)
        return numpy_shapes.atleast_1d(array)
    return _c_ordered(array, "np.ascontiguousarray(...)")


def _asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    _creation_keywords(np.asarray, device)
    return _array(a, dtype, copy=copy, order=order, like=like)


def _filled(fill: Callable, function: Callable) -> Callable:
    """np.zeros / ones / empty (staged as zeros: deterministic contents)."""
    def create(shape, dtype=float, order="C", *, device=None, like=None):
        check_order(order, _rank(shape), function, 0)
        _creation_keywords(function, device, like)
        return fill(shape, dtype)
    return create


def _full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    check_order(order, _rank(shape), np.full, 0, 0)
    _creation_keywords(np.full, device, like)
    return array_shapes.full(shape, fill_value, dtype)


def _arange(*args, dtype=None, device=None, like=None):
    _creation_keywords(np.arange, device, like)
    if len(args) == 4:  # (start, stop, step, dtype), as NumPy takes them
        if dtype is not None:
            raise TypeError("arange() got multiple values for argument 'dtype'")
        *args, dtype = args
    return array_shapes.arange(*args, dtype=dtype)


def _eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    check_order(order, 2, np.eye, 0)
    _creation_keywords(np.eye, device, like)
    return array_shapes.eye(N, M, k, dtype)


def _copy(a, order="K", subok=False):
    check_order(order, np.ndim(a), np.copy, 0)
    return array_api.copy(a)


FUNCTIONS: dict[Callable, Callable] = {
    np.sum: _reduction("sum", with_dtype=True), np.prod: _reduction("prod", with_dtype=True),
    np.mean: _reduction("mean", with_dtype=True),
    np.std: _reduction("std", with_ddof=True), np.var: _reduction("var", with_ddof=True),
    np.max: _reduction("max"), np.min: _reduction("min"), np.amax: _reduction("max"),
    np.amin: _reduction("min"), np.argmax: _reduction("argmax"), np.argmin: _reduction("argmin"),
    np.any: _reduction("any"), np.all: _reduction("all"),
    np.dot: array_api.dot, np.einsum: array_api.einsum,
    np.where: _where, np.clip: _clip, np.copy: _copy,
    np.zeros_like: _like(0), np.ones_like: _like(1, np.ones_like),
    np.full_like: lambda a, fill_value, dtype=None, **kw: (
        _like(fill_value, np.full_like)(a, dtype, **kw)),
    np.reshape: _reshape, np.ravel: array_shapes.ravel,
    np.transpose: lambda a, axes=None: array_shapes.transpose(a, axes),
    np.expand_dims: array_shapes.expand_dims, np.squeeze: array_shapes.squeeze,
    np.broadcast_to: lambda array, shape, subok=False: array_shapes.broadcast_to(array, shape),
    np.concatenate: _join(array_shapes.concatenate), np.stack: _join(array_shapes.stack),
    np.shape: lambda a: array_shapes.shape_of(array_api.as_tensor(a)),
    np.ndim: lambda a: array_api.as_tensor(a).ndim,
    np.size: lambda a, axis=None: (array_shapes.size_of(array_api.as_tensor(a)) if axis is None
                                   else array_shapes.dim(array_api.as_tensor(a), axis)),
    np.astype: lambda x, dtype, /, *, copy=True, device=None: array_api.astype(x, dtype, copy),
    np.empty_like: _like(0, np.empty_like),  # staged as zeros, as np.empty: deterministic contents
    np.sort: lambda a, axis=-1, kind=None, order=None, *, stable=None: array_api.sort(
        "sort", a, axis, kind, order, stable),
    np.argsort: lambda a, axis=-1, kind=None, order=None, *, stable=None: array_api.sort(
        "argsort", a, axis, kind, order, stable),
    np.take_along_axis: array_shapes.take_along_axis,
    np.cumsum: lambda a, axis=None, dtype=None, out=None: array_api.scan(
        "cumsum", a, axis, dtype, out),
    np.cumprod: lambda a, axis=None, dtype=None, out=None: array_api.scan(
        "cumprod", a, axis, dtype, out),
    np.linalg.norm: array_api.norm,
    np.diag: array_shapes.diag,
    np.triu: lambda m, k=0: array_shapes.triangle("triu", m, k),
    np.tril: lambda m, k=0: array_shapes.triangle("tril", m, k),
    np.outer: array_shapes.outer,
}
FUNCTIONS.update(numpy_shapes.FUNCTIONS)
FUNCTIONS.update(numpy_grids.FUNCTIONS)
FUNCTIONS.update(numpy_statistics.FUNCTIONS)
FUNCTIONS.update(numpy_linalg.FUNCTIONS)
FUNCTIONS.update(numpy_interp.FUNCTIONS)

# NumPy functions that never dispatch to a tensor argument (NumPy converts it first).
CREATION: dict[Callable, Callable] = {
    np.array: _array,
    np.asarray: _asarray,
    np.asanyarray: _asarray,  # (staged values have no subclasses)
    np.ascontiguousarray: lambda a, dtype=None, *, like=None: _contiguous(a, dtype, like),
    np.zeros: _filled(array_shapes.zeros, np.zeros),
    np.ones: _filled(array_shapes.ones, np.ones),
    np.empty: _filled(array_shapes.zeros, np.empty),
    np.full: _full,
    np.arange: _arange,
    np.eye: _eye,
}
CREATION.update(numpy_grids.CREATION)
# np.isscalar never dispatches (NumPy would see the Tensor object): True for a NumPy scalar or
# a Python number, False for an array of any rank, a 0-d ndarray included (ndarray_results).
CREATION[np.isscalar] = lambda element: (
    not ndarray_results.is_array(element) if isinstance(element, Tensor)
    else np.isscalar(element))

# NumPy scalar types called on a staged value: a cast (``np.float64(i)``), as NumPy's own call
# returns an array of that dtype (a scalar for a 0-d one).
SCALAR_TYPES = (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64)


def _scalar_type_call(scalar_type: type) -> Callable:
    def cast(x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            loc = tracing.user_location()
            raise StagingTypeError(
                f"np.{scalar_type.__name__}() of a staged {type(x).__name__}"
                f"{f' at {loc}' if loc is not None else ''} is not supported; pass a tensor")
        if x.ndim and x.dtype == np.dtype(scalar_type):
            return x  # NumPy's scalar type of an array of its dtype is the array itself
        integer_conversions.check_scalar_type(x, np.dtype(scalar_type))
        return x.astype(scalar_type)
    return cast


CREATION.update((t, _scalar_type_call(t)) for t in SCALAR_TYPES)


def staged_function(function: Callable) -> Callable | None:
    """The staged version of NumPy ``function`` for a call with staged arguments, or None.

    The compiler's ``converted_call`` uses it for functions that cannot dispatch on a tensor
    (``np.zeros(n)`` with a staged ``n``, ``np.array([t1, t2])``, ``np.asarray(t)``).
    """
    staged = CREATION.get(function) or FUNCTIONS.get(function)
    if staged is None:
        return None

    def call(*args: Any, **kwargs: Any) -> Any:
        return ndarray_results.function_result(function, args, staged(*args, **kwargs))
    return call


# Functions NumPy gives one array: a list or tuple of staged values there is staged as an array
# first (``np.max([a, b])``; the operators route such calls here).
OF_AN_ARRAY = (np.max, np.min, np.amax, np.amin, np.argmax, np.argmin, np.sum, np.mean, np.prod,
               np.any, np.all, np.median, np.std, np.var, np.average, np.cumsum, np.sort,
               np.argsort, np.ptp)


def _numpy_call(function: Callable, *args: Any, **kwargs: Any) -> Any:
    """Hook of the operators' NumPy overloads (``ag__.np_zeros(n)`` with a staged ``n``...)."""
    staged = staged_function(function)
    if staged is None:
        raise unsupported(numpy_name(function))
    if function in OF_AN_ARRAY and args and isinstance(args[0], (list, tuple)):
        args = (_array(args[0], copy=None), *args[1:])
    return staged(*args, **kwargs)


register_operator_hook("numpy_call", _numpy_call)
