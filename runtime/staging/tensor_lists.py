"""Tensor lists: Python lists that are state of staged control flow, staged as IR list values.

A Python list assigned before a staged loop or ``if`` and appended to inside it (the converter
makes it state: ``out = list_append(out, h)``) becomes a ``TensorList``. Its element type comes
from the first append, with no annotation: an empty list is *pending* (no IR value) until then.
A ``TensorList`` is immutable like an SSA value: each append returns a new one. ``np.stack`` of
it is ``list_stack``; ``len()`` and indexing go through the operators' hooks. ``np.array(lst)``
cannot be intercepted (NumPy does not dispatch it) and raises a clear error suggesting
``np.stack``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import weakref
from collections.abc import Iterator

import numpy as np
from autostage.runtime import ir, tracing, value_info
from autostage.runtime.operator_hooks import Staged, stage_operator
from autostage.runtime.staging import errors, list_elements, values
from autostage.runtime.staging.list_elements import Elements
from autostage.runtime.tensor import Tensor, as_tensor, constant
from autostage.runtime.types import ListType, TensorType, join, scalar, strong


class TensorList(Staged):
    """A staged list of tensors of one type; ``value`` is None while it is empty and untyped."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, value: ir.Value | None = None):
        self.value = value

    @property
    def type(self) -> ListType | None:
        return None if self.value is None else self.value.type

    @property
    def element(self) -> TensorType | None:
        return None if self.value is None else self.value.type.element

    @property
    def elements(self) -> Elements:
        """Whether its elements are Python numbers or NumPy values (``list_elements``)."""
        return list_elements.of_value(self.value)

    def materialize(self, element: TensorType) -> ir.Value:
        """The list's IR value; a pending list makes a new empty list of ``element`` (here, in the
        current region) and stays pending, as branches may each make their own."""
        if self.value is not None:
            return self.value
        (value,) = tracing.emit("list_new", (), {"element": element})
        list_elements.record(value, list_elements.EMPTY)
        return value

    def __add__(self, other: object) -> TensorList:
        """``lst + [a, b]``: a new list, the items appended (``lst`` unchanged, as in Python)."""
        if type(other) is not list:
            return _refuse_operator(self, "+", other)
        result = self
        for x in other:
            result = append(result, x, "the list")
        return result

    def __iadd__(self, other: object) -> TensorList:
        """``lst += [a, b]`` (or a tuple): the items appended to this list (``before_change``)."""
        if type(other) not in (list, tuple):
            return _refuse_operator(self, "+=", other)
        before_change(self)
        return self.__add__(list(other))

    def __radd__(self, other: object) -> TensorList:
        return _refuse_operator(other, "+", self)

    def __mul__(self, other: object) -> TensorList:
        return _refuse_operator(self, "*", other)

    __rmul__ = __mul__

    def __delitem__(self, index: object) -> None:
        raise errors.StagingTypeError(
            f"del of an item of a list built in staged code{errors.at()} is not supported: "
            "use lst.pop(i), which staged code changes the list with")

    def __len__(self) -> int:
        raise errors.StagingTypeError(
            f"len() of a tensor list{errors.at()} is only known at run time; call len() in "
            "code autostage converts (it gives a staged length)")

    def __iter__(self):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("numpy"):  # NumPy's dispatchers look for overrides in sequences
            return iter((self,))
        raise errors.StagingTypeError(
            f"a tensor list was iterated{errors.at()} by code autostage did not convert; iterate "
            "it in converted code (a staged loop) or np.stack it first")

    def __getitem__(self, index: object) -> Tensor:
        return get(self, index)

    def __eq__(self, other: object) -> object:
        """``lst == other``: Python's list equality (a Python bool), staged for lists of ints
        and bools, compared with a list of them or another such tensor list; a tuple or any
        other value is not equal; the list itself is (as Python's identity test of items
        makes it, and as weak dictionaries keyed by tensor lists ask)."""
        return True if other is self else stage_operator("list_equal", self, other)

    def __ne__(self, other: object) -> object:
        return False if other is self else stage_operator("list_equal", self, other, True)

    def __lt__(self, other: object) -> object:
        raise errors.StagingTypeError(
            f"ordering comparison of a list built in staged code{errors.at()} is not staged "
            "(Python compares the items up to the first that differs); compare the items")

    __le__ = __gt__ = __ge__ = __lt__
    __hash__ = object.__hash__  # (internally, lists are told apart by identity)

    def __contains__(self, item: object) -> bool:
        raise errors.StagingTypeError(
            f"`in` of a list built in staged code{errors.at()} is not staged (its items exist "
            "only at run time); compare with the stacked items instead: "
            "`(np.stack(lst) == v).any()`")

    def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
        raise errors.StagingTypeError(
            f"np.array/np.asarray of a tensor list{errors.at()} cannot be staged (NumPy does not "
            "let autostage intercept it); use np.stack(lst)")

    def __array_function__(self, func, types, args, kwargs) -> object:
        if args and args[0] is self:
            from autostage.runtime.staging import numpy_lists
            return numpy_lists.list_function(func, args, kwargs)
        raise errors.StagingTypeError(
            f"np.{func.__name__} of a tensor list{errors.at()} that is not its first argument "
            "is not supported; np.stack(lst) makes it an array")

    def __repr__(self) -> str:
        return f"<staged TensorList {self.type or 'list<?>'}>"


def _unstaged_method(name: str):
    def method(self: TensorList, *args: object, **kwargs: object) -> object:
        raise errors.StagingTypeError(
            f"list.{name}() is called on a tensor list{errors.at()} where autostage cannot "
            "stage it (a list that is state of a staged if/loop is a tensor list): use "
            "`lst.append(v)`, `v = lst.pop()`, `lst.pop(i)`, `lst.reverse()` or `lst[i] = v` on "
            "a local list name, or a pop in an expression that Python always evaluates")
    method.__name__ = name
    return method


for _name in ("append", "pop", "extend", "insert", "remove", "clear", "sort", "reverse",
              "index", "count", "copy"):
    setattr(TensorList, _name, _unstaged_method(_name))
del _name


def _item(x: object, element: TensorType | None, what: str) -> Tensor:
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    if isinstance(x, Tensor):
        return x
    if values.is_number(x):
        if element is not None:
            return values.weak_constant(x, element.dtype, what)
        return values.to_tensor(x)
    text = type(x).__name__ == "Text"  # (staging.text, which imports this module)
    kind = "a string made from staged values" if text else f"a {type(x).__name__} value"
    hint = ": keep the numbers in a list and format them outside the staged loop" if text else ""
    raise errors.StagingTypeError(
        f"{what}{errors.at()} gets {kind}; a tensor list holds tensors and numbers only{hint}")


def list_type(x: object) -> ListType | None:
    """The type ``x`` has as a tensor list (a ``TensorList``, a maybe-assigned one, or a Python
    list of tensors and numbers, typed as ``from_python`` would make it), without staging
    anything; None for an empty list or what is not a list."""
    if isinstance(x, (TensorList, values.MaybeUnbound)):
        return x.type if isinstance(x.type, ListType) else None
    if not isinstance(x, list):
        return None
    element = None
    for item in x:
        if isinstance(item, Tensor):
            element = item.type if element is None else join(element, item.type) or element
        elif element is None and values.is_number(item):
            element = scalar(values.default_dtype(item))
    return ListType(element) if element is not None else None


def elements_of(x: object) -> Elements:
    """What the elements of ``x`` are (a ``TensorList``, a maybe-assigned one, or a Python list
    of tensors and numbers), without staging anything."""
    if isinstance(x, (TensorList, values.MaybeUnbound)):
        return list_elements.of_value(x.value)
    if not isinstance(x, list):
        return list_elements.EMPTY
    t = list_type(x)  # (None: no tensor or number in it, a list of functions)
    dtype = None if t is None else t.element.dtype
    result = list_elements.EMPTY
    for item in x:
        result = result.add(list_elements.of_item(item, dtype))
    return result


def from_python(items: list, name: str) -> TensorList:
    """A Python list (state of staged control flow) as a tensor list.

    From here on the staged list and the Python list object are two things: changes the staged
    code makes are not seen through another name for that object (``b = a`` before a staged
    loop appending to ``a``). So another name for it in the user's frames is refused.
    """
    _refuse_other_names(items, name)
    result = TensorList()
    for x in items:
        result = append(result, x, f"list {name!r}")
    return result


def _refuse_other_names(items: list, name: str) -> None:
    if any(items is lst for lst in getattr(tracing.current(), "argument_lists", ())):
        raise tracing.StagingError(
            f"the list `{name}` is an argument and is assigned or changed in staged control "
            f"flow{errors.at()}; the staged list it becomes there is not the caller's list "
            f"(changes made to it would not reach the caller): start from a copy "
            f"(`{name} = list({name})` first) and return it if the caller needs it")
    others = tracing.user_names(lambda obj: _holds(obj, items), name)
    if others:
        names = ", ".join(f"`{n}`" for n in others)
        label = f"`{name}`" if name.isidentifier() else name  # ("the return value")
        copy = (f"`{others[0]} = list({name})`" if name.isidentifier() else
                f"`return ..., list({others[0]})`")
        raise tracing.StagingError(
            f"the list {label} is changed by staged control flow{errors.at()}, but another "
            f"name also refers to it ({names}); staged code updates {label} only, so that "
            f"name would not see the change: copy the list where a separate one is meant "
            f"({copy}), or use one name for it")


# Lists a staged loop leaves as one Python list under several names (``prev = cur`` in its
# body): list -> (the names, the loop), for the refusal of a change through one of them.
_shared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_changes = threading.local()  # .sets: per body being traced here, ids of the lists changed


def mark_shared(lists: list[object], names: list[str], where: str) -> None:
    """Marks the lists of ``names`` after a staged loop that leaves them one Python list."""
    for lst in lists:
        if isinstance(lst, TensorList):
            _shared[lst] = (names, f"{where}{errors.at()}")


@contextlib.contextmanager
def recording_changes() -> Iterator[set[int]]:
    """The ids of the tensor lists changed (appended to, popped, written) in the block."""
    changed: set[int] = set()
    sets = _changes.__dict__.setdefault("sets", [])
    sets.append(changed)
    try:
        yield changed
    finally:
        sets.pop()


def _refuse_operator(left: object, operator: str, right: object) -> TensorList:
    def kind(x: object) -> str:
        return "a list built in staged code" if isinstance(x, TensorList) else type(x).__name__
    raise errors.StagingTypeError(
        f"{kind(left)} {operator} {kind(right)}{errors.at()} is not supported: staged code "
        "extends a list by appending items to its end (`lst + [a, b]`, `lst += [a, b]`, "
        "`lst.append(a)`); build the other lists by appending too")


def before_change(lst: TensorList) -> None:
    """Called before user code changes ``lst`` (append, pop, item write, ``+=``): records the
    change for ``recording_changes``, and refuses it while two names (or a name and a list,
    tuple or dict) of the user's code hold the list: staged code changes a list by making a
    new one for the name it is changed through (``cur = list_append(cur, x)``), which another
    name for the same Python list (``snapshot = cur`` before ``cur.append(x)``) would not
    see."""
    for changed in getattr(_changes, "sets", ()):
        changed.add(id(lst))
    shared = _shared.get(lst)
    if shared is not None:
        names, where = shared
        raise tracing.StagingError(
            f"a list is changed{errors.at()} that the {where} left as one list under the "
            f"names {', '.join(f'`{n}`' for n in names)} (its body binds one to the other): "
            "Python's change is seen through each of them, staged code keeps a list per name; "
            f"copy the list in the loop where separate lists are meant "
            f"(`{names[1]} = {names[0]}[:]`)")
    holders = tracing.user_names(lambda obj: _holds(obj, lst))
    if len(holders) > 1:
        held = ", ".join(f"`{n}`" for n in sorted(holders))
        raise tracing.StagingError(
            f"a list built in staged code is changed{errors.at()} while several names hold it "
            f"({held}); staged code changes the list of the name it is changed through only, "
            "so the others would not see the change: copy the list where a separate one is "
            "meant (`other = lst[:]`), or use one name for it")


def _holds(obj: object, lst: object) -> bool:
    """Whether ``obj`` is ``lst`` or a list, tuple or dict holding it."""
    if isinstance(obj, dict):
        obj = obj.values()
    elif not isinstance(obj, (list, tuple)):
        return obj is lst
    return obj is lst or any(o is lst for o in obj)


def _with(value: ir.Value, elements: Elements) -> TensorList:
    list_elements.record(value, elements)
    return TensorList(value)


def _element(lst: TensorList, item: ir.Value) -> Tensor:
    """An element read from ``lst``: a Python number (weak) if all its elements are; a clear
    error if it holds both (which one this item is, Python knows only at run time)."""
    if lst.elements.python:
        values.mark_weak(item)
    elif len(lst.elements.kinds) > 1:
        list_elements.refuse_mixed_read(lst.elements, lst.element.dtype)
    if lst.elements.views:  # a copy of what Python holds as a view of an argument: a write
        base, _, _ = lst.elements.views[0]  # into it is refused, returning it too
        value_info.mark_view(item, base)
        list_elements.copied_view(item, lst.elements)
    return Tensor(item)


def append(lst: TensorList, x: object, what: str = "the tensor list") -> TensorList:
    kind = list_elements.of_item(x, None if lst.element is None else lst.element.dtype)
    item = _item(x, lst.element, f"an element appended to {what}")
    element = item.type if lst.element is None else join(lst.element, item.type)
    if element is None:
        raise errors.StagingTypeError(
            f"an element of type {strong(item.type)} is appended to {what} of {lst.element} "
            f"elements{errors.at()}; the elements of a staged list must share dtype and rank")
    (value,) = tracing.emit("list_append", (lst.materialize(item.type), item.value))
    return _with(value, lst.elements.add(kind))


def _index(i: object) -> Tensor:
    index = as_tensor(i)
    if not (index.ndim == 0 and index.dtype.kind in "iu"):
        raise errors.StagingTypeError(
            f"a tensor list is indexed with {strong(index.type)}{errors.at()}; use an integer "
            "scalar")
    return index


def _require(lst: TensorList, what: str) -> ir.Value:
    if lst.value is None:
        raise errors.StagingValueError(
            f"{what} of a list that is empty at this point of the staged code{errors.at()}")
    return lst.value


def pop(lst: TensorList, *args: object) -> tuple[TensorList, Tensor]:
    value = _require(lst, "pop()")
    operands = (value, *(_index(i).value for i in args))
    new, item = tracing.emit("list_pop", operands)
    return _with(new, lst.elements), _element(lst, item)


def get(lst: TensorList, index: object) -> Tensor | TensorList:
    if isinstance(index, slice):  # a staged loop: its module imports this one
        from autostage.runtime.staging import list_slices
        return list_slices.get_slice(lst, index)
    (item,) = tracing.emit("list_get", (_require(lst, "indexing"), _index(index).value))
    return _element(lst, item)


def set_item(lst: TensorList, index: object, x: object) -> TensorList:
    if lst.value is None:  # Python's IndexError where this runs: it may not (a staged branch
        # taken only after an append; a loop's first trace, before it has seen the append)
        tracing.emit("raise_if", (constant(np.bool_(True)).value,),
                     {"exception": IndexError("list assignment index out of range")})
        return lst
    value = lst.value
    kind = list_elements.of_item(x, lst.element.dtype)
    item = _item(x, lst.element, "an element stored in a tensor list")
    (new,) = tracing.emit("list_set", (value, _index(index).value, item.value))
    return _with(new, lst.elements.add(kind))


def length(lst: TensorList) -> Tensor | int:
    if lst.value is None:
        return 0
    (n,) = tracing.emit("list_length", (lst.value,))
    values.mark_weak(n)  # len() is a Python int
    return Tensor(n)


def stack(lst: TensorList) -> Tensor:
    (result,) = tracing.emit("list_stack", (_require(lst, "np.stack()"),))
    return Tensor(result)
