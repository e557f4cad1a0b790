"""The NumPy reference interpreter: runs a module's functions op by op with each op's ``evaluate``.

It is the semantic oracle every backend is tested against, so it favours being obviously right:
each function call gets a frame (a dict from ``ir.Value`` to its NumPy value; SSA values are
assigned once, so nested regions share their function's frame and see enclosing values, while a
recursive call gets its own), and every op's results are checked against its type rule, so an op
whose NumPy reference disagrees with its type rule fails loudly instead of giving a different
answer than compiled code would. An op that fails (a shape known only at run time, an index out
of range) re-raises its error with a note naming the op and the user's file and line.

Ops with regions run them through the ``run`` argument of ``evaluate``: ``run(region, args)``
returns the region's results; ops that call a function of the module use ``run.call(name, args)``,
and Variable ops reach the module's state table as ``run.module.live_state(index)``. Arithmetic on
0-d operands of one dtype uses the op's ``OpDef.scalar_operator`` (a Python operator on NumPy
scalars: the same values as the ufunc, as the plain program's ``p *= v`` computes them, and faster
than the ufunc on 0-d arrays).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
from autostage.runtime import config, inputs, ir, op_registry, printer
from autostage.runtime.types import TensorType, Type

_NOTE_PREFIX = "autostage: "
_PYTHON_FRAMES_PER_CALL = 12  # Python's limit is raised to this times RECURSION_LIMIT
_RECURSION_NOTES = 4  # notes kept on a RecursionError (one per staged call otherwise)


class TypeRuleMismatchError(TypeError):
    """An op's NumPy reference returned a value that its type rule does not describe.

    Example: a type rule says ``f32[?]`` but ``evaluate`` computes in float64. This is a bug in
    the op (its ``infer`` or its ``evaluate``), not in the user's program; fix the op so both
    agree with what NumPy does.
    """


def run(module: ir.Module, args: Sequence[np.ndarray | np.generic],
        function: str | None = None) -> tuple:
    """Runs the entry function of ``module`` (or the function named ``function``) on ``args``.

    Returns:
      the function's results: NumPy arrays, and NumPy scalars for 0-d results, as NumPy itself
      would give them (read-only arrays, e.g. constants, are copied).
    Raises:
      KeyError: the module has no function of that name.
      TypeError / ValueError: the arguments do not match the function's parameters.
      ir.UnboundStateError: a Variable op of a module read from text, whose state is a
        description only.
      Whatever an op raises, with a note naming the op and the user's file and line.
    """
    name = function or module.entry
    if name not in module.functions:
        raise KeyError(f"the module has no function named {name!r}; it has "
                       f"{', '.join(module.functions)}")
    with np.errstate(all="ignore"):  # as compiled code: no FloatingPointError, no warnings
        results = Frame(module, module.functions[name]).run_function(args)
    return tuple(to_user(value) for value in results)


class Frame:
    """One call of a function: the runtime values of its SSA values.

    An instance is also the ``run`` callable handed to ``evaluate`` (``run(region, args)``,
    ``run.call(name, args)``, ``run.module``).
    """

    __slots__ = ("module", "function", "values", "names", "depth")

    def __init__(self, module: ir.Module, function: ir.Function, depth: int = 0):
        self.module = module
        self.function = function
        self.depth = depth  # calls between this frame and the entry function's
        self.values: dict[ir.Value, object] = {}
        self.names: dict[ir.Value, str] | None = None  # print names, computed for error notes

    def run_function(self, args: Sequence) -> tuple:
        """Runs the whole function on ``args`` after checking them against its parameters."""
        params = self.function.body.args
        if len(args) != len(params):
            raise TypeError(f"function @{self.function.name} takes {len(params)} arguments "
                            f"({len(args)} given)")
        for i, (param, arg) in enumerate(zip(params, args, strict=True)):
            _check_argument(self.function.name, i, param.type, arg)
        return self(self.function.body, args)

    def __call__(self, region: ir.Region, args: Sequence) -> tuple:
        """Runs ``region`` with its arguments bound to ``args`` and returns what it yields."""
        values = self.values
        for param, arg in zip(region.args, args, strict=True):
            values[param] = arg
        for op in region.ops:
            operands = tuple([values[v] for v in op.operands])
            try:
                results = self.evaluate(op, operands)
                if len(results) != len(op.results):
                    raise TypeRuleMismatchError(
                        f"op {op.name!r} computed {len(results)} results, its type rule gives "
                        f"{len(op.results)}")
                for value, result in zip(op.results, results, strict=True):
                    if type(value.type) is TensorType:
                        _check_result(op, value.type, result)
                        if (value.type.ndim == 0 and isinstance(result, np.ndarray)
                                and result.base is not None):
                            result = result.copy()  # a value, never a view (passes/inplace.py)
                    values[value] = result
            except Exception as e:
                self._add_note(e, op)
                raise
        return tuple([values[v] for v in region.results])

    def evaluate(self, op: ir.Op, operands: tuple) -> tuple:
        """The results of ``op`` on ``operands`` (a backend that runs the IR op by op, as the
        cuda target does, overrides this)."""
        definition = op_registry.REGISTRY[op.name]
        scalar_op = definition.scalar_operator  # same values, faster on 0-d operands
        if scalar_op is not None and _same_dtype_scalars(operands) and not (
                op.name in ("absolute", "multiply") and operands[0].dtype.kind == "c"
                and not op.attrs.get("scalar_math")):  # (np.abs, np.multiply: the loop's)
            return (np.asarray(scalar_op(*[v[()] for v in operands])),)
        return definition.evaluate(op, operands, self)

    def callee_frame(self, function: ir.Function) -> Frame:
        """The frame of a call of ``function`` from this one."""
        return Frame(self.module, function, self.depth + 1)

    def call(self, name: str, args: Sequence) -> tuple:
        """Runs function ``name`` of the module in a new frame (the ``call`` op's semantics).
        Staged recursion deeper than ``RECURSION_LIMIT`` raises RecursionError, as the cpu
        target does. Python's own limit is raised for the call tree to
        ``_PYTHON_FRAMES_PER_CALL`` frames per staged call (about 8 are used); if it is reached
        anyway (a caller lowered it), the RecursionError says so."""
        limit = config.RECURSION_LIMIT.value()
        if self.depth >= limit:
            raise RecursionError(f"maximum recursion depth exceeded in staged recursion "
                                 f"(AUTOSTAGE_RECURSION_LIMIT={limit})")
        saved = raised = sys.getrecursionlimit()
        if self.depth == 0 and saved < _PYTHON_FRAMES_PER_CALL * limit:
            raised = _PYTHON_FRAMES_PER_CALL * limit  # for this call tree only
            sys.setrecursionlimit(raised)
        try:
            return self.callee_frame(self.module.functions[name]).run_function(args)
        except RecursionError as e:
            text = str(e)  # Python's own, not a RecursionError the program raises itself
            if (not text.startswith("maximum recursion depth exceeded")
                    or text.startswith("maximum recursion depth exceeded in staged")):
                raise
            raise RecursionError(
                f"maximum recursion depth exceeded in staged recursion after {self.depth + 1} "
                f"calls: the interpreter target runs each staged call in several Python frames "
                f"and reached Python's limit (sys.getrecursionlimit() = "
                f"{sys.getrecursionlimit()}); the cpu target allows "
                f"AUTOSTAGE_RECURSION_LIMIT calls") from None
        finally:
            if self.depth == 0 and sys.getrecursionlimit() == raised != saved:
                sys.setrecursionlimit(saved)  # (unless another thread set it meanwhile)

    def _add_note(self, error: BaseException, op: ir.Op) -> None:
        """Names the failing op and its user location once; enclosing calls add where they were
        called from, like a traceback of the staged program."""
        notes = getattr(error, "__notes__", ())
        noted = any(n.startswith(_NOTE_PREFIX) for n in notes)
        if noted and "callee" not in op.attrs:
            return
        if isinstance(error, RecursionError) and len(notes) >= _RECURSION_NOTES:
            return  # a runaway recursion: the innermost calls tell where
        if self.names is None:
            self.names = printer.value_names(self.function)
        where = f"at {op.loc}" if op.loc is not None else "at an unknown location"
        if op.loc is not None and op.loc.function:
            where += f" (in {op.loc.function})"
        what = "called from" if noted else "error in"
        if not noted and op.loc is not None:
            try:  # where tracebacks show the failing op (autostage/tracebacks.py)
                error.__autostage_location__ = op.loc
            except (AttributeError, TypeError):
                pass
        error.add_note(f"{_NOTE_PREFIX}{what} `{printer.format_op(op, self.names)}` {where}")


def _is_scalar(v: object) -> bool:
    return isinstance(v, np.generic) or (type(v) is np.ndarray and v.ndim == 0)


def _same_dtype_scalars(operands: tuple) -> bool:
    if not operands or not _is_scalar(operands[0]):
        return False
    dtype = operands[0].dtype
    return all(_is_scalar(v) and v.dtype == dtype for v in operands[1:])


def _check_argument(function: str, index: int, expected: Type, arg: object) -> None:
    if not isinstance(expected, TensorType):
        return
    if not (isinstance(arg, np.ndarray | np.generic) or inputs.device_array(arg)):
        raise TypeError(f"argument {index} of @{function} must be a NumPy array or scalar of type "
                        f"{expected}, not {type(arg).__name__}")
    if arg.dtype != expected.dtype or arg.ndim != expected.ndim:
        raise TypeError(f"argument {index} of @{function} has dtype {arg.dtype} and rank "
                        f"{arg.ndim}; the function was staged for {expected}")
    if any(d is not None and d != n for d, n in zip(expected.shape, arg.shape, strict=True)):
        raise ValueError(f"argument {index} of @{function} has shape {arg.shape}; the function "
                         f"was staged for {expected}")


def _check_result(op: ir.Op, expected: TensorType, result: object) -> None:
    dtype = getattr(result, "dtype", None)
    shape = getattr(result, "shape", None)
    if dtype == expected.dtype and (shape == expected.shape or (
            shape is not None and len(shape) == len(expected.shape)
            and all(d is None or d == n for d, n in zip(expected.shape, shape, strict=True)))):
        return  # the first test is the common case: fully known shapes, scalars
    got = (f"a {dtype} value of shape {shape}" if dtype is not None
           else f"a Python {type(result).__name__}")
    raise TypeRuleMismatchError(
        f"op {op.name!r} computed {got}, but its type rule says {expected}: its NumPy reference "
        "and its type rule disagree (a bug in the op)")


def to_user(value: object) -> object:
    """What NumPy would hand the user: 0-d arrays as NumPy scalars, writable arrays."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:
            return value.copy()
    return value
