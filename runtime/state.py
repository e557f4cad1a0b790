"""``Variable``: mutable state that staged code reads and assigns at run time, in program order.

A staged function's trace is reused across calls, so state it reads must not be frozen into the
trace: inside a trace, reading a Variable emits ``var_read`` and assigning emits ``var_assign`` /
``var_assign_add`` (``runtime/ops/variables.py``). The Variable itself goes into the state table of
the trace's module (``ir.Module.state``, shared by the functions of staged calls) and the op names
its index, so the IR holds plain data while the module holds the live state; the op touches the
Variable's storage when it runs. They read and write state, so passes never drop or reorder them.
Outside tracing a Variable is a plain holder of a NumPy value. A staged function may create
Variables only on its first trace (later traces must reuse them, as in ``tf.function``): traces are
reused, so a Variable created per trace would silently be a different one on each retrace.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
from autostage.runtime import tracing
from autostage.runtime.tensor import Tensor, as_tensor
from autostage.runtime.types import TensorType, as_dtype

_ids = itertools.count()


class VariableCreationError(tracing.StagingError, ValueError):
    """A staged function created a Variable on a trace other than its first.

    Example: ``v = Variable(0.0)`` at the top of a converted function, called once with float32
    and once with float64 arguments (two traces). Fix: create the Variable outside the function
    (or once, guarded by ``if self.v is None:``) and use it inside.
    """


class Variable:
    """A mutable NumPy value: ``.read()``/``.value``, ``.assign(v)``, ``.assign_add(v)``.

    Its dtype and shape are fixed by the initial value; assignments cast to its dtype (like
    ``a[...] = v``) and must have its shape.
    """

    __slots__ = ("_storage", "_lock", "name", "__weakref__")
    __array_priority__ = 2000  # NumPy and Tensor defer binary operators to Variable

    def __init__(self, initial_value: object, dtype: object = None, name: str | None = None):
        if isinstance(initial_value, Variable):
            initial_value = initial_value.read()
        if isinstance(initial_value, Tensor):
            raise tracing.StagingError(
                "a Variable's initial value must be a NumPy value, not a staged tensor; create "
                "the Variable outside the staged function")
        policy = getattr(tracing.current(), "variable_policy", None)
        if policy is not None:
            policy()  # raises VariableCreationError on a retrace
        storage = np.array(initial_value, dtype=dtype)
        as_dtype(storage.dtype)  # a dtype autostage can stage
        self._storage = storage
        self._lock = threading.Lock()
        self.name = name if name is not None else f"v{next(_ids)}"

    @property
    def dtype(self) -> np.dtype:
        return self._storage.dtype

    @property
    def shape(self) -> tuple:
        return self._storage.shape

    @property
    def ndim(self) -> int:
        return self._storage.ndim

    @property
    def type(self) -> TensorType:
        return TensorType(self.dtype, self.shape)

    def read(self) -> object:
        """The current value: a staged ``var_read`` inside a trace, else a NumPy copy."""
        if tracing.is_tracing():
            (result,) = tracing.emit("var_read", (), self._attrs())
            return Tensor(result)
        return _user_value(self._storage.copy())

    @property
    def value(self) -> object:
        return self.read()

    def assign(self, value: object) -> None:
        """Sets the value (cast to the Variable's dtype); staged as ``var_assign`` in a trace."""
        self._update("var_assign", value)

    def assign_add(self, value: object) -> None:
        """Adds to the value in place; staged as ``var_assign_add`` in a trace."""
        self._update("var_assign_add", value)

    def _update(self, op_name: str, value: object) -> None:
        if isinstance(value, Variable):
            value = value.read()
        if tracing.is_tracing():
            tracing.emit(op_name, (as_tensor(value).value,), self._attrs())
            return
        if isinstance(value, Tensor):
            tracing.check_visible(value.value)  # a leaked tensor: raises TracerLeakError
        _EVALUATE[op_name](self, np.asarray(value))

    def _attrs(self) -> dict:
        """The attributes of a Variable op in the current trace: this Variable's index in the
        state table of the trace's module (added on first use) and its type."""
        return {"var": tracing.current().module.state_index(self), "type": self.type}

    def _store(self, value: np.ndarray, add: bool) -> None:
        value = _checked(self, value)
        with self._lock:
            # (np.asarray: a 0-d sum is a NumPy scalar, and compiled code writes into an array)
            self._storage = np.asarray(self._storage + value) if add else value.copy()
            if self._storage.dtype != self.dtype:  # pragma: no cover - guarded by _checked
                raise AssertionError("Variable dtype changed")

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        if tracing.is_tracing():
            raise tracing.StagingError(
                f"Variable {self.name} was converted to a NumPy array while tracing, which would "
                "freeze its current value into the trace; use v.read() (or v.value) instead")
        return np.asarray(self._storage, dtype=dtype)

    def __repr__(self) -> str:
        return f"Variable({self.name}: {self.type}, value={self._storage!r})"

    def __str__(self) -> str:
        return f"Variable({self.name}:{self.type})"


def _user_value(array: np.ndarray) -> object:
    return array[()] if array.ndim == 0 else array


def _checked(var: Variable, value: np.ndarray) -> np.ndarray:
    """``value`` cast to the Variable's dtype; its shape must be the Variable's."""
    if not np.can_cast(value.dtype, var.dtype, casting="same_kind"):
        raise TypeError(f"cannot assign a {value.dtype} value to Variable {var.name} of dtype "
                        f"{var.dtype} (only same-kind casts)")
    if value.shape != var.shape:
        raise ValueError(f"cannot assign a value of shape {value.shape} to Variable {var.name} "
                         f"of shape {var.shape}")
    return value.astype(var.dtype, copy=False)


_EVALUATE = {
    "var_assign": lambda var, value: var._store(value, add=False),
    "var_assign_add": lambda var, value: var._store(value, add=True),
}


def _binary(name: str):
    """A NumPy-like operator that applies ``name`` to the Variable's current value."""
    def method(self: Variable, other: object) -> object:
        other = other.read() if isinstance(other, Variable) else other
        return getattr(self.read(), name)(other)

    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor", "lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Variable, f"__{_name}__", _binary(f"__{_name}__"))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor"):
    setattr(Variable, f"__r{_name}__", _binary(f"__r{_name}__"))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(Variable, f"__{_name}__", lambda self, _n=_name: getattr(self.read(), f"__{_n}__")())
Variable.__hash__ = object.__hash__  # identity: one Variable is one piece of state
