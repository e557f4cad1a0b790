"""Python objects whose state a staged branch or loop cannot thread item by item: compared
whole, put back whole (``python_state`` watches them as owners of kind 'opaque').

A staged branch or loop body is traced, not run, so what its Python code does to an object
happens once, whatever the data; ``python_state`` threads or refuses such changes to dicts,
lists, sets, attributes and cells entry by entry. These objects change in ways that have no
entries: a deque, bytearray or ``array.array`` (contents), an iterator (its position: ``next``
inside a loop would read one item for all iterations), a function's attributes and a user
class's (``f.calls += 1``, ``K.count += 1``: a staged call of ``f`` runs its code once), an
object with ``__slots__`` only. ``opaque_state`` gives a comparable snapshot, ``restore_opaque``
puts it back; a generator, or an iterator other than a sequence's, cannot be put back
(``Irreversible``).
"""

from __future__ import annotations

import array
import collections
import functools
import types

ABSENT = object()  # a slot without a value


def opaque_state(x: object) -> object | None:
    """The state of ``x`` as a comparable value, if it is one of these objects (else None)."""
    kind = type(x)
    if kind in _SEQUENCES:
        return (tuple(x), getattr(x, "maxlen", None)) if kind is collections.deque else (
            bytes(x) if kind is bytearray else (x.typecode, x.tobytes()))
    if kind in _SEQUENCE_ITERATORS:
        try:
            return x.__reduce__()[2:]
        except Exception:  # noqa: BLE001 - one without a readable position: not watched
            return None
    if kind is types.GeneratorType:
        frame = x.gi_frame
        return ("generator", None if frame is None else frame.f_lasti)
    if hasattr(kind, "__next__") and kind.__module__ in ("builtins", "itertools"):
        return ("iterator", _position(x, 0))  # (enumerate, zip, map, reversed, count...)
    if kind is types.FunctionType:  # its attributes (a traced call of it runs once)
        return ("function", tuple((k, _Same(v)) for k, v in x.__dict__.items()))
    if isinstance(x, type):  # a class of the user's (``K.count += 1``)
        if x.__module__ in _LIBRARY_MODULES or x.__module__.startswith(_LIBRARY_PREFIXES):
            return None
        return ("class", tuple((k, _Same(v)) for k, v in vars(x).items()
                               if not k.startswith("__")))
    slots = _slots(kind)
    if slots and not hasattr(x, "__dict__"):  # an object with ``__slots__`` only
        return ("slots", tuple(_Same(getattr(x, name, ABSENT)) for name in slots))
    return None


class _Same:
    """A value in an opaque state, equal to another only if it is the same object."""

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is _Same and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


_LIBRARY_MODULES = frozenset({"builtins", "numpy", "abc", "typing", "collections", "enum"})
_LIBRARY_PREFIXES = ("numpy.", "numba.", "autostage.", "collections.", "typing.")


@functools.lru_cache(maxsize=256)
def _slots(kind: type) -> tuple[str, ...]:
    """The slot names of ``kind``'s classes written in Python (the user's), else ()."""
    if kind.__module__ in _LIBRARY_MODULES or kind.__module__.startswith(_LIBRARY_PREFIXES):
        return ()
    names = []
    for klass in kind.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        names += [declared] if isinstance(declared, str) else list(declared)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))


def _position(x: object, depth: int) -> object:
    """Where a builtin iterator stands: its ``__reduce__``, with the iterators inside it (a
    ``zip``'s, an ``enumerate``'s) by where they stand, other values by identity."""
    if depth > 4:
        return _Same(x)
    try:
        reduced = x.__reduce__()
    except Exception:  # noqa: BLE001 - one that cannot say: by identity (changes unseen)
        return _Same(x)

    def part(v: object) -> object:
        if hasattr(type(v), "__next__"):
            return _position(v, depth + 1)
        return tuple(part(w) for w in v) if type(v) is tuple else _Same(v)

    return tuple(part(v) for v in reduced[1:])


def restore_opaque(x: object, state: object) -> None:
    """Puts ``x`` back in ``state`` (``opaque_state``); raises ``Irreversible`` for an iterator
    that moved and cannot be put back."""
    kind = type(x)
    if kind is collections.deque:
        x.clear()
        x.extend(state[0])
    elif kind is bytearray:
        x[:] = state
    elif kind is array.array:
        del x[:]
        x.frombytes(state[1])
    elif kind is types.FunctionType:
        if opaque_state(x) != state:
            x.__dict__.clear()
            x.__dict__.update({k: v.value for k, v in state[1]})
    elif isinstance(x, type):
        if opaque_state(x) != state:
            for k in [k for k in vars(x) if not k.startswith("__")]:
                delattr(x, k)
            for k, v in state[1]:
                setattr(x, k, v.value)
    elif state[:1] == ("slots",):
        for name, held in zip(_slots(kind), state[1], strict=True):
            v = held.value
            if v is ABSENT:
                if hasattr(x, name):
                    delattr(x, name)
            else:
                setattr(x, name, v)
    elif kind in _SEQUENCE_ITERATORS:
        if opaque_state(x) != state:
            if not state:  # (it was exhausted when watched, and then was not)
                raise Irreversible(x)
            try:
                x.__setstate__(*state)
            except Exception as e:  # an exhausted iterator has let its sequence go
                raise Irreversible(x) from e
    elif opaque_state(x) != state:
        raise Irreversible(x)


def cannot_be_put_back(x: object) -> bool:
    """Whether ``x`` is an iterator ``restore_opaque`` cannot put back once it moved."""
    return is_iterator(x) and type(x) not in _SEQUENCE_ITERATORS


def is_iterator(x: object) -> bool:
    """Whether ``x`` is an iterator or generator ``opaque_state`` knows."""
    return type(x) in _SEQUENCE_ITERATORS or type(x) is types.GeneratorType or (
        hasattr(type(x), "__next__") and type(x).__module__ in ("builtins", "itertools"))


class Irreversible(Exception):  # noqa: N818 - raised through to the user as an error
    """An iterator that cannot be put back moved while a staged branch or loop was traced."""


_SEQUENCES = frozenset({collections.deque, bytearray, array.array})
_SEQUENCE_ITERATORS = frozenset(type(iter(x)) for x in (
    [], (), range(1), range(2**64), "", "\u00e9", b"", bytearray()))
