"""Fresh names for generated code that never collide with the user's names.

A ``Namer`` is given every name the converted entity may see: the globals of its namespace and every
name spelled anywhere in its AST (``collect_names``). Builtins are reserved too, so generated code
never shadows ``len`` or ``range``. Names are counted up from the requested root (``x``, ``x_1``,
``x_2``...), so the same input gives the same names in every process.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

import gast

_SUFFIX = re.compile(r"_\d+$")


def collect_names(node: gast.AST | Iterable[gast.AST]) -> set[str]:
    """Every identifier spelled under ``node``: variables, arguments, functions, classes,
    attributes, keywords, imports, ``global``/``nonlocal`` names and match-pattern captures."""
    nodes = [node] if isinstance(node, gast.AST) else list(node)
    names: set[str] = set()
    for root in nodes:
        for child in gast.walk(root):
            names.update(_names_of(child))
    return names


def _names_of(node: gast.AST) -> Iterable[str]:
    if isinstance(node, gast.Name):
        return (node.id,)
    if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return (node.name,)
    if isinstance(node, gast.Attribute):
        return (node.attr,)
    if isinstance(node, gast.keyword):
        return (node.arg,) if node.arg else ()
    if isinstance(node, (gast.Global, gast.Nonlocal)):
        return node.names
    if isinstance(node, gast.ImportFrom):
        return (node.module.split(".")[0],) if node.module else ()
    if isinstance(node, gast.alias):
        return (node.asname or node.name.split(".")[0], node.name.split(".")[0])
    if isinstance(node, (gast.MatchAs, gast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, gast.MatchMapping):
        return (node.rest,) if node.rest else ()
    return ()


class Namer:
    """Makes fresh, deterministic names that avoid a given set of names and each other."""

    def __init__(self, used: Iterable[str] = (), reserve_builtins: bool = True):
        self._used = set(used)
        if reserve_builtins:
            self._used.update(dir(builtins))

    @classmethod
    def for_entity(cls, node: gast.AST | Iterable[gast.AST], namespace: Iterable[str] = ()
                   ) -> Namer:
        """A namer avoiding the names in ``node`` and in ``namespace`` (e.g. a globals dict)."""
        return cls(collect_names(node) | set(namespace))

    def reserve(self, names: Iterable[str]) -> None:
        """Marks names as taken, e.g. ones that generated code introduces by hand."""
        self._used.update(names)

    def is_used(self, name: str) -> bool:
        return name in self._used

    def new_symbol(self, root: str, reserved: Iterable[str] = ()) -> str:
        """Returns ``root`` if free, else ``root_1``, ``root_2``...; the name is then taken.

        Args:
          root: the preferred name; a trailing ``_<n>`` is dropped before counting, so asking for
            ``x_1`` when it is taken gives ``x_2``, not ``x_1_1``.
          reserved: names to avoid for this call only (e.g. locals of the current scope).
        """
        if not root.isidentifier():
            raise ValueError(f"cannot make a name from {root!r}: it is not an identifier")
        avoid = self._used.union(reserved)
        name = root
        if name in avoid or keyword.iskeyword(name):
            base = _SUFFIX.sub("", root) if _SUFFIX.search(root) and root in avoid else root
            n = 1
            name = f"{base}_{n}"
            while name in avoid:
                n += 1
                name = f"{base}_{n}"
        self._used.add(name)
        return name
