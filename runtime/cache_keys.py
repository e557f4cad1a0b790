"""Trace cache keys: how an argument leaf or a constant selects a trace.

Staged leaves key on ``(dtype, ndim)`` (compiled code is shape-generic); a ``TensorSpec`` with
known sizes keys on its exact shape; every other value is a compile-time constant keyed on its
type and value (by identity if unhashable, kept alive by the key).
"""

from __future__ import annotations

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
    kind = type(value)
    if kind is float:
        # ``value`` itself (a cheap hash) unless it is a zero or a NaN, which compare wrongly
        if value != 0.0 and value == value:
            return (float, value)
        return (float, value.hex())
    if kind is int or kind is bool:
        return (kind, value)
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return (kind, value.tobytes())  # (a NumPy scalar: -0.0 and nan by their bits too)
    if kind.__hash__ is object.__hash__ and kind.__eq__ is not object.__eq__:
        # hashed by identity but compared by value (a Variable: its == is elementwise): a key
        # compared with == would mistake a new, equal Variable for the traced one
        return (kind, ById(value))
    try:
        hash(value)
    except TypeError:
        return (kind, ById(value))
    return (kind, value)


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
