"""``x[key]`` where ``x`` is not staged but the key (or a part of it) is: the getitem hook.

Converted code reads ``x[key]`` through ``ag__.getitem`` when the key is computed, so a NumPy
array made at trace time (``np.eye(k)[y]``, ``table[i]`` of a module global, ``W[i:j]``) indexed by
a staged value becomes a constant indexed in staged code, with NumPy's result (a 0-d result is a
NumPy scalar, strongly typed). A Python list or tuple of tensors is stacked first, as before. A
list or tuple of Python numbers of one type (all ``int``, all ``float``...) indexed by a staged
integer gives a staged Python number of that type (weak, as Python numbers are in staged code);
lists whose item type would depend on the index (``[1, 2.5]``), other indices of lists (a staged
slice would give a list whose length is known only at run time), dicts, strings and other
containers are a clear ``StagingTypeError``: their item cannot be chosen at trace time.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import array_shapes, tracing, value_info
from autostage.runtime.operator_hooks import Standin
from autostage.runtime.tensor import StagingTypeError, Tensor, constant

_PYTHON_NUMBERS = (bool, int, float, complex)


def getitem(target: object, key: object) -> object:
    """``target[key]`` in staged code (``target`` or ``key`` is staged)."""
    if isinstance(target, (list, tuple)):
        if any(isinstance(t, Tensor) for t in target):
            return array_shapes.getitem(array_shapes.stack(target), key)
        return _python_sequence(target, key)
    if isinstance(target, Standin) and issubclass(target.__class__, (list, tuple)):
        # A captured global list: iterating its stand-in records the guard on its items.
        return _python_sequence(target.__class__(target), key)
    if isinstance(target, (Tensor, np.ndarray, np.generic)):
        return array_shapes.getitem(target, key)
    raise _refused(target, "its items are Python objects, not staged values")


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
