"""Placeholders for variables that have no value yet, and the checked read ``ld``.

Converted control flow passes every state variable into and out of functions, so a variable that
is not (yet, or no longer: ``del x``) bound travels as ``Undefined('x')``. Reading it through
``ld`` raises the ``UnboundLocalError`` Python itself raises; any other use of the placeholder
(arithmetic, ``bool``, ``str``/``format``, attributes, iteration, comparison, hashing, calling)
raises the same error, so it can never silently stand in for a value. ``repr`` alone is allowed,
for debugging. ``UndefinedReturnValue`` marks "no ``return`` ran yet"; ``retval`` turns it into
the ``None`` a Python function returns when it falls off its end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostage.runtime import Staged, stage_operator


def _unbound_local_template() -> str:
    """Python's own UnboundLocalError text, as a template with ``{!r}`` for the variable name."""
    def read_before_assignment() -> None:
        x = x + 1  # noqa: F821, F841 - reads the local before it is bound, on purpose

    try:
        read_before_assignment()
    except UnboundLocalError as error:
        return str(error).replace("'x'", "{!r}")
    raise AssertionError("unreachable: the probe reads an unbound local")


_MESSAGE = _unbound_local_template()


def _unbound(name: str) -> UnboundLocalError:
    return UnboundLocalError(_MESSAGE.format(name))


class Undefined:
    """The value of variable ``symbol_name`` while it is not bound; every use raises."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name: str):
        object.__setattr__(self, "symbol_name", symbol_name)

    def __repr__(self) -> str:
        return f"Undefined({self.symbol_name!r})"

    def __getattr__(self, name: str) -> Any:
        raise _unbound(object.__getattribute__(self, "symbol_name"))


def _raise_unbound(self: Undefined, *args: Any, **kwargs: Any) -> Any:
    raise _unbound(self.symbol_name)


_BINARY = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
           "lshift", "rshift", "and", "xor", "or")
_FORBIDDEN = (
    "bool", "len", "iter", "next", "reversed", "contains", "getitem", "setitem", "delitem",
    "call", "str", "format", "bytes", "hash", "index", "int", "float", "complex", "round",
    "trunc", "floor", "ceil", "neg", "pos", "abs", "invert", "eq", "ne", "lt", "le", "gt", "ge",
    "enter", "exit", "await", "aiter", "anext", "setattr", "delattr",
    *_BINARY, *(f"r{op}" for op in _BINARY), *(f"i{op}" for op in _BINARY if op != "divmod"),
)
for _name in _FORBIDDEN:
    setattr(Undefined, f"__{_name}__", _raise_unbound)
del _name


def is_undefined(value: Any) -> bool:
    """True when ``value`` is an ``Undefined`` placeholder."""
    return isinstance(value, Undefined)


def ld(value: Any) -> Any:
    """Reads a possibly unbound variable: returns ``value``, or raises if it is ``Undefined``.

    Raises:
      UnboundLocalError: with Python's own message naming the variable.
    """
    if isinstance(value, Undefined):
        raise _unbound(value.symbol_name)
    if isinstance(value, Staged):  # assigned on some run-time paths only: the runtime decides
        return stage_operator("ld", value)
    return value


def ld_shared(read: Callable[[], Any], name: str) -> Any:
    """``ld`` of a local shared with generated functions as a closure cell (control_flow).

    Read inside a generated branch or loop function, an unbound cell raises ``NameError``
    ("cannot access free variable"), where the user's function, which owns the variable, raised
    ``UnboundLocalError``: ``read`` (``lambda: x``) is called here, and that error becomes
    Python's.
    """
    try:
        value = read()
    except NameError as exc:
        if exc.name != name:
            raise
        raise _unbound(name) from None
    return ld(value)


class UndefinedReturnValue:
    """The return value of a converted function before any ``return`` statement ran."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UndefinedReturnValue()"


def retval(value: Any) -> Any:
    """The value a converted function returns: ``None`` if no ``return`` ran, else ``value``."""
    return None if isinstance(value, UndefinedReturnValue) else value
