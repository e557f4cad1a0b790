"""``autostage.py_function(fn, args, result_spec)``: the escape hatch to plain Python.

While a function is traced it emits a ``py_function`` op, which calls ``fn`` at run time, once
per execution (``runtime/ops/py_function.py`` has its semantics: what ``fn`` receives, the result
rule); otherwise it calls ``fn`` at once, with the same values and the same checks, so a plain
Python run (``to_graph``, a tiered start) gives what a staged run gives. ``fn`` itself is never
converted: ``autostage`` calls stay as written in converted code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from autostage.runtime import ir, tracing, value_info
from autostage.runtime.ops.py_function import (
    CONSTANTS,
    as_argument,
    check_results,
    describe,
    qualified_name,
)
from autostage.runtime.staging.values import MaybeUnbound
from autostage.runtime.tensor import Tensor, constant
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.types import TensorType


def py_function(fn: Callable, args: Sequence, result_spec: Any) -> Any:
    """Calls ``fn(*args)`` at run time, once per execution, and returns its checked results.

    Args:
      fn: any Python callable; it is called as it is (never converted or staged).
      args: a list or tuple of staged tensors, NumPy arrays or scalars, Python scalars, strings
        or None (reach other objects from ``fn`` itself: a closure or ``functools.partial``).
      result_spec: a ``TensorSpec``, a tuple or list of them, or None (the result is ignored).

    Returns:
      The results as the spec's types (staged tensors while tracing, NumPy values otherwise): one
      value, a tuple or list like ``result_spec``, or None.

    Raises:
      TypeError, ValueError: a bad spec or argument (when called), or results that do not fit
        ``result_spec`` (when ``fn`` has run), naming the user's line.
    """
    where = _Caller(sys._getframe(1))
    if not callable(fn):
        raise TypeError(f"{where}: py_function needs a callable, got {describe(fn)}")
    name = qualified_name(fn)
    types, sequence = _result_types(result_spec, where)
    if not isinstance(args, tuple | list):
        raise TypeError(f"{where}: py_function({name})'s args must be a list or tuple, got "
                        f"{describe(args)}")
    if tracing.current() is not None:
        results = _stage(fn, args, types, sequence, name, where.location())
    else:
        for i, arg in enumerate(args):
            _check_argument(arg, i, name, where)
        result = fn(*[as_argument(a) for a in args])
        results = check_results(result, types, sequence, name, where)
    if result_spec is None:
        return None
    if not sequence:
        return results[0]
    return list(results) if isinstance(result_spec, list) else tuple(results)


class _Caller:
    """The user's line that called ``py_function``, found only when it is needed (a message, a
    staged op): finding it walks the stack, which costs more than a plain call of ``fn``."""

    __slots__ = ("frame",)

    def __init__(self, frame: Any):
        self.frame = frame

    def location(self) -> ir.Location | None:
        return tracing.frame_location(self.frame)

    def __str__(self) -> str:
        loc = self.location()
        return str(loc) if loc is not None else "<unknown location>"


def _result_types(spec: Any, where: object) -> tuple[tuple[TensorType, ...], bool]:
    """The result types, and whether ``fn`` returns a sequence of them."""
    if spec is None:
        return (), False
    if isinstance(spec, TensorSpec):
        return (spec.type,), False
    if isinstance(spec, tuple | list) and all(isinstance(s, TensorSpec) for s in spec):
        return tuple(s.type for s in spec), True
    raise TypeError(f"{where}: py_function's result_spec must be a TensorSpec, a tuple or list "
                    f"of them, or None; got {spec!r:.60}")


def _check_argument(arg: object, index: int, name: str, where: object) -> None:
    if not isinstance(arg, (np.ndarray, *CONSTANTS)):
        raise TypeError(f"{where}: argument {index} of py_function({name}) is "
                        f"{describe(arg)}; pass arrays, NumPy or Python scalars, strings or None, "
                        "and reach other objects from the function itself (a closure or "
                        "functools.partial)")


def _stage(fn: Callable, args: Sequence, types: tuple, sequence: bool, name: str,
           loc: ir.Location | None) -> tuple:
    """Emits the op: staged arguments become operands, the others constants of its template."""
    where = str(loc) if loc is not None else "<unknown location>"
    template, operands = [], []
    for i, arg in enumerate(args):
        if isinstance(arg, MaybeUnbound):
            raise arg.error()
        if isinstance(arg, np.ndarray):
            arg = constant(arg)
        if isinstance(arg, Tensor):
            weak = value_info.is_weak(arg.value)  # stands for a Python number: fn gets one
            template.append(("item", len(operands)) if weak else len(operands))
            operands.append(arg.value)
        else:
            _check_argument(arg, i, name, where)
            template.append(("value", arg))
    index = tracing.current().module.callable_index(fn)
    attrs = {"fn": index, "name": name, "args": tuple(template), "result_types": types,
             "sequence": sequence}
    return tuple(Tensor(r) for r in tracing.emit("py_function", operands, attrs, loc=loc))
