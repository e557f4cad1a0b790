"""IR ops of tensor lists: growable sequences of tensors of one type, as SSA values.

A list value is never changed in place: ``list_append``/``list_set``/``list_pop`` return a new
list (backends may reuse the buffer when the old value is dead). Element types: every element has
the list's dtype and rank; unknown dimensions may differ between elements. Python's list
semantics at run time: negative indices count from the end, an index out of range raises
``IndexError('list index out of range')`` (``'list assignment index out of range'`` for
``list_set``), popping an empty list ``IndexError('pop from empty list')``. ``list_stack`` is
``np.stack`` (an empty list raises NumPy's ``ValueError``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.autodiff import build
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


def _position(lst: list, index: object, what: str = "list") -> int:
    i = int(index)
    if not -len(lst) <= i < len(lst):
        raise IndexError(f"{what} index out of range")
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
    new[_position(lst, index, "list assignment")] = item
    return (new,)


def _evaluate_length(op, values: tuple, run) -> tuple:
    return (np.int64(len(values[0])),)


# A returned list (``empty_ok``) whose items' shapes differ.
RAGGED = ('a list built in staged code and returned holds items of different shap'
          'es: staged code keeps such a list as the rows of one array, so its items must ha'
          've one shape (Python returns them as they are); return np.concatenate of them, o'
          'r build the list in a loop over a Python int')


def _evaluate_stack(op, values: tuple, run) -> tuple:
    if not values[0] and op.attrs.get("empty_ok"):  # a returned list that stayed empty
        element = op.operands[0].type.element
        return (np.empty((0, *(d or 0 for d in element.shape)), element.dtype),)
    if op.attrs.get("empty_ok") and len({np.shape(v) for v in values[0]}) > 1:
        raise ValueError(RAGGED)
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


# -- reverse-mode derivatives (runtime/autodiff) -------------------------------------------------
# The cotangent of a list is a dense array: the element cotangents stacked along a new leading
# axis (``build.ct_type``), so the elements must share one shape at run time: for a ragged list
# the rules raise (``build.check_same_shape``, or NumPy's shape errors), never broadcast a row.


def _vjp_append(op, cts: tuple) -> tuple:
    ct, item = cts[0], op.operands[1]
    row = build.op1("getitem", ct, index=(-1,))
    build.check_same_shape(row, item)
    return (build.op1("getitem", ct, index=((None, -1, None),)), row)


def _vjp_stack(op, cts: tuple) -> tuple:
    ct, axis = cts[0], op.attrs.get("axis", 0)
    if axis:
        order = (axis, *(k for k in range(ct.type.ndim) if k != axis))
        ct = build.op1("transpose", ct, axes=order)
    return (ct,)


def _rows(lst, like, count=None):
    """Zeros of shape ``(count, *like.shape)`` (``count``: the length of ``lst`` by default)."""
    shape, sizes = build.shape_of(like)
    count = build.op1("list_length", lst) if count is None else count
    return build.full((None, *shape), [count, *sizes], 0, like.type.dtype)


def _vjp_get(op, cts: tuple) -> tuple:
    lst, index = op.operands
    ct = cts[0]
    return (build.op1("setitem", _rows(lst, ct), ct, index, index=("?",)), None)


def _vjp_set(op, cts: tuple) -> tuple:
    lst, index, item = op.operands
    ct = cts[0]
    zero = build.constant(0, ct.type.dtype)
    row = build.op1("getitem", ct, index, index=("?",))
    build.check_same_shape(row, item)
    return (build.op1("setitem", ct, zero, index, index=("?",)), None, row)


def _vjp_pop(op, cts: tuple) -> tuple:
    """The popped item's cotangent put back between the remaining elements' rows."""
    lst, *index = op.operands
    rest, item = op.results
    ct_rest, ct_item = cts
    int64 = np.dtype(np.int64)
    n = build.op1("list_length", lst)
    if ct_item is None:
        ct_item = build.zeros_like(item)
    if ct_rest is None:
        ct_rest = _rows(lst, item, build.sub(n, build.constant(1, int64)))
    if index:
        (i,) = index
        wrapped = build.add(build.cast(i, int64), n)
        negative = build.op1("less", i, build.constant(0, i.type.dtype))
        at = build.op1("where", negative, wrapped, build.cast(i, int64))
    else:
        at = build.sub(n, build.constant(1, int64))
    row = build.op1("expand_dims", ct_item, axis=(0,))
    before = build.op1("getitem", ct_rest, at, index=((None, "?", None),))
    after = build.op1("getitem", ct_rest, at, index=(("?", None, None),))
    return (build.op1("concatenate", before, row, after, axis=0), *(None,) * len(index))


for _name, _vjp in (("list_new", op_registry.NO_GRADIENT), ("list_append", _vjp_append),
                    ("list_stack", _vjp_stack), ("list_get", _vjp_get),
                    ("list_set", _vjp_set), ("list_pop", _vjp_pop),
                    ("list_length", op_registry.NO_GRADIENT)):
    op_registry.lookup(_name).vjp = _vjp
