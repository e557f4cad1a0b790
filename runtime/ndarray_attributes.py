"""ndarray attributes on staged tensors: the trivial ones computed, the others named clearly.

User code sees a staged tensor where Python would see an ``np.ndarray``, so an attribute lookup
must behave as on an ndarray:

- ``itemsize``, ``nbytes`` work: the item size is known at trace time, ``nbytes`` is staged
  when a dimension is unknown (``ndim``, ``size``, ``shape``, ``dtype``, ``T``, ``conj()`` are
  defined on ``Tensor`` itself).
- Any other **ndarray method** (``x.argpartition``) is there, as on an ndarray, so ``hasattr``
  and ``getattr(x, name, None)`` answer as Python does; *calling* it raises
  ``UnsupportedAttributeError`` naming the method and the user's line.
- Any other **ndarray data attribute** (``x.flags``, ``x.strides``, ``x.base``, ``x.ctypes``...)
  raises ``UnsupportedAttributeError`` when read. That error is a ``StagingError`` and a
  ``TypeError``, deliberately *not* an ``AttributeError``: ``hasattr(x, "strides")`` raises it
  rather than answer False where Python answers True (a silently different branch).
- A name that is no ndarray attribute raises the ``AttributeError`` Python raises for an
  ndarray (``'numpy.ndarray' object has no attribute 'foo'``), so ``hasattr`` is False as in
  Python.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from autostage.runtime import dtype_rules, tracing, value_info
from autostage.runtime.tensor import StagingTypeError, Tensor

# Methods that change the array in place: staged values are immutable, the fix differs.
_IN_PLACE = {"fill": "np.full_like(x, value)", "put": "a functional update (x[i] = v on a local)",
             "resize": "np.reshape / np.concatenate", "partition": "x = np.partition(x, kth)",
             "setfield": None, "setflags": None, "byteswap": None, "itemset": None}
_LAYOUT = {"flags", "strides", "base", "ctypes", "data", "flat"}


class UnsupportedAttributeError(StagingTypeError):
    """An ndarray attribute that autostage does not stage was used on a staged tensor.

    Example: ``x.argpartition(3)`` or ``x.strides`` in a converted function whose ``x`` is staged.
    Fix: use a staged NumPy function instead (``np.argsort``), or compute the value outside the
    staged function and pass it in.
    """


def _at() -> str:
    loc = tracing.user_location()
    return f" (at {loc})" if loc is not None else ""


class _UnsupportedMethod:
    """What ``x.<method>`` gives for an ndarray method autostage does not stage: calling it is a
    clear error (reading it is not, as on an ndarray)."""

    __slots__ = ("name", "owner")

    def __init__(self, name: str, owner: str = "ndarray"):
        self.name, self.owner = name, owner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fix = _IN_PLACE.get(self.name, "")
        hint = (f": staged values are immutable{f'; use {fix}' if fix else ''}"
                if self.name in _IN_PLACE else "")
        raise UnsupportedAttributeError(
            f"{self.owner} method '{self.name}' is not supported on staged "
            f"{'arrays' if self.owner == 'ndarray' else 'values'}{_at()}{hint}")

    def __repr__(self) -> str:
        return f"<unsupported staged ndarray method {self.name}>"


def getattr_(self: Tensor, name: str) -> Any:
    """``Tensor.__getattr__``: reached only for names ``Tensor`` does not define."""
    if name.startswith("__"):  # protocols probed by NumPy/copy/pickle: absent, as before
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
    if self.ndim == 0 and not value_info.stands_for_ndarray(self.value):  # a scalar's
        return _scalar_attribute(self, name)
    attribute = getattr(np.ndarray, name, None)
    if attribute is None:
        raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")
    if callable(attribute):
        return _UnsupportedMethod(name)
    why = (": its value depends on the memory layout of the run-time array" if name in _LAYOUT
           else "")
    raise UnsupportedAttributeError(
        f"ndarray attribute '{name}' is not supported on staged arrays{_at()}{why}")


def _scalar_attribute(x: Tensor, name: str) -> Any:
    """``x.name`` of a staged 0-d value that stands for a scalar (a Python number if weak, else
    a NumPy scalar): Python's AttributeError if that type has no such attribute, a clear error
    if it has one autostage does not stage (``x.sum().is_integer()``)."""
    weak = value_info.is_weak(x.value)
    kind = dtype_rules.weak_kind(x.dtype) if weak else x.dtype.type
    shown = kind.__name__ if weak else f"numpy.{kind.__name__}"
    attribute = getattr(kind, name, None)
    if attribute is None:
        raise AttributeError(f"'{shown}' object has no attribute '{name}'")
    if callable(attribute):
        return _UnsupportedMethod(name, shown)
    raise UnsupportedAttributeError(
        f"{shown} attribute '{name}' is not supported on staged values{_at()}")


def raise_if_python_number_lacks(x: Tensor, name: str) -> None:
    """Python's AttributeError for ``x.name`` where ``x`` stands for a Python number, whose type
    has no such attribute (``n.item()``, ``n.shape`` of ``n = x.shape[0]``): at once if it is one
    on every path (weak), at run time where it is one on some paths only (``value_info``)."""
    def error(kind: type) -> AttributeError:
        return AttributeError(f"'{kind.__name__}' object has no attribute '{name}'")

    if value_info.is_weak(x.value):
        kind = dtype_rules.weak_kind(x.dtype)
        if not hasattr(kind, name):
            raise error(kind)
        return
    for path in (value_info.python_path(x.value), value_info.other_path(x.value)):
        if path is not None and not hasattr(path.kind, name):
            tracing.emit("raise_if", (path.flag,), {"exception": error(path.kind)})


# ndarray properties that ``Tensor`` defines for its own use too: guarded only where converted
# user code reads them (a Python number has none of them).
_NDARRAY_PROPERTIES = ("dtype", "shape", "size", "ndim", "T", "itemsize", "nbytes")


def _user_read(name: str, get: Any) -> property:
    def read(self: Tensor) -> Any:
        value = self.value
        if value.type.ndim == 0 and (value_info.is_weak(value) or value_info.python_path(value)
                                     or value_info.other_path(value)) and (
                tracing.in_user_code(sys._getframe(1))):
            raise_if_python_number_lacks(self, name)
        return get(self)
    return property(read, doc=get.__doc__)


def attach() -> None:
    """Adds the computed attributes and ``__getattr__`` to ``Tensor``."""
    Tensor.itemsize = property(lambda self: self.dtype.itemsize)
    Tensor.nbytes = property(lambda self: self.size * self.dtype.itemsize)
    for name in _NDARRAY_PROPERTIES:
        setattr(Tensor, name, _user_read(name, getattr(Tensor, name).fget))
    Tensor.__getattr__ = getattr_
