"""Staging hook of ``list_comp``: a list comprehension over a staged iterable is a staged loop.

``[elt for v in xs if cond]`` with a staged ``xs`` (a tensor, a tensor list, ``range``,
``enumerate``, ``zip`` or ``reversed`` of them) cannot run in Python at trace time (the number of
items is known only at run time), so the comprehensions converter passes its element and
condition as functions of the loop variables and this hook stages ``for v in xs: if cond:
out.append(elt)`` with a tensor list ``out``: the result is a tensor list, as if the user had
written the loop. Python code in ``elt`` and ``cond`` runs at trace time, with the side-effect
checks of staged loop bodies.
"""

from __future__ import annotations

from collections.abc import Callable

from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging import control_flow, errors, loops, tensor_lists
from autostage.runtime.staging.tensor_lists import TensorList


def stage_list_comp(iterable: object, python: Callable, element: Callable,
                    condition: Callable | None, targets: int) -> TensorList:
    """Hook of ``list_comp`` (see module doc); ``targets`` loop variables (a tuple target when
    more than one)."""

    def unpack(item: object) -> tuple:
        if targets == 1:
            return (item,)
        if not isinstance(item, tuple) or len(item) != targets:
            raise errors.StagingTypeError(
                f"a comprehension{errors.at()} unpacks {targets} loop variables from a staged "
                f"item that is not a tuple of {targets}")
        return item

    def body(item: object, items: TensorList) -> tuple:
        args = unpack(item)
        if condition is None:
            return (tensor_lists.append(items, element(*args), "the comprehension's list"),)
        keep = condition(*args)

        def append(items: TensorList) -> tuple:
            return (tensor_lists.append(items, element(*args), "the comprehension's list"),)

        if not isinstance(keep, Staged):
            return append(items) if keep else (items,)  # a Python condition: decided now
        return control_flow.stage_if(keep, append, None, (items,))

    (result,) = loops.stage_for(iterable, None, body, (TensorList(),),
                                watched=(element, condition), where="list comprehension")
    return result


register_operator_hook("list_comp", stage_list_comp)
