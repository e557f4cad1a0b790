"""Base class of AST passes, with the conversion context and a scoped state stack.

A pass subclasses ``Base`` and keeps per-scope state in ``self.state[SomeClass]``: entering a
construct pushes a fresh ``SomeClass()``, leaving pops it, and ``self.state[SomeClass].value`` (or
attribute access on the stack) reads the innermost one. This replaces ad-hoc instance fields that
nested functions or loops would otherwise clobber.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gast

from autostage.pyct import anno


class EntityInfo(NamedTuple):
    """What a pass knows about the entity being converted.

    Attributes:
      name: the entity's name.
      source_code: its source text.
      source_file: the file it came from, or None.
      future_features: ``from __future__`` features in effect.
      namespace: the globals (and closure values) the entity sees.
      free_names: its free variables (closure cells, filled or not). Their values are no
        constants: converted code is shared by every closure made from the same code (each
        rebound to its own cells), and a cell can be rebound while the function lives. A
        converter must not decide anything on their ``namespace`` values.
    """

    name: str
    source_code: str
    source_file: str | None
    future_features: tuple[str, ...]
    namespace: dict
    free_names: frozenset[str] = frozenset()


class Context:
    """The state shared by all passes over one entity: its info, a namer and user options."""

    def __init__(self, info: EntityInfo, namer: Any = None, user: Any = None):
        self.info = info
        self.namer = namer
        self.user = user


class _StateStack:
    """A stack of instances of one state class; attribute access reads the top one."""

    def __init__(self, factory: type):
        object.__setattr__(self, "_factory", factory)
        object.__setattr__(self, "_stack", [])

    def enter(self) -> Any:
        self._stack.append(self._factory())
        return self._stack[-1]

    def exit(self) -> Any:
        return self._stack.pop()

    @property
    def value(self) -> Any:
        return self._stack[-1]

    @property
    def level(self) -> int:
        return len(self._stack)

    def __iter__(self):
        return iter(self._stack)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stack[-1], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._stack[-1], name, value)


class _State(dict):
    """Maps a state class to its stack, creating stacks on first use."""

    def __missing__(self, key: type) -> _StateStack:
        stack = _StateStack(key)
        self[key] = stack
        return stack


class Base(gast.NodeTransformer):
    """A NodeTransformer with a context, a state stack and block-aware visiting.

    Replacement nodes inherit the origin annotation of the node they replace, so generated code
    keeps pointing at the user's line.
    """

    def __init__(self, ctx: Context | None):
        self.ctx = ctx
        self.state = _State()

    def visit(self, node: gast.AST) -> Any:
        if anno.hasanno(node, anno.Basic.SKIP_PROCESSING):
            return node
        result = super().visit(node)
        if anno.hasanno(node, anno.Basic.ORIGIN):
            origin = anno.getanno(node, anno.Basic.ORIGIN)
            for new in (result if isinstance(result, list) else [result]):
                if isinstance(new, gast.AST) and new is not node:
                    _inherit_origin(new, origin)
        return result

    def visit_block(self, nodes: list[gast.stmt] | None,
                    before_visit: Callable[[], None] | None = None,
                    after_visit: Callable[[gast.AST], Any] | None = None) -> list[gast.stmt]:
        """Visits a statement list, flattening statements replaced by several.

        ``after_visit(node)`` may return ``(node, extra_statements)`` to add statements after it.
        """
        if nodes is None:
            return []
        result = []
        for node in nodes:
            if before_visit is not None:
                before_visit()
            replacement = self.visit(node)
            extra = None
            if after_visit is not None and replacement is not None:
                replacement, extra = after_visit(replacement)
            if replacement is None:
                pass
            elif isinstance(replacement, list):
                result.extend(replacement)
            else:
                result.append(replacement)
            if extra:
                result.extend(extra)
        return result


def _inherit_origin(node: gast.AST, origin: Any) -> None:
    for child in gast.walk(node):
        if not anno.hasanno(child, anno.Basic.ORIGIN):
            anno.setanno(child, anno.Basic.ORIGIN, origin)
