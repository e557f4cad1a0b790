"""``==``, ``!=`` and ``in`` of tuples and lists holding staged values (``x.shape == (n, 3)``).

Python compares two sequences of one type item by item: unequal lengths are unequal, and so is
the first pair of unequal items; a staged item (a size known only at run time) makes the answer
a staged bool, the ``and`` of the item comparisons Python cannot decide now. The result is a
weak bool (a Python bool in plain code): ``if x.shape != y.shape: raise ...`` stages the test.
``item in [...]`` is the ``or`` of ``item == each``.
"""

from __future__ import annotations

from autostage.runtime import array_api, value_info
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.staging.control_flow import predicate, stage_not
from autostage.runtime.tensor import Tensor


def _combine(ufunc: str, tests: list[object], decided: bool) -> object:
    """``decided`` if a Python test is ``decided``, else the ``ufunc`` of the staged ones."""
    staged = []
    for test in tests:
        if isinstance(test, Tensor):
            staged.append(predicate(test, "a comparison of sequences"))
        elif bool(test) is decided:
            return decided
    if not staged:
        return not decided
    result = staged[0]
    for other in staged[1:]:
        result = array_api.ufunc(ufunc, result, other)
    if len(staged) == 1:
        result = array_api.copy(result)
    value_info.mark_weak(result.value)
    return result


def sequence_eq(a: object, b: object) -> object:
    """``a == b`` of two tuples or lists (operators' ``eq``)."""
    if type(a) is not type(b) or len(a) != len(b):
        return False
    return _combine("logical_and", [
        sequence_eq(x, y) if isinstance(x, tuple | list) and isinstance(y, tuple | list)
        else x == y for x, y in zip(a, b, strict=True) if x is not y], False)


def _negate(test: object) -> object:
    return stage_not(test) if isinstance(test, Tensor) else not test


def sequence_ne(a: object, b: object) -> object:
    return _negate(sequence_eq(a, b))


def sequence_in(item: object, container: object) -> object:
    """``item in container`` of a tuple or list ``item`` holding staged values, or of a range
    with a staged bound (Python would ask its ``__contains__`` for a Python bool)."""
    if isinstance(container, Staged):
        return container.staged_contains(item)
    return _combine("logical_or", [
        True if other is item else sequence_eq(item, other) if isinstance(other, tuple | list)
        else item == other for other in container], True)


def sequence_not_in(item: object, container: object) -> object:
    return _negate(sequence_in(item, container))


for _hook in (sequence_eq, sequence_ne, sequence_in, sequence_not_in):
    register_operator_hook(_hook.__name__, _hook)
