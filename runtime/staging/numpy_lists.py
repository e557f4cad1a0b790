"""``np.array(lst)`` / ``np.asarray(lst)`` of a tensor list: the list stacked along a new axis 0.

NumPy never lets a list dispatch these, so converted code calls the operators' overloads
(``ag__.np_array(lst)``), which hand a call with a staged argument to the ``numpy_call`` hook.
This module wraps that hook (the NumPy ops' own, in ``numpy_dispatch``) and handles a tensor
list first: ``np.array(lst)`` of a list of ``T`` elements is ``list_stack``, cast to ``dtype``
when given. An empty list is where NumPy differs from a stack: ``np.array([])`` is a ``(0,)``
array of ``dtype`` (default float64). That is exact for 0-d elements when ``dtype`` is given or
the elements are float64; otherwise an empty list raises a ``ValueError`` at run time saying
why (never a result of another dtype or rank).

``list_function`` stages the NumPy functions that take a tensor list where NumPy takes a list of
arrays: ``np.stack(lst, axis=k)`` (the stack moved to axis ``k``), ``np.concatenate(lst,
axis=k)`` and ``np.vstack``/``np.hstack``/``np.column_stack`` (the stack reshaped as NumPy joins
the elements), and any staged NumPy function of an array (``np.sum(lst)``, ``np.mean(lst,
axis=0)``) applied to ``np.array(lst)``, as NumPy converts the list. ``pick`` is Python's
``min(lst)``/``max(lst)`` of such a list, on the stack.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (  # noqa: F401 - hook first
    array_api,
    dtype_rules,
    numpy_dispatch,
    python_numbers,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging import control_flow, errors, list_elements, tensor_lists, values
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.types import as_dtype

_ARRAY_FUNCTIONS = (np.array, np.asarray)


def array_of_list(lst: TensorList, dtype: object = None, name: str = "np.array") -> Tensor:
    """``np.array(lst, dtype)`` of a tensor list (see module doc)."""
    target = None if dtype is None else as_dtype(np.dtype(dtype))
    if lst.value is None:  # nothing is ever appended: the list is empty on every run
        return constant(np.array([], dtype=target if target is not None else np.float64))
    element = lst.element
    empty_dtype = target if target is not None else np.dtype(np.float64)
    # the cast below gives an empty (0,) stack the requested dtype
    exact_when_empty = element.ndim == 0 and (target is not None or element.dtype == np.float64)
    if not exact_when_empty:
        message = (f"autostage: {name}() of an empty staged list of {element} elements"
                   f"{errors.at()}: NumPy gives a (0,) {empty_dtype} array, which the staged "
                   "code cannot (its result has the elements' dtype and rank); "
                   + ("pass dtype=" if element.ndim == 0 else "check the length first"))

        def fail() -> tuple:
            raise ValueError(message)

        control_flow.stage_if(tensor_lists.length(lst) == 0, fail, None, ())
    (stacked,) = tracing.emit("list_stack", (lst.value,), {"empty_ok": exact_when_empty})
    result = Tensor(stacked)
    if target is not None and result.dtype != target:
        result = result.astype(target)
    return result


_JOINS = {np.stack: "stack", np.concatenate: "concatenate", np.vstack: "vstack",
          np.hstack: "hstack", np.column_stack: "column_stack"}


def list_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """NumPy's ``func(*args, **kwargs)`` whose first argument is the tensor list ``args[0]``."""
    lst, rest = args[0], args[1:]
    name = f"np.{getattr(func, '__name__', func)}"
    if lst.value is None:  # never appended to: the empty Python list, a NumPy constant
        return func([], *rest, **kwargs)
    if func in _JOINS:
        options = dict(zip(("axis",), rest, strict=False)) | kwargs
        if len(rest) > 1 or set(options) - {"axis"} or (
                "axis" in options and func not in (np.stack, np.concatenate)):
            raise errors.StagingTypeError(
                f"{name}() of a tensor list{errors.at()} supports "
                + ("the axis argument only" if func in (np.stack, np.concatenate)
                   else "no other arguments"))
        return _join(_JOINS[func], lst, options.get("axis", 0), name)
    implementation = numpy_dispatch.FUNCTIONS.get(func)
    if implementation is None:
        raise errors.StagingTypeError(f"{name} of a tensor list{errors.at()} is not supported; "
                                      "np.stack(lst) makes it an array")
    return implementation(array_of_list(lst, None, name), *rest, **kwargs)


def _join(kind: str, lst: TensorList, axis: object, name: str) -> Tensor:
    from autostage.runtime import array_shapes
    ndim = lst.element.ndim
    if kind == "stack":
        return _moved(tensor_lists.stack(lst), dtype_rules.normalize_axis(axis, ndim + 1))
    if kind == "vstack":  # np.atleast_2d of each element, joined along axis 0
        kind, axis = ("stack", 0) if ndim == 1 else ("concatenate", 0)
        if ndim == 0:
            return array_shapes.reshape(_nonempty(lst, name), (-1, 1))
    elif kind == "hstack":  # np.atleast_1d of each, joined along axis 0 (1-d) or 1
        if ndim == 0:
            return _nonempty(lst, name)
        axis = 0 if ndim == 1 else 1
    elif kind == "column_stack":  # 1-d elements are columns; 2-d ones are joined along axis 1
        if ndim == 0:
            return array_shapes.reshape(_nonempty(lst, name), (1, -1))
        if ndim == 1:
            return _moved(_nonempty(lst, name), 1)
        axis = 1
    if kind == "stack":
        return _nonempty(lst, name)
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = dtype_rules.normalize_axis(axis, ndim)
    stacked = _nonempty(lst, name)  # (n, d0, ..., d_m-1): join n with d_axis
    moved = _moved(stacked, axis)
    if axis:
        moved = moved.copy()  # C order before merging the two axes
    shape = array_shapes.shape_of(moved)
    return array_shapes.reshape(moved, (*shape[:axis], shape[axis] * shape[axis + 1],
                                        *shape[axis + 2:]))


def _nonempty(lst: TensorList, name: str) -> Tensor:
    """The stack of ``lst``; NumPy's ValueError for an empty list (at run time)."""
    what = "stack" if name == "np.stack" else "concatenate"
    (empty,) = tracing.emit("list_length", (lst.value,))
    test = Tensor(empty) == 0
    tracing.emit("raise_if", (test.value,),
                 {"exception": ValueError(f"need at least one array to {what}")})
    return tensor_lists.stack(lst)


def _moved(stacked: Tensor, axis: int) -> Tensor:
    """The stack with its axis 0 moved to ``axis`` (np.stack(..., axis))."""
    if axis == 0:
        return stacked
    from autostage.runtime import array_shapes
    order = (*range(1, axis + 1), 0, *range(axis + 1, stacked.ndim))
    return array_shapes.transpose(stacked, order)


def _wrap(previous: Callable[..., Any] | None) -> Callable[..., Any]:
    def numpy_call(function: Callable, *args: Any, **kwargs: Any) -> Any:
        if function in _JOINS and args and isinstance(args[0], TensorList):
            return list_function(function, args, kwargs)
        if function in _ARRAY_FUNCTIONS and args and isinstance(args[0], TensorList):
            extra = set(kwargs) - {"dtype", "copy"} or len(args) > 2
            if extra:
                raise errors.StagingTypeError(
                    f"np.{function.__name__}() of a tensor list{errors.at()} supports only "
                    "the dtype argument")
            dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
            return array_of_list(args[0], dtype, f"np.{function.__name__}")
        if previous is None:
            raise errors.StagingTypeError(
                f"np.{getattr(function, '__name__', function)} is not supported on staged "
                f"values{errors.at()}")
        return previous(function, *args, **kwargs)

    return numpy_call


register_operator_hook("numpy_call", _wrap(register_operator_hook("numpy_call", None)))


def empty_sequence_error(name: str) -> ValueError:
    """Python's error for ``min([])`` / ``max([])`` (its words differ between versions)."""
    try:
        (min if name == "min" else max)([])
    except ValueError as e:
        return ValueError(str(e))
    raise AssertionError("min([]) did not raise")


def python_pick(items: Tensor, name: str) -> Tensor:
    """``min``/``max`` of the 1-d real ``items`` (at least one), as Python's loop picks: the
    first item unless a later one is smaller (greater). So a nan first item wins, a later nan
    never does, and of equal items (``0.0``, ``-0.0``) the first: the first item equal to the
    best of the items that are not nan, unless the first item is nan."""
    ordered = items
    if items.dtype.kind == "f":  # (nan: never the best unless first)
        ordered = array_api.where(array_api.ufunc("isnan", items),
                                  np.inf if name == "min" else -np.inf, items)
    best = (np.min if name == "min" else np.max)(ordered)
    result = items[np.argmax(ordered == best)]
    if items.dtype.kind == "f":
        result = array_api.where(array_api.ufunc("isnan", items[0]), items[0], result)
    return result


def list_equal(lst: TensorList, other: object, negated: bool = False) -> object:
    """``lst == other`` (``!=`` when ``negated``) as Python compares lists: equally long, with
    equal items. Staged for items that compare exactly and have one truth value (ints, bools),
    and for any items compared with an empty list; a tuple or a value of another kind is never
    equal to a list."""
    if not isinstance(other, list | TensorList):
        return negated  # (a list is never equal to a tuple, a range, a number...)
    n, m = tensor_lists.length(lst), (tensor_lists.length(other) if isinstance(
        other, TensorList) else len(other))
    if lst.value is None or isinstance(m, int) and m == 0 or (
            isinstance(other, TensorList) and other.value is None):
        same = n == m  # (an empty side, whatever the items: equal when both are)
    else:
        items = _exact_items(lst)
        other_items = _exact_items(other) if isinstance(other, TensorList) else (
            array_api.as_tensor(np.stack(other)) if any(isinstance(v, Tensor) for v in other)
            else constant(np.array(other)))
        if other_items.ndim != 1 or other_items.dtype.kind not in "iub":
            _refuse_equality()
        shortest = np.minimum(n, m)
        same = (n == m) & (items[:shortest] == other_items[:shortest]).all()
    if negated:
        same = np.logical_not(same)
    return values.as_python_number(same)


register_operator_hook("list_equal", list_equal)


def _exact_items(lst: TensorList) -> Tensor:
    """The items of a tensor list of ints or bools, as an array."""
    if lst.element.ndim or lst.element.dtype.kind not in "iub":
        _refuse_equality()
    return array_of_list(lst, lst.element.dtype, "==")  # (empty: of that dtype too)


def _refuse_equality() -> None:
    raise errors.StagingTypeError(
        f"`==` of a list built in staged code{errors.at()} is staged for lists of ints and "
        "bools (floats: Python also counts an item identical to itself as equal, nan "
        "included; arrays: no single truth value); compare the stacked items, e.g. "
        "len(a) == len(b) and np.array_equal(np.stack(a), np.stack(b))")


def pick(lst: TensorList, name: str) -> Tensor:
    """``min(lst)``/``max(lst)`` of a tensor list of real scalars, as Python picks
    (``python_pick``); Python's ValueError for an empty list, at run time."""
    if lst.value is None or lst.element.ndim or lst.element.dtype.kind == "c":
        what = ("no items" if lst.value is None else "arrays" if lst.element.ndim
                else "complex numbers")
        raise errors.StagingTypeError(f"{name}() of a staged list of {what}{errors.at()} is not "
                                      "supported: Python compares the items themselves")
    if len(lst.elements.kinds) > 1:
        list_elements.refuse_mixed_read(lst.elements, lst.element.dtype)
    python_numbers._raise_if(tensor_lists.length(lst) == 0, empty_sequence_error(name))
    result = python_pick(array_of_list(lst, None, name), name)
    if lst.elements.python:
        value_info.mark_weak(result.value)
    return result
