"""The ``py_function`` op: plain Python called from staged code at run time, and its rules.

``autostage.py_function(fn, args, result_spec)`` (``runtime/staging/py_function.py``) calls
``fn(*args)`` once per execution, in program order, like ``tf.py_function``: in staged code it
emits this op, which runs at run time (every loop iteration, only on the taken branch); outside
staged code (plain Python, a ``to_graph`` run, a tiered start's Python calls) it calls ``fn`` at
once. Both paths pass ``fn`` the same values (``as_argument``) and check its results by one rule
(``check_results``), so results and errors are the same:

* arguments: a staged or NumPy array arrives as a read-only copy (``fn`` may keep it; writing
  into it is an error, since the staged program could not see the change), a 0-d one as a NumPy
  scalar, a staged value standing for a Python number (``x.shape[0]``, a ``range`` index) as that
  Python number, and Python scalars, strings and None as they are;
* results: each must have its ``TensorSpec``'s dtype exactly (after ``np.asarray``), or be a
  Python bool/int/float/complex that NumPy 2 casts to it when mixed with it (an int for a float
  spec; never a float for an int spec), and its shape, a ``None`` dimension matching any size;
  else a TypeError (dtype) or ValueError (shape, count) naming ``fn``, the result, both types and
  the user's line. Results are fresh C-contiguous arrays (0-d: NumPy scalars) of exactly the
  spec's types. An exception ``fn`` raises propagates as it is.

The op: operands are the staged arguments; attrs ``fn`` (the index of the callable in the
module's ``callables`` table: a function is not plain data, ``ir.Module.callables``), ``name``
(its qualified name, for messages and the printed IR), ``args`` (how to call it: an int ``k`` is
operand ``k`` as a NumPy value, ``("item", k)`` operand ``k`` as a Python number, ``("value", v)``
the constant ``v``), ``result_types`` and ``sequence`` (``fn`` returns a tuple or list of them;
else one value, or, with no result types, anything, ignored). Its effects are unknown (Python may
do anything), so no pass removes, merges or moves it; it has no derivative (a GradientError).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from autostage.runtime import ir, op_registry, printer
from autostage.runtime.autodiff.backprop import GradientError
from autostage.runtime.types import TensorType

_PYTHON_SCALARS = (bool, int, float, complex)
# Arguments passed to fn as they are (a staged op keeps them in its ``args`` template).
CONSTANTS = (np.generic, *_PYTHON_SCALARS, str, type(None))
_RULE = ("a result must have its spec's dtype exactly, or be a Python bool/int/float/complex "
         "that NumPy casts to that dtype (same kind), and its spec's shape (None: any size)")


def qualified_name(fn: object) -> str:
    """``module.qualname`` of a callable (a ``functools.partial``: of its function), or the
    name a module read from text keeps (``ir.UnboundCallable``)."""
    if isinstance(fn, ir.UnboundCallable):
        return fn.name
    inner = fn.func if isinstance(fn, functools.partial) else fn
    qualname = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    module = getattr(inner, "__module__", None) or type(inner).__module__
    return f"{module}.{qualname}"


def as_argument(value: object) -> object:
    """What ``fn`` receives for an array or NumPy value: a read-only copy of an array, a NumPy
    scalar for a 0-d one, anything else as it is."""
    if type(value) is not np.ndarray:
        return value
    if value.ndim == 0:
        return value[()]
    copy = np.array(value)
    copy.flags.writeable = False
    return copy


def arguments(template: tuple, values: Sequence) -> list:
    """The arguments of ``fn`` from the op's ``args`` template and its operands' values."""
    out = []
    for item in template:
        if type(item) is int:
            out.append(as_argument(values[item]))
        elif item[0] == "item":
            out.append(values[item[1]].item())
        else:
            out.append(item[1])
    return out


def check_results(result: object, types: tuple[TensorType, ...], sequence: bool, name: str,
                  where: object) -> tuple:
    """``fn``'s result as NumPy values of exactly ``types`` (module docstring: the rule);
    ``where`` (the user's line) is formatted only for a message.

    Raises:
      TypeError: a result of another dtype, or not an array or number.
      ValueError: a result of another shape, or another number of results.
    """
    if not sequence:
        if not types:
            return ()  # result_spec None: the result is not used
        return (_checked(result, types[0], 0, name, where),)
    if not isinstance(result, tuple | list):
        raise TypeError(f"{where}: py_function({name}) returned {describe(result)}, but its "
                        f"result_spec declares a sequence of {len(types)} results")
    if len(result) != len(types):
        raise ValueError(f"{where}: py_function({name}) returned {len(result)} results, but "
                         f"its result_spec declares {len(types)}")
    return tuple([_checked(item, t, i, name, where)
                  for i, (item, t) in enumerate(zip(result, types, strict=True))])


def _checked(value: object, expected: TensorType, index: int, name: str, where: object
             ) -> object:
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype != expected.dtype:
            raise _mismatch(TypeError, value, expected, index, name, where)
        if value.shape != expected.shape and (value.ndim != expected.ndim or any(
                d is not None and d != n for d, n in zip(expected.shape, value.shape,
                                                         strict=True))):
            raise _mismatch(ValueError, value, expected, index, name, where)
        if value.ndim == 0:
            return value[()]  # a NumPy scalar: immutable, shared with no one
        return np.array(value, order="C")  # a fresh copy: fn may keep or change its own
    if not isinstance(value, _PYTHON_SCALARS) or expected.ndim or (
            np.result_type(expected.dtype, value) != expected.dtype):
        raise _mismatch(TypeError, value, expected, index, name, where)
    try:
        return np.asarray(value, dtype=expected.dtype)[()]
    except OverflowError:
        raise TypeError(f"{where}: py_function({name}) result {index} is {describe(value)}, "
                        f"which does not fit its result_spec {expected}") from None


def _mismatch(kind: type[Exception], value: object, expected: TensorType, index: int, name: str,
              where: object) -> Exception:
    rule = f"; {_RULE}" if kind is TypeError else ""
    return kind(f"{where}: py_function({name}) result {index} is {describe(value)}, but its "
                f"result_spec says {expected}{rule}")


def describe(value: object) -> str:
    if isinstance(value, np.ndarray | np.generic):
        return (f"a {value.dtype} scalar" if value.ndim == 0
                else f"a {value.dtype} array of shape {value.shape}")
    return f"a Python {type(value).__name__} ({value!r:.40})"


def call(fn: Callable, template: tuple, values: Sequence, types: tuple, sequence: bool,
         name: str, where: str, note: Callable[[], str]) -> tuple:
    """Runs one ``py_function`` op: ``fn`` on its arguments, its results checked. An exception
    ``fn`` raises gets ``note()`` (the op and the user's line, as the interpreter notes errors)
    and no op location, so that its traceback ends where ``fn`` raised it."""
    try:
        result = fn(*arguments(template, values))
    except Exception as e:
        e.add_note(note())
        raise
    return check_results(result, types, sequence, name, where)


# -- the op -----------------------------------------------------------------------------------

def _infer(operand_types: tuple, attrs: dict) -> tuple:
    types = attrs["result_types"]
    if not all(isinstance(t, TensorType) for t in types):
        raise TypeError(f"py_function results must be tensors, got {types}")
    return tuple(types)


def _evaluate(op: ir.Op, values: tuple, run: Any) -> tuple:
    attrs = op.attrs
    fn = run.module.live_callable(attrs["fn"])
    return call(fn, attrs["args"], values, attrs["result_types"], attrs["sequence"],
                attrs["name"], str(op.loc), lambda: _note(op, run.function))


def _note(op: ir.Op, function: ir.Function) -> str:
    """The interpreter's note for an error in ``op`` (``interpreter.Frame._add_note``)."""
    where = f"at {op.loc}" if op.loc is not None else "at an unknown location"
    if op.loc is not None and op.loc.function:
        where += f" (in {op.loc.function})"
    text = printer.format_op(op, printer.value_names(function))
    return f"autostage: error in `{text}` {where}"


def _verify(op: ir.Op, module: ir.Module) -> str | None:
    """``fn`` indexes the module's callables table."""
    index = op.attrs.get("fn")
    if not (type(index) is int and 0 <= index < len(module.callables)):
        return (f"names callable {index!r}, which is not in the module's table of "
                f"{len(module.callables)} entries")
    return None


def _no_gradient(op: ir.Op, cotangents: tuple) -> tuple:
    raise GradientError(
        f"autostage cannot differentiate through py_function({op.attrs['name']}) (at {op.loc}): "
        "it runs Python at run time, whose derivative autostage cannot see; wrap its result in "
        "autostage.stop_gradient if no gradient should flow through it, or compute it in staged "
        "code")


op_registry.register(
    "py_function", _infer, _evaluate, effects=op_registry.UNKNOWN, raises=(Exception,),
    verify=_verify, bare_attr="name", vjp=_no_gradient,
    doc="operands: the staged arguments; attrs: fn (index into Module.callables), name, args "
        "(the call's template), result_types, sequence; calls Python at run time")
