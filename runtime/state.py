"""``Variable``: mutable state that staged code reads and assigns at run time, in program order.

A staged function's trace is reused across calls, so state it reads must not be frozen into the
trace: inside a trace, reading a Variable emits ``var_read`` and assigning emits ``var_assign``,
``var_assign_add`` or ``var_assign_sub`` (``runtime/ops/variables.py``); an indexed assignment
(``assign_at``) is a read, NumPy's functional ``setitem`` and an assignment, so every index NumPy
and the ``setitem`` op accept works, with their errors and on every target. The Variable itself
goes into the state table of the trace's module (``ir.Module.state``, shared by the functions of
staged calls) and the op names its index, so the IR holds plain data while the module holds the
live state; the op touches the Variable's storage when it runs. They read and write state, so
passes never drop or reorder them. Outside tracing a Variable is a plain holder of a NumPy value.
A staged function may create Variables only on its first trace (later traces must reuse them, as
in ``tf.function``): traces are reused, so a Variable created per trace would silently be a
different one on each retrace.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
from autostage.runtime import array_shapes, tracing
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
    """A mutable NumPy value: ``.read()``/``.value``, ``.assign(v)``, ``.assign_add(v)``,
    ``.assign_sub(v)``, ``.assign_at(index, v)``; ``v[index]`` reads.

    Its dtype and shape are fixed by the initial value (``dtype``: cast it first); assignments
    cast to its dtype with same-kind casts only and must have its shape. ``trainable=False``: a
    GradientTape does not watch it unless told to (``tape.watch(v)``), as in TensorFlow.
    """

    __slots__ = ("_storage", "_lock", "name", "trainable", "__weakref__")
    __array_priority__ = 2000  # NumPy and Tensor defer binary operators to Variable

    def __init__(self, initial_value: object, trainable: bool = True, name: str | None = None,
                 dtype: object = None):
        if not isinstance(trainable, bool):
            raise TypeError(f"Variable(value, trainable=True, name=None, dtype=None): trainable "
                            f"must be a bool, got {trainable!r} (pass a dtype as dtype=...)")
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
        self.trainable = trainable

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

    def assign_sub(self, value: object) -> None:
        """Subtracts from the value in place; staged as ``var_assign_sub`` in a trace."""
        self._update("var_assign_sub", value)

    def assign_at(self, index: object, value: object) -> None:
        """Sets part of the value, as ``a[index] = value`` sets part of an array (NumPy's
        indexing and broadcasting; same-kind casts, as ``assign``). ``v.assign_at(i, v[i] + d)``
        is NumPy's ``a[i] += d`` (a repeated index adds once).

        Inside a trace it is staged as ``var_read``, the functional ``setitem`` and
        ``var_assign``: the whole Variable is written back (a copy per update, not in place).
        """
        if isinstance(value, Variable):
            value = value.read()
        if isinstance(value, Tensor) and not tracing.is_tracing():
            tracing.check_visible(value.value)  # a leaked tensor: raises TracerLeakError
        _check_kind(self, value.dtype if isinstance(value, Tensor) else np.asarray(value).dtype)
        if tracing.is_tracing():
            self.assign(array_shapes.setitem(self.read(), index, value))
            return
        updated = self._storage.copy()
        updated[index] = value
        self._store(updated)

    def __getitem__(self, index: object) -> object:
        """``v[index]``: the current value indexed (a value, not a view of the Variable: update
        part of it with ``v.assign_at(index, value)``)."""
        return self.read()[index]

    def _update(self, op_name: str, value: object) -> None:
        if isinstance(value, Variable):
            value = value.read()
        if tracing.is_tracing():
            tracing.emit(op_name, (as_tensor(value).value,), self._attrs())
            return
        if isinstance(value, Tensor):
            tracing.check_visible(value.value)  # a leaked tensor: raises TracerLeakError
        self._store(np.asarray(value), _COMBINE[op_name])

    def _attrs(self) -> dict:
        """The attributes of a Variable op in the current trace: this Variable's index in the
        state table of the trace's module (added on first use) and its type."""
        return {"var": tracing.current().module.state_index(self), "type": self.type}

    def _store(self, value: np.ndarray, combine: object = None) -> None:
        """Stores ``value`` (checked and cast), or ``combine(current, value)`` (np.add...)."""
        value = _checked(self, value)
        with self._lock:
            # (np.asarray: a 0-d sum is a NumPy scalar, and compiled code writes into an array)
            self._storage = (value.copy() if combine is None else
                             np.asarray(combine(self._storage, value), dtype=self.dtype))
            if self._storage.dtype != self.dtype:  # pragma: no cover - guarded by _checked
                raise AssertionError("Variable dtype changed")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object,
                        **kwargs: object) -> object:
        """``np.tanh(v)``, ``array + v``: the ufunc of the Variables' current values (staged
        reads in a trace); a Variable as ``out=`` is refused (it would write into a copy)."""
        if any(isinstance(x, Variable) for x in kwargs.get("out", None) or ()):
            raise TypeError(f"np.{ufunc.__name__}(..., out=<Variable>) would write into a copy "
                            "of the Variable's value; use v.assign(np.<ufunc>(...)) instead")
        return getattr(ufunc, method)(*_read_all(inputs), **kwargs)

    def __array_function__(self, func: object, types: tuple, args: tuple,
                           kwargs: dict) -> object:
        """``np.sum(v)``, ``np.concatenate([v, w])``: ``func`` of the current values."""
        return func(*_read_all(args), **dict(zip(kwargs, _read_all(kwargs.values()),
                                                 strict=True)))

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        if tracing.is_tracing():
            raise tracing.StagingError(
                f"Variable {self.name} was converted to a NumPy array while tracing, which would "
                "freeze its current value into the trace; use v.read() (or v.value) instead")
        return np.asarray(self._storage, dtype=dtype)

    def __reduce__(self) -> tuple:
        """Pickles (and copies) by value: the current value, trainable and name; the copy is a
        new Variable with its own lock, no longer the same state as this one."""
        with self._lock:
            value = self._storage.copy()
        return (Variable, (value, self.trainable, self.name))

    def __repr__(self) -> str:
        return f"Variable({self.name}: {self.type}, value={self._storage!r})"

    def __str__(self) -> str:
        return f"Variable({self.name}:{self.type})"


def _read_all(values: object) -> list:
    """``values`` with each Variable (also inside lists and tuples) replaced by its value."""
    return [v.read() if isinstance(v, Variable) else type(v)(_read_all(v))
            if type(v) in (list, tuple) else v for v in values]


def _user_value(array: np.ndarray) -> object:
    return array[()] if array.ndim == 0 else array


def _check_kind(var: Variable, dtype: np.dtype) -> None:
    if not np.can_cast(dtype, var.dtype, casting="same_kind"):
        raise TypeError(f"cannot assign a {dtype} value to Variable {var.name} of dtype "
                        f"{var.dtype} (only same-kind casts)")


def _checked(var: Variable, value: np.ndarray) -> np.ndarray:
    """``value`` cast to the Variable's dtype; its shape must be the Variable's."""
    _check_kind(var, value.dtype)
    if value.shape != var.shape:
        raise ValueError(f"cannot assign a value of shape {value.shape} to Variable {var.name} "
                         f"of shape {var.shape}")
    return value.astype(var.dtype, copy=False)


# How each assignment op combines the current value with the operand (None: replaces it).
_COMBINE = {"var_assign": None, "var_assign_add": np.add, "var_assign_sub": np.subtract}


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
