"""``assert`` as a function, and the watchers of ``try`` and ``with`` bodies.

The asserts converter rewrites ``assert test, msg`` to ``assert_stmt(test, lambda: msg)`` (and
``assert test`` to ``assert_stmt(test)``); like the statement, the message is computed only when the
assertion fails. The converter drops asserts entirely when Python runs with ``-O``.

The try-statements converter wraps each ``try`` body in ``with try_region(handlers):``, its
``finally`` clause in ``with region.final():`` and each ``with`` item in ``with_region(cm)``.
Unless a function is being traced they return a shared no-op region and ``cm`` itself: nothing
else happens. While a function is traced, the runtime checks that no handler would miss an
exception raised by staged code at run time (hooks ``try_enter``/``try_exit``/``finally_exit``/
``with_exit``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

from autostage.runtime import OWN_ERRORS, Staged, is_tracing, stage_operator


def assert_stmt(test: Any, msg_fn: Callable[[], Any] | None = None) -> None:
    """``assert test, msg_fn()``: raises ``AssertionError(msg_fn())`` (bare without ``msg_fn``)."""
    if isinstance(test, Staged):
        return stage_operator("assert_stmt", test, msg_fn)
    if not test:
        if msg_fn is None:
            raise AssertionError
        message = msg_fn()
        if is_tracing() and _holds_staged(message):
            # The message's text exists only at run time (``assert k < 2, (n, m)`` with a
            # staged n): an assert op that always fails formats it then, after the prints
            # and other effects before it, as Python does.
            return stage_operator("assert_stmt", False, lambda: message)
        raise AssertionError(message)
    return None


def _holds_staged(x: Any) -> bool:
    if isinstance(x, Staged):
        return True
    if isinstance(x, (tuple, list)):
        return any(_holds_staged(v) for v in x)
    if isinstance(x, dict):
        return any(_holds_staged(v) for pair in x.items() for v in pair)
    return False


class _NoRegion:
    """What ``try_region`` gives outside tracing: a no-op context manager."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        return False

    def final(self) -> _NoRegion:
        return self


_NO_REGION = _NoRegion()


def try_region(handlers: Callable[[], tuple] | None = None) -> TryRegion | _NoRegion:
    """The watcher of a ``try`` body (see ``TryRegion``), or a no-op outside tracing."""
    return TryRegion(handlers) if is_tracing() else _NO_REGION


def with_region(cm: Any) -> Any:
    """``cm`` of a ``with`` statement, watched while tracing (``WithRegion``), else itself."""
    return WithRegion(cm) if is_tracing() else cm


class TryRegion:
    """Watches a ``try`` body while tracing; ``handlers()`` gives the handlers' exception types
    (``None`` for a bare ``except:``), evaluated then, or is None for a ``try`` without
    handlers."""

    __slots__ = ("_handlers", "_watched")

    def __init__(self, handlers: Callable[[], tuple] | None = None):
        self._handlers = handlers
        self._watched = None

    def __enter__(self) -> TryRegion:
        self._watched = stage_operator("try_enter")
        return self

    def __exit__(self, kind: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if self._watched is not None:
            stage_operator("try_exit", self._watched, self._handlers, exc)
        return False

    def final(self) -> _FinallyRegion:
        """The watcher of the ``finally`` clause."""
        return _FinallyRegion(self._watched)


class _FinallyRegion:
    __slots__ = ("_body", "_watched")

    def __init__(self, body: Any):
        self._body = body
        self._watched = None

    def __enter__(self) -> None:
        if self._body is not None:
            self._watched = stage_operator("try_enter")

    def __exit__(self, kind: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if self._watched is not None:
            stage_operator("finally_exit", self._body, self._watched, exc)
        return False


class WithRegion:
    """``cm`` in a ``with`` statement (enters and exits it as the statement does), watched while
    tracing like a ``try`` body whose handlers are the exceptions ``cm`` may swallow. An
    autostage error (``OWN_ERRORS``) leaving the body is never swallowed: ``cm`` exits, and the
    error propagates whatever ``cm.__exit__`` returns."""

    __slots__ = ("_cm", "_exit", "_watched")

    def __init__(self, cm: Any):
        # the statement looks both methods up on the type before calling __enter__
        kind = type(cm)
        if not hasattr(kind, "__enter__"):
            raise TypeError(f"{kind.__name__!r} object does not support the context manager "
                            "protocol")
        if not hasattr(kind, "__exit__"):
            raise TypeError(f"{kind.__name__!r} object does not support the context manager "
                            "protocol (missed __exit__ method)")
        self._cm = cm
        self._exit = kind.__exit__
        self._watched = None

    def __enter__(self) -> Any:
        value = type(self._cm).__enter__(self._cm)
        try:
            self._watched = stage_operator("try_enter")
        except BaseException as e:  # refused (np.errstate(divide="raise")...): exit cm first
            self._exit(self._cm, type(e), e, e.__traceback__)
            raise
        return value

    def __exit__(self, kind: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        swallowed = self._exit(self._cm, kind, exc, tb)
        if isinstance(exc, OWN_ERRORS):  # about the program, not its data: never swallowed
            return False
        if self._watched is not None:
            stage_operator("with_exit", self._watched, self._cm, exc)
        return swallowed
