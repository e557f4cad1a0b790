"""Qualified names: symbols such as ``a``, ``a.b``, ``a[0]`` and ``a.b[i].c``.

Analyses track values by these symbols rather than by bare names, so that a write to ``a.b`` is
not confused with a write to ``a``. ``resolve(node)`` annotates every Name, Attribute and Subscript
node whose symbol is expressible with ``anno.Basic.QN``; subscripts with computed indices
(``a[i + 1]``, slices) get no QN of their own, but their parts do.
"""

from __future__ import annotations

from typing import Any

import gast

from autostage.pyct import anno, parser


class Literal:
    """A constant used as a subscript key in a QN (``a[0]``, ``a['k']``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and type(self.value) is type(other.value) and (
            self.value == other.value)

    def __hash__(self) -> int:
        return hash((Literal, type(self.value), self.value))

    def __str__(self) -> str:
        return repr(self.value)

    __repr__ = __str__


class QN:
    """An immutable qualified name.

    ``QN('a')`` is simple; ``QN(QN('a'), attr='b')`` is ``a.b``; ``QN(QN('a'), subscript=QN('i'))``
    is ``a[i]`` and ``QN(QN('a'), subscript=Literal(0))`` is ``a[0]``.
    """

    __slots__ = ("_parent", "_attr", "_subscript", "_str", "_hash")

    def __init__(self, base: str | QN, attr: str | None = None,
                 subscript: QN | Literal | None = None):
        if attr is not None and subscript is not None:
            raise ValueError("a QN has an attribute or a subscript, not both")
        if attr is None and subscript is None:
            if not isinstance(base, str):
                raise ValueError(f"a simple QN needs a str base, got {base!r}")
            self._parent = None
        elif not isinstance(base, QN):
            raise ValueError(f"a composite QN needs a QN parent, got {base!r}")
        else:
            self._parent = base
        self._attr = base if self._parent is None else attr
        self._subscript = subscript
        if self._parent is None:
            self._str = base
        elif attr is not None:
            self._str = f"{self._parent}.{attr}"
        else:
            self._str = f"{self._parent}[{subscript}]"
        self._hash = hash(("QN", self._str, type(subscript).__name__))

    @property
    def parent(self) -> QN | None:
        """The QN this one is an attribute or subscript of; None for a simple name."""
        return self._parent

    @property
    def is_simple(self) -> bool:
        return self._parent is None

    @property
    def is_composite(self) -> bool:
        return self._parent is not None

    @property
    def has_attr(self) -> bool:
        return self._parent is not None and self._subscript is None

    @property
    def has_subscript(self) -> bool:
        return self._subscript is not None

    @property
    def attr(self) -> str | None:
        return self._attr if self.has_attr else None

    @property
    def subscript(self) -> QN | Literal | None:
        return self._subscript

    @property
    def base(self) -> QN:
        """The simple name at the root: ``a`` for ``a.b[i].c``."""
        qn = self
        while qn._parent is not None:
            qn = qn._parent
        return qn

    @property
    def owner_set(self) -> frozenset[QN]:
        """Every proper ancestor: ``{a, a.b}`` for ``a.b.c``."""
        owners = set()
        qn = self._parent
        while qn is not None:
            owners.add(qn)
            qn = qn._parent
        return frozenset(owners)

    @property
    def support_set(self) -> frozenset[QN]:
        """The simple names whose values this symbol depends on: ``{a, i}`` for ``a.b[i]``."""
        if self._parent is None:
            return frozenset((self,))
        support = set(self._parent.support_set)
        if isinstance(self._subscript, QN):
            support |= self._subscript.support_set
        return frozenset(support)

    def ssf(self) -> str:
        """A string-safe form, usable in generated identifiers: ``a_b_i`` for ``a.b[i]``."""
        if self._parent is None:
            return self._attr
        if self._subscript is None:
            return f"{self._parent.ssf()}_{self._attr}"
        key = self._subscript.ssf() if isinstance(self._subscript, QN) else "".join(
            c if c.isalnum() else "_" for c in str(self._subscript.value))
        return f"{self._parent.ssf()}_sub_{key}"

    def ast(self) -> gast.expr:
        """A Load-context AST expression for this symbol."""
        if self._parent is None:
            return gast.Name(self._attr, gast.Load(), None, None)
        if self._subscript is None:
            return gast.Attribute(self._parent.ast(), self._attr, gast.Load())
        if isinstance(self._subscript, QN):
            index = self._subscript.ast()
        else:
            index = gast.Constant(self._subscript.value, None)
        return gast.Subscript(self._parent.ast(), index, gast.Load())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QN):
            return NotImplemented
        return (self._str == other._str and self._parent == other._parent
                and self._attr == other._attr and self._subscript == other._subscript)

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: QN) -> bool:
        return str(self) < str(other)

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return self._str


def _qn_of(node: gast.AST) -> QN | Literal | None:
    if isinstance(node, gast.Name):
        return QN(node.id)
    if isinstance(node, gast.Attribute):
        parent = anno.getanno(node.value, anno.Basic.QN, None)
        return QN(parent, attr=node.attr) if parent is not None else None
    if isinstance(node, gast.Subscript):
        parent = anno.getanno(node.value, anno.Basic.QN, None)
        if parent is None:
            return None
        key = node.slice
        if isinstance(key, gast.Constant) and isinstance(key.value, (int, str, bool, bytes)):
            return QN(parent, subscript=Literal(key.value))
        key_qn = anno.getanno(key, anno.Basic.QN, None)
        if key_qn is not None:
            return QN(parent, subscript=key_qn)
    return None


class _Resolver(gast.NodeTransformer):
    def generic_visit(self, node):
        node = super().generic_visit(node)  # children first: parents are built from them
        if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
            qn = _qn_of(node)
            if qn is not None:
                anno.setanno(node, anno.Basic.QN, qn)
        return node


def resolve(node: gast.AST) -> gast.AST:
    """Annotates Name, Attribute and Subscript nodes under ``node`` with their QN."""
    return _Resolver().visit(node)


def from_str(qn_str: str) -> QN:
    """Parses ``'a.b[0]'`` into a QN."""
    node = parser.parse_expression(qn_str)
    node = resolve(node)
    qn = anno.getanno(node, anno.Basic.QN, None)
    if qn is None:
        raise ValueError(f"{qn_str!r} is not a qualified name")
    return qn
