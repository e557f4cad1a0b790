"""Annotations on AST nodes, through one module with enumerated keys.

Passes attach information to nodes (qualified names, scopes, liveness, origin) here rather than as
ad-hoc attributes, so that every key is documented and copying a node can carry its annotations.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import gast

_ANNO_FIELD = "___pyct_anno"
_FAIL = object()


class NoValue(enum.Enum):
    def __repr__(self) -> str:
        return self.name


class Basic(NoValue):
    """Keys used by the toolkit itself and by most passes."""

    QN = "qualified name of a Name, Attribute or Subscript node (qual_names.QN)"
    SKIP_PROCESSING = "a node that transformers must leave untouched"
    ORIGIN = "origin_info.OriginInfo: where the node came from in user code"
    DIRECTIVES = "user directives attached to a statement (dict)"
    EXTRA_LOOP_TEST = "an extra loop condition added by break/return lowering"
    TRUTH_TEST = "an expression whose value is only tested for truth (an if, while or ternary test)"
    ARGS_SCOPE = "activity Scope of a function's arguments"
    GENERATED = "a definition a converter made (not written by the user)"
    FINALLY_AS_ELSE = ("a try that jump lowering made of a try/finally: its else clause is the "
                       "finally, which runs after a jump in the body too")
    ORIGINAL_NAME = "the name a def had before private name mangling renamed it (str)"


class Static(NoValue):
    """Keys written by the static analyses (see each analysis module for its contract)."""

    SCOPE = "activity Scope of a statement or expression as a whole"
    ARGS_SCOPE = "activity Scope of a call's or a function's arguments"
    BODY_SCOPE = "activity Scope of the body of a compound statement or function"
    ORELSE_SCOPE = "activity Scope of the else branch of if/for/while/try"
    COND_SCOPE = "activity Scope of the test of if/while"
    ITERATE_SCOPE = "activity Scope of the target and iterable of a for loop"
    NODE_SCOPE = ("activity Scope of what one CFG node does: a simple statement, or the header of"
                  " a compound one (if/while test, for step, with items, except clause, match"
                  " subject, case pattern and guard)")
    DEFINITIONS = "reaching_definitions: Definitions that may reach a Name use"
    DEFINED_VARS_IN = "reaching_definitions: symbols defined on some path into the statement"
    MUST_DEFINED_VARS_IN = "reaching_definitions: symbols defined on every path into the statement"
    DEFINED_FNS_IN = "reaching_definitions: function names defined on entry to the statement"
    LIVE_VARS_IN = "liveness: symbols live on entry to the statement"
    LIVE_VARS_OUT = "liveness: symbols live on exit from the statement"
    ORIG_DEFINITIONS = "definitions that a rewritten node inherited from the original"


def keys(node: gast.AST) -> frozenset:
    return frozenset(getattr(node, _ANNO_FIELD, {}))


def getanno(node: gast.AST, key: Any, default: Any = _FAIL) -> Any:
    annotations = getattr(node, _ANNO_FIELD, {})
    if key in annotations:
        return annotations[key]
    if default is _FAIL:
        raise KeyError(f"{type(node).__name__} node has no annotation {key!r}")
    return default


def hasanno(node: gast.AST, key: Any) -> bool:
    return key in getattr(node, _ANNO_FIELD, {})


def setanno(node: gast.AST, key: Any, value: Any) -> None:
    annotations = getattr(node, _ANNO_FIELD, None)
    if annotations is None:
        annotations = {}
        setattr(node, _ANNO_FIELD, annotations)
    annotations[key] = value


def mark_truth_test(node: gast.AST) -> None:
    """Marks the ``and``/``or`` expressions of the test ``node`` whose value only its truth
    matters for (the test itself, and through ``and``, ``or`` and ``not`` the operands they
    hand on)."""
    if isinstance(node, gast.BoolOp):
        setanno(node, Basic.TRUTH_TEST, True)
        for value in node.values:
            mark_truth_test(value)
    elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        mark_truth_test(node.operand)


def delanno(node: gast.AST, key: Any) -> None:
    annotations = getattr(node, _ANNO_FIELD, {})
    annotations.pop(key, None)


def copyanno(from_node: gast.AST, to_node: gast.AST, key: Any, field_name: Any = None) -> None:
    """Copies one annotation, if present, optionally under another key."""
    if hasanno(from_node, key):
        setanno(to_node, field_name if field_name is not None else key, getanno(from_node, key))


def dup(node: gast.AST, copy_map: dict) -> None:
    """Copies annotations to new keys within one node: ``copy_map`` maps old key to new key."""
    for old, new in copy_map.items():
        copyanno(node, node, old, new)


def clearanno(node: gast.AST, keys_to_clear: Iterable[Any] | None = None) -> None:
    """Removes annotations (all, or the given keys) from a node and all its descendants."""
    for child in gast.walk(node):
        annotations = getattr(child, _ANNO_FIELD, None)
        if annotations is None:
            continue
        if keys_to_clear is None:
            annotations.clear()
        else:
            for key in keys_to_clear:
                annotations.pop(key, None)
