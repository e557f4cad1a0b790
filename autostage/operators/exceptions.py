"""``assert`` as a function, so a staged assertion can run at run time, in program order.

The asserts converter rewrites ``assert test, msg`` to ``assert_stmt(test, lambda: msg)`` (and
``assert test`` to ``assert_stmt(test)``); like the statement, the message is computed only when the
assertion fails. The converter drops asserts entirely when Python runs with ``-O``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autostage.runtime import Staged, stage_operator


def assert_stmt(test: Any, msg_fn: Callable[[], Any] | None = None) -> None:
    """``assert test, msg_fn()``: raises ``AssertionError(msg_fn())`` (bare without ``msg_fn``)."""
    if isinstance(test, Staged):
        return stage_operator("assert_stmt", test, msg_fn)
    if not test:
        if msg_fn is None:
            raise AssertionError
        raise AssertionError(msg_fn())
    return None
