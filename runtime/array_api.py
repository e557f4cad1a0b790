"""The NumPy-like functions that stage ops on tensors: element-wise, reductions and products.

This is the front end shared by the ``Tensor`` operators and methods and by NumPy's dispatch
(``__array_ufunc__`` / ``__array_function__``): it turns its arguments into typed operands (a
weak Python scalar becomes a constant of the dtype NumPy 2 would convert it to, a weak staged
value is cast the same way; NumPy arrays become constants) and emits the op. Shape, creation and
indexing functions are in ``array_shapes.py``.
"""

from __future__ import annotations

import functools
import itertools
import operator
import reprlib
import warnings
from collections.abc import Sequence

import numpy as np
from autostage.runtime import dtype_rules, integer_conversions, tracing, value_info
from autostage.runtime.operator_hooks import Standin
from autostage.runtime.ops.elementwise import SCALAR_OPERATORS, UFUNCS
from autostage.runtime.ops.reductions import REDUCTIONS
from autostage.runtime.tensor import StagingTypeError, Tensor, constant
from autostage.runtime.tracing import at as _at  # " at file:line" for messages
from autostage.runtime.types import WEAK_DTYPES, as_dtype


def as_tensor(value: object, dtype: object = None) -> Tensor:
    """``value`` as a tensor (NumPy values and Python scalars as constants, strongly typed)."""
    if isinstance(value, Tensor):
        return value if dtype is None or value.dtype == as_dtype(dtype) else astype(value, dtype)
    return constant(value, dtype)


def _operand(value: object) -> object:
    if type(value) not in dtype_rules.PYTHON_SCALARS and dtype_rules.is_python_scalar(value):
        # (a subclass, ``Meters(2.0)`` or an ``IntEnum``, maybe read through a stand-in: NumPy
        # computes with its value)
        if isinstance(value, Standin):
            value = object.__getattribute__(value, "_obj")
        value = next(kind for kind in dtype_rules.PYTHON_SCALARS[::-1] if isinstance(value, kind))(
            value)
    if isinstance(value, Tensor) or dtype_rules.is_python_scalar(value):
        return value
    try:
        return constant(value)
    except TypeError as e:  # (a string, None, an object: NumPy would make a str or object array)
        raise StagingTypeError(
            f"a NumPy function was given {type(value).__name__} {reprlib.repr(value)}{_at()} "
            f"beside a staged value: {e}; give it numbers or arrays of numbers") from None


def _spec(value: object) -> object:
    """What the dtype rules see: a dtype (strong), a Python scalar, or Weak (weak staged)."""
    if isinstance(value, Tensor):
        if value_info.is_weak(value.value):
            return dtype_rules.Weak(dtype_rules.weak_kind(value.dtype))
        return value.dtype
    return value


def _typed(value: object, dtype: np.dtype, unsafe: bool = False):
    """The IR value of an operand converted to ``dtype`` (weak operands only change dtype)."""
    if isinstance(value, Tensor):
        return value.value if value.dtype == dtype else astype(value, dtype).value
    return constant(dtype_rules.convert_scalar(value, dtype, unsafe)).value


def _emit_promoted(name: str, function, args: Sequence[object], unsafe: bool = False,
                   as_numpy: frozenset = frozenset(), attrs: dict | None = None) -> Tensor:
    """Emits element-wise op ``name`` (NumPy ``function``) with NumPy 2's weak promotion
    (``as_numpy``: operands taken as the NumPy values they are where they are no Python
    numbers; ``attrs``: the op's)."""
    args = [_operand(a) for a in args]
    known = _beyond_integers(name, args)
    if known is not None:
        return known
    specs = [_spec(a) for a in args]
    dtypes, dtype = dtype_rules.resolve(function, specs, name)
    paths = [value_info.python_path(a.value) if isinstance(a, Tensor) else None for a in args]
    others = [value_info.other_path(a.value) if isinstance(a, Tensor) and a.value not in as_numpy
              else None for a in args]
    if not as_numpy and any(others):
        both = _on_both_paths(name, function, args, specs, dtype, paths, others, unsafe)
        if both is not None:
            return both
    allowed: list = [*as_numpy]
    if any(paths) or any(others):
        allowed += _check_python_paths(function, name, args, specs, dtype, paths, others)
    if not unsafe:
        _check_int_bounds(name, args, specs, dtypes)
    with value_info.allowing(allowed):
        values = [_typed(a, d, unsafe) for a, d in zip(args, dtypes, strict=True)]
        try:
            (result,) = tracing.emit(name, values, attrs)
        except ValueError as e:  # (shapes known only at run time: named when raised)
            if str(e).startswith(dtype_rules.BROADCAST_ERROR):
                setattr(e, dtype_rules.BROADCAST_OPERANDS, tuple(values))
            raise
    if not any(isinstance(s, np.dtype) for s in specs) and result.type.dtype in WEAK_DTYPES:
        value_info.mark_weak(result)  # Python scalar op Python scalar: still a Python scalar
    elif result.type.dtype in WEAK_DTYPES and result.type.ndim == 0 and (
            any(paths) or allowed) and all(
            not isinstance(s, np.dtype) or p is not None or isinstance(a, Tensor) and (
                a.value in allowed and _exact_comparison(name, args))
            for a, s, p in zip(args, specs, paths, strict=True)):
        # Python numbers where each value that may be one is: a Python number there too
        value_info.mark_python_path(result, python_path_flag(args).value,
                                    dtype_rules.weak_kind(result.type.dtype))
    return Tensor(result)


def _check_int_bounds(name: str, args: list, specs: list, dtypes: Sequence[np.dtype]) -> None:
    """NumPy 2's OverflowError where a Python int known only at run time (``int(x[0])``, a
    staged loop's index) does not fit the integer dtype an op converts it to (``w + n`` of an
    int32 ``w``: ``integer_conversions``). Comparisons are exact instead (widened to int64 by
    ``dtype_rules.resolve``); of a uint64 array, refused."""
    for a, spec, dtype in zip(args, specs, dtypes, strict=True):
        if spec != dtype_rules.Weak(int) or dtype.kind not in "iu" or dtype == a.dtype:
            continue
        if name in dtype_rules.COMPARISONS:
            raise StagingTypeError(
                f"{name} of a uint64 array and a Python int known only at run time"
                f"{_at()}: NumPy compares them exactly, staged code would convert the int to "
                "uint64; compare with np.int64(n) or convert the array")
        integer_conversions.check_int(a, dtype)


def _beyond_integers(name: str, args: list) -> Tensor | None:
    """A comparison of integers with a Python int outside their dtype's range (``a[i] < 2**70``,
    ``i64 == 2**63``, ``u8 > -1``), which NumPy 2 makes exactly: every integer is below (above)
    it, so the answer is known, for each element (``x == x`` or ``x != x`` of the integers: their
    shape, their type). Compared as typed values instead, int64 with a uint64 ``2**63`` would go
    through float64, where ``2**63 - 1 == 2**63``. None for any other op."""
    if name not in dtype_rules.COMPARISONS or len(args) != 2:
        return None
    for left, (x, big) in ((True, args), (False, args[::-1])):
        if type(big) is int and isinstance(x, Tensor) and x.dtype.kind in "iu" and not (
                np.iinfo(x.dtype).min <= big <= np.iinfo(x.dtype).max):
            compare = _PYTHON_OPERATORS[name]
            truth = compare(0, 1) if (big > 0) == left else compare(1, 0)
            return ufunc("equal" if truth else "not_equal", x, x)
    return None


# Python's own operator for an op on Python numbers (``_on_both_paths``).
_PYTHON_OPERATORS = {
    **SCALAR_OPERATORS, "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "equal": operator.eq, "not_equal": operator.ne,
}


def _on_both_paths(name: str, function, args: list, specs: list, dtype: np.dtype, paths: list,
                   others: list, unsafe: bool) -> Tensor | None:
    """An op of a value that is a Python number of another kind than its dtype where its flag
    holds, a number known while tracing (``value_info.OtherPath.python``: ``m = 0.0``
    before a loop making it ``0.9 * m + 0.1 * x32[i]``), computed on each path as NumPy does
    there and selected by the flag. A result that is a Python number of another kind again
    keeps the flag, holding NumPy's conversion of the number, which must be known too (Python's
    operator on Python numbers). None where that cannot be done (the caller's checks apply)."""
    marked = {i for i, (p, o) in enumerate(zip(paths, others, strict=True)) if p or o}
    x = args[min(marked)]
    other = others[min(marked)]
    if other is None or other.python is None or any(args[i] is not x for i in marked) or (
            paths[min(marked)] is not None):
        return None  # (one value, used once or more: `m * m`; not also a Python float there)
    python_specs = [dtype_rules.Weak(other.kind) if i in marked else s
                    for i, s in enumerate(specs)]
    if _held_as_converted(name, args, specs, [i in marked for i in range(len(args))], x) and (
            _signature(name, specs, dtype) == _python_signature(function, name, python_specs)):
        return None  # the same result on both paths: the caller's checks allow it
    python_args = [other.python if i in marked else a for i, a in enumerate(args)]
    flag = Tensor(other.flag)
    if all(isinstance(a, (bool, int, float, complex)) for a in python_args):
        number, error = _python_value(name, python_args)  # Python's own result, or error
        if number is None and error is None:
            return None
        on_numpy = _emit_promoted(name, function, args, unsafe, as_numpy=frozenset({x.value}))
        if error is not None:  # (where Python raises it: 1 / m of m = 0.0 before the loop)
            tracing.emit("raise_if", (flag.value,), {"exception": error})
            return on_numpy
        return _flagged(number, on_numpy, flag, other.error)
    on_python = _emit_promoted(name, function, python_args, unsafe)
    if value_info.is_weak(on_python.value):
        return None  # (Python's semantics of Python numbers staged: the caller's checks)
    on_numpy = _emit_promoted(name, function, args, unsafe, as_numpy=frozenset({x.value}))
    if on_python.type != on_numpy.type:
        return None
    return where(flag, on_python, on_numpy)


def _flagged(number: object, on_numpy: Tensor, flag: Tensor, error: Exception) -> Tensor | None:
    """The result that is the Python ``number`` where ``flag`` holds and ``on_numpy`` elsewhere:
    flagged as a Python number of its own dtype's kind (exact) or of another (``number`` kept)."""
    kind = type(number)
    try:  # (all operands are Python numbers on this path: a 0-d result)
        held = constant(dtype_rules.convert_scalar(number, on_numpy.dtype))
    except (OverflowError, ValueError, TypeError):
        return None
    result = where(flag, held, on_numpy)
    if dtype_rules.python_dtype(kind) == on_numpy.dtype:
        value_info.mark_python_path(result.value, flag.value, kind)
    else:
        value_info.mark_other_path(result.value, flag.value, kind, error, number)
    return result


def _python_value(name: str, args: list) -> tuple[object, ArithmeticError | None]:
    """What Python's operator gives for op ``name`` of Python numbers ``args``: (the number,
    None), (None, the ZeroDivisionError or OverflowError it raises), or (None, None) where
    that is not known (another op, another error: the op's own checks then apply)."""
    if name not in _PYTHON_OPERATORS:
        return None, None
    try:
        return _PYTHON_OPERATORS[name](*args), None
    except ArithmeticError as e:
        return None, type(e)(*e.args)
    except (ValueError, TypeError):
        return None, None


def python_path_flag(operands: Sequence[object]) -> Tensor | None:
    """Where every operand that is a Python number on some paths only is one (the ``and`` of
    their ``value_info`` flags); None if no operand is one on some paths only."""
    flag = None
    for x in operands:
        if not isinstance(x, Tensor):
            continue
        path = value_info.python_path(x.value) or value_info.other_path(x.value)
        if path is not None:
            flag = Tensor(path.flag) if flag is None else ufunc("logical_and", flag,
                                                                Tensor(path.flag))
    return flag


def _check_python_paths(function, name: str, args: list, specs: list, dtype: np.dtype,
                        paths: list, others: list) -> list:
    """Operands that are Python numbers on some paths only (``value_info.python_path``,
    ``other_path``): where NumPy would give the result another dtype for the Python number, a
    clear error at run time there. The other-path operands the op may use (see
    ``value_info.allowing``): those NumPy converts to their own dtype before using them
    (``f32_array + total``), and Python ints held as float64 in a comparison of ints."""
    either = [p or o for p, o in zip(paths, others, strict=True)]
    where = None  # the paths on which NumPy would compute in (or give) another dtype
    marked = [i for i, e in enumerate(either) if e is not None]
    numpy = _signature(name, specs, dtype)
    exact = _exact_comparison(name, args)
    for subset in itertools.product((False, True), repeat=len(marked)):
        if not any(subset) or exact:
            continue
        python = list(specs)
        for i, is_python in zip(marked, subset, strict=True):
            python[i] = dtype_rules.Weak(either[i].kind) if is_python else specs[i]
        differs = _python_signature(function, name, python)
        if differs == numpy:
            continue
        here = functools.reduce(
            lambda f, g: ufunc("logical_and", f, g),
            [Tensor(either[i].flag) if is_python else ufunc("logical_not", Tensor(
                either[i].flag)) for i, is_python in zip(marked, subset, strict=True)])
        where = here if where is None else ufunc("logical_or", where, here)
    named = next((o.error for o in others if o is not None), None)
    if where is not None and named is not None:  # (names the variable, its loop or if)
        tracing.emit("raise_if", (where.value,), {"exception": named})
    elif where is not None:
        kinds = " or ".join(sorted({e.kind.__name__ for e in either if e is not None}))
        loc = tracing.user_location()
        tracing.emit("raise_if", (where.value,), {"exception": StagingTypeError(
            f"{name}{f' at {loc}' if loc is not None else ''} has an operand that is a Python "
            f"{kinds} on this call's path (e.g. a variable set to a Python number before a "
            "staged loop that ran zero times, or in one branch of a staged if) and a NumPy "
            f"scalar on others: NumPy {differs} for the Python number and {numpy} for the "
            "NumPy value, and a staged value has one type. Make it the same type on every path "
            "(e.g. np.float64(x) or float(x))")})
    flagged = [e is not None for e in either]
    return [a.value for a, o in zip(args, others, strict=True)
            if o is not None and _held_as_converted(name, args, specs, flagged, a)]


def _held_as_converted(name: str, args: list, specs: list, flagged: list, x: Tensor) -> bool:
    """Whether the op computes the same with ``x`` (a Python number of another kind where its
    flag holds, held in its dtype) either way: NumPy converts it to its own dtype first (a
    strong operand not ``flagged`` makes the common dtype ``x``'s: ``f32_array + total``), or
    it is an int held as float64 in a comparison of ints."""
    strong = any(isinstance(s, np.dtype) and not f for s, f in zip(specs, flagged, strict=True))
    common = np.result_type(*[dtype_rules.sample(s) for s in specs])
    return strong and common == x.dtype or _exact_comparison(name, args)


def _python_signature(function, name: str, specs: list) -> str:
    """``_signature`` of the operands ``specs`` where some are Python numbers; NumPy's refusal
    of them (``0 ** -1`` of ints: ValueError) counts as another result."""
    try:
        return _signature(name, specs, dtype_rules.resolve(function, specs, name)[1])
    except (ValueError, TypeError) as e:
        return f"raises {type(e).__name__}"


def _signature(name: str, specs: Sequence[object], dtype: np.dtype) -> str:
    """What NumPy computes for operands ``specs``: the result's dtype; a comparison's, in which
    dtype it compares (``t < f32`` of a Python float ``t`` compares in float32, NumPy converts
    ``t``; of an ``np.float64`` in float64)."""
    if name in dtype_rules.COMPARISONS:
        return f"compares in {np.result_type(*[dtype_rules.sample(s) for s in specs])}"
    return f"gives a {dtype} result"


def _exact_comparison(name: str, args: list) -> bool:
    """A comparison of Python ints and bools, some held as float64 where they are Python
    numbers (``y = 1`` before a loop making it a float): float64 compares them exactly."""
    def int_like(x: object) -> bool:
        if not isinstance(x, Tensor):
            return isinstance(x, (bool, int))
        other = value_info.other_path(x.value)
        if other is not None:
            return other.kind in (bool, int) and x.dtype == np.float64
        return value_info.is_weak(x.value) and x.dtype.kind in "bi"
    return name in dtype_rules.COMPARISONS and all(int_like(a) for a in args)


def ufunc(name: str, *args: object) -> Tensor:
    """Applies element-wise op ``name`` (a key of ``ops.elementwise.UFUNCS``) to ``args``."""
    return _emit_promoted(name, UFUNCS[name], args)


def scalar_math(name: str, *args: object) -> Tensor:
    """Element-wise op ``name`` as Python's operator computes it on NumPy scalars (NumPy's
    scalar math, ``scalar_math`` attr): where that differs from the ufunc's loop (complex
    ordering with a NaN part, complex ``abs``)."""
    return _emit_promoted(name, UFUNCS[name], args, attrs={"scalar_math": True})


def result_dtype(name: str, *args: object) -> np.dtype:
    """The dtype element-wise op ``name`` gives ``args`` (NumPy 2's weak promotion)."""
    return dtype_rules.resolve(UFUNCS[name], [_spec(_operand(a)) for a in args], name)[1]


def where(condition: object, x: object, y: object) -> Tensor:
    """``np.where(condition, x, y)`` (NumPy converts its weak scalars unsafely: 300 -> int8 44)."""
    if dtype_rules.is_python_scalar(condition):  # only its truth counts, not its dtype
        condition = constant(np.bool_(bool(condition)))
    elif isinstance(condition, Tensor) and value_info.is_weak(condition.value):
        condition = astype(condition, np.bool_)
    return _emit_promoted("where", np.where, (condition, x, y), unsafe=True)


def clip(x: object, lo: object = None, hi: object = None) -> Tensor:
    """``np.clip(x, lo, hi)``, mirroring NumPy's ``_clip``: out-of-range Python int bounds of an
    integer array are dropped, and a missing bound stages as maximum/minimum (none: positive)."""
    x = as_tensor(x)  # np.clip converts x with asarray: a Python scalar x is strong
    if value_info.is_weak(x.value):
        x = copy(x)
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        lo = None if type(lo) is int and lo <= info.min else _clamped(lo, "maximum", info.min)
        hi = None if type(hi) is int and hi >= info.max else _clamped(hi, "minimum", info.max)
    if lo is None and hi is None:
        return ufunc("positive", x)
    if lo is None:
        return ufunc("minimum", x, hi)
    if hi is None:
        return ufunc("maximum", x, lo)
    return _emit_promoted("clip", np.clip, (x, lo, hi))


def _clamped(bound: object, name: str, limit: int) -> object:
    """A Python int ``bound`` known only at run time moved to the array dtype's ``limit`` where
    it is past it: NumPy drops such a bound, as ``clip`` drops a constant one (a bound past the
    other limit still raises NumPy's OverflowError: ``_check_int_bounds``)."""
    if isinstance(bound, Tensor) and value_info.is_weak(bound.value) and (
            bound.dtype.kind in "iu" and -2**63 <= limit < 2**63):
        return ufunc(name, bound, int(limit))
    return bound


def astype(x: object, dtype: object, copy: bool = True, casting: str = "unsafe") -> Tensor:
    """``x.astype(dtype)``: a new array (NumPy's default ``copy=True``), or with ``copy=False``
    ``x`` itself where it has that dtype already (so a write into the result writes into ``x``,
    as in NumPy); NumPy's ``TypeError`` for a cast ``casting`` does not allow.

    A complex -> real cast warns NumPy's ``ComplexWarning`` once per trace, at the user's line
    (it depends on the types only; compiled code does not warn on each call)."""
    x, dtype = as_tensor(x), as_dtype(dtype)
    if not np.can_cast(x.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to "
                        f"the rule {casting!r}")
    if not copy and x.dtype == dtype:
        return x
    if x.dtype.kind == "f" and dtype == np.uint32 and x.ndim:
        _refuse_block_dependent_uint32(x)
    (result,) = tracing.emit("cast", (x.value,), {"dtype": dtype})
    if x.dtype.kind == "c" and dtype.kind not in "cb":
        _complex_warning(result.producer)
    return Tensor(result)


def _refuse_block_dependent_uint32(x: Tensor) -> None:
    """A float array cast to uint32 raises at run time where it holds NaN or a value outside
    [-2**31, 2**32): NumPy's result for those depends on the element's place in memory (its
    contiguous loop converts in blocks of four, which give other values than its scalar loop
    and the array's tail), which compiled code does not reproduce (``float_casts``)."""
    inside = ufunc("logical_and", ufunc("greater_equal", x, -2.0 ** 31),
                   ufunc("less", x, 2.0 ** 32))
    outside = ufunc("logical_not", reduce("all", inside))
    tracing.emit("raise_if", (outside.value,), {"exception": ValueError(
        f"a float array with NaN or values outside [-2**31, 2**32) is cast to uint32"
        f"{tracing.at()}: NumPy's result for those depends on where they sit in memory, which "
        "staged code does not reproduce; clip or test them first (np.nan_to_num, np.clip)")})


def _complex_warning(op: object) -> None:
    message = "Casting complex values to real discards the imaginary part"
    loc = getattr(op, "loc", None)
    if loc is None:
        warnings.warn(message, np.exceptions.ComplexWarning, stacklevel=4)
    else:
        warnings.warn_explicit(message, np.exceptions.ComplexWarning, loc.filename, loc.lineno)


def copy(x: object) -> Tensor:
    """``np.copy(x)``: a fresh array (never a view)."""
    (result,) = tracing.emit("copy", (as_tensor(x).value,))
    return Tensor(result)


def reduce(name: str, x: object, axis: object = None, dtype: object = None, out: object = None,
           keepdims: bool = False, ddof: object = 0, **unsupported: object) -> Tensor:
    """``np.<name>(x, axis=..., keepdims=...)`` for the reductions of ``ops.reductions``.

    Raises:
      TypeError: ``out=`` or another argument autostage does not stage (``where=``...).
    """
    if out is not None or unsupported:
        bad = "out" if out is not None else next(iter(unsupported))
        raise StagingTypeError(f"np.{name}: the argument {bad}= is not supported on staged "
                               f"tensors{_at()}")
    x = as_tensor(x)
    if name in ("argmax", "argmin"):
        axis = None if axis is None else dtype_rules.normalize_axis(axis, x.ndim)
    elif axis is not None:
        axis = dtype_rules.normalize_axes(axis, x.ndim)
    attrs = {"axis": axis, "keepdims": bool(keepdims)}
    if "dtype" in REDUCTIONS[name]:
        attrs["dtype"] = None if dtype is None else as_dtype(dtype)
    elif dtype is not None and name in ("std", "var"):
        raise StagingTypeError(f"np.{name}: the argument dtype= is not supported on staged "
                               f"tensors{_at()} (NumPy accumulates its sums in that dtype); call "
                               f"np.{name} without it, or convert the result")
    elif dtype is not None:
        raise TypeError(f"np.{name} got an unexpected keyword argument 'dtype'")
    if "ddof" in REDUCTIONS[name]:
        if isinstance(ddof, Tensor):  # the divisor n - ddof is compiled into the op
            raise StagingTypeError(
                f"np.{name}{_at()}: a staged ddof is not supported (it comes from a NumPy "
                f"value, such as `1 if unbiased else 0` of a NumPy bool); pass a Python number")
        attrs["ddof"] = ddof
    (result,) = tracing.emit(name, (x.value,), attrs)
    return Tensor(result)


def matmul(a: object, b: object) -> Tensor:
    """``a @ b``."""
    (result,) = tracing.emit("matmul", (as_tensor(a).value, as_tensor(b).value))
    return Tensor(result)


def dot(a: object, b: object) -> Tensor:
    """``np.dot(a, b)`` (Python scalars convert strongly, as np.dot does)."""
    (result,) = tracing.emit("dot", (as_tensor(a).value, as_tensor(b).value))
    return Tensor(result)


def einsum(subscripts: str, *operands: object, optimize: object = False) -> Tensor:
    """``np.einsum(subscripts, *operands)`` for explicit subscripts without ``...``
    (``optimize`` chooses NumPy's contraction order: the sums' order, as for any product)."""
    if not isinstance(subscripts, str):
        raise TypeError("autostage's einsum needs the subscripts as a string")
    from autostage.runtime.ops.linalg import parse_subscripts
    tensors = [as_tensor(o) for o in operands]
    labels, output = parse_subscripts(subscripts, tuple(t.ndim for t in tensors))
    spec = ",".join(labels) + "->" + output
    (result,) = tracing.emit("einsum", [t.value for t in tensors], {"subscripts": spec})
    return Tensor(result)


# --- sorting, scans and norms -----------------------------------------------------------------


def _check_sort_kind(kind: object, stable: object) -> object:
    """NumPy's kind (``stable=True`` is kind 'stable'); NumPy itself rejects a bad one."""
    if stable is not None:
        if kind is not None:
            raise ValueError("`kind` and `stable` parameters can't both be specified.")
        kind = "stable" if stable else None
    np.sort(np.zeros(1), kind=kind)  # raises NumPy's error for an unknown kind
    return kind


def sort(name: str, a: object, axis: object = -1, kind: object = None, order: object = None,
         stable: object = None) -> Tensor:
    """``np.sort`` / ``np.argsort`` (``name``): the NumPy reference sorts with the same kind,
    so the order of ties is NumPy's."""
    if order is not None:
        raise TypeError(f"np.{name}: order= (structured arrays) is not supported on staged "
                        "tensors")
    kind = _check_sort_kind(kind, stable)
    x = as_tensor(a)
    if axis is not None and x.ndim == 0 and name == "argsort":
        axis = None  # NumPy argsorts a 0-d array as a 1-element one
    if axis is not None:
        axis = dtype_rules.normalize_axis(axis, x.ndim)
    (result,) = tracing.emit(name, (x.value,), {"axis": axis, "kind": kind})
    return Tensor(result)


def scan(name: str, a: object, axis: object = None, dtype: object = None, out: object = None
         ) -> Tensor:
    """``np.cumsum`` / ``np.cumprod`` (``name``) with ``axis`` (None: over the flattened array)."""
    if out is not None:
        raise StagingTypeError(f"np.{name}(..., out=...){_at()} is not supported on staged "
                               f"tensors: assign the result instead (`out[...] = np.{name}(...)`)")
    x = as_tensor(a)
    if axis is not None:
        axis = dtype_rules.normalize_axis(axis, max(x.ndim, 1))
    attrs = {"axis": axis, "dtype": None if dtype is None else as_dtype(dtype)}
    (result,) = tracing.emit(name, (x.value,), attrs)
    return Tensor(result)


def norm(x: object, ord: object = None, axis: object = None, keepdims: bool = False) -> Tensor:
    """``np.linalg.norm(x, ord, axis, keepdims)``: vector norms over one axis (or all, for
    ``axis=None``), matrix norms over two; the NumPy reference calls np.linalg.norm itself."""
    x = as_tensor(x)
    if axis is not None:
        axes = (axis,) if not isinstance(axis, tuple) else axis
        if len(axes) not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axes = tuple(dtype_rules.normalize_axis(a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError("Duplicate axes given.")
        axis = axes
    if isinstance(ord, Tensor):  # (its text in a TypeError read as a staged exception value)
        raise StagingTypeError(f"np.linalg.norm{_at()}: a staged ord is not supported (which "
                               f"norm it is decides the code); pass a Python number or string")
    if not (ord is None or isinstance(ord, str) or dtype_rules.is_python_scalar(ord)
            or isinstance(ord, np.generic)):
        raise TypeError(f"np.linalg.norm: ord={ord!r} is not supported on staged tensors")
    attrs = {"ord": ord.item() if isinstance(ord, np.generic) else ord, "axis": axis,
             "keepdims": bool(keepdims)}
    (result,) = tracing.emit("norm", (x.value,), attrs)
    return Tensor(result)
