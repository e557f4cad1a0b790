"""Arrays made at trace time and returned together: copied per call with their sharing kept.

An array the traced code made as a NumPy value (``a = np.zeros(4)`` of a Python size, written
with Python values) is returned as a copy on each call, as Python builds it anew. Returned
together, one array twice (``return a, a``) or an array and a view of it (``return a, a[:2]``)
share memory in Python: copied one by one they did not, and a write into one result did not
show through the other. ``plan`` finds the arrays that share an owner; ``SharedCopies.fill``
copies each owner once per call and makes each result the same object, or the same view of the
copy, as it is of the original.
"""

from __future__ import annotations

import numpy as np


class SharedCopies:
    """Per call: a copy of each owner, and the results as the owners' copies or views of them."""

    __slots__ = ("owners", "views")

    def __init__(self, owners: list[np.ndarray], views: dict[int, tuple]):
        self.owners = owners  # the trace's own copies of the owners
        # output position -> (owner index, first position of the same array, None for the
        # owner itself or (dtype, shape, strides, byte offset, writeable) for a view of it)
        self.views = views

    def fill(self, leaves: list) -> None:
        """Puts this call's copies into the output ``leaves``."""
        copies = [owner.copy(order="K") for owner in self.owners]
        made: dict[int, np.ndarray] = {}
        for position, (k, first, spec) in self.views.items():
            view = made.get(first)
            if view is None:
                view = copies[k] if spec is None else _view(copies[k], *spec)
                made[first] = view
            leaves[position] = view


def _view(owner: np.ndarray, dtype: np.dtype, shape: tuple, strides: tuple, offset: int,
          writeable: bool) -> np.ndarray:
    view = np.ndarray(shape, dtype, buffer=owner, offset=offset, strides=strides)
    view.flags.writeable = writeable
    return view


def _owner(a: np.ndarray) -> np.ndarray | None:
    """The array owning ``a``'s memory, if it is a contiguous NumPy array (its copy in the same
    order then has the same layout, so offsets and strides carry over); None otherwise."""
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner.base is not None or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    return owner


def plan(arrays: dict[int, np.ndarray]) -> SharedCopies | None:
    """How to copy the returned trace-time ``arrays`` (output position -> array) that share an
    owner with another one; None when none does (each is copied alone)."""
    groups: dict[int, list[int]] = {}
    owners: dict[int, np.ndarray] = {}
    for position, a in arrays.items():
        owner = _owner(a)
        if owner is not None:
            groups.setdefault(id(owner), []).append(position)
            owners[id(owner)] = owner
    kept, views = [], {}
    for key, positions in groups.items():
        if len(positions) < 2:
            continue
        owner = owners[key]
        start = owner.__array_interface__["data"][0]
        first: dict[int, int] = {}
        for position in positions:
            a = arrays[position]
            spec = None if a is owner else (a.dtype, a.shape, a.strides,
                                             a.__array_interface__["data"][0] - start,
                                             a.flags.writeable)
            views[position] = (len(kept), first.setdefault(id(a), position), spec)
        kept.append(owner.copy(order="K"))
    return SharedCopies(kept, views) if views else None
