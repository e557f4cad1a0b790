"""Helpers for converter tests: run chosen converters over a real function and load the result."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

import gast

from autostage import conversion
from autostage.pyct import anno, templates, unparser


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


class ExtraTestsAsBreaks:
    """A test-only converter: ``for`` loops check their EXTRA_LOOP_TEST as Python would.

    Jump lowering leaves a ``for`` loop's exit condition in ``anno.Basic.EXTRA_LOOP_TEST`` for
    control_flow; this honours it in plain Python (``if not (test): break`` first in the body), so
    the lowering converters can be tested on their own.
    """

    @staticmethod
    def transform(node, ctx):
        for loop in gast.walk(node):
            test = anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST, None)
            if isinstance(loop, gast.For) and test is not None:
                loop.body = templates.replace("if not test:\n    break", test=test) + loop.body
        return node


def outcome(fn: Callable, *args: Any) -> tuple:
    """What a call does: its value, or its exception's type and arguments."""
    try:
        return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raised", type(e), e.args)


def assert_same_behaviour(fn: Callable, inputs: Any, *converters: Any) -> None:
    """The function converted by ``converters`` (then ExtraTestsAsBreaks) behaves like ``fn``."""
    converted = convert_with(fn, *converters, ExtraTestsAsBreaks).function
    for args in inputs:
        assert outcome(converted, *args) == outcome(fn, *args), args
