"""Which values are staged, and the hooks that stage an operator: the one door from the operators.

Converted code calls the operators (``autostage.operators``) on every statement, so their Python
path must stay cheap: each operator tests ``isinstance(value, Staged)`` (staged classes subclass
``Staged``) and, only for a staged input, calls ``stage_operator(name, *args)``, which runs the
hook the runtime registered for that operator name (``"if_stmt"``, ``"print_"``...). A hook takes
the operator's own arguments (each operator's docstring says if it adds any). An operator reached
with a staged value but no hook raises ``NotImplementedError`` naming it. Imports nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

_hooks: dict[str, Callable[..., Any]] = {}


class Staged:
    """Base class of staged (symbolic) values: operators hand them to the runtime.

    Operators test ``isinstance(value, Staged)`` inline: a C-level check with no Python call,
    because they run on every statement of converted code.
    """

    __slots__ = ()


class Standin:
    """Base class of objects that stand in for a user's object while a function is traced (they
    record what the code reads from it); ``type()`` in converted code sees through them."""

    __slots__ = ()


def is_staged(value: object) -> bool:
    """True when ``value`` is a staged (symbolic) value that operators must hand to the runtime."""
    return isinstance(value, Staged)


def any_staged(values: Iterable[object]) -> bool:
    """True when any of ``values`` is staged (the check for operators with many inputs)."""
    for value in values:
        if isinstance(value, Staged):
            return True
    return False


def holds_staged(value: object) -> bool:
    """True when ``value`` is staged or a container (tuple, list, set, dict) holding one: what
    Python would turn into text by the items' repr, which a staged value has only at run time."""
    if isinstance(value, Staged):
        return True
    if isinstance(value, tuple | list | set | frozenset):
        return any(holds_staged(v) for v in value)
    if isinstance(value, dict):
        return any(holds_staged(v) for v in (*value.keys(), *value.values()))
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
      NotImplementedError: no hook is registered for ``name`` (nor the ``"unsupported"`` hook,
        which staging registers to refuse such an operator clearly).
    """
    hook = _hooks.get(name)
    if hook is None and _hooks.get("unsupported") is not None:  # (staging's clear refusal)
        return _hooks["unsupported"](name, *args, **kwargs)
    if hook is None:
        raise NotImplementedError(
            f"autostage operator {name!r} got a staged value, but the staging runtime has no "
            f"rule for {name!r} yet")
    return hook(*args, **kwargs)
