"""Staging hooks of the builtins and subscripts on staged values: ``len``, ``list``, ``int``,
``float``, ``bool``, ``abs``, ``min``, ``max``, ``sum``, ``isinstance``, ``type``,
``list.append``/``pop``, and ``x[i]`` / ``x[i] = v`` of tensor lists (of tensors: the ops layer's
hooks, which these wrap).

Each keeps the builtin's meaning on the staged value: ``len`` of a tensor is the size of axis 0
(a Python int when known at trace time); ``int``/``float`` cast a 0-d tensor to i64/f64;
``min(a, b)`` is ``b if b < a else a`` elementwise (Python's rule, so NaN handling matches) and
``max`` likewise; ``sum(x, start)`` adds along axis 0 keeping x's dtype, as Python's repeated
``+`` does (bools sum to i64). Tensor arithmetic itself is the ops layer's (``Tensor`` operators
and NumPy dispatch).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numpy as np
from autostage.runtime import (  # noqa: F401 - hooks
    array_api,
    array_identity,
    dtype_rules,
    ndarray_attributes,
    python_math,
    python_numbers,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import Staged, Standin, register_operator_hook
from autostage.runtime.staging import (
    errors,
    iteration,
    numpy_lists,
    python_paths,
    tensor_lists,
    values,
)
from autostage.runtime.staging.control_flow import predicate
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor


def _check(x: object) -> object:
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    return x


def _scalar(x: object, name: str) -> Tensor:
    _check(x)
    if isinstance(x, Tensor) and x.ndim != 0:  # NumPy 2.4 refuses any array of rank >= 1
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
    if not isinstance(x, Tensor):
        raise errors.StagingTypeError(
            f"{name}() of a staged {getattr(x, 'type', type(x).__name__)}{errors.at()} is not "
            "supported: it needs a 0-d tensor")
    return x


def len_(x: object) -> object:
    _check(x)
    if isinstance(x, Tensor):
        return iteration._dim0(x, "len")
    if isinstance(x, TensorList):
        return tensor_lists.length(x)
    if isinstance(x, iteration.StagedReversed):  # Python's reverse iterators have no len()
        raise TypeError("object of type 'list_reverseiterator' has no len()")
    if hasattr(x, "length") and isinstance(x, Staged):  # (a Python int, as len() gives)
        return values.as_python_number(x.length())
    raise errors.StagingTypeError(f"len() of a staged {type(x).__name__}{errors.at()}")


def list_(*args: object, **kwargs: object) -> object:
    """``list(lst)`` of a list built in staged code: a new list of its items (``lst[:]``);
    anything else as Python's ``list``."""
    if len(args) == 1 and not kwargs and isinstance(args[0], TensorList):
        return tensor_lists.get(args[0], slice(None))
    return list(*args, **kwargs)


def int_(x: object, *args: object) -> Tensor:
    """``int(x)``: a Python int (weak), with Python's errors for nan, inf and out of range."""
    if args:
        raise errors.StagingTypeError(f"int() with a base of staged values{errors.at()}")
    return python_numbers.int_of(_scalar(x, "int"))


def float_(x: object) -> Tensor:
    """``float(x)``: a Python float (weak: ``float(t) * f32_array`` stays float32)."""
    return python_numbers.float_of(_scalar(x, "float"))


def complex_(x: object, *args: object) -> Tensor:
    """``complex(x)``: a Python complex (weak complex128) of a 0-d real or complex value."""
    if args:
        raise errors.StagingTypeError(f"complex() of two staged values{errors.at()} is not "
                                      "supported: write x + y * 1j")
    return python_numbers.complex_of(_scalar(x, "complex"))


def bool_(x: object) -> Tensor:
    """``bool(x)``: a Python bool (weak), the truth value of a 0-d value or a tensor list."""
    result = predicate(_check(x), "the argument of bool()")
    if not value_info.is_weak(result.value):
        result = result.copy() if result is x else result  # x itself stays a NumPy value
        value_info.mark_weak(result.value)
    return result


def abs_(x: object) -> Tensor:
    return abs(_check(x))


def _pick(better, args: tuple, kwargs: dict, name: str) -> object:
    if kwargs:
        raise errors.StagingTypeError(f"{name}() with {', '.join(kwargs)} on staged values"
                                      f"{errors.at()} is not supported")
    for a in args:
        _check(a)
    if len(args) == 1 and isinstance(args[0], tuple | list):  # min(x.shape): of its items
        if not args[0]:
            raise ValueError(f"{name}() iterable argument is empty")
        return _pick(better, tuple(args[0]), kwargs, name) if len(args[0]) > 1 else args[0][0]
    if len(args) == 1 and isinstance(args[0], TensorList):
        return numpy_lists.pick(args[0], name)
    if len(args) == 1:
        return _pick_item(args[0], name)
    if any(isinstance(a, Tensor) and a.ndim for a in args):
        raise errors.StagingTypeError(
            f"{name}() of arrays{errors.at()}: Python compares the arguments themselves, and "
            "an array comparison has no single truth value (Python raises ValueError unless "
            f"the arrays hold one item); np.{'maximum' if name == 'max' else 'minimum'}(a, b) "
            "gives the greater (lesser) item at each position")
    if any(isinstance(a, tuple | list) for a in args):  # (Python compares them item by item)
        raise errors.StagingTypeError(
            f"{name}() of tuples or lists holding staged values{errors.at()} is not staged "
            "(which one wins, compared item by item, is known only at run time); compare the "
            f"items themselves (e.g. the index of the {name} of the values: np.arg{name})")
    # max/min of Python numbers of one kind is a Python number of that kind (max(n, 1) is an
    # int). Of mixed kinds Python returns whichever wins, with its own type (max(n, 1.5) is an
    # int or a float, known only at run time): refused, as one staged value has one dtype.
    kinds = {python_numbers.kind(a) for a in args}
    if None not in kinds and len(kinds) > 1:
        _refuse_mixed_kinds(name, kinds)
    # The same holds between a Python number and a NumPy value (max(loss, 0.0) is an np.float64
    # or a Python float) and between NumPy values of different dtypes.
    types = {_type_name(a) for a in args}
    flagged = any(isinstance(a, Tensor) and (value_info.python_path(a.value) or
                                             value_info.other_path(a.value)) for a in args)
    if None in kinds and (len(types) > 1 or flagged):
        if all(isinstance(a, Tensor) and a.ndim == 0 or python_numbers.kind(a) is not None
               for a in args):  # Python's winner, flagged where it is the Python number
            result = args[0]
            for b in args[1:]:
                result = python_paths.choose(better, result, b, name)
                if result is None:
                    break
            else:
                return result
        if len(types) == 1:
            raise errors.StagingTypeError(
                f"{name}() of a value that is Python numbers of two kinds on different paths"
                f"{errors.at()} (e.g. an int before a staged loop, a float in it): which type "
                "wins depends on the path and the values; give it one type on every path")
        _refuse_mixed_types(name, sorted(types))
    result = functools.reduce(_choose(better), args)
    if isinstance(result, Tensor) and len(kinds) == 1 and None not in kinds:
        value_info.mark_weak(result.value)
    return result


_KIND_ORDER = (bool, int, float, complex)


def _choose(better: object) -> object:
    # array_api.where on staged values: np.where would make a 0-d ndarray (ndarray_results)
    from autostage.runtime import array_api  # a cycle at import time

    def pick(a: object, b: object) -> object:
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            result = array_api.where(better(b, a), b, a)
            if all(isinstance(x, Tensor) and x.ndim == 0 and value_info.stands_for_ndarray(
                    x.value) for x in (a, b)):
                value_info.mark_array(result.value)  # (max of 0-d ndarrays is one of them)
            return result
        return np.where(better(b, a), b, a)
    return pick


def _refuse_mixed_kinds(name: str, kinds: set) -> None:
    ordered = sorted(kinds, key=_KIND_ORDER.index)
    widest = ordered[-1].__name__
    listed = " and a ".join(f"Python {k.__name__}" for k in ordered)
    raise errors.StagingTypeError(
        f"{name}() of a {listed}{errors.at()}: Python returns whichever argument wins, with "
        f"its own type ({' or '.join(k.__name__ for k in ordered)}, depending on the "
        "values), but a staged value has one type; convert the arguments to one type, e.g. "
        f"{name}({widest}(n), ...)")


def _type_name(a: object) -> str:
    kind = python_numbers.kind(a)
    if kind is not None:
        return f"Python {kind.__name__}"
    return f"NumPy {np.result_type(a.dtype if isinstance(a, Tensor) else a).name}"


def _refuse_mixed_types(name: str, types: list[str]) -> None:
    raise errors.StagingTypeError(
        f"{name}() of a {' and a '.join(types)}{errors.at()}: Python returns whichever argument "
        "wins, with its own type (which one depends on the values), but a staged value has one "
        f"type; give the arguments one type, e.g. np.{'maximum' if name == 'max' else 'minimum'}"
        "(a, b) for a NumPy value, or float(a) for a Python float")


def _pick_item(x: object, name: str) -> Tensor:
    """``min(x)``/``max(x)`` of one staged array: of its items, as Python's loop over them
    picks (NumPy's ``x.max()`` differs: a nan anywhere wins, and ``-0.0`` may beat ``0.0``)."""
    if not isinstance(x, Tensor) or x.ndim == 0:
        raise errors.StagingTypeError(f"{name}() of one staged {_named(x)}"
                                      f"{errors.at()}: pass a tensor of rank >= 1")
    if x.ndim > 1 or x.dtype.kind == "c":
        what, why = (f"rank {x.ndim}", "rows, whose comparison has no single truth value") if (
            x.ndim > 1) else ("complex numbers", "complex numbers, which do not order")
        raise errors.StagingTypeError(
            f"{name}() of an array of {what}{errors.at()}: Python compares its items ({why}); "
            f"np.{name}(x, axis=0) gives NumPy's {name} along the first axis")
    python_numbers._raise_if(x.shape[0] == 0, numpy_lists.empty_sequence_error(name))
    return numpy_lists.python_pick(x, name)


def min_(*args: object, **kwargs: object) -> object:
    return _pick(operator.lt, args, kwargs, "min")


def max_(*args: object, **kwargs: object) -> object:
    return _pick(operator.gt, args, kwargs, "max")


def sum_(x: object, start: object = 0) -> object:
    _check(x)
    if isinstance(x, TensorList):
        return _sum_list(x, start)
    if not isinstance(x, Tensor):
        raise errors.StagingTypeError(f"sum() of a staged {_named(x)}{errors.at()} is not "
                                      "supported; add in a for loop, or sum a NumPy array")
    return _sum_tensor(x, start)


def _named(x: object) -> str:
    """A staged value as messages name it: ``range()`` (``enumerate()``...) for the iterables only
    a staged loop iterates (not their class), its type for others."""
    if isinstance(x, iteration._LoopOnly):
        return f"{type(x).__name__.removeprefix('Staged').lower()}()"
    return str(getattr(x, "type", type(x).__name__))


def any_(x: object) -> object:
    return _truth_of_items(x, "any")


def all_(x: object) -> object:
    return _truth_of_items(x, "all")


def _truth_of_items(x: object, name: str) -> object:
    """``any(x)``/``all(x)`` of a staged 1-d array: Python tests each item's truth (nonzero; a
    NaN is true), which is ``np.any``/``np.all`` of the array (an empty one too), as a Python
    bool. A 0-d array is not iterable (Python's TypeError); the rows of an n-d array have no
    single truth value (Python raises ValueError unless they hold one item): refused."""
    _check(x)
    if not isinstance(x, Tensor):
        return unsupported(f"{name}_", x)
    iteration._dim0(x)  # (Python's error for a 0-d value)
    if x.ndim > 1:
        raise errors.StagingTypeError(
            f"{name}() of an array of rank {x.ndim}{errors.at()}: Python tests the truth of "
            f"each row, which has no single truth value; np.{name}(x) tests every item")
    result = array_api.reduce(name, x)
    value_info.mark_weak(result.value)
    return result


def _sum_tensor(x: Tensor, start: object) -> object:
    """``sum(x)`` of a tensor: Python adds its rows one by one, ``start + x[0] + x[1] + ...``,
    not pairwise as ``np.sum`` does (whose float result differs in the last bits). The first
    step is staged as written, which gives the result dtype (``0 + np.True_`` is an int64) and
    shape; the rest is ``np.cumsum`` along axis 0 from it, sequential on every target. An empty
    array gives ``start`` itself (at run time: a clear ValueError, the staged result has a
    dtype)."""
    from autostage.runtime import array_shapes
    n = iteration._dim0(x)  # Python's error for a 0-d array
    if isinstance(n, int) and n == 0:
        return start
    if not isinstance(n, int):
        shown = "" if isinstance(start, Tensor) else f" ({start!r})"
        python_numbers._raise_if(n == 0, ValueError(
            f"sum() of an empty staged array or list{errors.at()}: Python returns the start "
            f"value{shown}, which the staged result (an array element's type) cannot be"))
    if np.ndim(start) if not isinstance(start, Tensor) else start.ndim:
        raise errors.StagingTypeError(
            f"sum() of a staged array{errors.at()} with an array as start is not supported: "
            "add it to the sum instead")
    first = start + array_shapes.getitem(x, 0)
    if isinstance(n, int) and n == 1:
        return first
    rest = array_shapes.getitem(x, slice(1, None))
    rows = np.concatenate([first[np.newaxis], rest.astype(first.dtype)], axis=0)
    return np.cumsum(rows, axis=0, dtype=first.dtype)[-1]


def _sum_list(lst: TensorList, start: object) -> object:
    """``sum(lst)`` of a tensor list: Python adds the elements one by one, left to right, which
    ``np.cumsum`` along the stack does too (exact, not NumPy's pairwise sum). Python's ``0`` for
    an empty list is an int whatever the elements are: a ValueError at run time instead (the
    staged result has the elements' type). Python ints (weak) must not leave int64."""
    from autostage.runtime import array_api
    if lst.value is None:
        return start
    element = lst.element
    (value,) = tracing.emit("list_stack", (lst.value,), {"empty_ok": True})
    stacked = Tensor(value)
    if not (type(start) is int and start == 0):  # Python's order: start + e0 + e1 + ...
        return _sum_tensor(stacked, start)
    python_numbers._raise_if(tensor_lists.length(lst) == 0, ValueError(
        f"sum() of an empty list built in staged code{errors.at()}: Python returns its start, "
        "the int 0, which the staged result (of the elements' type) cannot be; give sum() a "
        f"start of that type (`sum(lst, np.{element.dtype.name}(0))`) or check the length"))
    dtype = np.int64 if element.dtype == np.bool_ else element.dtype
    total = np.cumsum(stacked, axis=0, dtype=dtype)[-1]
    if element.ndim == 0 and list_elements_weak(lst):
        if dtype == np.int64:
            exact = np.cumsum(array_api.astype(stacked, np.float64), axis=0)[-1]
            python_numbers._raise_if(np.abs(exact) >= 2.0**63, OverflowError(
                f"sum() of Python ints in a staged list{errors.at()} does not fit in int64: "
                "staged Python ints are int64"))
        total = array_api.copy(total)
        value_info.mark_weak(total.value)
    return total if isinstance(start, int) and start == 0 else start + total


def list_elements_weak(lst: TensorList) -> bool:
    """Whether every element put in ``lst`` is a Python number (``list_elements``)."""
    from autostage.runtime.staging import list_elements
    try:
        return list_elements.returned_as_python(lst.value, lst.element.dtype, "sum")
    except errors.StagingTypeError:  # Python numbers and NumPy values: a NumPy result
        return False


def method_call(method: Callable) -> Callable:
    """``x.name(...)`` of a staged value: ``method``, unless ``x`` stands for a Python number,
    whose type has no such method (``n.item()`` of ``n = x.shape[0]``): Python's AttributeError,
    where it is a Python number (on some paths only: raised there, ``value_info``)."""
    self = method.__self__
    if not isinstance(self, Tensor) or self.ndim:
        return method
    ndarray_attributes.raise_if_python_number_lacks(self, _tensor_name(method.__func__))
    return method


@functools.cache
def _tensor_name(function: Callable) -> str:
    """The name ``Tensor`` has ``function`` under (``item``, whose function is ``_item``)."""
    return next((n for n in dir(Tensor) if getattr(Tensor, n, None) is function),
                function.__name__)


def isinstance_(x: object, classes: object) -> bool:
    """``isinstance`` of a staged value: of the type it stands for (``type_``): a staged
    ``x.shape[0]`` is an ``int``, ``x.sum()`` an ``np.float64`` (so a ``float`` too), an array
    an ``np.ndarray``. A variable None (or unassigned) on some run-time paths only has no type
    while tracing: its ``StagingUnboundError`` (``isinstance`` said False)."""
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    if isinstance(x, Tensor | TensorList):
        return issubclass(type_(x), classes)
    return isinstance(x, classes)


def is_(a: object, b: object) -> object:
    """``a is b`` with a staged side (``ag__.is_``): against a bool singleton (``True``,
    ``np.False_``...), whether the value stands for a bool of that very type (``type_``) holding
    it, a staged Python bool; Python's identity of the objects otherwise. A variable that is
    None (or unassigned) on some run-time paths only (``res = None`` before a staged loop that
    may set it) has no answer while tracing: its ``StagingUnboundError`` (``is`` said False);
    an array's older reference, from before a write through another (``y = x; y[0] = 5``, then
    ``y is x``), the StagingError of ``array_identity`` (``is`` said False)."""
    for side in (a, b):
        if isinstance(side, values.MaybeUnbound):
            raise side.error()
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a is not b:
        for side in (a, b):  # (`y = x; y[0] = 5; y is x`: one object in Python, two values)
            array_identity.check_identity(side.value)
    staged, other = (a, b) if isinstance(a, Tensor) else (b, a)
    if isinstance(staged, Tensor) and type(other) in (bool, np.bool_):
        if type_(staged) is not type(other):
            return False
        result = array_api.ufunc("equal", staged, other)
        value_info.mark_weak(result.value)
        return result
    return a is b


def unsupported(name: str, *args: object, **kwargs: object) -> object:
    """The hook of an operator with a staged argument and no staging rule (``sorted(x)``)."""
    what = f"{name.rstrip('_')}()" if name.endswith("_") else f"the operator {name!r}"
    raise errors.StagingTypeError(
        f"{what} of a staged value{errors.at()} is not supported: it needs the values while "
        "tracing; use NumPy's functions on arrays (np.sort, np.flip, np.any, ...) instead")


def _getitem(previous):
    def getitem(target: object, key: object) -> object:
        if isinstance(target, TensorList):
            return tensor_lists.get(target, key)
        return previous(_check(target), _check(key))
    return getitem


def _setitem(previous):
    def setitem(target: object, key: object, value: object, only_name: bool = False
                ) -> object:
        if isinstance(target, TensorList):
            tensor_lists.before_change(target)
            return tensor_lists.set_item(target, key, value)
        return previous(_check(target), _check(key), value, only_name)
    return setitem


def list_append(lst: object, x: object) -> object:
    if isinstance(lst, TensorList):
        tensor_lists.before_change(lst)
        return tensor_lists.append(lst, x)
    raise errors.StagingTypeError(f"append() on a staged {type(lst).__name__}{errors.at()}")


def callable_(x: object) -> bool:
    """``callable`` of a staged value: False (an array or a number is not callable); a variable
    None (or unassigned) on some run-time paths only has no answer while tracing: its
    ``StagingUnboundError`` (``callable`` of its stand-in said True)."""
    if isinstance(x, values.MaybeUnbound):
        raise x.error()
    return callable(x) if not isinstance(x, Tensor | TensorList) else False


def list_pop(lst: object, *args: object) -> tuple:
    if isinstance(lst, TensorList):
        tensor_lists.before_change(lst)
        return tensor_lists.pop(lst, *args)
    raise errors.StagingTypeError(f"pop() on a staged {type(lst).__name__}{errors.at()}")


def list_reverse(lst: object) -> object:
    """``lst.reverse()`` of a tensor list: the list read backwards (``lst[::-1]``), bound to the
    name it was reversed through (``path.reverse()`` after a staged loop appended to ``path``)."""
    if isinstance(lst, TensorList):
        tensor_lists.before_change(lst)
        return tensor_lists.get(lst, slice(None, None, -1))
    raise errors.StagingTypeError(f"reverse() on a staged {type(lst).__name__}{errors.at()}")


for _name, _hook in (("len_", len_), ("list_", list_), ("int_", int_), ("float_", float_),
                     ("bool_", bool_), ("complex_", complex_),
                     ("abs_", abs_), ("min_", min_), ("max_", max_), ("sum_", sum_),
                     ("any_", any_), ("all_", all_), ("callable_", callable_),
                     ("isinstance_", isinstance_), ("is_", is_), ("list_append", list_append),
                     ("unsupported", unsupported), ("method_call", method_call),
                     ("list_pop", list_pop), ("list_reverse", list_reverse)):
    register_operator_hook(_name, _hook)
def _setitem_fallback(target: object, key: object, value: object, only_name: bool = False
                      ) -> object:
    target[key] = value
    return target


# Subscripts of tensors are the ops layer's (registered when runtime.tensor is imported, which
# happened above); tensor lists are handled here first.
for _name, _wrap in (("getitem", _getitem), ("setitem", _setitem)):
    _previous = register_operator_hook(_name, None)
    register_operator_hook(_name, _wrap(_previous or operator.getitem if _name == "getitem"
                                        else _previous or _setitem_fallback))


def type_(x: object) -> type:
    """``type(x)`` of a staged value: the type of what it stands for in Python.

    A tensor of rank >= 1 is an ``np.ndarray``; a 0-d tensor is the Python scalar type if it is
    weak (``x.shape[0]``: an int), ``np.ndarray`` if the caller passed a 0-d array, else the
    NumPy scalar type of its dtype (what NumPy returns for 0-d results: ``x[0]``, ``x.sum()``).
    A tensor list is a ``list``; a stand-in object is its user object's type.
    """
    _check(x)
    if isinstance(x, Tensor):
        if x.ndim > 0:
            return np.ndarray
        if values.is_weak(x):
            return type(x.dtype.type(0).item())
        value_info.raise_where_python(x.value, errors.StagingTypeError(
            f"type() or isinstance(){errors.at()} of a value that is a Python number on this "
            f"call's path and {x.dtype.type.__name__} on others: staged code answers for the "
            "NumPy value; give it one type on every path"))
        if value_info.stands_for_ndarray(x.value):
            return np.ndarray
        return x.dtype.type
    if isinstance(x, TensorList):
        return list
    if isinstance(x, Standin):
        return x.__class__
    raise errors.StagingTypeError(f"type() of a staged {type(x).__name__}{errors.at()} is not "
                                  "supported")


register_operator_hook("type_", type_)
