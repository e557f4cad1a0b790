"""Types of staged values: tensors (dtype + shape with unknown dimensions), tensor lists, tuples,
random generators.

Types are small immutable values, compared and hashed structurally, printed short (``f32[?,256]``,
``list<f32[4]>``), because the IR printer and the trace cache key show them to users. A 0-d tensor
type may be *weak* (printed ``f64[]~``): the value stands for a Python number and promotes like
one (``f32_tensor * n`` stays float32), as JAX's ``weak_type``. Weak-ness is not compared or
hashed, so it never splits a cache key, a verifier check or a join; code that must tell the two
apart (a staged call's key) reads ``weak`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

# The dtypes a tensor may have, with the short names the IR printer uses.
DTYPES: dict[np.dtype, str] = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128",
}
_BY_SHORT_NAME = {short: dtype for dtype, short in DTYPES.items()}
# The dtypes of Python's bool, int, float and complex: the only ones a weak type may have.
WEAK_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.int64, np.float64, np.complex128))


def as_dtype(dtype: object) -> np.dtype:
    """A supported NumPy dtype from anything ``np.dtype`` accepts, or a short name like ``f32``.

    Raises:
      TypeError: the dtype is not one autostage stages (strings, objects, datetimes...).
    """
    if isinstance(dtype, str) and dtype in _BY_SHORT_NAME:
        return _BY_SHORT_NAME[dtype]
    try:
        result = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{dtype!r} is not a NumPy dtype") from e
    if result not in DTYPES:
        raise TypeError(f"autostage cannot stage arrays of dtype {result}; supported dtypes: "
                        f"{', '.join(str(d) for d in DTYPES)}")
    return result


Shape = tuple  # of int | None; None is a dimension unknown until run time


@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor's dtype and shape; ``None`` in the shape is a dimension unknown at trace time.
    ``weak``: a 0-d bool, int64, float64 or complex128 standing for a Python number."""

    dtype: np.dtype
    shape: Shape
    weak: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(None if d is None else int(d) for d in self.shape))
        if self.weak and (self.shape or self.dtype not in WEAK_DTYPES):
            raise TypeError(f"only a 0-d bool, i64, f64 or c128 type may be weak, not {self}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_scalar(self) -> bool:
        return not self.shape

    def __str__(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{DTYPES[self.dtype]}[{dims}]" + ("~" if self.weak else "")


@dataclass(frozen=True, slots=True)
class ListType:
    """A tensor list: a growable sequence of tensors of one type (element shapes may vary in
    their unknown dimensions only)."""

    element: TensorType

    def __str__(self) -> str:
        return f"list<{self.element}>"


@dataclass(frozen=True, slots=True)
class TupleType:
    """An ordered group of types (multiple results of a call)."""

    elements: tuple

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elements) + ")"


@dataclass(frozen=True, slots=True)
class GeneratorType:
    """A ``np.random.Generator`` that is a run-time input of a trace (an argument, a global, a
    closed-over variable or an attribute, read at each call): random draws take it as an
    operand and advance its state."""

    def __str__(self) -> str:
        return "rng"


Type = TensorType | ListType | TupleType | GeneratorType


def scalar(dtype: object) -> TensorType:
    """The type of a 0-d tensor."""
    return TensorType(as_dtype(dtype), ())


def strong(type_: Type) -> Type:
    """``type_`` without weak-ness: what a new value gets unless staging marks it weak (a type
    rule that passes an operand's type through must not make a NumPy result a Python number)."""
    return replace(type_, weak=False) if getattr(type_, "weak", False) else type_


def type_of_array(value: np.ndarray | np.generic, exact_shape: bool = False) -> TensorType:
    """The type a NumPy argument is staged with: its dtype and rank (sizes unknown unless
    ``exact_shape``), since compiled code is shape-generic."""
    value = np.asarray(value)
    shape = value.shape if exact_shape else (None,) * value.ndim
    return TensorType(as_dtype(value.dtype), shape)


def join_dims(a: int | None, b: int | None) -> int | None:
    """The dimension two values may both have: equal sizes stay known, different ones unknown."""
    return a if a == b else None


def join(a: TensorType, b: TensorType) -> TensorType | None:
    """The most specific type of both (same dtype and rank), or None if they are incompatible."""
    if a.dtype != b.dtype or a.ndim != b.ndim:
        return None
    return TensorType(a.dtype, tuple(join_dims(x, y) for x, y in zip(a.shape, b.shape,
                                                                      strict=True)))
