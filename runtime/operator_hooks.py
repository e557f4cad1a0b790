"""Which values are staged, and the hooks that stage an operator: the one door from the operators.

Converted code calls the operators (``autostage.operators``) on every statement, so their Python
path must stay cheap: each operator asks ``is_staged(value)`` (one ``isinstance`` against the
registered staged classes) and, only for a staged input, calls ``stage_operator(name, *args)``,
which runs the hook the runtime registered for that operator name (``"if_stmt"``, ``"print_"``...).
A hook takes the operator's own arguments (each operator's docstring says if it adds any). Nothing
is registered until the staging runtime defines its classes; an operator reached with a staged value
but no hook raises ``NotImplementedError`` naming the operator. This module imports nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

_staged_types: tuple[type, ...] = ()
_hooks: dict[str, Callable[..., Any]] = {}


def register_staged_type(cls: type) -> type:
    """Marks instances of ``cls`` (and its subclasses) as staged; usable as a class decorator."""
    global _staged_types
    if cls not in _staged_types:
        _staged_types = (*_staged_types, cls)
    return cls


def unregister_staged_type(cls: type) -> None:
    """Undoes ``register_staged_type`` (for tests and for runtimes that are torn down)."""
    global _staged_types
    _staged_types = tuple(t for t in _staged_types if t is not cls)


def is_staged(value: object) -> bool:
    """True when ``value`` is a staged (symbolic) value that operators must hand to the runtime."""
    return isinstance(value, _staged_types)


def any_staged(values: Iterable[object]) -> bool:
    """True when any of ``values`` is staged (the check for operators with many inputs)."""
    staged = _staged_types
    for value in values:
        if isinstance(value, staged):
            return True
    return False


def register_operator_hook(name: str, hook: Callable[..., Any] | None
                           ) -> Callable[..., Any] | None:
    """Sets (or, with ``None``, removes) the staging hook of operator ``name``.

    Returns:
      the hook it replaces, or None, so a caller can put it back.
    """
    previous = _hooks.pop(name, None)
    if hook is not None:
        _hooks[name] = hook
    return previous


def stage_operator(name: str, *args: Any, **kwargs: Any) -> Any:
    """Runs operator ``name``'s staging hook on the operator's arguments and returns its result.

    Raises:
      NotImplementedError: no hook is registered for ``name``.
    """
    hook = _hooks.get(name)
    if hook is None:
        raise NotImplementedError(
            f"autostage operator {name!r} got a staged value, but the staging runtime has no "
            f"rule for {name!r} yet")
    return hook(*args, **kwargs)
