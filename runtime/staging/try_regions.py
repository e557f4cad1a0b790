"""``try`` and ``with`` around staged code: exceptions raised at run time are not caught.

Staged code has no exception handling: an op that raises at run time (an index out of range, an
``assert``, a staged ``raise``...) ends the call. A ``try`` (or a ``with`` whose context manager
may swallow exceptions) runs at trace time, so its handler would never see that exception and
the call would raise where Python returns: a silently different outcome. So, while a function is
traced, each ``try`` body is watched (the operators' ``TryRegion``): when it ends, the ops it
added are asked which exceptions they may raise at run time (``may_raise``), and if a handler of
the ``try`` catches one of them, tracing stops with a ``StagingTryError`` naming the ``try`` line,
the op's line and the exception. A ``try`` whose handlers catch nothing staged code raises
(``except KeyError``, ``except TypeError``...) stays as it is: it handles trace-time exceptions
exactly as Python does. A ``finally`` clause is refused the same way when the body may raise at
run time and the ``finally`` stages a side effect (print, assert, raise, a call, a Variable or
random-state update) that Python would run before the exception propagates. A ``with`` statement is
checked like a ``try`` whose handlers are the exceptions its context manager may swallow:
``contextlib.suppress(E)`` catches ``E``; a few kinds that never swallow (``nullcontext``,
``np.errstate``, ``warnings.catch_warnings``, locks) catch nothing; any other context manager may
catch anything.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import threading
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from autostage.runtime import effects, fp_state, ir, tracing
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.staging import errors


class StagingTryError(errors.StagingError, TypeError):
    """A ``try``/``with`` would catch an exception that staged code raises at run time.

    Example: ``try: return x[i]`` / ``except IndexError: return -1.0`` with a staged ``i``: the
    index is checked when the staged code runs, where the ``except`` clause does not exist.
    Fix: test the condition explicitly, ``return x[i] if i < len(x) else -1.0``.
    """


def may_raise(op: ir.Op) -> tuple[type[BaseException], ...]:
    """The exceptions ``op`` may raise at run time: its ``OpDef.raises`` (``effects.raises``);
    a call may raise anything (its callee's ops, whose rules try staging does not follow)."""
    return (Exception,) if op.name == "call" else effects.raises(op)


def _side_effect(op: ir.Op) -> bool:
    """Whether Python would see ``op`` run: a print, a Variable or random-state update, an
    assert or raise, a call (its own ``OpDef.effects``; the ops of its regions are asked in
    turn). Not ``raise_if``: like an index check, it only may raise, which is checked apart."""
    own = effects.own(op)
    return own.io or own.writes_state or (own.raises and op.name != "raise_if")


@dataclass
class Watched:
    """A ``try`` body (or ``finally`` clause) being traced: where its ops start."""

    region: ir.Region
    start: int
    raises: list[tuple[type[BaseException], ir.Op]] = field(default_factory=list)

    def ops(self) -> Iterable[ir.Op]:
        for op in self.region.ops[self.start:]:
            yield op
            for region in op.regions:
                yield from region.walk()


def enter() -> Watched:
    """Hook ``try_enter``: starts watching the ops the current region gets (and refuses a
    floating-point error state that raises, entered with ``np.errstate``: ``fp_state``)."""
    fp_state.check_while_tracing()
    region = tracing.current().region
    return Watched(region, len(region.ops))


def _handler_types(handlers: Callable[[], tuple] | None) -> tuple[type[BaseException], ...]:
    if handlers is None:
        return ()
    try:
        raw = handlers()
    except Exception:  # noqa: BLE001 - Python evaluates it only when an exception arrives
        return (BaseException,)
    flat: list[type[BaseException]] = []
    stack = list(raw)
    while stack:
        h = stack.pop(0)
        if isinstance(h, tuple):
            stack[:0] = list(h)
        elif h is None:  # a bare ``except:``
            flat.append(BaseException)
        elif isinstance(h, type) and issubclass(h, BaseException):
            flat.append(h)
    return tuple(flat)


def _catches(handler: type[BaseException], raised: type[BaseException], op: ir.Op) -> bool:
    # ``Exception`` from a rule stands for any exception (a call's), except where the op raises
    # the user's own exception (``raise``, ``raise_if``), whose class may be Exception itself.
    if raised is Exception and "exception" not in op.attrs:
        return issubclass(handler, Exception) or issubclass(Exception, handler)
    return issubclass(raised, handler)


_HINT = ("check the condition explicitly instead, e.g. `if i < len(x):` before indexing, or "
         "compute a default with np.where")


def exit_body(watched: Watched, handlers: Callable[[], tuple] | None,
              exc: BaseException | None, what: str = "try") -> None:
    """Hook ``try_exit``: refuses the ``try`` if a handler catches what its body's ops may
    raise at run time; remembers those for the ``finally`` check."""
    if isinstance(exc, tracing.StagingError):
        return
    for op in watched.ops():
        watched.raises.extend((raised, op) for raised in may_raise(op))
    for handler in _handler_types(handlers):
        for raised, op in watched.raises:
            if _catches(handler, raised, op):
                name = "any exception" if handler is BaseException else handler.__name__
                verb = "catches" if what == "try" else "may swallow"
                raise StagingTryError(
                    f"the {what} statement{errors.at()} {verb} {name}, which the {op.name!r} "
                    f"op at {op.loc} may raise when the staged code runs; {what} around staged "
                    "code is not staged (staged code has no exception handling), so it would "
                    f"not see that exception: {_HINT}")


def exit_finally(body: Watched, final: Watched, exc: BaseException | None) -> None:
    """Hook ``finally_exit``: refuses a ``finally`` with staged side effects after a body that
    may raise at run time (Python would run them before the exception propagates)."""
    if isinstance(exc, tracing.StagingError) or not body.raises:
        return
    effect = next((op for op in final.ops() if _side_effect(op)), None)
    if effect is not None:
        raised, op = body.raises[0]
        raise StagingTryError(
            f"the finally clause{errors.at()} stages a {effect.name!r} op at {effect.loc}, "
            f"which Python runs even when the {raised.__name__} that the {op.name!r} op at "
            f"{op.loc} may raise at run time propagates; staged code has no exception "
            "handling: move the side effect out of the finally clause, or " + _HINT)


# (autostage's own context managers say so with a ``never_swallows_exceptions`` attribute.)
_NEVER_SWALLOW = (contextlib.nullcontext, np.errstate, warnings.catch_warnings,
                  type(threading.Lock()), type(threading.RLock()))


def with_handlers(cm: object) -> Callable[[], tuple]:
    """What a context manager may swallow, as a ``try``'s handler types."""
    if isinstance(cm, contextlib.suppress):
        return lambda: tuple(getattr(cm, "_exceptions", (BaseException,)))
    if isinstance(cm, _NEVER_SWALLOW) or getattr(cm, "never_swallows_exceptions", False) or (
            _exit_returns_none(type(cm))):
        return lambda: ()
    return lambda: (BaseException,)


@functools.lru_cache(maxsize=256)
def _exit_returns_none(kind: type) -> bool:
    """Whether ``kind.__exit__`` is Python code whose every ``return`` gives None: it lets every
    exception through (a context manager that logs or times its block)."""
    exit_ = getattr(kind, "__exit__", None)
    if not isinstance(exit_, types.FunctionType):
        return False
    previous = None
    for instruction in dis.get_instructions(exit_.__code__):
        if instruction.opname == "RETURN_CONST" and instruction.argval is not None:
            return False
        if instruction.opname == "RETURN_VALUE" and not (
                previous is not None and previous.opname == "LOAD_CONST"
                and previous.argval is None):
            return False
        if instruction.opname in ("YIELD_VALUE", "RETURN_GENERATOR"):
            return False
        previous = instruction
    return True


def exit_with(watched: Watched, cm: object, exc: BaseException | None) -> None:
    """Hook ``with_exit``: a ``with`` body checked like a ``try`` body (see module doc)."""
    try:
        exit_body(watched, with_handlers(cm), exc, "with")
    except StagingTryError as e:
        if not isinstance(cm, contextlib.suppress):
            raise StagingTryError(
                f"{e}; the context manager {type(cm).__name__} is not known to let exceptions "
                "through (autostage knows contextlib.suppress, nullcontext, np.errstate, "
                "warnings.catch_warnings and locks)") from None
        raise


register_operator_hook("try_enter", enter)
register_operator_hook("try_exit", exit_body)
register_operator_hook("finally_exit", exit_finally)
register_operator_hook("with_exit", exit_with)
