"""Staged tensors must not escape the trace through the user's data.

A tensor exists only while its function is traced; one stored where the caller can see it (an
attribute of ``self``, an item of a global list, a ``global`` or ``nonlocal`` variable) would be
a symbolic value left in user data, failing later far from its cause. Stores through the
stand-ins of ``captures`` are checked as they happen (``check_store``); ``global``/``nonlocal``
variables and the objects the trace was given are checked when the trace ends
(``check_after_trace``, a bounded walk). Tensors in the function's own local lists and dicts
are fine: nothing outside the call can reach them.
"""

from __future__ import annotations

from typing import Any

from autostage.runtime import tracing
from autostage.runtime.operator_hooks import Staged, Standin
from autostage.runtime.staging.errors import PythonSideEffectError

_MAX_DEPTH = 3  # levels of attributes/items walked from each root after a trace
_MAX_NODES = 2000


class TensorEscapeError(tracing.TracerLeakError):
    """A staged tensor was stored where it outlives the trace.

    Example: ``self.last = x * 2`` or ``CACHE.append(h)`` in a converted function. Fix: return
    the value from the function and store it outside (``out = f(x); model.last = out``).
    """


def _staged_leaf(value: object, depth: int = 2) -> Staged | None:
    if isinstance(value, Staged):
        return value
    if depth and type(value) in (list, tuple):
        return next((s for v in value if (s := _staged_leaf(v, depth - 1)) is not None), None)
    if depth and type(value) is dict:
        return next((s for v in value.values() if (s := _staged_leaf(v, depth - 1))
                     is not None), None)
    return None


def _error(label: str, leaf: Staged, loc: Any) -> TensorEscapeError:
    value = getattr(leaf, "value", None)
    created = f" (created at {value.loc})" if getattr(value, "loc", None) is not None else ""
    at = f"{loc}: " if loc is not None else ""
    return TensorEscapeError(
        f"{at}a staged tensor{created} is stored in {label}, which outlives the trace; a staged "
        "value exists only while its function is traced: return it from the function and store "
        "it outside instead, or keep state the function updates at each call in an "
        "autostage.Variable (`self.w = autostage.Variable(w0)` once, `self.w.assign(new)` in "
        "the function)")


def check_store(label: str, value: object, old: object = None) -> None:
    """Raises TensorEscapeError if ``value`` (or a list/tuple/dict holding it) is staged: it is
    being stored at ``label`` (``self.v``, ``G.append()``), outside the trace. Where ``old``,
    what ``label`` holds, is an ``autostage.Variable`` (``self.w -= lr * g`` on a Module's
    weight), the error says to update the Variable instead: the store would replace it."""
    leaf = _staged_leaf(value)
    if leaf is None:
        return
    if _is_variable(old):
        at = tracing.user_location()
        raise TensorEscapeError(
            f"{f'{at}: ' if at is not None else ''}{label} holds an autostage.Variable, which "
            "this assignment replaces with a staged array (`self.w -= d` and `self.w = self.w "
            "- d` rebind the attribute, in Python too, dropping the Variable): update the "
            "Variable itself with `self.w.assign_sub(d)`, `assign_add(d)` or `assign(new)`")
    raise _error(label, leaf, tracing.user_location())


UNCHANGED = object()  # passed as ``old`` when a store is known to change nothing


def _is_variable(x: object) -> bool:
    from autostage.runtime.state import Variable  # (imported when first needed, as before)

    return isinstance(x, Variable)


def _unchanged(old: object, new: object) -> bool:
    if old is new:
        return True
    return type(old) is type(new) and type(old) in _PLAIN and old == new


_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def check_change(label: str, old: object, new: object, at_line: bool = True) -> None:
    """Raises PythonSideEffectError if storing ``new`` at ``label`` (which holds ``old``)
    changes the user's data while a function is traced.

    A trace runs the function's Python code once; later calls run the trace, so a change made
    by that code (``self.calls += 1``, ``LOG.append(...)``, ``global n; n = ...``) would happen
    once instead of at every call. Storing an ``autostage.Variable`` (state created on the first
    trace) and storing what is already there are fine.
    """
    if _unchanged(old, new) or _is_variable(new):
        return
    raise side_effect_error(label, tracing.user_location() if at_line else None)


def side_effect_error(label: str, loc: Any) -> PythonSideEffectError:
    at = f"{loc}: " if loc is not None else ""
    return PythonSideEffectError(
        f"{at}{label}, which outlives the call, is changed while the staged function is traced; "
        "a staged function runs "
        "its Python code once per trace, not at every call, so this change would not happen "
        "on later calls. Make the change outside the staged function (before or after "
        "calling it), return the new value, or keep it in an autostage.Variable")


def check_after_trace(named: list[tuple[str, Any]], roots: list[tuple[str, Any]]) -> None:
    """Raises TensorEscapeError naming the first place where a staged value was left:
    ``named`` are (label, value) of global/nonlocal variables the function assigns, ``roots``
    the objects the trace was given, walked a few levels deep."""
    for label, value in named:
        leaf = _staged_leaf(value)
        if leaf is not None:
            raise _error(label, leaf, None)
    seen: set[int] = set()
    for label, root in roots:
        found = _walk(label, root, _MAX_DEPTH, seen)
        if found is not None:
            raise _error(*found, None)


def _walk(label: str, value: Any, depth: int, seen: set[int]) -> tuple | None:
    if isinstance(value, Standin):
        value = object.__getattribute__(value, "_obj")
    if isinstance(value, Staged):
        return label, value
    if depth == 0 or id(value) in seen or len(seen) > _MAX_NODES:
        return None
    seen.add(id(value))
    kind = type(value)
    if kind is dict:
        items = [(f"{label}[{k!r}]", v) for k, v in list(value.items())[:_MAX_NODES]]
    elif kind in (list, tuple):
        items = [(f"{label}[{i}]", v) for i, v in enumerate(value[:_MAX_NODES])]
    else:
        from autostage.runtime.captures import is_user_object
        attributes = getattr(value, "__dict__", None) if is_user_object(value) else None
        if type(attributes) is not dict:
            return None
        items = [(f"{label}.{k}", v) for k, v in list(attributes.items())[:_MAX_NODES]]
    for item_label, item in items:
        found = _walk(item_label, item, depth - 1, seen)
        if found is not None:
            return found
    return None
