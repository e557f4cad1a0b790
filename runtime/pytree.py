"""Nested Python structures as flat leaves plus a hashable description of their shape.

A staged function's arguments and results may be tuples, lists, dicts and namedtuples nested in
any way; ``flatten`` lists their leaves in order and returns a ``treedef`` (plain nested tuples,
so it hashes fast as part of the trace cache key), and ``unflatten`` rebuilds a structure of the
same shape from new leaves. Only those exact container types are nodes (a dict subclass or a user
object is a leaf), because only for them is rebuilding guaranteed to give an equivalent value.
Dicts keep their insertion order (and keys are part of the treedef).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from autostage.runtime.cache_keys import constant_key

LEAF = None  # the treedef of a leaf

TreeDef = Any  # LEAF | (tuple|list, children) | (dict, keys, children) | (namedtuple cls, children)


def flatten(tree: Any) -> tuple[list, TreeDef]:
    """The leaves of ``tree`` in order, and its treedef."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


# Leaf types tested before recursing (a call per argument is a tenth of a staged call's cost).
_PLAIN_LEAVES = frozenset({np.ndarray, float, int, bool})


def _flatten(node: Any, leaves: list) -> TreeDef:
    kind = type(node)
    if kind is tuple or kind is list:
        children = []
        for child in node:
            if type(child) in _PLAIN_LEAVES:
                leaves.append(child)
                children.append(LEAF)
            else:
                children.append(_flatten(child, leaves))
        return (kind, tuple(children))
    if kind is dict:
        keys = DictKeys(node)
        return (dict, keys, tuple([_flatten(node[k], leaves) for k in keys]))
    if isinstance(node, tuple) and hasattr(kind, "_fields"):  # a namedtuple
        return (kind, tuple([_flatten(child, leaves) for child in node]))
    leaves.append(node)
    return LEAF


class DictKeys(tuple):
    """A dict node's keys, equal to another's only when they are the same keys, by type and
    exact value (``cache_keys.constant_key``): ``{1: v}``, ``{True: v}`` and ``{1.0: v}`` are
    equal dicts, yet a function iterating the keys sees which (a trace of one must not serve
    the others); so are ``{0.0: v}`` and ``{-0.0: v}``."""

    __slots__ = ()

    def _exact(self) -> tuple:
        return tuple([constant_key(k) for k in self])

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKeys and self._exact() == other._exact()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._exact())


def unflatten(treedef: TreeDef, leaves: Iterable) -> Any:
    """The structure described by ``treedef`` with ``leaves`` in place of its leaves.

    Raises:
      ValueError: the number of leaves does not match the treedef.
    """
    iterator = iter(leaves)
    result = _unflatten(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError("more leaves than the treedef has")
    return result


_END = object()


def _unflatten(treedef: TreeDef, leaves: Iterator) -> Any:
    if treedef is LEAF:
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("fewer leaves than the treedef has")
        return leaf
    kind = treedef[0]
    if kind is dict:
        return {k: _unflatten(child, leaves) for k, child in zip(treedef[1], treedef[2],
                                                                 strict=True)}
    children = [_unflatten(child, leaves) for child in treedef[1]]
    if kind is tuple or kind is list:
        return kind(children)
    return kind(*children)  # a namedtuple


def num_leaves(treedef: TreeDef) -> int:
    if treedef is LEAF:
        return 1
    return sum(num_leaves(child) for child in treedef[-1])


def leaf_paths(treedef: TreeDef, prefix: str = "") -> list[str]:
    """How to reach each leaf, for messages: ``''``, ``[0]``, ``['w'][1]``, ``.field``."""
    if treedef is LEAF:
        return [prefix]
    kind = treedef[0]
    if kind is dict:
        return [path for key, child in zip(treedef[1], treedef[2], strict=True)
                for path in leaf_paths(child, f"{prefix}[{key!r}]")]
    if kind is tuple or kind is list:
        return [path for i, child in enumerate(treedef[1])
                for path in leaf_paths(child, f"{prefix}[{i}]")]
    return [path for field, child in zip(kind._fields, treedef[1], strict=True)
            for path in leaf_paths(child, f"{prefix}.{field}")]


def describe(treedef: TreeDef) -> str:
    """A short picture of the structure: ``(*, [*, *], {'a': *})``."""
    if treedef is LEAF:
        return "*"
    kind = treedef[0]
    if kind is dict:
        inner = ", ".join(f"{k!r}: {describe(c)}" for k, c in zip(treedef[1], treedef[2],
                                                                  strict=True))
        return "{" + inner + "}"
    inner = ", ".join(describe(c) for c in treedef[1])
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner},)" if len(treedef[1]) == 1 else f"({inner})"
    return f"{kind.__name__}({inner})"


def mutable_nodes(tree: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """(path: child indices and dict keys from ``tree``, node) of each list and dict in
    ``tree``, every occurrence, outer ones first."""
    kind = type(tree)
    found = [(path, tree)] if kind is list or kind is dict else []
    if kind is dict:
        for key, child in tree.items():
            found += mutable_nodes(child, (*path, key))
    elif kind is list or kind is tuple or isinstance(tree, tuple) and hasattr(kind, "_fields"):
        for i, child in enumerate(tree):
            found += mutable_nodes(child, (*path, i))
    return found


def at_path(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def replaced(tree: Any, path: tuple, new: Any) -> Any:
    """``tree`` with the node at ``path`` replaced by ``new`` (tuples rebuilt, lists and dicts
    changed in place: ``tree`` is a structure just built for a result)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    child = replaced(tree[key], rest, new)
    if type(tree) is list or type(tree) is dict:
        tree[key] = child
        return tree
    items = list(tree)
    items[key] = child
    return type(tree)(*items) if hasattr(type(tree), "_fields") else tuple(items)
