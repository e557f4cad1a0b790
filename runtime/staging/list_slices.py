"""Slices of tensor lists: ``lst[a:b:c]`` is a new tensor list, built by a staged loop.

The bounds follow Python's ``slice.indices``: missing ones default by the step's sign, negative
ones count from the end, and out-of-range ones are clamped (never an error). The step must be a
Python int (its sign decides the direction, as for ``range``); start and stop may be staged
integers. The copy is a staged ``for`` over ``range(start, stop, step)`` appending
``lst[i]``: no new IR op, so every backend runs it as it runs the user's own loops.
"""

from __future__ import annotations

import operator

import numpy as np
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.staging import errors, iteration, loops, tensor_lists
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import strong


def _bound(x: object, what: str) -> object:
    if x is None or isinstance(x, Tensor):
        if isinstance(x, Tensor) and (x.ndim != 0 or x.dtype.kind not in "iu"):
            raise errors.StagingTypeError(
                f"a tensor list is sliced with a {strong(x.type)} {what}{errors.at()}; slice "
                "indices must be integers")
        return x
    if isinstance(x, Staged):
        raise errors.StagingTypeError(f"a tensor list is sliced with a staged "
                                      f"{type(x).__name__} {what}{errors.at()}")
    return operator.index(x)


def _adjust(x: object, length: object, step: int) -> object:
    """One bound as ``slice.indices`` adjusts it for a list of ``length`` items."""
    low, high = (-1, length - 1) if step < 0 else (0, length)
    if not isinstance(x, Tensor) and not isinstance(length, Tensor):
        return max(x + length, low) if x < 0 else min(x, high)
    from autostage.runtime import array_api  # a cycle at import time

    return array_api.where(x < 0, np.maximum(x + length, low), np.minimum(x, high))


def get_slice(lst: TensorList, index: slice) -> TensorList:
    """``lst[index]`` for a slice ``index`` (see module doc)."""
    if isinstance(index.step, Staged):
        raise errors.StagingTypeError(
            f"a tensor list is sliced with a staged step{errors.at()}; use a Python int step "
            "(its sign decides the direction)")
    step = 1 if index.step is None else operator.index(index.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start, stop = _bound(index.start, "start"), _bound(index.stop, "stop")
    if lst.value is None:  # nothing was appended: empty on every run
        return TensorList()
    length = tensor_lists.length(lst)
    start = (length - 1 if step < 0 else 0) if start is None else _adjust(start, length, step)
    stop = (-1 if step < 0 else length) if stop is None else _adjust(stop, length, step)
    element = lst.element

    def copy_item(i: Tensor, sliced: TensorList) -> tuple:
        return (tensor_lists.append(sliced, tensor_lists.get(lst, i)),)

    empty = TensorList(TensorList().materialize(element))
    (result,) = loops.stage_for(iteration.StagedRange(start, stop, step), None, copy_item,
                                (empty,))
    return result
