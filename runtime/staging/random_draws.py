"""Staging of random numbers: every NumPy draw in staged code becomes a ``random_draw`` op.

A draw must never run at trace time (its numbers would be frozen into the trace). NumPy's
global functions (``np.random.rand``, ``np.random.normal``...) are staged on NumPy's global
state; a ``np.random.Generator`` is a run-time input of the trace, read at each call: an
argument (a ``StagedGenerator`` stands for it while tracing), a global or closed-over variable
(captured like an array), or an attribute / dict item of an object the trace is specialised on
(``self.rng``: the path is read again at each call, so a replaced generator is used). Anything
else is a clear error naming the function and the user's line: an unsupported function, a
``RandomState`` object, a Generator created inside the staged function. At the end of a trace,
``random_freeze.FreezeCheck`` verifies that nothing drew from a random state at trace time (code
that autostage does not stage, such as a ``do_not_convert`` function). A method of a
``random.Random`` (Python's ``random`` module) in converted code is refused where it is written.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
from autostage.runtime import tracing, value_info
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.ops import random as random_op
from autostage.runtime.ops.random import GENERATOR, GLOBAL, Operand
from autostage.runtime.staging.iteration import StagedRange
from autostage.runtime.tensor import StagingTypeError, Tensor
from autostage.runtime.types import WEAK_DTYPES


class RandomStagingError(StagingTypeError):
    """A random-number call that autostage cannot stage (it would be frozen at trace time).

    Example: ``rs = np.random.RandomState(0)`` used inside a staged function,
    ``np.random.default_rng(0).normal()`` or ``random.random()`` written in it, or a
    ``do_not_convert`` helper drawing from a generator of its module (found when the trace ends,
    random_freeze.py). Fix: use NumPy's global functions (``np.random.normal``) or a
    ``np.random.default_rng()`` Generator created outside the staged function and passed in (as
    an argument, a global, or an attribute such as ``self.rng``).
    """


def _at() -> str:
    loc = tracing.user_location()
    return f" at {loc}" if loc is not None else ""


class StagedGenerator(Staged):
    """A ``np.random.Generator`` input of the trace: its methods stage ``random_draw`` ops."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if random_op.method(GENERATOR, name) is None:
            raise _unsupported(f"Generator.{name}")
        return functools.partial(stage_draw, self.value, GENERATOR, name)

    def __repr__(self) -> str:
        return f"<staged np.random.Generator {self.value.type}>"


def _unsupported(what: str) -> RandomStagingError:
    supported = ", ".join(sorted(random_op.METHODS[
        GENERATOR if what.startswith("Generator") else GLOBAL]))
    return RandomStagingError(
        f"{what} is not supported in staged code{_at()}: it would run once at trace time and "
        f"freeze its result into the trace. Supported: {supported}")


def _template(value: Any, operands: list, name: str) -> Any:
    """A call argument with staged values replaced by ``Operand`` slots (appended to
    ``operands``); Python values are kept (arrays copied, read-only; a ``range`` is the array
    NumPy makes of it)."""
    from autostage.runtime.state import Variable

    if isinstance(value, Variable):
        value = value.read()
    if isinstance(value, StagedRange):  # range(n) of a staged n: NumPy's np.array(range(n))
        value = value.as_array()
    if isinstance(value, Tensor):
        operands.append(value)
        return Operand(len(operands) - 1)
    if isinstance(value, tuple | list):
        items = [_template(v, operands, name) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, Staged):
        raise RandomStagingError(f"{name}: a staged {type(value).__name__} cannot be an argument "
                                 f"of a random function{_at()}")
    if isinstance(value, range):
        # NumPy makes a range the array it holds (`choice(range(vocab_size), p=p)`, as
        # min-char-rnn samples); ranges past int64 make object arrays and stay refused
        array = np.array(value)
        value = value if array.dtype == object else array
    if isinstance(value, np.ndarray):
        value = value.copy()
        value.flags.writeable = False
        return value
    if value is None or isinstance(value, bool | int | float | complex | str | np.generic
                                   | np.dtype | type):
        return value
    raise RandomStagingError(f"{name}: the argument {value!r} cannot be used in a staged random "
                             f"call{_at()}; pass numbers, arrays or dtypes")


def _typed(template: Any, operands: list) -> Any:
    """The template with each slot replaced by its operand's type (for the type rule)."""
    return random_op.substitute(template, tuple(o.type for o in operands))


def stage_draw(generator: Any, source: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """Emits one ``random_draw`` of ``source``'s function ``name`` and returns its result."""
    meth = random_op.method(source, name)
    what = f"{'np.random' if source == GLOBAL else 'Generator'}.{name}"
    if meth is None:
        raise _unsupported(what)
    operands: list[Tensor] = []
    args_t = _template(args, operands, what)
    kwargs_t = tuple((k, _template(v, operands, what)) for k, v in kwargs.items())
    try:
        bound = random_op.bind(meth, _typed(args_t, operands),
                               {k: _typed(v, operands) for k, v in kwargs_t})
        random_op.result_type(source, name, bound)
    except (TypeError, ValueError) as e:
        raise RandomStagingError(f"{what}(): {e}{_at()}") from None
    values = ([generator] if source == GENERATOR else []) + [o.value for o in operands]
    results = tracing.emit("random_draw", values, {
        "source": source, "method": name, "args": args_t, "kwargs": kwargs_t})
    if not results:
        return None
    result = Tensor(results[0])
    if result.type.ndim == 0 and random_op.is_python_scalar(source, name, bound):
        # NumPy returns a Python float/int here: weak in promotion, as in the plain program.
        if result.dtype in WEAK_DTYPES:
            value_info.mark_weak(result.value)
    return result


# -- hooks of the operators ------------------------------------------------------------------

def _global_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.random.<function>(...)`` in staged code (NumPy's global state)."""
    name = getattr(function, "__name__", str(function))
    return stage_draw(None, GLOBAL, name, *args, **kwargs)


def _method_call(bound: Any, *args: Any, **kwargs: Any) -> Any:
    """A method of a real Generator or RandomState object called in staged code."""
    owner, name = bound.__self__, bound.__name__
    if owner is np.random.mtrand._rand:
        return _global_call(bound, *args, **kwargs)
    if isinstance(owner, np.random.RandomState):
        raise RandomStagingError(
            f"RandomState.{name} is not supported in staged code{_at()}: use NumPy's global "
            "functions (np.random.normal...) or a np.random.default_rng() Generator")
    generator = generator_input(owner)
    return getattr(generator, name)(*args, **kwargs)


register_operator_hook("random_call", _global_call)
register_operator_hook("random_method", _method_call)


# -- generators as inputs of the trace -------------------------------------------------------

def generator_input(generator: np.random.Generator) -> StagedGenerator:
    """A real Generator met while tracing: arguments, globals, closed-over variables and
    generators read through objects (``self.rng``) are run-time inputs already (stand-ins), so
    this one was reached some other way and its state cannot be read at each call."""
    raise RandomStagingError(
        f"a np.random.Generator used in staged code{_at()} is neither an argument, a "
        "global, a closed-over variable nor reached through one (such as self.rng), so its "
        "state cannot be read at each call: autostage stages draws from a Generator it is "
        "given, not from one created in staged code (np.random.default_rng(seed) inside the "
        "function); create it outside the staged function and pass it in")


# -- Python's random module ------------------------------------------------------------------

def _stdlib_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """A method of a ``random.Random`` (``random.random()`` is one of the module's instance) called
    in staged code: not staged (its stream is not NumPy's), so refused where it is written."""
    from autostage.runtime.staging.random_freeze import names_in_trace

    owner, name = method.__self__, method.__name__
    trace = tracing.current()
    if owner is getattr(random, "_inst", None):
        what = f"random.{name}()"
    else:
        kind = type(owner)
        names = ", ".join(dict.fromkeys(names_in_trace(trace)(owner)))
        what = (f"{kind.__name__}.{name}() (a {kind.__module__}.{kind.__qualname__} object"
                f"{': ' + names if names else ''})")
    traced = getattr(getattr(trace, "function", None), "name", None)
    raise RandomStagingError(
        f"{what} in staged code{_at()}{f' (tracing {traced})' if traced else ''}: Python's "
        "random module is not staged, so this would run "
        "once at trace time and freeze its result into the trace (the same numbers at every "
        "call). Use NumPy's global functions (np.random.random(), np.random.normal()...) or a "
        "np.random.Generator passed in (rng.random()), which are staged; or draw outside the "
        "staged function and pass the numbers in")


register_operator_hook("stdlib_random_method", _stdlib_call)
