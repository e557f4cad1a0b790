"""Tests of runtime/staging/opaque_state.py: snapshots that see each kind of change, and put
back what can be put back."""

import array
import collections
import itertools

import pytest
from autostage.runtime.staging.opaque_state import (
    Irreversible,
    cannot_be_put_back,
    opaque_state,
    restore_opaque,
)


class Slotted:
    __slots__ = ("n",)


class Counter:
    count = 0


def counter():
    pass


def _slotted():
    s = Slotted()
    s.n = 1
    return s


@pytest.mark.parametrize("make, change, check", [
    (lambda: collections.deque([1, 2]), lambda d: d.popleft(), lambda d: list(d) == [1, 2]),
    (lambda: bytearray(b"ab"), lambda b: b.append(99), lambda b: b == b"ab"),
    (lambda: array.array("d", [1.0]), lambda a: a.append(5.0), lambda a: a.tolist() == [1.0]),
    (lambda: iter([1, 2, 3]), next, lambda it: next(it) == 1),
    (lambda: iter(range(10)), next, lambda it: next(it) == 0),
    (lambda: Counter, lambda k: setattr(k, "count", 5), lambda k: k.count == 0),
    (_slotted, lambda s: setattr(s, "n", 7), lambda s: s.n == 1),
    (lambda: counter, lambda f: setattr(f, "calls", 3), lambda f: not hasattr(f, "calls")),
], ids=["deque", "bytearray", "array", "list_iterator", "range_iterator", "class", "slots",
        "function"])
def test_a_change_is_seen_and_put_back(make, change, check):
    x = make()
    before = opaque_state(x)
    change(x)
    assert opaque_state(x) != before
    restore_opaque(x, before)
    assert opaque_state(x) == before and check(x)


@pytest.mark.parametrize("make", [
    lambda: (i for i in range(5)), lambda: itertools.count(), lambda: enumerate("abc"),
    lambda: zip([1, 2], [3, 4], strict=True)])
def test_an_iterator_that_cannot_be_put_back_is_irreversible(make):
    it = make()
    before = opaque_state(it)
    assert cannot_be_put_back(it)
    next(it)
    assert opaque_state(it) != before
    with pytest.raises(Irreversible):
        restore_opaque(it, before)


def test_library_objects_are_not_opaque_state():
    assert opaque_state(collections.OrderedDict) is None and opaque_state(3) is None
    assert opaque_state([1]) is None  # (lists are threaded item by item: python_state)
