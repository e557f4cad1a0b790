"""What flows through staged control flow besides tensors: unassigned variables and Python scalars.

Converted code passes every state variable in and out of branch and loop functions. Some are not
tensors: ``Undefined('y')`` / ``UndefinedReturnValue()`` placeholders (from the operators, which
the runtime may not import, so they are recognised by class name), ``None`` (the return lowering
starts ``retval_ = None``), Python numbers, Python lists. This module classifies them, turns
Python numbers into constants of the right dtype (NumPy 2 rules: a Python scalar is *weak* and
takes the tensor's dtype if its value fits), and defines ``MaybeUnbound``: a staged value assigned
on some run-time paths only, which may travel through more control flow but raises
``StagingUnboundError`` naming the variable as soon as anything uses it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from autostage.runtime import dtype_rules, ir, tracing, value_info
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.staging import errors, logic
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.types import WEAK_DTYPES, TensorType, as_dtype, strong

_UNSET_CLASSES = ("Undefined", "UndefinedReturnValue", "Unbound")


class Unbound:
    """A variable of the user's function (a closure cell) not bound before a staged loop that
    binds it: carried like an unassigned loop variable (``MaybeUnbound`` after the loop)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def is_none(value: object) -> bool:
    """``None`` itself, or a maybe-assigned value that is None where it is not assigned."""
    return value is None or isinstance(value, MaybeUnbound) and value.none


def is_unset(value: object) -> bool:
    """``None`` or an operators' ``Undefined``/``UndefinedReturnValue`` placeholder."""
    if value is None:
        return True
    cls = type(value)
    return cls.__name__ in _UNSET_CLASSES and cls.__module__.startswith("autostage.")


def is_number(value: object) -> bool:
    """A Python or NumPy scalar that may become a tensor constant."""
    return isinstance(value, (bool, int, float, complex, np.bool_, np.number))


def default_dtype(value: object) -> np.dtype:
    """The dtype NumPy gives a scalar on its own (``int`` -> int64, ``float`` -> float64)."""
    return as_dtype(np.asarray(value).dtype)


def same_python_value(a: object, b: object) -> bool:
    """Whether two Python values are the same for staging (then they stay Python)."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, (Staged, np.ndarray)):
        return False
    try:
        return bool(a == b) and hash(a) == hash(b)
    except TypeError:  # unhashable or incomparable: only identity counts
        return False


def weak_constant(value: object, dtype: np.dtype, what: str) -> Tensor:
    """``value`` as a constant of ``dtype``, if NumPy 2 would give a tensor of ``dtype`` mixed
    with it (a weak Python scalar whose value fits, or a NumPy scalar of that very dtype).

    Raises:
      StagingTypeError: naming ``what`` (the variable) and both types.
    """
    if isinstance(value, np.generic):
        fits = value.dtype == dtype
    else:
        fits = np.result_type(dtype, value) == dtype and (
            not isinstance(value, bool) or dtype == np.bool_)
    if fits:
        try:
            return constant(value, dtype)
        except OverflowError:
            pass
    try:  # (a suggestion that keeps the value: np.int64(inf) would raise, np.int64(0.5) give 0)
        exact = np.asarray(value, dtype=dtype).item() == value
    except (OverflowError, ValueError, TypeError):
        exact = False
    fix = (f"e.g. np.{dtype}({value!r})" if exact else
           f"a value of dtype {dtype} on every path, or {type(value).__name__}s on every path")
    raise errors.StagingTypeError(
        f"{what} is a {TensorType(dtype, ())} tensor on one path and the Python value "
        f"{value!r} ({type(value).__name__}) on another{errors.at()}; NumPy would not keep "
        f"dtype {dtype} for it: make both the same type ({fix})")


def array_type(x: np.ndarray) -> TensorType:
    """The type of a NumPy array constant (known shape)."""
    return TensorType(as_dtype(x.dtype), x.shape)


def to_tensor(value: object) -> Tensor:
    """A number as a tensor of its own default dtype; a Python number stays *weak* (it promotes
    like a Python scalar in later arithmetic, as the Python variable would)."""
    result = constant(value, default_dtype(value))
    if is_weak(value):
        value_info.mark_weak(result.value)
    return result


def type_text(type_: object) -> str:
    """A staged type as a message names it: a weak one as the Python number it stands for
    (``a Python float``, not ``f64[]~``)."""
    if isinstance(type_, TensorType) and type_.weak:
        return f"a Python {dtype_rules.weak_kind(type_.dtype).__name__}"
    return str(type_)


def is_weak(x: object) -> bool:
    """A Python scalar, or a tensor standing for one (``value_info``'s weak values), or a
    maybe-assigned variable holding one (a function's return slot merged from its returns)."""
    if isinstance(x, (Tensor, MaybeUnbound)):
        return value_info.is_weak(x.value)
    # (np.float64 and np.complex128 are float and complex subclasses: NumPy values all the same)
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def python_kind(x: object) -> type | None:
    """The Python scalar type ``x`` stands for (``is_weak``), or None for a NumPy value."""
    if not is_weak(x):
        return None
    return type(x) if isinstance(x, (bool, int, float, complex)) else dtype_rules.weak_kind(
        x.type.dtype)


def as_python_number(x: object) -> object:
    """``x`` (an integer or bool result) as a Python number: a staged value not already weak is
    copied (it may be a NumPy value elsewhere) and the copy marked weak; a NumPy bool or
    integer becomes Python's."""
    if isinstance(x, Tensor):
        if not value_info.is_weak(x.value):
            x = x.copy()
            value_info.mark_weak(x.value)
        return x
    return x.item() if isinstance(x, np.generic) else x


def mark_weak(value: ir.Value) -> None:
    """Marks a 0-d value that stands for a Python scalar on every path."""
    if value.type.is_scalar and value.type.dtype in WEAK_DTYPES:
        value_info.mark_weak(value)


@contextlib.contextmanager
def in_region(region: ir.Region) -> Iterator[ir.Region]:
    """Makes an already traced region current again, to add ops at its end (e.g. constants
    for the Python values a branch returned)."""
    trace = tracing.current()
    trace.regions.append(region)
    try:
        yield region
    finally:
        trace.regions.pop()


def alias_base(value: ir.Value) -> ir.Value | None:
    """The array ``value`` may share memory with (an argument, or an array it is a view of),
    for the ops layer's write checks; None for a fresh array or a NumPy scalar argument (which
    is immutable: ``n += 1`` rebinds ``n``)."""
    base = value_info.view_base(value)
    if base is None or value_info.is_scalar_argument(base):
        return None
    return base


# What a 0-d variable is in Python where control flow meets (``kind_0d``).
ARRAY, SCALAR, MIXED = "ndarray", "scalar", "mixed"


def kind_0d(x: object) -> str | None:
    """What the 0-d ``x`` is in Python: ARRAY (a 0-d ndarray: ``value_info.stands_for_ndarray``,
    or one made while tracing), SCALAR (a NumPy scalar or a Python number), MIXED (one on some
    paths and the other on others: ``value_info.mark_mixed``); None for anything else."""
    if isinstance(x, np.ndarray):
        return ARRAY if x.ndim == 0 else None
    if isinstance(x, (Tensor, MaybeUnbound)):
        if not isinstance(x.type, TensorType) or x.type.ndim:
            return None
        if value_info.mixed(x.value) is not None:
            return MIXED
        return ARRAY if not is_weak(x) and value_info.stands_for_ndarray(x.value) else SCALAR
    return SCALAR if is_number(x) else None


def join_kinds(*kinds: str | None) -> str | None:
    """The kind of a variable that has each of ``kinds`` on some path (None: no 0-d value)."""
    known = {k for k in kinds if k is not None}
    return known.pop() if len(known) == 1 else MIXED if known else None


def array_flag(x: object) -> bool | Tensor | None:
    """Where the 0-d ``x`` is a 0-d ndarray at run time: a bool known while tracing, a bool
    tensor (``value_info.array_flag``) for a mixed one that carries it; None where that is not
    known (a mixed one without it) or ``x`` is no 0-d value. An unset ``x``: False (never
    read)."""
    if is_unset(x):
        return False
    kind = kind_0d(x)
    if kind == MIXED:
        flag = value_info.array_flag(x.value)
        return None if flag is None else Tensor(flag)
    return None if kind is None else kind == ARRAY


def mark_kind(value: ir.Value, kind: str | None, what: str, where: str,
              returned: bool = False) -> None:
    """Records the 0-d ``kind`` that ``join_kinds`` gave ``what`` (a variable) where the paths
    of the staged ``where`` meet, on its merged ``value`` (see ``value_info.mark_mixed``);
    ``returned``: a mixed one carries its kind at run time, which returning it follows."""
    if kind == ARRAY:
        value_info.mark_array(value)
    elif kind == MIXED and value.type.ndim == 0:
        follows = ("; returning it follows it, its other uses do not" if returned
                   else ", which staged code does not follow")
        value_info.mark_mixed(value, errors.StagingTypeError(
            f"{what} is a 0-d ndarray on some paths through the staged {where}{errors.at()} "
            "and a NumPy scalar or a Python number on others: Python's type for it depends on "
            f"the path taken at run time{follows}"))


def placeholder(type_: object) -> ir.Value:
    """An ``undef`` value of ``type_``, for a variable that is not assigned on this path."""
    (value,) = tracing.emit("undef", (), {"type": type_})
    return value


class MaybeUnbound(Staged):
    """A variable assigned on some run-time paths only (``defined``: a formula saying when).

    It may be passed through staged ``if``s and loops (which may prove it always assigned, as
    after ``if not do_return: retval_ = ...``); any other use raises ``StagingUnboundError``.
    """

    __slots__ = ("value", "defined", "name", "loc", "none")

    def __init__(self, value: ir.Value, defined: logic.Formula, name: str,
                 loc: ir.Location | None, none: bool = False):
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "defined", defined)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "loc", loc)
        # the paths where it has no staged value assign None (``mx = None`` before a loop)
        object.__setattr__(self, "none", none)

    @property
    def type(self) -> object:
        return self.value.type

    def error(self, use: str | None = None) -> errors.StagingUnboundError:
        """The error for using this value; ``use`` says how where the use has no line of its
        own (the function object's results: "returned by f")."""
        what = errors.describe(self.name)
        used = f"is {use}" if use is not None else f"is used{errors.at()}"
        if self.none and not self.name.startswith("retval_"):  # return None: Python's too
            return errors.StagingUnboundError(
                f"{what} is None on some paths of the staged if/loop{errors.at(self.loc)} and a "
                f"staged {strong(self.type)} value on others, and {used}; a staged "
                f"value cannot be None at run time: give {self.name!r} a value of the same dtype "
                "before the if/loop (e.g. -np.inf or np.nan for a float, -1 for an int) and test "
                "for that value (or a separate flag) instead of `is None`")
        tail = ("some paths return None (`return None`, or no return on the path), others a "
                f"staged {strong(self.type)} value, which cannot be None at run time: return a "
                "value of that dtype there (e.g. -1 for an int, np.nan for a float) and test "
                "for it" if self.name.startswith("retval_") else
                f"assign {self.name!r} on every path (before the if/loop, or in an else:)")
        return errors.StagingUnboundError(
            f"{what} is assigned only on some paths of the staged if/loop{errors.at(self.loc)} "
            f"and {used}; {tail}")

    def __repr__(self) -> str:
        return f"<MaybeUnbound {self.name!r} {self.type}>"

    def __getattr__(self, name: str) -> object:
        raise self.error()


def _raise(self: MaybeUnbound, *args: object, **kwargs: object) -> object:
    raise self.error()


_BINARY = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
           "lshift", "rshift", "and", "xor", "or")
for _name in ("bool", "len", "iter", "contains", "getitem", "setitem", "call", "str", "format",
              "index", "int", "float", "complex", "neg", "pos", "abs", "invert", "eq", "ne",
              "lt", "le", "gt", "ge", "array", "array_ufunc", "array_function", "setattr",
              *_BINARY, *(f"r{op}" for op in _BINARY), *(f"i{op}" for op in _BINARY)):
    setattr(MaybeUnbound, f"__{_name}__", _raise)
MaybeUnbound.__hash__ = None  # type: ignore[assignment]
del _name
