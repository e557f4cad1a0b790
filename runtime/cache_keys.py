"""Trace cache keys: how an argument leaf or a constant selects a trace.

Staged leaves key on ``(dtype, ndim)`` (compiled code is shape-generic); a ``TensorSpec`` with
known sizes keys on its exact shape; every other value is a compile-time constant keyed on its
type and value (by identity if unhashable, kept alive by the key).

A trace computed from a constant is reused for every constant with the same key, so the key
must tell apart what ``==`` does not: ``1``, ``True`` and ``1.0`` (the type), ``0.0`` and
``-0.0`` (a float's bits, inside tuples, complex numbers and frozensets too), ``Decimal('1.0')``
and ``Decimal('1.00')``; and a mutable container that is not a pytree node (a set, a deque, a
bytearray, an ``array``, a dict or list subclass) keys on its identity *and* its contents, so a
trace that read it is not reused once it has changed.
"""

from __future__ import annotations

import array
import collections
import sys

import numpy as np
from autostage.runtime.tensor_spec import TensorSpec


class ById:
    """A key component for an unhashable constant: compared by identity, kept alive."""

    __slots__ = ("obj",)

    def __init__(self, obj: object):
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return type(other) is ById and other.obj is self.obj


def constant_key(value: object) -> tuple:
    """The key of a compile-time constant: its type and value (identity if unhashable, or if
    hashed by identity but compared by value).

    The type is part of it because ``1 == 1.0 == True`` would otherwise share a trace; floats key
    on their exact bits so that ``-0.0`` and ``nan`` trace correctly.
    """
    return _key(value, 0)


def _key(value: object, depth: int) -> tuple:
    """``constant_key`` of ``value`` at ``depth`` containers down (0: the constant itself)."""
    kind = type(value)
    if kind is float:
        # ``value`` itself (a cheap hash) unless it is a zero or a NaN, which compare wrongly
        if value != 0.0 and value == value:
            return (float, value)
        return (float, value.hex())
    if kind is int or kind is bool or kind is str:
        return (kind, value)
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return (kind, value.tobytes())  # (a NumPy scalar: -0.0 and nan by their bits too)
    exact = _exact(value, kind, depth)
    if exact is not None:
        return exact
    if depth and _is_user_object(value, kind):
        # (a user's object inside a container: the trace read what it holds, ``n.w``)
        return (kind, ByContents(value, _key(dict(value.__dict__), depth + 1)))
    if isinstance(value, _MUTABLE) or (
            kind.__hash__ is object.__hash__ and kind.__eq__ is not object.__eq__):
        # (nested too deep or in a cycle; or hashed by identity but compared by value, a
        # Variable, whose == is elementwise: a key compared with == would mistake a new, equal
        # Variable for the traced one)
        return (kind, ById(value))
    try:
        hash(value)
    except TypeError:
        return (kind, ById(value))
    return (kind, value)


def _is_user_object(value: object, kind: type) -> bool:
    return (type(getattr(value, "__dict__", None)) is dict and not isinstance(value, type)
            and not kind.__module__.startswith(_LIBRARIES))


_DEPTH = 20  # containers nested deeper (or in a cycle) key on their identity only


class Exact:
    """A key component compared by an exact form of the constant ``value`` where ``==`` is
    coarser (``1 == True``, ``0.0 == -0.0``, ``Decimal('1.0') == Decimal('1.00')``)."""

    __slots__ = ("value", "form")

    def __init__(self, value: object, form: object):
        self.value, self.form = value, form

    def __hash__(self) -> int:
        return hash(self.form)

    def __eq__(self, other: object) -> bool:
        return type(other) is Exact and other.form == self.form

    def __repr__(self) -> str:
        return repr(self.value)


class ByContents(ById):
    """A key component for a mutable container: its identity and its contents as they are
    when the key is made (a trace that read them does not serve the container changed)."""

    __slots__ = ("contents",)

    def __init__(self, obj: object, contents: object):
        super().__init__(obj)
        self.contents = contents

    def __eq__(self, other: object) -> bool:
        return (type(other) is ByContents and other.obj is self.obj
                and other.contents == self.contents)

    __hash__ = ById.__hash__


def _exact(value: object, kind: type, depth: int) -> tuple | None:
    """The key of a value whose ``==`` is coarser than what a trace may read of it, or of a
    mutable container, else None."""
    if kind is complex:
        return (complex, Exact(value, (value.real.hex(), value.imag.hex())))
    if kind is tuple:
        return (tuple, Exact(value, tuple([_key(v, depth + 1) for v in value])))
    if kind is frozenset:
        return (frozenset, Exact(value, frozenset([_key(v, depth + 1) for v in value])))
    decimal = sys.modules.get("decimal")
    if decimal is not None and kind is decimal.Decimal:
        return (kind, Exact(value, value.as_tuple()))
    if not isinstance(value, _MUTABLE) or depth > _DEPTH:
        return None
    if isinstance(value, dict):
        contents = tuple([(_key(k, depth + 1), _key(v, depth + 1)) for k, v in value.items()])
        extra = ById(value.default_factory if isinstance(value, collections.defaultdict)
                     else None)  # (not getattr: an attribute dict's __getattr__ raises)
    elif isinstance(value, set):
        contents, extra = frozenset([_key(v, depth + 1) for v in value]), None
    elif isinstance(value, bytearray):
        contents, extra = bytes(value), None
    elif isinstance(value, array.array):
        contents, extra = value.tobytes(), value.typecode
    else:  # a list or a deque
        contents = tuple([_key(v, depth + 1) for v in value])
        extra = value.maxlen if isinstance(value, collections.deque) else None
    attributes = getattr(value, "__dict__", None)  # (a subclass's own attributes)
    if attributes:
        extra = (extra, _key(dict(attributes), depth + 1))
    return (kind, ByContents(value, (contents, extra)))


_LIBRARIES = ("numpy", "autostage", "numba", "builtins", "functools", "collections")


_MUTABLE = (list, dict, set, bytearray, collections.deque, array.array)


# Marks the key of a NumPy scalar leaf, which differs from a 0-d ndarray's: NumPy gives back a
# 0-d ndarray where the argument is one (``x.reshape(())``, ``return x``), a scalar otherwise.
SCALAR = "scalar"


def leaf_key(leaf: object) -> tuple:
    """A leaf's component of the trace key: ``(dtype, ndim)`` if staged, else ``constant_key``."""
    if type(leaf) is np.ndarray:
        return (leaf.dtype, leaf.ndim)
    if isinstance(leaf, np.generic):
        return (leaf.dtype, 0, SCALAR)
    if isinstance(leaf, np.ndarray):  # a subclass: staged or refused by its trace (inputs)
        return (type(leaf), leaf.dtype, leaf.ndim)
    if type(leaf) is TensorSpec:
        if all(d is None for d in leaf.shape):
            return (leaf.dtype, leaf.ndim)
        return (leaf.dtype, leaf.shape)  # known sizes: a more specific trace
    return constant_key(leaf)
