"""Helpers for converter tests: run chosen converters over a real function and load the result."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

from autostage import conversion
from autostage.pyct import unparser


class Converted(NamedTuple):
    source: str  # the converted function, unparsed
    function: Callable  # the live converted function (``ag__`` bound to autostage.ag)


def convert_with(fn: Callable, *converters: Any, user: Any = None) -> Converted:
    """Applies ``converters`` (modules with ``transform(node, ctx)``), in order, to ``fn``.

    ``user`` replaces the context's options (``ctx.user``), e.g. a custom call policy.
    """
    node, ctx = conversion.parse(fn)
    if user is not None:
        ctx.user = user
    node = conversion.transform(node, ctx, converters)
    loaded = conversion.load(node, fn)
    function = conversion._rebind(loaded.function, fn)
    return Converted(unparser.unparse(node), function)


def dedent(code: str) -> str:
    """Expected-source helper: ``dedent('''...''')`` without the leading newline."""
    return textwrap.dedent(code).strip("\n")
