"""``np.array(lst)`` / ``np.asarray(lst)`` of a tensor list: the list stacked along a new axis 0.

NumPy never lets a list dispatch these, so converted code calls the operators' overloads
(``ag__.np_array(lst)``), which hand a call with a staged argument to the ``numpy_call`` hook.
This module wraps that hook (the NumPy ops' own, in ``numpy_dispatch``) and handles a tensor
list first: ``np.array(lst)`` of a list of ``T`` elements is ``list_stack``, cast to ``dtype``
when given. An empty list is where NumPy differs from a stack: ``np.array([])`` is a ``(0,)``
array of ``dtype`` (default float64). That is exact for 0-d elements when ``dtype`` is given or
the elements are float64; otherwise an empty list raises a ``ValueError`` at run time saying
why (never a result of another dtype or rank).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import numpy_dispatch, tracing  # noqa: F401 - registers its hook first
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging import control_flow, errors, tensor_lists
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


def _wrap(previous: Callable[..., Any] | None) -> Callable[..., Any]:
    def numpy_call(function: Callable, *args: Any, **kwargs: Any) -> Any:
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
