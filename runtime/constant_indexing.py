"""``x[key]`` where ``x`` is not staged but the key (or a part of it) is: the getitem hook.

Converted code reads ``x[key]`` through ``ag__.getitem`` when the key is computed, so a NumPy
array made at trace time (``np.eye(k)[y]``, ``table[i]`` of a module global, ``W[i:j]``) indexed by
a staged value becomes a constant indexed in staged code, with NumPy's result (a 0-d result is a
NumPy scalar, strongly typed). A Python list or tuple of tensors is stacked first
(``_staged_items``: Python numbers keep their Python type, array items are copies that may not
be written or returned), with Python's ``IndexError`` out of range. A
list or tuple of Python numbers of one type (all ``int``, all ``float``...) indexed by a staged
integer gives a staged Python number of that type (weak, as Python numbers are in staged code);
lists whose item type would depend on the index (``[1, 2.5]``), other indices of lists (a staged
slice would give a list whose length is known only at run time), dicts, strings and other
containers are a clear ``StagingTypeError``: their item cannot be chosen at trace time.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import array_api, array_shapes, dtype_rules, tracing, value_info
from autostage.runtime.operator_hooks import Standin
from autostage.runtime.tensor import StagingTypeError, Tensor, constant

_PYTHON_NUMBERS = (bool, int, float, complex)


def getitem(target: object, key: object) -> object:
    """``target[key]`` in staged code (``target`` or ``key`` is staged)."""
    if isinstance(target, (list, tuple)):
        if any(isinstance(t, Tensor) for t in target):
            return _staged_items(target, key)
        return _python_sequence(target, key)
    if isinstance(target, Standin) and issubclass(target.__class__, (list, tuple)):
        # A captured global list: iterating its stand-in records the guard on its items.
        return _python_sequence(target.__class__(target), key)
    if isinstance(target, (Tensor, np.ndarray, np.generic)):
        return array_shapes.getitem(target, key)
    raise _refused(target, "its items are Python objects, not staged values")


def _staged_items(target: list | tuple, key: object) -> Tensor:
    """An item of a list or tuple holding staged values, chosen by a staged index: the items
    stacked, indexed. Python numbers (weak values, constants) of one type give that type (a
    Python float stays one: ``/ 0.0`` raises); items whose type would depend on the index are
    refused; an array item comes back as a copy of the item, so writing into it or returning
    it is refused where Python's would be the item itself (``list_elements.copied_view``)."""
    if not (isinstance(key, Tensor) and key.ndim == 0 and key.dtype.kind in "biu"):
        return array_shapes.getitem(_stacked(target), key)
    kind = type(target).__name__
    kinds = {dtype_rules.weak_kind(t.dtype) if isinstance(t, Tensor) and value_info.is_weak(
        t.value) else type(t) if type(t) in _PYTHON_NUMBERS else None for t in target}
    if len(kinds) > 1:
        raise _refused(target, "its items are Python numbers of different types (or Python and "
                       "NumPy numbers), so the type of the item would depend on the index")
    index = key if key.dtype.kind != "b" else key.astype(np.int64)
    _check_bounds(target, index)
    result = array_shapes.getitem(_stacked(target), index)
    if kinds == {None} and result.ndim:  # arrays: Python's item is the array itself
        value_info.mark_copied_item(result.value, (
            f"an array of a Python {kind} read by a staged index{tracing.at()}: staged code "
            "reads a copy of the item (the arrays stacked), where Python's is the array itself, "
            f"which a write into it would change; index the {kind} with a Python int, or stack "
            "the arrays into one array and index that"))
    elif kinds != {None}:
        value_info.mark_weak(result.value)
    return result


def _stacked(target: list | tuple) -> Tensor:
    """The items of ``target`` stacked into one array, which a staged index reads; items of
    different shapes (known while tracing) are refused: NumPy's ValueError came out of here."""
    shapes = {t.type.shape if isinstance(t, Tensor) else np.shape(t) for t in target}
    if len(shapes) > 1 and not any(None in shape for shape in shapes):
        raise _refused(target, "its items have different shapes "
                       f"({', '.join(str(s) for s in sorted(shapes, key=str))}), which staged "
                       "code cannot stack into the one array it reads the item from")
    return array_shapes.stack(target)


def _check_bounds(target: list | tuple, index: Tensor) -> None:
    """Python's IndexError (``list index out of range``) where ``index`` is out of range."""
    n = len(target)
    out = array_api.ufunc("logical_or", index >= n, index < -n)
    error = IndexError(f"{type(target).__name__} index out of range")
    tracing.emit("raise_if", (out.value,), {"exception": error})


def _python_sequence(target: list | tuple, key: object) -> Tensor:
    kind = type(target).__name__
    if not (isinstance(key, Tensor) and key.ndim == 0):
        raise _refused(target, "only a staged integer index is staged (a slice or an array "
                       f"index gives a {kind} whose length is known only at run time)")
    if key.dtype.kind not in "biu":
        raise TypeError(f"{kind} indices must be integers or slices, not {key.dtype}")
    if not target:
        raise IndexError(f"{kind} index out of range")
    item_types = {type(item) for item in target}
    if len(item_types) != 1 or not issubclass(
            item_type := item_types.pop(), (*_PYTHON_NUMBERS, np.generic)):
        raise _refused(target, "its items are not numbers of one type, so the type of the item "
                       "would depend on the index")
    if item_type is int and not all(-2**63 <= item < 2**63 for item in target):
        raise _refused(target, "its ints do not fit in int64")
    key = key if key.dtype.kind != "b" else key.astype(np.int64)
    _check_bounds(target, key)
    result = array_shapes.getitem(constant(np.array(target)), key)
    if item_type in _PYTHON_NUMBERS:
        value_info.mark_weak(result.value)
    return result


def _refused(target: object, why: str) -> StagingTypeError:
    loc = tracing.user_location()
    where = f"{loc}: " if loc is not None else ""
    kind = target.__class__.__name__  # a stand-in's __class__ is the user's type
    return StagingTypeError(
        f"{where}cannot index a {kind} with a staged key: {why}. Index a NumPy array instead "
        f"(e.g. `np.asarray(x)[i]`), or use a Python value as the key")
