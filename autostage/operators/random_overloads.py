"""Overloads of NumPy's random functions: staged draws while a function is traced.

A random call in converted code must never run at trace time (its numbers would be frozen into
the trace). ``np.random.rand(3)``, ``np.random.normal(...)``... (every function of NumPy's global
``RandomState``, supported or not) are routed here by the call-trees converter
(``ag__.np_random_rand(3)``), and a method of a ``np.random.Generator`` or ``RandomState``
object by ``converted`` (``method_overload``). On Python values each is the NumPy function
itself; while a function is traced it goes to the runtime hook (``random_call`` /
``random_method``), which stages the draw or raises a clear error. A method of a
``random.Random`` (Python's ``random`` module: ``random.random()``, ``random.gauss()``...) is
routed to ``stdlib_method_overload``, refused while tracing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autostage.operators.numpy_overloads import register
from autostage.runtime import is_tracing, stage_operator

_GLOBAL_STATE = np.random.mtrand._rand
RANDOM_OWNERS = (np.random.Generator, np.random.RandomState)


def _overload(function: Callable[..., Any]) -> Callable[..., Any]:
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return stage_operator("random_call", function, *args, **kwargs)
        return function(*args, **kwargs)

    return register(function, overload, f"np.random.{function.__name__}", "staged while tracing")


def method_overload(method: Callable[..., Any]) -> Callable[..., Any]:
    """What converted code calls for a bound method of a Generator or RandomState object."""
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return stage_operator("random_method", method, *args, **kwargs)
        return method(*args, **kwargs)

    return overload


def stdlib_method_overload(method: Callable[..., Any]) -> Callable[..., Any]:
    """What converted code calls for a method of a ``random.Random`` (``random.random``,
    ``random.gauss``... are methods of the module's instance): refused while tracing (Python's
    random module is not staged), the method itself otherwise."""
    def overload(*args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return stage_operator("stdlib_random_method", method, *args, **kwargs)
        return method(*args, **kwargs)

    return overload


# Every function of NumPy's global RandomState (np.random.rand is _GLOBAL_STATE.rand).
OVERLOADS: dict[str, Callable[..., Any]] = {}
for _name in sorted(dir(np.random)):
    _value = getattr(np.random, _name)
    if callable(_value) and (getattr(_value, "__self__", None) is _GLOBAL_STATE or _name in (
            "seed", "sample", "ranf")):  # functions of the module that use the global state
        OVERLOADS[f"np_random_{_name}"] = _overload(_value)
globals().update(OVERLOADS)
__all__ = ["RANDOM_OWNERS", "method_overload", "stdlib_method_overload", *OVERLOADS]
