"""List mutation as value-returning functions, so a staged loop can carry a list as a tensor list.

The lists converter rewrites ``x.append(v)`` to ``x = list_append(x, v)``, ``y = x.pop(...)`` to
``x, y = list_pop(x, ...)`` and ``x.reverse()`` to ``x = list_reverse(x)``. On Python values they
call the object's own method (any object with ``append``/``pop``/``reverse``, not only lists) and
return it, so aliasing and mutation are Python's. A staged container goes to the runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostage.runtime import Staged, checkpoint, stage_operator


def list_append(lst: Any, x: Any) -> Any:
    """``lst.append(x)``; returns ``lst`` (the same object on the Python path)."""
    if isinstance(lst, Staged):
        return stage_operator("list_append", lst, x)
    lst.append(x)
    return lst


def list_pop(lst: Any, *args: Any) -> tuple[Any, Any]:
    """``lst.pop(*args)``; returns ``(lst, popped item)``.

    ``args`` are ``pop``'s own arguments, passed through unchanged, so ``x.pop()``, ``x.pop(i)``
    and ``d.pop(key, default)`` keep their meaning (an explicit ``None`` is an argument too).
    """
    if isinstance(lst, Staged):
        return stage_operator("list_pop", lst, *args)
    return lst, lst.pop(*args)


def list_reverse(lst: Any) -> Any:
    """``lst.reverse()``; returns ``lst`` (the same object on the Python path). A staged list
    (a Viterbi path appended in a staged loop, then reversed) becomes its reversed copy."""
    if isinstance(lst, Staged):
        return stage_operator("list_reverse", lst)
    lst.reverse()
    return lst


class ListBox:
    """Holds a list while one statement pops from it inside an expression: ``s += x.pop()``
    becomes ``box = ListBox(x)`` / ``s += box_pop(box)`` / ``x = box.list``. Each pop rebinds
    ``list`` to the list after it (the same object on the Python path, a new tensor list when
    staged), so the rest of the statement reads the list as Python would."""

    __slots__ = ("list",)

    def __init__(self, lst: Any):
        self.list = lst


def box_pop(box: ListBox, *args: Any) -> Any:
    """``box.list.pop(*args)``, keeping the list after the pop in ``box``."""
    box.list, item = list_pop(box.list, *args)
    return item


def box_append(box: ListBox, x: Any) -> Any:
    """``box.list.append(x)`` for ``x`` computed (with pops of that list) before; returns the
    list after it, as ``list_append``."""
    return list_append(box.list, x)


def list_comp(iterable: Any, python: Callable[[Any], list], element: Callable[..., Any],
              condition: Callable[..., Any] | None, targets: int) -> Any:
    """``[element(v) for v in iterable if condition(v)]``; on Python values ``python(iterable)``
    (the comprehension as written); a staged ``iterable`` is a staged loop (``targets`` loop
    variables: a tuple target when more than one)."""
    if isinstance(iterable, Staged):
        return stage_operator("list_comp", iterable, python, element, condition, targets)
    if type(iterable) is range and len(iterable) > 2 and checkpoint() is not None:
        staged = stage_operator("list_comp_range", iterable, python, element, condition, targets)
        if staged is not None:  # (a long range whose elements use staged values)
            return staged
    return python(iterable)
