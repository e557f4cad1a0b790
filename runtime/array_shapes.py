"""The NumPy-like functions that stage shape ops, creation ops and indexing.

Sizes may be Python ints or staged 0-d integers (``x.shape[0]`` of an unknown dimension), which
become extra operands of the op (see ``ops/shapes.py``). Results that NumPy returns as views of
their input (basic indexing, reshape, transpose, ravel...) are recorded as views in
``value_info``, so that writing through them, or into a function argument, is a clear error.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_identity,
    dtype_rules,
    integer_conversions,
    ir,
    tracing,
    value_info,
    view_writes,
)
from autostage.runtime.array_api import as_tensor, astype, copy, ufunc
from autostage.runtime.operator_hooks import holds_staged
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.ops.indexing import _INDEX_ERROR, ELLIPSIS, STAGED, index_shape
from autostage.runtime.tensor import StagingTypeError, Tensor, constant
from autostage.runtime.types import as_dtype, strong


def _emit(name: str, operands: Sequence, attrs: dict | None = None, view_of: Tensor | None = None
          ) -> Tensor:
    (result,) = tracing.emit(name, [o.value if isinstance(o, Tensor) else o for o in operands],
                             attrs)
    if view_of is not None:
        value_info.mark_view(result, view_of.value)
    return Tensor(result)


def size_operands(shape: object) -> tuple[tuple, list]:
    """A shape argument as the ``shape`` attr (None for staged sizes) and the staged sizes."""
    if isinstance(shape, (int, np.integer, Tensor)):
        shape = (shape,)
    attr, operands = [], []
    for d in shape:
        if isinstance(d, Tensor):
            if d.ndim != 0 or d.dtype.kind not in "iu":
                raise TypeError(f"a size must be an integer, not a staged {strong(d.type)}")
            attr.append(None)
            operands.append(d.value)
        else:
            attr.append(operator.index(d))
    return tuple(attr), operands


# --- shape queries ----------------------------------------------------------------------------


def dim(x: Tensor, axis: int) -> int | Tensor:
    """``x.shape[axis]``: a Python int when known, else a staged (weak) 0-d int64 (also when
    known only to the trace: ``static_sizes``, where the code sees what it saw without it)."""
    known = x.type.shape[axis]
    if known is not None and not sizes_staged(x):
        return known
    result = _emit("dim", (x,), {"axis": dtype_rules.normalize_axis(axis, x.ndim)})
    value_info.mark_weak(result.value)
    return result


def shape_of(x: Tensor) -> tuple:
    """``x.shape``: known dimensions as ints, unknown ones as staged 0-d int64 tensors."""
    return tuple(dim(x, i) for i in range(x.ndim))


def sizes_staged(x: Tensor) -> bool:
    """Whether the current trace stages the sizes of ``x`` it knows (``Trace.sizes_staged``)."""
    trace = tracing.current()
    return trace is not None and trace.sizes_staged(x.value)


def size_of(x: Tensor) -> int | Tensor:
    """``x.size``: an int when every dimension is known (and not only to the trace, as in
    ``dim``), else a staged (weak) 0-d int64."""
    if None not in x.type.shape and not sizes_staged(x):
        return int(np.prod(x.type.shape, dtype=np.int64))
    result = _emit("size", (x,))
    value_info.mark_weak(result.value)
    return result


# --- shape ops --------------------------------------------------------------------------------


def reshape(x: object, shape: object, view: bool = True) -> Tensor:
    """``np.reshape(x, shape)`` (one size may be -1; sizes may be staged)."""
    x = as_tensor(x)
    attr, sizes = size_operands(shape)
    return _emit("reshape", (x, *sizes), {"shape": attr}, view_of=x if view else None)


def ravel(x: object, order: object = "C") -> Tensor:
    """``np.ravel(x, order)``: ``'F'`` is the C ravel of the transpose."""
    x = as_tensor(x)
    return reshape(transpose(x) if _flat_order(x, order, "ravel") == "F" else x, (-1,))


def flatten(x: object, order: object = "C") -> Tensor:
    """``x.flatten()``: always a copy, unlike ravel (the reshape alone shares ``x``'s memory
    at run time, so a write into the result would change ``x``)."""
    x = as_tensor(x)
    x = transpose(x) if _flat_order(x, order, "flatten") == "F" else x
    return copy(reshape(x, (-1,), view=False))


def _flat_order(x: Tensor, order: object, name: str) -> str:
    """``'C'`` or ``'F'``: NumPy's error for a bad order; ``'A'`` and ``'K'`` (the memory's
    order, which staged code does not know for a view) refused past one dimension."""
    np.ravel(np.zeros(1), order=order)  # NumPy's ValueError
    order = "C" if order is None else str(order).upper()
    if order in ("A", "K"):
        if x.ndim > 1:
            raise StagingTypeError(
                f"{name}(order={order!r}){tracing.at()} of a staged array: its memory order is "
                "not known to staged code; write order='C' or order='F'")
        order = "C"
    return order


def transpose(x: object, axes: object = None) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    axes = tuple(dtype_rules.normalize_axis(a, x.ndim) for a in axes)
    return _emit("transpose", (x,), {"axes": axes}, view_of=x)


def expand_dims(x: object, axis: object) -> Tensor:
    x = as_tensor(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = x.ndim + len(axes)
    normalized = tuple(sorted(dtype_rules.normalize_axis(a, ndim) for a in axes))
    if len(set(normalized)) != len(normalized):
        raise ValueError("repeated axis")
    return _emit("expand_dims", (x,), {"axis": normalized}, view_of=x)


def squeeze(x: object, axis: object = None) -> Tensor:
    """``np.squeeze``; without ``axis`` every dimension must be known (the rank must be)."""
    x = as_tensor(x)
    if axis is None:
        if None in x.type.shape:
            loc = tracing.user_location()
            raise StagingTypeError(
                f"{f'{loc}: ' if loc is not None else ''}squeeze() without axis on a staged "
                f"tensor of type {x.type} cannot be staged: whether an unknown dimension is 1 is "
                "known only at run time (a first call's sizes were known: this call's differ); "
                "pass axis=")
        axes = tuple(i for i, d in enumerate(x.type.shape) if d == 1)
    else:
        axes = dtype_rules.normalize_axes(axis, x.ndim)
    return _emit("squeeze", (x,), {"axis": axes}, view_of=x)


def concatenate(arrays: Sequence[object], axis: object = 0) -> Tensor:
    tensors = [as_tensor(a) for a in arrays]
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    if not tensors:
        raise ValueError("need at least one array to concatenate")
    axis = dtype_rules.normalize_axis(axis, max(tensors[0].ndim, 1))
    return _emit("concatenate", tensors, {"axis": axis})


def stack(arrays: Sequence[object], axis: int = 0) -> Tensor:
    tensors = [as_tensor(a) for a in arrays]
    if not tensors:
        raise ValueError("need at least one array to stack")
    axis = dtype_rules.normalize_axis(axis, tensors[0].ndim + 1)
    return _emit("stack", tensors, {"axis": axis})


def broadcast_to(x: object, shape: object) -> Tensor:
    x = as_tensor(x)
    attr, sizes = size_operands(shape)
    return _emit("broadcast_to", (x, *sizes), {"shape": attr}, view_of=x)


def take_along_axis(arr: object, indices: object, axis: object = -1) -> Tensor:
    """``np.take_along_axis`` (a fresh array, as NumPy's fancy indexing gives)."""
    arr, indices = as_tensor(arr), as_tensor(indices)
    if axis is not None:
        axis = dtype_rules.normalize_axis(axis, arr.ndim)
    return _emit("take_along_axis", (arr, indices), {"axis": axis})


def diag(v: object, k: object = 0) -> Tensor:
    """``np.diag``: a 1-d array's diagonal matrix, or a 2-d array's diagonal (which NumPy gives
    as a read-only view: writing into it is an error, staged as well)."""
    v = as_tensor(v)
    result = _emit("diag", (v,), {"k": operator.index(k)})
    if v.ndim == 2:
        value_info.mark_view(result.value, v.value)
    return result


def triangle(name: str, m: object, k: object = 0) -> Tensor:
    """``np.triu`` / ``np.tril`` (``name``)."""
    return _emit(name, (as_tensor(m),), {"k": operator.index(k)})


def outer(a: object, b: object, out: object = None) -> Tensor:
    """``np.outer(a, b)``: ``a.ravel()[:, None] * b.ravel()[None, :]``, as NumPy computes it."""
    if out is not None:
        raise StagingTypeError(f"np.outer(..., out=...){tracing.at()} is not supported on "
                               "staged tensors: assign the result instead "
                               "(`out[...] = np.outer(a, b)`)")
    return ufunc("multiply", expand_dims(ravel(a), 1), expand_dims(ravel(b), 0))


def filled_copy(x: np.ndarray) -> Tensor | None:
    """A staged array equal to trace-time array ``x`` (a fresh buffer at each call) made in one
    op when its elements are all one value (``np.zeros``, ``np.full``); else None."""
    first = x.flat[0] if x.size else x.dtype.type(0)
    if np.full_like(x, first).tobytes() == x.tobytes():  # bit for bit: -0.0 is not 0.0
        return full(x.shape, first, x.dtype)
    return None


def _staged_copy(x: np.ndarray) -> Tensor:
    """A staged array equal to trace-time array ``x`` (a fresh buffer at each call): filled
    (``filled_copy``), else a copy of a private constant (not one the function must check for
    changes: nothing else holds it)."""
    filled = filled_copy(x)
    if filled is not None:
        return filled
    (private,) = tracing.emit("constant", (), {"value": as_constant_array(x.copy())})
    return copy(Tensor(private))


# --- creation ---------------------------------------------------------------------------------


def full(shape: object, fill_value: object, dtype: object = None) -> Tensor:
    """``np.full`` (and zeros/ones/empty); sizes and the fill value may be staged."""
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, Tensor) else np.asarray(
            fill_value).dtype
    dtype = as_dtype(dtype)
    attr, sizes = size_operands(shape)
    if any(d is not None and d < 0 for d in attr):
        raise ValueError("negative dimensions are not allowed")
    return _emit("full", (_fill(fill_value, dtype), *sizes), {"shape": attr, "dtype": dtype})


def _fill(value: object, dtype: np.dtype) -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError("autostage stages only scalar fill values")
        if value.dtype == dtype:
            return value
        integer_conversions.check_python_int(value, dtype)
        return astype(value, dtype)
    return constant(dtype_rules.convert_scalar(value, dtype))


def zeros(shape: object, dtype: object = float) -> Tensor:
    # (dtype=None is NumPy's float64: full's None takes the fill value's dtype, an int)
    return full(shape, 0, float if dtype is None else dtype)


def ones(shape: object, dtype: object = float) -> Tensor:
    return full(shape, 1, float if dtype is None else dtype)


def full_like(x: object, fill_value: object, dtype: object = None) -> Tensor:
    x = as_tensor(x)
    dtype = x.dtype if dtype is None else as_dtype(dtype)
    return _emit("full_like", (x, _fill(fill_value, dtype)), {"dtype": dtype})


def zeros_like(x: object, dtype: object = None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x: object, dtype: object = None) -> Tensor:
    return full_like(x, 1, dtype)


def arange(start: object, stop: object = None, step: object = None, dtype: object = None
           ) -> Tensor:
    """``np.arange`` with staged bounds (all-Python bounds give a constant)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    args = (start, stop, step)
    if not any(isinstance(a, Tensor) for a in args):
        return constant(np.arange(start, stop, step, dtype=dtype))
    if dtype is None:
        samples = [a.dtype.type(1) if isinstance(a, Tensor) and not value_info.is_weak(a.value)
                   else 1 if isinstance(a, Tensor) else a for a in args]
        dtype = np.arange(*samples).dtype
    if isinstance(step, Tensor):
        _raise_if_zero_step(start, stop, step)
    return _emit("arange", [as_tensor(a) for a in args], {"dtype": as_dtype(dtype)})


def _raise_if_zero_step(start: object, stop: object, step: Tensor) -> None:
    """A zero step raises what NumPy raises for these types of bounds (ZeroDivisionError where
    all are Python numbers, ValueError "Maximum allowed size exceeded" where one is NumPy's)."""
    def zero_of(a: object, value: int) -> object:
        if not isinstance(a, Tensor):
            return type(a)(value) if isinstance(a, (int, float)) else a
        kind = dtype_rules.weak_kind(a.dtype) if value_info.is_weak(a.value) else a.dtype.type
        return kind(value)
    try:
        with np.errstate(all="ignore"):
            np.arange(zero_of(start, 0), zero_of(stop, 1), zero_of(step, 0))
    except (ValueError, ZeroDivisionError) as e:
        error = type(e)(*e.args)
    else:  # (NumPy raised nothing: nothing to check)
        return
    tracing.emit("raise_if", (ufunc("equal", step, 0).value,), {"exception": error})


def eye(n: object, m: object = None, k: int = 0, dtype: object = float) -> Tensor:
    attr, sizes = size_operands((n, n if m is None else m))
    return _emit("eye", sizes, {"shape": attr, "k": operator.index(k), "dtype": as_dtype(dtype)})


# --- indexing ---------------------------------------------------------------------------------


def _index_part(part: object, operands: list) -> object:
    """A slice bound: None, an int, or ``"?"`` for a staged 0-d integer."""
    if part is None:
        return None
    if isinstance(part, Tensor):
        if part.ndim != 0 or part.dtype.kind not in "iu":
            raise TypeError("slice indices must be integers or None or have an __index__ method")
        operands.append(part.value)
        return STAGED
    return operator.index(part)


def index_operands(key: object) -> tuple[tuple, list, bool]:
    """The ``index`` attr, the staged operands and whether the index is basic (no arrays)."""
    key = key if isinstance(key, tuple) else (key,)
    index, operands, basic = [], [], True
    for k in key:
        if k is None:
            index.append(None)
        elif k is Ellipsis:
            index.append(ELLIPSIS)
        elif isinstance(k, slice):
            index.append(tuple(_index_part(p, operands) for p in (k.start, k.stop, k.step)))
        elif _boolean_scalar(k):
            loc = tracing.user_location()
            raise tracing.StagingError(
                f"{f'{loc}: ' if loc is not None else ''}autostage stages a boolean scalar "
                "index (x[True], x[flag] of a 0-d bool) only in a read whose other indices are "
                "ints, slices, None and ...: not with index arrays, another boolean scalar or "
                "in an assignment (write `x = np.where(flag, value, x)`)")
        elif isinstance(k, (int, np.integer)):
            index.append(int(k))
        else:
            if isinstance(k, list) and holds_staged(k):  # x[k:, [k]] of a staged k
                k = _index_array(k)
            if not isinstance(k, Tensor):
                array = np.asarray(k)
                if array.dtype.kind not in "biu" or array.ndim == 0:
                    raise IndexError(_INDEX_ERROR)
                k = constant(array)
            basic = basic and k.ndim == 0
            index.append(STAGED)
            operands.append(k.value)
    return tuple(index), operands, basic


def _index_array(items: list) -> Tensor:
    """A list index holding staged values (``[k, 0]``) as the array NumPy makes of it."""
    rows = []
    for item in items:
        row = _index_array(item) if isinstance(item, list) else as_tensor(item)
        rows.append(astype(row, np.int64) if value_info.is_weak(row.value) else row)
    return stack(rows)


def _boolean_scalar(k: object) -> bool:
    """Whether index item ``k`` is a boolean scalar (NumPy: a new axis of length 1 or 0)."""
    return isinstance(k, (bool, np.bool_)) or (
        isinstance(k, Tensor | np.ndarray) and k.ndim == 0 and k.dtype.kind == "b")


def _basic_item(k: object) -> bool:
    """Whether index item ``k`` selects without arrays: None, ..., a slice, an int."""
    if isinstance(k, Tensor):
        return k.ndim == 0 and k.dtype.kind in "iu"
    return k is None or k is Ellipsis or isinstance(k, slice) or (
        isinstance(k, int | np.integer) and not isinstance(k, bool))


def _produces_axis(k: object) -> bool:
    return k is None or isinstance(k, slice)


def _boolean_scalar_index(x: Tensor, key: tuple, at: int) -> Tensor:
    """``x[key]`` whose item ``at`` is a boolean scalar, as NumPy reads it: a new axis there,
    of length 1 where the boolean is true and 0 where it is false (a copy, as any boolean
    index gives)."""
    widened = getitem(x, (*key[:at], None, *key[at + 1:]))
    if Ellipsis in key[:at]:  # (the new axis' position: counted from the end)
        axis = widened.ndim - 1 - sum(_produces_axis(k) for k in key[at + 1:])
    else:
        axis = sum(_produces_axis(k) for k in key[:at])
    flag = key[at]
    if not isinstance(flag, Tensor):
        chosen = slice(None) if bool(flag) else slice(0, 0)
        return copy(getitem(widened, (slice(None),) * axis + (chosen,)))
    return getitem(widened, (slice(None),) * axis + (reshape(flag, (1,)),))


def getitem(x: object, key: object) -> Tensor:
    """``x[key]``: basic indexing gives a view of ``x`` (unless it selects one element)."""
    x = as_tensor(x)
    items = key if isinstance(key, tuple) else (key,)
    flags = [k for k, item in enumerate(items) if _boolean_scalar(item)]
    if len(flags) == 1 and all(_basic_item(k) for i, k in enumerate(items) if i != flags[0]):
        return _boolean_scalar_index(x, items, flags[0])
    if value_info.is_weak(x.value):  # a Python number
        raise TypeError(f"'{dtype_rules.weak_kind(x.dtype).__name__}' object is not "
                        "subscriptable")
    if x.ndim == 0 and not value_info.is_array(x.value) and any(
            k is not None and k is not Ellipsis for k in items):
        raise IndexError("invalid index to scalar variable.")  # (a NumPy scalar's message)
    index, operands, basic = index_operands(key)
    result = _emit("getitem", (x, *operands), {"index": index})
    scalar = result.ndim == 0 and all(isinstance(e, int) or e == STAGED for e in index)
    if basic and not scalar:
        value_info.mark_view(result.value, x.value)
    return result


def refuse_copied_item(x: Tensor) -> None:
    """A write into a copy of an array Python would write itself (``value_info.copied_item``)."""
    copied = value_info.copied_item(x.value)
    if copied is not None:
        raise tracing.StagingError(f"this write{tracing.at()} changes {copied}")


def check_writable(x: Tensor, what: str) -> None:
    """Raises StagingError if writing into ``x`` would have to change an argument or a view
    (except an argument as a whole that the call writes back: ``argument_writes``)."""
    refuse_copied_item(x)
    base = value_info.view_base(x.value)
    if base is None or argument_writes.writable(x.value):
        return
    loc = tracing.user_location()
    where = f"{loc}: " if loc is not None else ""
    shared = value_info.shared_name(x.value)
    if shared is not None:
        raise tracing.StagingError(
            f"{where}{what} changes `{shared}` in a staged if or loop, a NumPy array made "
            "while tracing that something besides this variable also holds (another name, a "
            "list, an attribute, a view of it, a closure): staged code would change a copy, not "
            "what they hold. Keep one name for it, or create it from a staged size "
            "(`np.zeros(x.shape[0])`)")
    name = value_info.aliased_argument(x.value)
    if name is not None:
        producer = x.value.producer  # (a loop's or an if's value of it is no view; a view
        view = base is not x.value and not (  # carried into a loop's body is one there)
            isinstance(producer, ir.Op) and producer.name in ("cond", "while"))
        if argument_writes.enabled():
            if view:
                raise tracing.StagingError(
                    f"{where}{what} changes the argument `{name}` through a view of it, which "
                    "cannot be staged: only writes into the argument itself are written back "
                    f"into the caller's array. Index `{name}` itself (`{name}[i, j] = v`), or "
                    "copy the view first")
            if x.ndim == 0 and base is x.value and name.isidentifier():
                raise tracing.StagingError(
                    f"{where}{what} changes `{name}`, a 0-d array argument, in place: staged "
                    "code takes a 0-d array argument as its value and cannot write into the "
                    f"caller's array. Return the new value (`{name} = {name} + ...`) and assign "
                    "it in the caller, or pass a 1-element array")
            if not (isinstance(producer, ir.Op) and producer.name in ("cond", "while")):
                raise tracing.StagingError(
                    f"{where}{what} changes `{name}`, an array the function reads "
                    "from an object's attribute, a container, a closure or a global rather "
                    "than takes as an argument: staged code writes back only into its array "
                    f"arguments. Pass `{name}` as an argument, or return the new values and "
                    "store them outside the staged function")
            raise tracing.StagingError(
                f"{where}{what} changes an array that is the argument `{name}` on some "
                "paths of a staged `if` or loop and another array (or a view) on others: "
                "only an argument that is the same whole array on every path is written back "
                f"into the caller's array. Copy it first (`{name} = {name}.copy()`) where the "
                "caller need not see the change")
        through = " through a view of it" if view else ""
        copy = (f"`{name} = {name}.copy()`" if name.isidentifier() else
                "`v = v.copy()`, with the local name you write through: not an item of the "
                "caller's list")
        raise tracing.StagingError(
            f"{where}{what} changes the argument `{name}` in place{through}, which cannot be "
            "staged here (writes into arguments are written back only in the function called "
            "from Python, on the cpu and interpreter targets): the caller's array would not "
            f"change. Copy it first ({copy}) where the caller need not see the change; else "
            "return the new array and assign it in the caller")
    created = f" (created at {x.value.loc})" if x.value.loc is not None else ""
    raise tracing.StagingError(
        f"{where}{what} writes through a view of another array{created}, which cannot be "
        "staged: the array it views would not change. Index the original array instead, or "
        "copy the view first (`y = y.copy()`)")


def _check_rank(x: Tensor, value: Tensor, index: tuple, operands: list) -> None:
    """A value with more dimensions than the element it is written into goes in only if they
    have size 1 (NumPy: "setting an array element with a sequence"); one whose size there is
    known only at run time (``out[0] = x[1:]``) is refused."""
    target = index_shape(x.type.shape, index, [o.type for o in operands])
    extra = value.type.shape[:max(value.ndim - len(target), 0)]
    if not target and None in extra:  # (into a part: NumPy's broadcast error at run time)
        loc = tracing.user_location()
        raise tracing.StagingError(
            f"{f'{loc}: ' if loc is not None else ''}this assignment writes a {value.ndim}-d "
            "array whose size is known only at run time into a single element of the array: "
            "NumPy raises 'setting an array element with a sequence' unless it has one "
            "element. Index the value (`v[0]`), or write into a slice")


def _stacked(value: object) -> Tensor:
    """A (nested) list or tuple holding staged values as one array, as ``np.asarray``."""
    if isinstance(value, (list, tuple)):
        return stack([_stacked(v) for v in value])
    return as_tensor(value)


def setitem(x: object, key: object, value: object, only_name: bool = False) -> Tensor:
    """``x[key] = value`` as a new array (``x = setitem(x, key, value)`` in converted code).

    ``x`` may be a NumPy array made at trace time (``out = np.zeros((3, 4))``) that only the
    converted code's name holds (``only_name``): it is staged as a copy, which the name then
    holds (no one else could see the write).

    Raises:
      StagingError: ``x`` is a function argument or a view (the write would be lost).
      StagingTypeError: ``x`` is not staged and not such an array.
    """
    if type(x) is np.ndarray and only_name and x.base is None and x.flags.writeable:
        made = x
        x = _staged_copy(x)
        if made.ndim == 0:  # (np.zeros(()) is a 0-d ndarray, not a NumPy scalar)
            value_info.mark_array(x.value)
    loc = tracing.user_location()
    where = f"{loc}: " if loc is not None else ""
    if type(x) is np.ndarray:
        raise StagingTypeError(
            f"{where}cannot write a staged value (or at a staged index, or inside a staged if "
            "or loop) into a NumPy array made while tracing (such as `np.zeros((3, 4))` of "
            "Python ints) that something besides this variable may hold: another name, a list, "
            "an attribute, a view of it, the caller that passed it in, a closure; a staged copy "
            "would not change it there. Create it from a staged size (`np.zeros(x.shape[0])`), "
            "or pass it in as an argument and copy it (`out = out.copy()`), or build the rows "
            "in a list and `np.stack` them")
    if not isinstance(x, Tensor):
        raise StagingTypeError(
            f"{where}cannot write a staged value (or at a staged index) into a "
            f"{type(x).__name__} "
            "that is not staged: the write would happen at trace time only. Make it a staged "
            "array first, e.g. `a = np.zeros(n)` inside the converted function")
    check_writable(x, "this assignment to an element")
    index, operands, basic = index_operands(key)
    if isinstance(value, (list, tuple)) and holds_staged(value):
        value = _stacked(value)  # (``hist[d] = (s, i)``: NumPy makes an array of it)
    if isinstance(value, Tensor):
        _check_rank(x, value, index, operands)
        view_writes.written_back(value.value, x.value, index, tuple(operands))
        if value.dtype != x.dtype:
            integer_conversions.check_write(value, x.dtype, basic)
            value = astype(value, x.dtype)
    elif dtype_rules.is_python_scalar(value):
        value = constant(dtype_rules.convert_scalar(value, x.dtype))
    else:
        with np.errstate(all="ignore"):
            value = constant(np.asarray(value).astype(x.dtype))
    result = _emit("setitem", (x, value, *operands), {"index": index})
    array_identity.written(x.value, result.value)
    if x.ndim == 0 and value_info.stands_for_ndarray(x.value):
        value_info.mark_array(result.value)  # (z[()] = v keeps z a 0-d ndarray)
    return result
