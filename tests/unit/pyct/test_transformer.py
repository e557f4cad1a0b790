"""Tests for autostage.pyct.transformer."""

import gast
import pytest

from autostage.pyct import anno, parser, templates, transformer
from autostage.pyct.unparser import unparse


class LoopState:
    def __init__(self):
        self.names = []


def test_state_stack_enter_exit_value_level():
    state = transformer.Base(None).state
    stack = state[LoopState]
    assert stack.level == 0
    outer = stack.enter()
    assert stack.value is outer and stack.level == 1
    stack.names.append("outer")  # attribute access reads the top of the stack
    inner = stack.enter()
    assert stack.value is inner and stack.level == 2
    assert stack.names == []
    stack.names = ["replaced"]  # attribute writes go to the top too
    assert inner.names == ["replaced"]
    assert list(stack) == [outer, inner]
    assert stack.exit() is inner
    assert stack.names == ["outer"] and stack.level == 1
    assert state[LoopState] is stack  # one stack per state class
    stack.exit()
    with pytest.raises(IndexError):
        stack.value  # noqa: B018 - an empty stack has no value


class _CountLoops(transformer.Base):
    """Records, for each loop, the names assigned directly inside it."""

    def __init__(self):
        super().__init__(None)
        self.found = {}

    def visit_While(self, node):
        self.state[LoopState].enter()
        self.generic_visit(node)
        self.found[unparse(node.test)] = (self.state[LoopState].level,
                                          self.state[LoopState].names)
        self.state[LoopState].exit()
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Store) and self.state[LoopState].level:
            self.state[LoopState].names.append(node.id)
        return node


def test_state_is_scoped_by_nested_constructs():
    node = parser.parse_str("""
        while a:
            x = 1
            while b:
                y = 2
            z = 3
    """)
    counter = _CountLoops()
    counter.visit(node)
    assert counter.found == {"b": (2, ["y"]), "a": (1, ["x", "z"])}
    assert counter.state[LoopState].level == 0


class _Expand(transformer.Base):
    """Turns `x += n` into two statements, drops `pass`, and appends a marker after returns."""

    def visit_AugAssign(self, node):
        return templates.replace("tmp = target + value\ntarget = tmp",
                                 target=node.target.id, value=node.value)

    def visit_Pass(self, node):
        return None

    def visit_FunctionDef(self, node):
        def after(stmt):
            extra = templates.replace("unreachable()") if isinstance(stmt, gast.Return) else None
            return stmt, extra
        node.body = self.visit_block(node.body, after_visit=after)
        return node


def test_visit_block_flattens_removes_and_appends():
    node = parser.parse_str("""
        def f(x):
            x += 1
            pass
            return x
    """)
    node = _Expand(None).visit(node)
    assert unparse(node) == (
        "def f(x):\n    tmp = x + 1\n    x = tmp\n    return x\n    unreachable()")


def test_visit_block_before_visit_and_none():
    calls = []
    base = transformer.Base(None)
    assert base.visit_block(None) == []
    stmts = parser.parse_str("a = 1\nb = 2", single_node=False).body
    result = base.visit_block(stmts, before_visit=lambda: calls.append(1))
    assert result == stmts and calls == [1, 1]


def test_replacement_nodes_inherit_origin():
    node = parser.parse_str("def f(x):\n    x += 1\n    return x")
    aug = node.body[0]
    anno.setanno(aug, anno.Basic.ORIGIN, "line 2")
    anno.setanno(aug.value, anno.Basic.ORIGIN, "the constant")
    node = _Expand(None).visit(node)
    first, second = node.body[0], node.body[1]
    assert anno.getanno(first, anno.Basic.ORIGIN) == "line 2"
    assert anno.getanno(second.targets[0], anno.Basic.ORIGIN) == "line 2"
    # A substituted node keeps its own origin rather than taking its new parent's.
    assert anno.getanno(first.value.right, anno.Basic.ORIGIN) == "the constant"
    # Nodes that were not replaced gain nothing.
    assert not anno.hasanno(node.body[2], anno.Basic.ORIGIN)


def test_skip_processing_nodes_are_left_alone():
    node = parser.parse_str("def f(x):\n    x += 1")
    anno.setanno(node.body[0], anno.Basic.SKIP_PROCESSING, True)
    node = _Expand(None).visit(node)
    assert unparse(node) == "def f(x):\n    x += 1"


def test_context_holds_entity_info():
    info = transformer.EntityInfo("f", "def f(): pass", "f.py", (), {"g": 1})
    ctx = transformer.Context(info, namer="namer", user={"opt": True})
    assert ctx.info.name == "f" and ctx.info.namespace == {"g": 1}
    assert (ctx.namer, ctx.user) == ("namer", {"opt": True})
    assert transformer.Base(ctx).ctx is ctx
