"""What a staged ``for`` iterates: tensors (axis 0), tensor lists, staged ``range``,
``enumerate``, ``zip`` and ``reversed`` (of a tensor, a tensor list or a range).

A source answers, for a staged ``i64[]`` position ``i``, whether there is an item (``more``) and
what it is (``item``); ``length`` is ``len()`` of it. ``range_``/``enumerate_``/``zip_`` hooks
return ``StagedRange``/``StagedEnumerate``/``StagedZip`` objects (staged, so the ``for_stmt``
operator hands them to the runtime); a range's step must be a Python int (its sign decides the
loop's direction; a staged step could be zero, and Python raises for that before looping).
"""

from __future__ import annotations

import operator

import numpy as np
from autostage.runtime import (
    array_api,
    array_shapes,
    dtype_rules,
    python_numbers,
    tracing,
    value_info,
)
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging import errors, tensor_lists, values
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor, as_tensor
from autostage.runtime.types import strong


def _compare(name: str, a: Tensor, b: object) -> Tensor:
    """``a < b`` / ``a > b`` of integer positions (``a`` i64, ``b`` an int or integer tensor)
    as the ops layer's comparison op, emitted directly: both may be weak (Python ints), and the
    comparison of positions needs no promotion."""
    b = as_tensor(np.int64(b) if isinstance(b, int) else b)
    if b.dtype != a.dtype:
        return a < b if name == "less" else a > b
    (result,) = tracing.emit(name, (a.value, b.value))
    return Tensor(result)


def _dim0(x: Tensor, what: str = "iteration") -> Tensor | int:
    """``len(x)`` (``what`` "len") or the length iteration over ``x`` takes; of a 0-d value,
    Python's TypeError (its rank is known: Python would raise there too, and a user's
    ``except TypeError`` takes it, as astropy's ``try: len(np.mean(d))`` does)."""
    if x.ndim == 0:  # (the Python type as builtins.type_ tells it)
        weak = value_info.is_weak(x.value)
        if not weak and value_info.stands_for_ndarray(x.value):
            raise TypeError("len() of unsized object" if what == "len" else
                            "iteration over a 0-d array")
        kind = dtype_rules.weak_kind(x.dtype).__name__ if weak else (
            f"numpy.{x.dtype.type.__name__}")
        raise TypeError(f"object of type '{kind}' has no len()" if what == "len" else
                        f"'{kind}' object is not iterable")
    return array_shapes.dim(x, 0)


class _TensorSource:
    def __init__(self, x: Tensor):
        self.x = x

    def length(self) -> Tensor | int:
        return _dim0(self.x)

    def more(self, i: Tensor) -> Tensor:
        return _compare("less", i, self.length())

    def item(self, i: Tensor) -> Tensor:
        return self.x[i]


class _ListSource:
    def __init__(self, lst: TensorList):
        self.lst = lst

    def length(self) -> Tensor | int:
        return tensor_lists.length(self.lst)

    def more(self, i: Tensor) -> Tensor:
        return _compare("less", i, self.length())

    def item(self, i: Tensor) -> Tensor:
        return tensor_lists.get(self.lst, i)


def known_empty(src: object) -> bool:
    """Whether ``src`` has no items on any run: it reads a tensor list nothing was appended to
    (so far: a list that is state of an enclosing loop gets its element type in a later trace
    of that loop, and then this loop is staged)."""
    if isinstance(src, _ListSource):
        return src.lst.value is None
    if isinstance(src, StagedEnumerate):
        return known_empty(src.inner)
    if isinstance(src, StagedZip):
        return any(known_empty(inner) for inner in src.inners)
    return False


def _integer(x: object, what: str) -> object:
    """``operator.index(x)`` as ``range``/``enumerate`` take their bounds and start: a staged
    integer becomes a Python int (weak int64), so that items and ``len()`` follow Python's int
    arithmetic, not the NumPy dtype's (a uint8 start's items would wrap)."""
    if isinstance(x, Tensor):
        if x.ndim != 0 or x.dtype.kind not in "iu":
            raise errors.StagingTypeError(
                f"{what} is a {strong(x.type)} tensor{errors.at()}; it must be an integer "
                "scalar (Python: 'object cannot be interpreted as an integer')")
        return python_numbers.int_of(x, what=what)
    return operator.index(x)


class _LoopOnly(Staged):
    """A staged iterable only a staged loop can iterate (its length is known at run time)."""

    __slots__ = ()

    def __iter__(self):
        raise errors.StagingTypeError(
            f"a staged {type(self).__name__.removeprefix('Staged').lower()}() is iterated"
            f"{errors.at()} by code autostage does not stage (a comprehension with several "
            "for clauses or a nested tuple target, a generator expression, list(), ...); "
            "iterate it in a for loop")

    def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
        # (NumPy would otherwise take it apart item by item at trace time, into an object
        # array of staged values: `np.zeros(3) + range(a, b)` returned staged tensors)
        kind = type(self).__name__.removeprefix('Staged').lower()
        raise errors.StagingTypeError(
            f"a staged {kind}() is used as a NumPy array{errors.at()}, which autostage cannot "
            f"stage (NumPy converts it item by item); make the array with NumPy "
            f"(np.arange(start, stop, step) for a range)")


class StagedRange(_LoopOnly):
    """``range(start, stop, step)`` with a staged bound; ``step`` is a Python int."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, *args: object):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        if isinstance(step, Staged):
            raise errors.StagingTypeError(
                f"range() with a staged step{errors.at()} is not supported; use a Python int "
                "step (its sign decides the loop's direction)")
        if operator.index(step) == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop = _integer(start, "range() start"), _integer(stop, "range() stop")
        self.step = operator.index(step)

    def length(self) -> Tensor:
        span = self.stop - self.start
        n = (span + (self.step - 1)) // self.step if self.step > 0 else \
            (span + (self.step + 1)) // self.step
        return np.maximum(n, 0)

    def more(self, i: Tensor) -> Tensor:
        value = self.item(i)
        return _compare("less" if self.step > 0 else "greater", value, self.stop)

    def item(self, i: Tensor) -> Tensor:
        return self.start + i * self.step if self.step != 1 else self.start + i

    def __repr__(self) -> str:
        return f"<staged range({self.start}, {self.stop}, {self.step})>"

    def as_array(self) -> Tensor:
        """The array of its items, as NumPy reads a range operand (``w + range(n)``)."""
        return array_shapes.arange(self.start, self.stop, self.step)

    def staged_contains(self, value: object) -> object:
        """``v in range(...)`` of an integer ``v``: within the bounds, on a step (a Python
        bool). Converted code asks this (``ag__.in_``): Python's ``in`` would ask
        ``__contains__`` for a bool at once."""
        if not (isinstance(value, int) or isinstance(value, Tensor) and value.ndim == 0
                and value.dtype.kind in "iub"):
            raise errors.StagingTypeError(
                f"`in` of a range with a staged bound{errors.at()} is staged for integers only "
                "(Python compares other values with each item)")
        above, below = (self.start, self.stop) if self.step > 0 else (self.stop, self.start)
        inside = (value >= above) & (value < below) if self.step > 0 else (
            (value > above) & (value <= below))
        if abs(self.step) != 1:
            inside = inside & ((value - self.start) % self.step == 0)
        return values.as_python_number(inside)

    def __getitem__(self, index: object) -> object:
        """``range(...)[i]`` of an integer ``i`` (negative: from the end), Python's IndexError
        out of range; a slice is refused."""
        if isinstance(index, slice) or not (isinstance(index, int) or isinstance(
                index, Tensor) and index.ndim == 0 and index.dtype.kind in "iu"):
            raise errors.StagingTypeError(
                f"a range with a staged bound indexed by a {type(index).__name__}{errors.at()}"
                " is not staged; index it by an int, or make it an array (np.arange)")
        n = values.as_python_number(self.length())
        negative = index < 0
        i = array_api.where(negative, index + n, index) if isinstance(negative, Tensor) else (
            index + n if negative else index)
        python_numbers._raise_if((i < 0) | (i >= n),
                                 IndexError("range object index out of range"))
        return values.as_python_number(self.item(i))

    def __eq__(self, other: object) -> object:
        """Python's ``range == range`` (the same items: as long, and, when not empty, the same
        start and, when longer than one, the same step); an array compares item by item, as
        NumPy reads a range operand; any other value is not equal."""
        if isinstance(other, Tensor | np.ndarray):
            return self.as_array() == other
        if not isinstance(other, range | StagedRange):
            return False
        start, step = (other.start, other.step)
        n, m = self.length(), (other.length() if isinstance(other, StagedRange) else len(other))
        same = (n == m) & ((n == 0) | (self.start == start) & ((n == 1) | (self.step == step)))
        return values.as_python_number(same)

    def __ne__(self, other: object) -> object:
        if isinstance(other, Tensor | np.ndarray):
            return self.as_array() != other
        return values.as_python_number(np.logical_not(self.__eq__(other)))

    __contains__ = staged_contains


def _range_operator(name: str):
    def method(self: StagedRange, other: object) -> object:
        return getattr(operator, name)(self.as_array(), other)

    def reflected(self: StagedRange, other: object) -> object:
        return getattr(operator, name)(other, self.as_array())
    return method, reflected


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift", "lt", "le", "gt", "ge"):
    _method, _reflected = _range_operator(_name)
    setattr(StagedRange, f"__{_name}__", _method)
    if _name not in ("lt", "le", "gt", "ge"):  # (Python reflects those itself)
        setattr(StagedRange, f"__r{_name}__", _reflected)
StagedRange.__hash__ = object.__hash__  # (its ``==`` is staged; internally, identity)


class StagedEnumerate(_LoopOnly):
    """``enumerate(iterable, start)`` of a staged iterable: items are ``(start + i, item)``."""

    __slots__ = ("inner", "start")

    def __init__(self, iterable: object, start: object = 0):
        self.inner, self.start = source(iterable), _integer(start, "enumerate() start")

    def length(self) -> Tensor | int:
        return self.inner.length()

    def more(self, i: Tensor) -> Tensor:
        return self.inner.more(i)

    def item(self, i: Tensor) -> tuple:
        return (i + self.start if not (isinstance(self.start, int) and self.start == 0) else i,
                self.inner.item(i))


class StagedZip(_LoopOnly):
    """``zip(a, b, ...)`` with a staged iterable: stops at the shortest, as Python does."""

    __slots__ = ("inners", "strict")

    def __init__(self, *iterables: object, strict: bool = False):
        self.inners = [source(x) for x in iterables]
        self.strict = bool(strict)

    def length(self) -> Tensor | int:
        result = self.inners[0].length()
        for inner in self.inners[1:]:
            result = np.minimum(result, inner.length())
        return result

    def more(self, i: Tensor) -> Tensor:
        result = self.inners[0].more(i)
        for inner in self.inners[1:]:
            result = result & inner.more(i)
        return result

    def item(self, i: Tensor) -> tuple:
        return tuple(inner.item(i) for inner in self.inners)


class StagedReversed(_LoopOnly):
    """``reversed(x)`` of a staged tensor, tensor list or range: item ``i`` is ``x``'s item
    ``len - 1 - i``. Like Python's reverse iterator it has no ``len()`` and only a loop
    (converted code) iterates it."""

    __slots__ = ("inner",)

    def __init__(self, iterable: object):
        if isinstance(iterable, (StagedEnumerate, StagedZip, StagedReversed)):
            name = {StagedEnumerate: "enumerate", StagedZip: "zip",
                    StagedReversed: "list_reverseiterator"}[type(iterable)]
            raise TypeError(f"'{name}' object is not reversible")
        self.inner = source(iterable)

    def length(self) -> Tensor | int:
        return self.inner.length()

    def more(self, i: Tensor) -> Tensor:
        return _compare("less", i, self.length())

    def item(self, i: Tensor) -> object:
        return self.inner.item(self.length() - 1 - i)



def iterated_lists(src: object) -> list[TensorList]:
    """The tensor lists a staged ``for`` over ``src`` reads its items from."""
    if isinstance(src, _ListSource):
        return [src.lst]
    if isinstance(src, (StagedEnumerate, StagedReversed)):
        return iterated_lists(src.inner)
    if isinstance(src, StagedZip):
        return [lst for inner in src.inners for lst in iterated_lists(inner)]
    return []


def source(iterable: object) -> object:
    """The source a staged ``for`` reads ``iterable`` from."""
    if isinstance(iterable, Tensor):
        return _TensorSource(iterable)
    if isinstance(iterable, TensorList):
        return _ListSource(iterable)
    if isinstance(iterable, (StagedRange, StagedEnumerate, StagedZip, StagedReversed)):
        return iterable
    if isinstance(iterable, values.MaybeUnbound):
        raise iterable.error()
    if isinstance(iterable, range):
        return StagedRange(iterable.start, iterable.stop, iterable.step)
    if isinstance(iterable, (list, tuple)):
        return _ListSource(tensor_lists.from_python(list(iterable), "zip argument"))
    if type(iterable) is np.ndarray and iterable.ndim > 0:  # (a constant: `zip(x, np.array(
        return _TensorSource(array_api.as_tensor(iterable))  # [1.0, 2.0]))`, its rows)
    raise errors.StagingTypeError(
        f"a staged loop cannot iterate a {type(iterable).__name__}{errors.at()}; iterate "
        "tensors, tensor lists, range(), enumerate() or zip() of them")


def _zip_hook(*iterables: object, strict: bool = False) -> StagedZip:
    return StagedZip(*iterables, strict=strict)


def strict_zip_errors(z: StagedZip) -> list[tuple[object, str]]:
    """For ``zip(..., strict=True)``: (condition, message) of each ``ValueError`` Python raises
    when the shortest argument is exhausted (the conditions exclude each other)."""
    lengths = [inner.length() for inner in z.inners]
    shortest = lengths[0]
    for n in lengths[1:]:
        shortest = np.minimum(shortest, n)
    cases = []

    def plural(i: int) -> str:
        return f" {i}" if i == 1 else f"s 1-{i}"

    longer_before = True  # arguments 1..i-1 are all longer than the shortest
    for i, n in enumerate(lengths[1:], start=1):
        longer_before = longer_before & (lengths[i - 1] > shortest)
        cases.append((longer_before & (n == shortest),
                      f"zip() argument {i + 1} is shorter than argument{plural(i)}"))
    equal_before = lengths[0] == shortest  # argument 1 is exhausted first
    for j, n in enumerate(lengths[1:], start=1):
        cases.append((equal_before & (n > shortest),
                      f"zip() argument {j + 1} is longer than argument{plural(j)}"))
        equal_before = equal_before & (n == shortest)
    return cases


register_operator_hook("range_", StagedRange)
register_operator_hook("enumerate_", StagedEnumerate)
register_operator_hook("zip_", _zip_hook)
register_operator_hook("reversed_", StagedReversed)
