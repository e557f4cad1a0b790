"""IR ops of tensor lists: growable sequences of tensors of one type, as SSA values.

A list value is never changed in place: ``list_append``/``list_set``/``list_pop`` return a new
list (backends may reuse the buffer when the old value is dead). Element types: every element has
the list's dtype and rank; unknown dimensions may differ between elements. Python's list
semantics at run time: negative indices count from the end, an index out of range raises
``IndexError('list index out of range')``, popping an empty list ``IndexError('pop from empty
list')``. ``list_stack`` is ``np.stack`` (an empty list raises NumPy's ``ValueError``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.types import ListType, TensorType, join, scalar

INDEX = scalar(np.int64)


def element_join(element: TensorType, item: object) -> TensorType:
    """The element type after adding ``item``; raises TypeError when it does not fit."""
    joined = join(element, item) if isinstance(item, TensorType) else None
    if joined is None:
        raise TypeError(f"a tensor list of {element} elements cannot hold a {item} element")
    return joined


def _list(t: object, op: str) -> ListType:
    if not isinstance(t, ListType):
        raise TypeError(f"{op} needs a tensor list, got {t}")
    return t


def _index(t: object, op: str) -> None:
    if not (isinstance(t, TensorType) and t.is_scalar and t.dtype.kind in "iu"):
        raise TypeError(f"{op} needs an integer scalar index, got {t}")


def _infer_new(types: tuple, attrs: dict) -> tuple:
    return (ListType(attrs["element"]),)


def _infer_append(types: tuple, attrs: dict) -> tuple:
    lst, item = types
    return (ListType(element_join(_list(lst, "list_append").element, item)),)


def _infer_pop(types: tuple, attrs: dict) -> tuple:
    lst = _list(types[0], "list_pop")
    for t in types[1:]:
        _index(t, "list_pop")
    return (lst, lst.element)


def _infer_get(types: tuple, attrs: dict) -> tuple:
    lst, index = types
    _index(index, "list_get")
    return (_list(lst, "list_get").element,)


def _infer_set(types: tuple, attrs: dict) -> tuple:
    lst, index, item = types
    _index(index, "list_set")
    return (ListType(element_join(_list(lst, "list_set").element, item)),)


def _infer_length(types: tuple, attrs: dict) -> tuple:
    _list(types[0], "list_length")
    return (INDEX,)


def _infer_stack(types: tuple, attrs: dict) -> tuple:
    element = _list(types[0], "list_stack").element
    return (TensorType(element.dtype, (None, *element.shape)),)


def _position(lst: list, index: object) -> int:
    i = int(index)
    if not -len(lst) <= i < len(lst):
        raise IndexError("list index out of range")
    return i


def _evaluate_new(op, values: tuple, run) -> tuple:
    return ([],)


def _evaluate_append(op, values: tuple, run) -> tuple:
    lst, item = values
    return ([*lst, item],)


def _evaluate_pop(op, values: tuple, run) -> tuple:
    lst = list(values[0])
    if not lst:
        raise IndexError("pop from empty list")
    if len(values) == 1:
        return (lst, lst.pop())
    if not -len(lst) <= int(values[1]) < len(lst):
        raise IndexError("pop index out of range")
    item = lst.pop(int(values[1]))
    return (lst, item)


def _evaluate_get(op, values: tuple, run) -> tuple:
    lst, index = values
    return (lst[_position(lst, index)],)


def _evaluate_set(op, values: tuple, run) -> tuple:
    lst, index, item = values
    new = list(lst)
    new[_position(lst, index)] = item
    return (new,)


def _evaluate_length(op, values: tuple, run) -> tuple:
    return (np.int64(len(values[0])),)


def _evaluate_stack(op, values: tuple, run) -> tuple:
    if not values[0] and op.attrs.get("empty_ok"):  # a returned list that stayed empty
        element = op.operands[0].type.element
        return (np.empty((0, *(d or 0 for d in element.shape)), element.dtype),)
    return (np.stack(values[0]),)


# Python's IndexError for a position out of range or an empty pop; np.stack's ValueError.
_RAISES = {"list_get": (IndexError,), "list_set": (IndexError,), "list_pop": (IndexError,),
           "list_stack": (ValueError,)}
for _name, _infer, _evaluate, _doc in (
    ("list_new", _infer_new, _evaluate_new, "attrs: element (TensorType); result: an empty list"),
    ("list_append", _infer_append, _evaluate_append, "operands: list, item; result: new list"),
    ("list_pop", _infer_pop, _evaluate_pop,
     "operands: list[, index i64[]]; results: new list, the item (last one without index)"),
    ("list_get", _infer_get, _evaluate_get, "operands: list, index; result: the item"),
    ("list_set", _infer_set, _evaluate_set, "operands: list, index, item; result: new list"),
    ("list_length", _infer_length, _evaluate_length, "operands: list; result: i64[] length"),
    ("list_stack", _infer_stack, _evaluate_stack,
     "operands: list; attrs: empty_ok (an empty list stacks to 0 rows instead of raising, "
     "as np.stack does); result: np.stack of its items (new axis 0)"),
):
    op_registry.register(_name, _infer, _evaluate, doc=_doc,
                         raises=_RAISES.get(_name, ()),
                         fresh_results=_name == "list_stack")
