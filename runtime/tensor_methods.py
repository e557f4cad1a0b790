"""The NumPy surface of ``Tensor``: operators, methods, conversions that cannot be staged, and the
operator hooks for subscripts and in-place operators.

Operators are generated from tables (Python dunder -> op), so ``x * 2.0`` and ``2.0 * x`` stage
the same ``multiply`` with NumPy 2's weak-scalar promotion. A staged tensor cannot become a Python
value at trace time (``int(x)``, ``len(x)`` of an unknown dimension, ``np.asarray``-ing it in a
library): those raise ``StagingTypeError`` saying what to do instead. In-place operators
(``x += 1``) compute a new value, except on a function argument (or a view of one), whose change
the caller would see in Python: that is a clear ``StagingError``. The runtime package imports
this module (it sits above ``tensor`` and every module it attaches methods from).
"""

from __future__ import annotations

import dis
import functools
import inspect
import sys
from collections.abc import Callable

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_api,
    array_identity,
    array_shapes,
    constant_indexing,
    dtype_rules,
    foreign_operands,
    ndarray_attributes,
    ndarray_results,
    numpy_dispatch,
    numpy_grids,
    numpy_power,
    numpy_shapes,
    numpy_statistics,
    python_numbers,
    tracing,
    value_info,
    view_writes,
)
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.ops.elementwise import UFUNCS
from autostage.runtime.tensor import StagingTypeError, Tensor
from autostage.runtime.types import strong

# dunder stem -> op; each gets __stem__ and the reflected __rstem__ (unless None).
BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift",
}
COMPARISON_OPERATORS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                        "gt": "greater", "ge": "greater_equal"}
UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}
# operator-module in-place name (the operators' hook names) -> op
IN_PLACE = {f"i{stem}": op for stem, op in BINARY_OPERATORS.items()} | {"imatmul": "matmul"}

_OPERAND_TYPES = (Tensor, bool, int, float, complex, np.ndarray, np.generic, list, tuple, range)


def _operand(self: Tensor, other: object) -> object:
    """``other`` as NumPy reads it beside ``self``, or NotImplemented (not an operand type): a
    ``range`` is the array of its items (``w + range(3)``; refused, the TypeError was caught by
    the user's ``except TypeError``), but not beside a Python number (``n + range(3)`` is
    Python's TypeError)."""
    if not isinstance(other, _OPERAND_TYPES):
        return NotImplemented
    if type(other) is not range:
        return other
    if value_info.is_weak(self.value):
        return NotImplemented
    return array_shapes.arange(other.start, other.stop, other.step)


_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/",
            "floor_divide": "//", "remainder": "%", "power": "**", "bitwise_and": "&",
            "bitwise_or": "|", "bitwise_xor": "^", "left_shift": "<<", "right_shift": ">>"}


def _with_sequence(op: str, number: Tensor, sequence: list | tuple, reflected: bool) -> None:
    """Raises what Python raises for ``sequence op number`` (``reflected``) or ``number op
    sequence``, ``number`` a staged Python number or NumPy scalar (not an array: NumPy's
    element-wise operators apply, as to any array): an int repeats the sequence, whose length
    would be staged (refused); other numbers are Python's TypeErrors. A NumPy scalar takes
    part in NumPy's element-wise operators but ``*``."""
    weak = value_info.is_weak(number.value)
    if not weak and op != "multiply":
        return
    kind = type(sequence).__name__
    name = (dtype_rules.weak_kind(number.dtype).__name__ if weak
            else f"numpy.{number.dtype.type.__name__}")
    if op == "multiply" and number.dtype.kind in "iu" or weak and number.dtype.kind == "b":
        loc = tracing.user_location()
        raise tracing.StagingError(
            f"{f'{loc}: ' if loc is not None else ''}a {kind} repeated by a staged int "
            f"(such as `[0.0] * n`) would have a length known only when the function runs: "
            "build an array instead (`np.zeros(n)`, `np.full(n, value)`), or repeat by a "
            "Python int")
    if op == "multiply":
        raise TypeError(f"can't multiply sequence by non-int of type '{name}'")
    if op == "add" and reflected:
        raise TypeError(f'can only concatenate {kind} (not "{name}") to {kind}')
    left, right = (kind, name) if reflected else (name, kind)
    raise TypeError(f"unsupported operand type(s) for {_SYMBOLS[op]}: '{left}' and '{right}'")


def _raise_casting_error(ufunc: np.ufunc, result: np.dtype, target: np.dtype) -> None:
    """Raises NumPy's own error (a ``UFuncTypeError``, its message) for an in-place ``ufunc``
    whose ``result`` dtype cannot be cast to the array's: NumPy's ufunc on 1x1 arrays of these
    dtypes raises it."""
    out = np.zeros((1, 1), target)
    ufunc(*[np.zeros((1, 1), result)] * ufunc.nin, out=out)
    raise AssertionError(f"NumPy casts {result} to {target} for {ufunc.__name__}")  # (unreached)


def _binary(op: str, reflected: bool):
    """A Python operator: Python's semantics (exceptions, exact ints) when both operands are
    Python numbers (``python_numbers``), NumPy's otherwise."""
    def method(self: Tensor, other: object) -> Tensor:
        operand = _operand(self, other)
        if operand is NotImplemented:
            return foreign_operands.result(op, self, other, reflected)
        other = operand
        if type(other) in (list, tuple) and self.ndim == 0 and not value_info.is_array(
                self.value):
            _with_sequence(op, self, other, reflected)
        if reflected:
            return python_numbers.binary(op, other, self)
        return python_numbers.binary(op, self, other)
    return method


def _comparison(op: str):
    def method(self: Tensor, other: object) -> Tensor:
        operand = _operand(self, other)
        return foreign_operands.result(op, self, other, False) if operand is NotImplemented \
            else python_numbers.compare(op, self, operand)
    return method


def _matmul(reflected: bool):
    def method(self: Tensor, other: object) -> Tensor:
        operand = _operand(self, other)
        if operand is NotImplemented:
            return foreign_operands.result("matmul", self, other, reflected)
        return array_api.matmul(operand, self) if reflected \
            else array_api.matmul(self, operand)
    return method


def _divmod(reflected: bool):
    def method(self: Tensor, other: object) -> object:
        if not isinstance(other, _OPERAND_TYPES):
            return foreign_operands.result("divmod", self, other, reflected)
        return python_numbers.divmod_(other, self) if reflected \
            else python_numbers.divmod_(self, other)
    return method


def _power(self: Tensor, other: object, modulo: object = None) -> Tensor:
    """``x ** y`` and ``pow(x, y)``; ``pow(x, y, mod)`` is refused (NumPy values do not take a
    modulo; a Python int's three-argument pow is not staged)."""
    if modulo is not None:
        loc = tracing.user_location()
        raise StagingTypeError(
            f"pow() with three arguments of a staged value{f' at {loc}' if loc else ''} is not "
            "supported (NumPy values refuse it, and a Python int's modular power is not "
            "staged); write (x ** y) % mod, which gives Python's result or an OverflowError")
    operand = _operand(self, other)
    return foreign_operands.result("power", self, other, False) if operand is NotImplemented \
        else python_numbers.binary("power", self, operand)


def _unary(op: str):
    return lambda self: python_numbers.unary(op, self)


def _round(self: Tensor, ndigits: object = None) -> Tensor:
    """``round(x)`` of a 0-d value: a Python int (as Python floats and NumPy scalars give, half to
    even). ``round(x, n)`` of a NumPy value is ``np.round(x, n)`` (NumPy's scale-and-round, its
    type); of a Python number it is refused: Python rounds a float's exact decimal value."""
    if self.ndim > 0:
        raise TypeError("type numpy.ndarray doesn't define __round__ method")
    if ndigits is None:
        if self.dtype.kind in "iub":
            return python_numbers.int_of(self)
        return python_numbers.int_of(self, rounding="rint")
    if not value_info.is_weak(self.value) and self.dtype.kind in "iuf" and isinstance(
            ndigits, int | np.integer):
        return numpy_statistics.round_(self, ndigits)
    loc = tracing.user_location()
    at = f" at {loc}" if loc is not None else ""
    raise StagingTypeError(
        f"round(x, ndigits) of a staged Python number (or with a staged ndigits){at} is not "
        "supported: Python rounds a float's exact decimal value (round(2.675, 2) is 2.67); round "
        "a NumPy value (np.float64(x)), which rounds as np.round does, or round outside the "
        "staged function")


def _item(self: Tensor, *args: object) -> Tensor:
    """``x.item()``: the Python scalar (a weak value) of a size-1 array, as NumPy gives it."""
    if args:
        loc = tracing.user_location()
        raise StagingTypeError(
            f"x.item(index) of a staged tensor{self._where()}{f' at {loc}' if loc else ''} is "
            "not supported; write x.item() of the element, e.g. x[i, j].item() or float(x[i, j])")
    return python_numbers.item_of(self)


def _tolist(self: Tensor) -> Tensor:
    """``x.tolist()`` of a 0-d value is its Python scalar; a list of an array is refused."""
    if self.ndim == 0:
        return python_numbers.item_of(self)
    return _no_python_value("a Python list (.tolist())", "keep it a tensor, or return it and "
                            "call .tolist() on the result")(self)


def inplace(op: str, a: object, b: object) -> object:
    """``a op= b``: for an array, a new tensor of ``a``'s dtype and shape (NumPy's same_kind
    casting rule); for a Python number or NumPy scalar, ``a op b``.

    Raises:
      StagingError: ``a`` is a function argument or a view of one.
      TypeError: NumPy would refuse to cast the result back to ``a``'s dtype.
    """
    if not isinstance(a, Tensor):
        import operator
        return getattr(operator, next(k for k, v in IN_PLACE.items() if v == op))(a, b)
    if not isinstance(b, _OPERAND_TYPES):
        foreign_operands.in_place(op, a, b)  # (NumPy's or Python's error, or a refusal)
    # A Python number or a NumPy scalar (an argument, or `s = x[0]`, `s = x.sum()`) is
    # immutable: `s += 0.5` rebinds `s` to the promoted result (np.float64 for an np.int64 `s`).
    # Only a 0-d ndarray is written in place, with NumPy's same_kind casting rule.
    if (value_info.is_weak(a.value) or value_info.is_scalar_argument(a.value)
            or a.ndim == 0 and not ndarray_results.is_array(a)):
        return array_api.matmul(a, b) if op == "matmul" else python_numbers.binary(op, a, b)
    array_shapes.refuse_copied_item(a)  # (a copy of an array Python's `op=` would change)
    # an argument written back, or a view of one that `x[k] op= v` writes back (else refused
    # at the end of the trace: ``view_writes``)
    whole_argument = argument_writes.writable(a.value)
    if value_info.aliased_argument(a.value) is not None and not (
            whole_argument or argument_writes.writable(value_info.view_base(a.value))):
        array_shapes.check_writable(a, "this in-place operator")
    result = (array_api.matmul(a, b) if op == "matmul" else numpy_power.operator_power(a, b)
              if op == "power" else array_api.ufunc(op, a, b))
    if result.dtype != a.dtype:
        if not np.can_cast(result.dtype, a.dtype, "same_kind"):
            _raise_casting_error(UFUNCS[op] if op in UFUNCS else np.matmul, result.dtype, a.dtype)
        result = array_api.astype(result, a.dtype)
    _check_output_shape(a, result)
    if a.ndim == 0:
        value_info.mark_array(result.value)  # still the 0-d ndarray `a` (a fresh value)
    if whole_argument:  # written into the caller's array, in place
        return array_shapes.setitem(a, Ellipsis, result)
    if value_info.view_base(a.value) is None:
        array_identity.written(a.value, result.value)
    else:  # `x[a:b] += v` writes its view back itself; any other view write is refused
        view_writes.changed_view(a.value, result.value)
    return result


def _check_output_shape(a: Tensor, result: Tensor) -> None:
    """NumPy's error when ``a op= b`` broadcasts ``a`` to a larger shape: now where the types
    tell, else at run time (``a`` of size 1 and ``b`` of size 20 along an axis whose sizes the
    trace does not know)."""
    error = ValueError(f"non-broadcastable output operand with shape "
                       f"{dtype_rules.format_shape(a.type.shape)} doesn't match the broadcast "
                       f"shape {dtype_rules.format_shape(result.type.shape)}")
    if result.ndim != a.ndim:
        raise error
    differs = None
    for axis, (r, d) in enumerate(zip(result.type.shape, a.type.shape, strict=True)):
        if r is not None and d is not None:
            if r != d:
                raise error
            continue
        test = array_api.ufunc("not_equal", array_shapes.dim(result, axis),
                               array_shapes.dim(a, axis))
        differs = test if differs is None else array_api.ufunc("logical_or", differs, test)
    if differs is not None:
        numpy_shapes.check(differs, ValueError(
            f"{error} (at run time: a size shown as ? made the result larger than the operand "
            "written in place)"))


def _no_python_value(what: str, fix: str):
    def method(self: Tensor, *args: object, **kwargs: object):
        loc = tracing.user_location()
        at = f"{loc}: " if loc is not None else ""
        raise StagingTypeError(f"{at}a staged tensor{self._where()} cannot be used as {what} "
                               f"at trace time: {fix}")
    return method


_UNPACKING = frozenset({dis.opmap["UNPACK_SEQUENCE"], dis.opmap["UNPACK_EX"]})


def _iter(self: Tensor):
    """``a, b, c = x`` in converted code: axis 0's items (``x[0]``, ``x[1]``, ...), as NumPy's
    iteration gives them, when the trace knows that axis's length. Unpacking a parameter vector
    is a common idiom and its length is fixed by the trace, so no loop is needed; the items are
    made lazily, so a wrong count is Python's own "too many / not enough values to unpack".
    Every other iteration at trace time (NumPy's dispatchers, ``list(x)``, code that was not
    converted) stays a StagingTypeError: it would unroll a loop over a staged value."""
    frame = sys._getframe(1)
    unpacking = (frame.f_code.co_code[frame.f_lasti] in _UNPACKING
                 and tracing.in_user_code(frame))
    if (unpacking and self.ndim > 0 and self.type.shape[0] is not None
            and not array_shapes.sizes_staged(self)):
        return (self[i] for i in range(self.type.shape[0]))
    expected = _unpacked_count(frame) if unpacking and self.ndim > 0 else None
    if expected is not None:
        _check_unpacked_length(self, expected)
        return (self[i] for i in range(expected))
    loc = tracing.user_location()
    at = f"{loc}: " if loc is not None else ""
    if unpacking:
        # A 0-d value's error depends on whether it is an array or a NumPy scalar; a starred
        # target's list needs the length, known here only at run time.
        why = ("it is 0-d, which Python cannot unpack" if self.ndim == 0 else
               "its first dimension is known only at run time (an argument's sizes are) and a "
               "starred target takes the rest; index it instead: `a, rest = x[0], x[1:]`")
        raise StagingTypeError(f"{at}unpacking a staged tensor{self._where()} is not staged: "
                               f"{why}")
    raise StagingTypeError(f"{at}a staged tensor{self._where()} cannot be iterated at trace "
                           "time (by list(x), tuple(x), sorted(x), a generator or other code "
                           "autostage does not convert): that would unroll a loop over a staged "
                           "value. Iterate it in a for loop of the converted function (`lst = "
                           "[]` / `for v in x: lst.append(v)`), or keep it an array")


def _unpacked_count(frame) -> int | None:
    """How many targets the ``UNPACK_SEQUENCE`` running in ``frame`` unpacks into (its
    argument); None for ``UNPACK_EX`` (a starred target)."""
    code = frame.f_code.co_code
    if code[frame.f_lasti] != dis.opmap["UNPACK_SEQUENCE"]:
        return None
    count, at = code[frame.f_lasti + 1], frame.f_lasti
    shift = 8
    while at >= 2 and code[at - 2] == dis.opmap["EXTENDED_ARG"]:
        at -= 2
        count |= code[at + 1] << shift
        shift += 8
    return count


def _check_unpacked_length(x: Tensor, expected: int) -> None:
    """Python's ValueError, raised at run time, where ``x``'s first dimension (known only then)
    is not the ``expected`` number of targets (`for a, b in points:` over an argument's rows)."""
    length = x.shape[0]
    for got in range(expected):
        tracing.emit("raise_if", (array_api.ufunc("equal", length, got).value,), {
            "exception": ValueError(f"not enough values to unpack (expected {expected}, got "
                                    f"{got})")})
    tracing.emit("raise_if", (array_api.ufunc("greater", length, expected).value,), {
        "exception": ValueError(f"too many values to unpack (expected {expected})")})


def _len(self: Tensor) -> int:
    if self.ndim == 0:
        raise TypeError("len() of unsized object")
    if self.type.shape[0] is not None and not array_shapes.sizes_staged(self):
        return self.type.shape[0]
    raise StagingTypeError(
        f"len() of a staged tensor{self._where()} whose first dimension is unknown must be "
        "staged: call len() in code autostage converts (its staged len), or use x.shape[0]")


def _conjugate(self):
    """``x.conj()``: ``x`` itself for a real ``x`` (NumPy's method returns the array)."""
    return self if self.dtype.kind != "c" else array_api.ufunc("conjugate", self)


def _copy(self, order="C"):
    numpy_dispatch.check_order(order, self.ndim, np.copy, 0, name="ndarray.copy")
    return array_api.copy(self)


def _python_copy(self: Tensor, memo: object = None) -> Tensor:
    """``copy.copy(x)`` and ``copy.deepcopy(x)``: a new array, as ``ndarray.__copy__`` and
    ``__deepcopy__`` make (an array of numbers has no deeper level), a staged Python number
    itself (they used to give the same array, whose writes showed in both and were refused as an
    alias, and a copy of the staged stand-in, a TracerLeakError)."""
    if value_info.is_weak(self.value):
        return self
    return _copy(self)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    numpy_dispatch.check_order(order, self.ndim, np.copy, 0, name="ndarray.astype")
    return array_api.astype(self, dtype, copy, casting)


def _reshape(self: Tensor, *shape: object, order: str = "C") -> Tensor:
    if order != "C":
        raise TypeError("autostage stages reshape with order='C' only")
    return array_shapes.reshape(self, shape[0] if len(shape) == 1 and isinstance(
        shape[0], (tuple, list)) else shape)


def _transpose(self: Tensor, *axes: object) -> Tensor:
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return array_shapes.transpose(self, axes or None)


def _reduction(name: str):
    def method(self: Tensor, *args: object, **kwargs: object) -> Tensor:
        return numpy_dispatch.FUNCTIONS[getattr(np, name)](self, *args, **kwargs)
    method.__name__ = name
    return method


def _format(self: Tensor, spec: str | None) -> str:
    """``format(x, spec)`` / f-strings / ``str(x)``: the text of a staged value exists only when
    the staged function runs, so it cannot be made at trace time (``repr`` stays, for debugging
    and error messages, except in converted code: see ``_repr``)."""
    loc = tracing.user_location()
    where = f"{loc}: " if loc is not None else ""
    how = "str() of" if spec is None else f"formatting (format spec {spec!r}) of"
    raise StagingTypeError(
        f"{where}{how} a staged tensor{self._where()} cannot be staged: its value, and so its "
        "text, exists only when the staged function runs. Pass the tensor itself to print() "
        "(print(x) is staged and formats it at run time), or return it and format the result; "
        "f-strings, format() and str() of staged values are not supported")


def _repr(self: Tensor) -> str:
    """``repr(x)``: ``<staged Tensor f64[?] ...>`` for debugging and error messages, but a
    StagingTypeError when converted user code itself calls it (``repr(x)``, ``f"{x!r}"``),
    where plain Python would give the array's text."""
    frame = sys._getframe(1)
    if tracing.is_tracing() and tracing.in_user_code(frame):
        loc = tracing.user_location()
        raise StagingTypeError(
            f"{loc}: repr() of a staged tensor{self._where()} cannot be staged: its value, and "
            "so its text, exists only when the staged function runs. Pass the tensor itself to "
            "print() (print(x) is staged and formats it at run time), or return it")
    # A weak value in words, not as the IR's `~`.
    number = " (a Python number)" if value_info.is_weak(self.value) else ""
    return f"<staged Tensor {strong(self.type)}{number}{self._where()}>"


def _setitem(self: Tensor, key: object, value: object) -> None:
    if argument_writes.captured_state(self.value):  # ``self.acc[i] = v``: written back; the
        array_shapes.setitem(self, key, value)  # code reads the new state at ``self.acc``
        return
    loc = tracing.frame_location(sys._getframe(1))
    where = f"{loc}: " if loc is not None else ""
    raise StagingTypeError(
        f"{where}item assignment into a staged tensor{self._where()} that autostage could not "
        "stage: converted code turns `x[i] = v` and `a[i], a[j] = ...` (x, a local names) into "
        "staged updates, but not starred, attribute (`self.x[i]`) or nested (`x[i][j]`) "
        "targets, or code that was not converted; assign to a local name (or use np.where)")


def _attach() -> None:
    for stem, op in BINARY_OPERATORS.items():
        setattr(Tensor, f"__{stem}__", _binary(op, False))
        setattr(Tensor, f"__r{stem}__", _binary(op, True))
        setattr(Tensor, f"__i{stem}__", lambda self, other, _op=op: inplace(_op, self, other))
    Tensor.__pow__ = _power
    for stem, op in COMPARISON_OPERATORS.items():
        setattr(Tensor, f"__{stem}__", _comparison(op))
    for stem, op in UNARY_OPERATORS.items():
        setattr(Tensor, f"__{stem}__", _unary(op))
    methods = {
        "__matmul__": _matmul(False),
        "__rmatmul__": _matmul(True),
        "__imatmul__": lambda self, other: inplace("matmul", self, other),
        "__divmod__": _divmod(reflected=False),
        "__rdivmod__": _divmod(reflected=True),
        "__round__": _round,
        "__getitem__": array_shapes.getitem,
        "__setitem__": _setitem,
        "__len__": _len,
        "__iter__": _iter,
        "__array__": _no_python_value(
            "a NumPy array", "it has no value until the staged function runs; use NumPy "
            "functions autostage stages (np.sum, np.where, ...) or return it from the function; "
            "a list or tuple holding staged values given to a NumPy function: make it one "
            "array first (`np.sum(np.array([n, 2]))`). A random draw autostage does not "
            "stage (README, \"Random numbers\"): draw outside and pass the numbers in"),
        "__index__": _no_python_value(
            "a Python int (e.g. a size for np.zeros)", "pass a Python int, or call the function "
            "from converted code, where np.zeros/np.ones/np.arange take staged sizes"),
        "__int__": _no_python_value("a Python int", "use x.astype(np.int64) to stay staged"),
        "__float__": _no_python_value("a Python float",
                                      "use x.astype(np.float64) to stay staged"),
        "__complex__": _no_python_value("a Python complex", "keep it a tensor"),
        "item": _item,
        "tolist": _tolist,
        "reshape": _reshape,
        "transpose": _transpose,
        "T": property(lambda self: array_shapes.transpose(self)),
        "astype": _astype,
        "copy": _copy,
        "__copy__": _python_copy,
        "__deepcopy__": _python_copy,
        "clip": lambda self, min=None, max=None: array_api.clip(self, min, max),
        "flatten": lambda self, order="C": array_shapes.flatten(self, order),
        "ravel": lambda self, order="C": array_shapes.ravel(self, order),
        "squeeze": lambda self, axis=None: array_shapes.squeeze(self, axis),
        "dot": lambda self, other: array_api.dot(self, other),
        "cumsum": lambda self, axis=None, dtype=None, out=None: array_api.scan(
            "cumsum", self, axis, dtype, out),
        "cumprod": lambda self, axis=None, dtype=None, out=None: array_api.scan(
            "cumprod", self, axis, dtype, out),
        "argsort": lambda self, axis=-1, kind=None, order=None, *, stable=None: array_api.sort(
            "argsort", self, axis, kind, order, stable),
        "sort": _no_python_value(
            "an array sorted in place (x.sort())", "staged values are immutable; use "
            "`x = np.sort(x)`"),
        "round": lambda self, decimals=0, out=None: numpy_statistics.round_(self, decimals, out),
        "nonzero": lambda self: numpy_statistics.nonzero(self),
        "searchsorted": lambda self, v, side="left", sorter=None: (
            numpy_statistics.searchsorted(self, v, side, sorter)),
        "conj": _conjugate,
        "conjugate": _conjugate,
        "__format__": _format,
        "__repr__": _repr,
        "__str__": lambda self: _format(self, None),
        "__array_ufunc__": numpy_dispatch.array_ufunc,
        "__array_function__": numpy_dispatch.array_function,
    }
    for name in ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all", "std",
                 "var"):
        methods[name] = _reduction(name)
    methods.update(numpy_shapes.METHODS | numpy_grids.METHODS)
    for name, method in methods.items():  # (checked before a wrapper hides the signature)
        if not name.startswith("__") and inspect.isfunction(method):
            methods[name] = _binding_checked(name, method)
    for name in ndarray_results.KEEPS_METHODS:  # 0-d ndarray results of 0-d ndarrays
        if name in methods:
            methods[name] = ndarray_results.wrap_method(name, methods[name])
    methods["__getitem__"] = _getitem
    for name, method in methods.items():
        setattr(Tensor, name, method)


def _binding_checked(name: str, method: Callable) -> Callable:
    """``method`` raising a clear error, naming the method and the user's line, for arguments
    it does not take (``x.clip(0, 1, out=x)``): Python's own error names the lambda."""
    @functools.wraps(method)
    def checked(*args: object, **kwargs: object) -> object:
        numpy_dispatch.check_arguments(f"ndarray.{name}", method, args, kwargs, skip=1)
        return method(*args, **kwargs)
    return checked


def _getitem(target: object, key: object) -> object:
    return ndarray_results.subscript_result(target, key, array_shapes.getitem(target, key))


def _getitem_hook(target: object, key: object) -> object:
    if isinstance(target, Tensor):
        return _getitem(target, key)
    return constant_indexing.getitem(target, key)


def _setitem_hook(target: object, key: object, value: object, only_name: bool = False
                  ) -> object:
    return array_shapes.setitem(target, key, value, only_name)


def _setitem_of_hook(target: object, key: object, value: object) -> None:
    """Hook of ``setitem_of``: a write through an expression into a NumPy array, or into a
    list built in staged code (``grid[0][0] = v``), refused."""
    loc = tracing.user_location()
    if not isinstance(target, np.ndarray):
        raise StagingTypeError(
            f"{f'{loc}: ' if loc is not None else ''}this item assignment writes into a list "
            "built in staged code through an expression, not its name (`grid[0][0] = v`): "
            "staged code changes a list by making a new one for the name it is changed "
            "through; write the item through the list's own name")
    raise StagingTypeError(
        f"{f'{loc}: ' if loc is not None else ''}this item assignment "
        "writes into a NumPy array made while tracing through an expression, not a local name "
        "(`z[1][2] = v`, `z.T[0, 1] = v`, `self.w[i] = v`), with a staged value or index, or "
        "inside a staged if or loop: staged code writes an array through its name, and done "
        "now the write would happen once, on every path. Index the array by its name "
        "(`z[1, 2] = v`), or make it a staged array first (`z = np.zeros(x.shape)`)")


_attach()
register_operator_hook("setitem_of", _setitem_of_hook)
register_operator_hook("getitem", _getitem_hook)
register_operator_hook("setitem", _setitem_hook)
for _name, _op in IN_PLACE.items():
    register_operator_hook(_name, lambda a, b, _op=_op: inplace(_op, a, b))
ndarray_attributes.attach()
