"""The symbolic ``Tensor``: what staged code computes with while a function is traced.

A Tensor wraps an IR ``Value``; operators, methods and NumPy functions applied to it emit ops
(``runtime/ops``) instead of computing. Using it as a Python bool, int or iterable where autostage
could not stage that (code that was not converted) is a clear ``StagingError``, never a silent
guess. Its operators and methods are attached by ``tensor_methods``, which the runtime package
imports: the NumPy-surface modules import this one, so it imports none of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
from autostage.runtime import ir, tracing
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.types import TensorType


class StagingTypeError(tracing.StagingError, TypeError):
    """A staged tensor was used where a Python value is required.

    Example: ``if x > 0:`` inside a function marked ``do_not_convert`` (or in a library) while
    ``x`` is staged. Fix: let autostage convert that function, or compute the condition outside
    the staged function.
    """


class Tensor(Staged):
    """A staged tensor: a typed IR value of the function being traced."""

    __slots__ = ("value",)
    __array_priority__ = 1000  # NumPy defers binary operators to Tensor

    def __init__(self, value: ir.Value):
        self.value = value

    @property
    def type(self) -> TensorType:
        return self.value.type

    @property
    def dtype(self) -> np.dtype:
        return self.value.type.dtype

    @property
    def shape(self) -> tuple:
        """``x.shape`` as user code sees it: known dimensions are ints, unknown ones staged 0-d
        int64 tensors (``dim`` ops, weak like Python ints). The static shape, with None for
        unknown dimensions, is ``x.type.shape``."""
        from autostage.runtime.array_shapes import shape_of
        return shape_of(self)

    @property
    def size(self) -> int | Tensor:
        """``x.size``: an int when every dimension is known, else a staged 0-d int64."""
        from autostage.runtime.array_shapes import size_of
        return size_of(self)

    @property
    def ndim(self) -> int:
        return self.value.type.ndim

    def _where(self) -> str:
        loc = self.value.loc
        return f" (created at {loc})" if loc is not None else ""

    def __bool__(self) -> bool:
        frame = sys._getframe(1)
        loc = tracing.frame_location(frame)
        at, named = "", ""
        if loc is not None:
            at = f"{loc}: "
            if loc.filename == frame.f_code.co_filename:  # the caller is user code: its name
                name = next((n for n, v in frame.f_locals.items() if v is self), None)
                named = f" {name!r}" if name is not None else ""
        raise StagingTypeError(
            f"{at}a staged tensor{named}{self._where()} was used as a Python bool, which cannot "
            "be staged here: this happens in code autostage did not convert (a function marked "
            "do_not_convert, a library, or a construct that runs as written). Convert that code, "
            "or use np.where / a staged if in converted code")

    def __repr__(self) -> str:
        return f"<staged Tensor {self.type}{self._where()}>"

    def __hash__(self) -> int:
        # Python hashes a set element or dict key by value (`t in {1, 2}`, `d.get(t)`): by
        # identity, a staged 3 would never find the 3 a set holds. Unhashable, as ndarrays are.
        loc = tracing.frame_location(sys._getframe(1))
        at = f"{loc}: " if loc is not None else ""
        raise StagingTypeError(
            f"{at}a staged value{self._where()} was used as a set element or dict key (`t in "
            "{1, 2}`, `d.get(t)`, `s.add(t)`), which needs its value while tracing: compare "
            "with == instead (`(t == 1) | (t == 2)`), or look it up in an array (`table[t]`)")

    def __contains__(self, item: object) -> bool:
        # `v in x`: Python asks NumPy's answer, `(x == v).any()`, for a bool at once.
        loc = tracing.frame_location(sys._getframe(1))
        at = f"{loc}: " if loc is not None else ""
        raise StagingTypeError(
            f"{at}`v in x` of a staged array{self._where()} needs its answer while tracing; "
            "write `(x == v).any()`, which stages")


# Raises for an ndarray subclass staged code must not compute with (``inputs`` sets it: it
# imports this module).
subclass_check: Callable[[np.ndarray], None] | None = None


def constant(value: object, dtype: object = None) -> Tensor:
    """A tensor holding a trace-time constant (NumPy array or scalar).

    An array that outlives the trace (an attribute of an object passed as a constant, say) could
    change before a later call; the trace records it so the function object can check it.
    """
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray and subclass_check is not None:
            subclass_check(value)
        tracing.record_embedded_array(value)
    (result,) = tracing.emit("constant", (), {"value": as_constant_array(value, dtype)})
    return Tensor(result)


def as_tensor(value: object) -> Tensor:
    """``value`` as a tensor: tensors as they are, NumPy/Python values as constants."""
    if isinstance(value, Tensor):
        return value
    return constant(value)


def mark_argument(tensor: Tensor, name: str, scalar: bool | None = None) -> None:
    """Records that ``tensor`` is the caller's array argument ``name``: writing into it (or into
    a view of it) is then a clear StagingError, since the caller would not see the change.
    The function object calls this for each staged parameter."""
    from autostage.runtime import value_info
    value_info.mark_argument(tensor.value, name, scalar)
