"""A staged value's operators with an operand that is no number, as NumPy and Python compute
them (``x == "a"``, ``x != None``, ``"abc" @ w``, ``x + obj``).

Most such operands give a result that cannot depend on the staged value: NumPy finds no loop
for a string (its ``UFuncTypeError``), compares an array with ``None``, a dict or a plain object
element by element as Python objects (``False`` everywhere for ``==``, in the array's shape),
and Python's numbers raise their ``TypeError`` or compare unequal. Those are computed on a
stand-in of the staged value's kind (a Python number, a NumPy scalar, an array of its dtype and
rank): the exception is raised as it is, a comparison's answer is the result (an array of it in
the value's shape). Until the forty-fifth session these operands went to Python's fallback,
which made ``x == "a"`` of an array Python's ``False``, not NumPy's array of them.

An operand whose class defines the operator (or its reflection) gets the staged value in
Python's dispatch where that value is a Python number (its method may compute with it); beside
a NumPy value, whose operators would apply that method to each element, it is refused. Objects
of NumPy's protocols (``__array__``, ``__array_ufunc__``...), buffers and autostage's own staged
values keep Python's dispatch.
"""

from __future__ import annotations

import dis
import operator
import sys
import types

import numpy as np
from autostage.runtime import array_shapes, captures, dtype_rules, tracing, value_info
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.tensor import StagingTypeError, Tensor

# ops (NumPy's names) -> Python's operator, its symbol, the special methods that decide it
_OPERATORS = {
    "add": (operator.add, "+", "add"), "subtract": (operator.sub, "-", "sub"),
    "multiply": (operator.mul, "*", "mul"), "true_divide": (operator.truediv, "/", "truediv"),
    "floor_divide": (operator.floordiv, "//", "floordiv"),
    "remainder": (operator.mod, "%", "mod"), "power": (operator.pow, "**", "pow"),
    "bitwise_and": (operator.and_, "&", "and"), "bitwise_or": (operator.or_, "|", "or"),
    "bitwise_xor": (operator.xor, "^", "xor"), "left_shift": (operator.lshift, "<<", "lshift"),
    "right_shift": (operator.rshift, ">>", "rshift"), "matmul": (operator.matmul, "@", "matmul"),
    "equal": (operator.eq, "==", "eq"), "not_equal": (operator.ne, "!=", "ne"),
    "less": (operator.lt, "<", "lt"), "less_equal": (operator.le, "<=", "le"),
    "greater": (operator.gt, ">", "gt"), "greater_equal": (operator.ge, ">=", "ge"),
    "divmod": (divmod, "divmod", "divmod")}
_REFLECTION = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_SYMBOLS = {stem: symbol for _, symbol, stem in _OPERATORS.values()}
_MIRRORED = {_SYMBOLS[stem]: _SYMBOLS[mirror] for stem, mirror in _REFLECTION.items()}  # "<": ">"
_MIRROR = {symbol: python_op for python_op, symbol, _ in _OPERATORS.values()}
_NUMPY_PROTOCOLS = ("__array__", "__array_ufunc__", "__array_function__", "__array_interface__",
                    "__array_priority__", "__array_struct__")
_BUFFERS = (bytearray, memoryview)  # (NumPy reads them as uint8 arrays)


def result(op: str, value: Tensor, other: object, reflected: bool) -> object:
    """``value op other`` (``other op value`` if ``reflected``) for an ``other`` that is no
    operand of NumPy's arithmetic; NotImplemented for Python's own dispatch."""
    obj = captures.unwrap(other)
    if _dispatched_by_python(obj):
        return NotImplemented
    _, symbol, stem = _OPERATORS[op]
    if not _value_free(stem, obj):
        if value_info.is_weak(value.value):
            return NotImplemented
        raise StagingTypeError(
            f"{_where()}`{symbol}` of a staged NumPy value and a {type(obj).__name__} object, "
            "whose class defines it: NumPy would apply that method to each element as a Python "
            "object at run time, which staged code cannot; compute it outside the converted "
            "function, or give the operator numbers or arrays")
    stand_in = _stand_in(value)
    written = _written(sys._getframe(2)) if stem in _REFLECTION else None
    if written is not None and written == _MIRRORED[symbol]:
        answer = _MIRROR[written](obj, stand_in)  # (``"a" < x`` calls x.__gt__: as written)
    else:
        python_op = _OPERATORS[op][0]
        answer = python_op(obj, stand_in) if reflected else python_op(stand_in, obj)
    if isinstance(answer, np.ndarray) and answer.dtype == np.bool_ and answer.ndim == value.ndim:
        return array_shapes.full_like(value, bool(answer.flat[0]), dtype=np.bool_)
    if type(answer) in (bool, np.bool_):
        return answer
    raise StagingTypeError(  # (a value made from the number: "ab" * n, b"x" + n)
        f"{_where()}`{symbol}` of a {type(obj).__name__} and a staged value makes a "
        f"{type(answer).__name__} from the value, which exists only when the staged function "
        "runs: compute it outside the converted function")


def in_place(op: str, value: Tensor, other: object) -> None:
    """Raises what ``value op= other`` raises for an ``other`` whose result with any number is
    the same (NumPy's cast error, Python's TypeError); nothing for other operands."""
    obj = captures.unwrap(other)
    _, symbol, stem = _OPERATORS[op]
    if _dispatched_by_python(obj) or not _value_free(stem, obj):
        return
    getattr(operator, f"i{stem}")(_stand_in(value), obj)  # (raises, or makes a value)
    raise StagingTypeError(
        f"{_where()}`{symbol}=` of a staged value and a {type(obj).__name__} makes a value "
        "from both that exists only when the staged function runs: compute it outside the "
        "converted function")


def _where() -> str:
    loc = tracing.user_location()
    return f"{loc}: " if loc is not None else ""


def _written(frame: types.FrameType | None) -> str | None:
    """The comparison the instruction ``frame`` runs writes (``"<"``), if it is one."""
    if frame is None:
        return None
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset == frame.f_lasti:
            return instruction.argval if instruction.opname == "COMPARE_OP" else None
    return None


def _dispatched_by_python(obj: object) -> bool:
    """Whether ``obj`` takes part in NumPy's arithmetic in ways of its own (autostage's staged
    values, buffers NumPy reads as arrays, objects of NumPy's protocols): Python's dispatch."""
    return isinstance(obj, (Staged, *_BUFFERS)) or any(
        hasattr(type(obj), name) for name in _NUMPY_PROTOCOLS)


def _value_free(stem: str, obj: object) -> bool:
    """Whether ``obj``'s result with any number under the operator ``stem`` is the same: a
    builtin object (a string, None, a dict, a function...), or an object whose class defines
    neither side of the operator (nor ``==``, for comparisons)."""
    kind = type(obj)
    if kind.__module__ == "builtins":
        return True
    names = ("__eq__", "__ne__") if stem in ("eq", "ne") else (
        f"__{stem}__", f"__{_REFLECTION[stem]}__") if stem in _REFLECTION else (
        f"__{stem}__", f"__r{stem}__")
    return all(getattr(kind, name, None) is getattr(object, name, None) for name in names)


def _stand_in(value: Tensor) -> object:
    """A value of ``value``'s kind: its Python number, NumPy scalar, or array of its rank."""
    if value_info.is_weak(value.value):
        return dtype_rules.weak_kind(value.dtype)(0)
    if value.ndim > 0 or value_info.is_array(value.value):
        return np.zeros((1,) * value.ndim, value.dtype)
    return value.dtype.type(0)
