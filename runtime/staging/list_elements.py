"""What the elements of a tensor list stand for: Python numbers or NumPy values.

A staged list keeps its elements in one dtype, but a Python list of ``x.shape[0]``, range
indices or ``int(t)`` holds Python ints, and one of ``x[i]`` holds NumPy scalars. Each list value
of a trace records which kinds of elements were put into it (``Elements``, kept by
``value_info`` per IR list value, joined through appends, stores, branches and loop slots), so
that a returned list comes back with the element type Python gives it, and reading an element
of a list of Python numbers gives a Python number (a weak value). A list value with nothing
recorded (made by code that does not track it) counts as holding NumPy values, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from autostage.runtime import dtype_rules, ir, value_info
from autostage.runtime.staging import errors, values
from autostage.runtime.tensor import Tensor

# Kinds of elements: Python numbers of the kind of the list's dtype (ints in an i64 list),
# NumPy values, and Python numbers of another kind (an int in an f64 list: Python keeps the int).
PYTHON, NUMPY, OTHER = "python", "numpy", "other"


@dataclass(frozen=True, slots=True)
class Elements:
    """The kinds of elements a list value may hold, each with the first line that put one in."""

    kinds: tuple = ()  # of (kind, ir.Location | None), in the order they first appeared
    name: str | None = None  # the variable holding it, where known (loop and if state)
    # (argument value, argument name, ir.Location | None) of items that are an argument or a
    # view of one: kept as rows of one staged array, they are copies where Python's are views
    views: tuple = ()

    def add(self, other: Elements) -> Elements:
        known = {kind for kind, _ in self.kinds}
        new = tuple(item for item in other.kinds if item[0] not in known)
        bases = {id(base) for base, _, _ in self.views}
        views = tuple(v for v in other.views if id(v[0]) not in bases)
        if not (new or views):
            return self
        return Elements(self.kinds + new, self.name or other.name, self.views + views)

    def named(self, name: str) -> Elements:
        return self if name.startswith(("retval_", "do_return")) else Elements(
            self.kinds, name, self.views)

    @property
    def python(self) -> bool:
        """Every element is a Python number of the list dtype's kind (and there is one)."""
        return len(self.kinds) == 1 and self.kinds[0][0] == PYTHON


EMPTY = Elements()
_UNKNOWN = Elements(((NUMPY, None),))


def of_value(value: ir.Value | None) -> Elements:
    """What the list value ``value`` holds (None: a pending list, empty)."""
    if value is None:
        return EMPTY
    recorded = value_info.list_elements(value)
    return _UNKNOWN if recorded is None else recorded


def record(value: ir.Value, elements: Elements) -> None:
    value_info.set_list_elements(value, elements)


def of_item(x: object, dtype: np.dtype | None) -> Elements:
    """The kind of ``x`` put into a list of ``dtype`` elements (None: its first element)."""
    if isinstance(x, Tensor):
        kind = PYTHON if values.is_weak(x) else NUMPY
        argument = value_info.aliased_argument(x.value) if x.ndim else None
        if argument is not None:  # (an argument, or a view of one: Python's item shares it)
            return Elements(((kind, errors.location()),),
                            views=((value_info.view_base(x.value), argument, errors.location()),))
        if value_info.python_path(x.value) or value_info.other_path(x.value):
            # a Python number on some paths only (``value_info``): the list may hold both
            other = PYTHON if value_info.python_path(x.value) else OTHER
            return Elements(((other, errors.location()), (NUMPY, errors.location())))
    elif isinstance(x, np.generic) or not values.is_number(x):
        kind = NUMPY
    else:
        kind = PYTHON if dtype is None or values.default_dtype(x) == dtype else OTHER
    return Elements(((kind, errors.location()),))


def refuse_mixed_read(elements: Elements, dtype: np.dtype) -> None:
    """Reading an item of a list holding Python numbers and NumPy values: refused (Python's item
    has the type of what was put in at its index, known only at run time)."""
    what = "a list" if elements.name is None else f"the list {elements.name!r}"
    raise errors.StagingTypeError(
        f"an item of {what} is read{errors.at()}, but the list holds Python numbers and NumPy "
        f"values (put in at {', '.join(str(loc) for _, loc in elements.kinds)}); which one an "
        f"item is depends on the run, and staged code gives it one type: put in elements of "
        f"one type, e.g. {dtype_rules.weak_kind(dtype).__name__}(v) or np.{dtype}(v) for each")


def returned_as_python(value: ir.Value, dtype: np.dtype, function: str) -> bool:
    """Whether a list of ``dtype`` elements returned by ``function`` comes back as a list of
    Python numbers (False: NumPy values, as before).

    Raises:
      StagingTypeError: it holds Python numbers and NumPy values (or Python numbers of another
        kind than its dtype's): Python's list would hold each with its own type.
    """
    elements = of_value(value)
    if len(elements.kinds) <= 1 and (not elements.kinds or elements.kinds[0][0] != OTHER):
        return elements.python
    python = dtype_rules.weak_kind(dtype).__name__
    where = {kind: errors.at(loc) for kind, loc in elements.kinds}
    parts = []
    if PYTHON in where:
        parts.append(f"Python {python}s (put in{where[PYTHON]})")
    if OTHER in where:
        parts.append(f"Python numbers, which staged {dtype} values cannot stand for (put in"
                     f"{where[OTHER]})")
    if NUMPY in where:
        parts.append(f"NumPy values (put in{where[NUMPY]})")
    what = "a list" if elements.name is None else f"the list {elements.name!r}"
    raise errors.StagingTypeError(
        f"{what} returned by {function}() holds {' and '.join(parts)}; staged, a list keeps its "
        f"elements in one dtype ({dtype}), so it cannot give each back with its own type as "
        "Python does: put in elements of one type, e.g. "
        + (f"{python}(v) or " if OTHER not in where else "") + f"np.{dtype}(v) for each")


def copied_view(item: ir.Value, elements: Elements) -> None:
    """Records that ``item``, read from a list of arguments or their views, is a copy where
    Python's item is the argument's memory (``value_info.copied_item``)."""
    value_info.mark_copied_item(item, _copies(elements))


def refuse_copied_views(function: str, leaf: object) -> None:
    """Raises the error for returning a list of arguments or their views built in staged code,
    or a copied item (``copied_view``): staged code holds copies where Python's share memory."""
    if isinstance(leaf, Tensor):
        what = value_info.copied_item(leaf.value)
        if what is not None:
            raise errors.StagingError(f"{function} returns {what}")
        return
    elements = of_value(leaf.value)
    if elements.views:
        raise errors.StagingError(f"a list {function} returns holds {_copies(elements)}")


def _copies(elements: Elements) -> str:
    """What the copied item is, why a copy is not Python's, and what to write instead."""
    _, argument, loc = elements.views[0]
    return (f"the argument `{argument}` or a view of it (put in the list{errors.at(loc)}): "
            "staged code keeps a list's items as the rows of one array, so they would come back "
            "as copies, where Python's share the argument's memory (a write into one changes "
            f"`{argument}`); append a copy (`{argument}[a:b].copy()`) if a copy is meant, or "
            "return the bounds and slice outside")
