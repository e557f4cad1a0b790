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

from autostage.runtime import config, tracing
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging import control_flow, errors, loops, python_state, tensor_lists
from autostage.runtime.staging.tensor_lists import TensorList


def stage_list_comp(iterable: object, python: Callable, element: Callable,
                    condition: Callable | None, targets: int, wanted: Callable | None = None
                    ) -> TensorList:
    """Hook of ``list_comp`` (see module doc); ``targets`` loop variables (a tuple target when
    more than one); ``wanted``: as ``loops.stage_for``'s."""

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
                                watched=(element, condition), where="list comprehension",
                                wanted=wanted)
    return result


def stage_range_comp(whole: range, python: Callable, element: Callable,
                     condition: Callable | None, targets: int) -> TensorList | None:
    """Hook of ``list_comp`` over a Python ``range`` inside a trace: a staged loop (one element
    in the IR, its variable a staged int), as ``loops.stage_range`` stages a ``for`` loop, when
    the range is longer than ``config.UNROLL_LIMIT`` and the element uses a staged value from
    outside it (``[A[i].sum() for i in range(n)]``); None (Python runs the comprehension)
    otherwise, or when staging it fails. Unrolled, a comprehension of N elements made a program
    N elements long, which Numba compiles in time worse than linear (k-means' N=60 took 11 GB)."""
    if len(whole) <= config.UNROLL_LIMIT.value() or python_state.reaches_irreversible(
            (element, condition), ()):  # (an attempt would advance it for good)
        return None
    mark = tracing.checkpoint()
    try:
        return stage_list_comp(whole, python, element, condition, targets,
                               wanted=loops.uses_staged_values)
    except errors.IrreversibleSideEffectError:
        raise  # (running the comprehension as Python now would miss the items read)
    except Exception:  # noqa: BLE001 - any failure: Python's comprehension decides
        tracing.rollback(mark)
        return None


register_operator_hook("list_comp", stage_list_comp)
register_operator_hook("list_comp_range", stage_range_comp)
