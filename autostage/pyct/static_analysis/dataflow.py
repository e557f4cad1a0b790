"""Plumbing shared by the dataflow analyses (reaching definitions, liveness) over ``cfg`` graphs.

It says what one CFG node does (``effects``: the symbols it reads, the bindings it certainly or
possibly makes, the symbols it deletes), which writes invalidate which symbols (``is_killed``),
what leaving an ``except ... as e`` handler deletes (``edge_kills``), and runs a worklist to a
fixed point (``fixpoint``). Requires activity analysis (``anno.Static.NODE_SCOPE``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import gast

from autostage.pyct import anno, cfg
from autostage.pyct.qual_names import QN
from autostage.pyct.static_analysis import activity

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)
_PATTERNS = (gast.MatchAs, gast.MatchStar, gast.MatchMapping)
_EMPTY: frozenset = frozenset()


class Store(NamedTuple):
    """One binding made by a CFG node: the symbol and the AST node that binds it."""

    symbol: QN
    site: gast.AST


class Effects(NamedTuple):
    """What one CFG node does to symbols.

    ``stores`` are bindings that happen whenever the node runs; ``maybe_stores`` may not happen
    (a walrus under ``and``/``or``/``if-else`` or in a comprehension, a nested function's
    ``nonlocal`` write), so they define without killing.
    """

    reads: frozenset[QN]
    stores: tuple[Store, ...]
    maybe_stores: tuple[Store, ...]
    deletes: frozenset[QN]
    binds_into: cfg.Node | None = None
    maybe_elsewhere: bool = False

    @property
    def kills(self) -> frozenset[QN]:
        return frozenset(s.symbol for s in self.stores) | self.deletes

    def along(self, succ: cfg.Node | None) -> Effects:
        """The effects on the edge to ``succ`` (None: out of the graph).

        A ``for`` step binds its target only on the edge into the body (an exhausted iterator
        binds nothing); a ``case`` binds its names on the edge into its body, and may have bound
        some of them on the edge to the next case (a failed guard, or a partial match).
        """
        if self.binds_into is None or succ is self.binds_into:
            return self
        elsewhere = self.maybe_stores + (self.stores if self.maybe_elsewhere else ())
        return self._replace(stores=(), maybe_stores=elsewhere, binds_into=None)


def header_parts(node: gast.AST) -> list[gast.AST]:
    """The parts of a CFG node's AST that the node itself evaluates (not its nested blocks)."""
    if isinstance(node, (gast.If, gast.While)):
        return [node.test]
    if isinstance(node, (gast.For, gast.AsyncFor)):
        extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        return [node.iter, node.target] + ([extra_test] if extra_test is not None else [])
    if isinstance(node, (gast.With, gast.AsyncWith)):
        return list(node.items)
    if isinstance(node, gast.ExceptHandler):
        return [p for p in (node.type, node.name) if p is not None]
    if isinstance(node, gast.Match):
        return [node.subject]
    if isinstance(node, gast.match_case):
        return [node.pattern] + ([node.guard] if node.guard is not None else [])
    if isinstance(node, _FUNCTIONS):
        args = node.args
        return (node.decorator_list + args.defaults + [d for d in args.kw_defaults if d]
                + [p.annotation for p in activity.params_of(args) if p.annotation is not None]
                + ([node.returns] if node.returns is not None else []))
    if isinstance(node, gast.ClassDef):
        return node.decorator_list + node.bases + node.keywords
    return [node]


def _stores(node: gast.AST, maybe: bool) -> Iterator[tuple[Store, bool]]:
    """Yields ``(store, is_maybe)`` for the bindings made while evaluating ``node``."""
    if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)) and isinstance(
            node.ctx, gast.Store):
        qn = anno.getanno(node, anno.Basic.QN, None)
        if qn is not None:
            yield Store(qn, node), maybe
    elif isinstance(node, gast.NamedExpr):
        yield Store(anno.getanno(node.target, anno.Basic.QN), node.target), maybe
        yield from _stores(node.value, maybe)
        return
    elif isinstance(node, gast.AnnAssign) and node.value is None:
        return  # `x: int` binds nothing
    elif isinstance(node, gast.Lambda):  # its body binds only its own locals
        node = node.args
    elif isinstance(node, _COMPREHENSIONS):  # targets are local; a walrus in it escapes
        for child in gast.walk(node):
            if isinstance(child, gast.NamedExpr):
                yield Store(anno.getanno(child.target, anno.Basic.QN), child.target), True
        return
    elif isinstance(node, _PATTERNS):
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if name is not None:
                yield Store(QN(name), node), maybe
    elif isinstance(node, gast.alias) and node.name != "*":
        yield Store(QN(node.asname or node.name.split(".")[0]), node), maybe
    for field, child in gast.iter_fields(node):
        conditional = maybe or _is_conditional(node, field, child)
        for item in child if isinstance(child, list) else [child]:
            if isinstance(item, gast.AST):
                yield from _stores(item, conditional)


def _is_conditional(parent: gast.AST, field: str, child: object) -> bool:
    """Whether ``child`` may not be evaluated when ``parent`` is (short-circuits, ternaries)."""
    if isinstance(parent, gast.BoolOp):
        return True  # approximation: also the first operand, which always runs
    return isinstance(parent, gast.IfExp) and field != "test"


def effects(node: cfg.Node, graph: cfg.Graph) -> Effects:
    """What the CFG node ``node`` of ``graph`` reads, binds and deletes."""
    ast_node = node.ast_node
    scope = anno.getanno(ast_node, anno.Static.NODE_SCOPE)
    stores, maybe_stores = [], []
    if isinstance(ast_node, (*_FUNCTIONS, gast.ClassDef)):
        stores.append(Store(QN(ast_node.name), ast_node))
    for part in header_parts(ast_node):
        for store, maybe in _stores(part, False):
            (maybe_stores if maybe else stores).append(store)
    known = {s.symbol for s in stores} | {s.symbol for s in maybe_stores}
    # What activity reports beyond the node's own stores: writes of nested functions' nonlocals.
    maybe_stores += [Store(q, ast_node) for q in sorted(scope.modified - known)]
    binds_into = None
    if isinstance(ast_node, (gast.For, gast.AsyncFor, gast.match_case)):
        binds_into = graph.stmt_entry[ast_node.body[0]]
    # A nested function's `del` of a nonlocal happens when it is called, not at its def.
    deletes = _EMPTY if isinstance(ast_node, (*_FUNCTIONS, gast.ClassDef)) else scope.deleted
    return Effects(_reads(ast_node, scope.read, stores), tuple(stores), tuple(maybe_stores),
                   frozenset(deletes), binds_into, isinstance(ast_node, gast.match_case))


def _reads(ast_node: gast.AST, reads: set[QN], stores: list[Store]) -> frozenset[QN]:
    """The symbols read before the node's bindings happen.

    A case guard runs after its pattern has bound names, so its reads of them are not reads of
    values from before the node.
    """
    if not (isinstance(ast_node, gast.match_case) and ast_node.guard is not None):
        return frozenset(reads)
    bound = {s.symbol for s in stores}
    in_pattern = {anno.getanno(n, anno.Basic.QN, None) for n in gast.walk(ast_node.pattern)}
    return frozenset(q for q in reads if q in in_pattern or q.base not in bound)


def is_killed(symbol: QN, kills: frozenset[QN]) -> bool:
    """Whether writing or deleting the symbols in ``kills`` invalidates ``symbol``.

    A write to ``k`` invalidates ``k`` and everything rooted at it (``k.b``, ``k[0]``); a write to
    a simple name also invalidates the symbols it indexes (``a[k]``).
    """
    if not kills:
        return False
    if symbol in kills or not kills.isdisjoint(symbol.owner_set):
        return True
    return any(k.is_simple and k in symbol.support_set for k in kills)


def edge_kills(graph: cfg.Graph) -> dict[tuple[cfg.Node, cfg.Node], frozenset[QN]]:
    """Symbols deleted on CFG edges: leaving an ``except ... as e`` handler deletes ``e``."""
    kills: dict[tuple[cfg.Node, cfg.Node], set[QN]] = {}
    for stmt, inside in graph.stmt_nodes.items():
        if not (isinstance(stmt, gast.ExceptHandler) and stmt.name is not None):
            continue
        name = anno.getanno(stmt.name, anno.Basic.QN)
        handler_node = graph.index[stmt]
        for node in inside:
            if node is handler_node:
                continue
            for succ in node.next:
                if succ not in inside:
                    kills.setdefault((node, succ), set()).add(name)
    return {edge: frozenset(names) for edge, names in kills.items()}


def raising_targets(graph: cfg.Graph) -> frozenset[cfg.Node]:
    """Nodes that an exception can reach: ``except`` clauses and the start of ``finally`` blocks.

    The graph links a node that may raise to them as if it had completed; it may have raised
    before its bindings happened, so the analyses let them see the node's state before it too.
    """
    targets = set()
    for stmt in graph.stmt_nodes:
        if isinstance(stmt, (gast.Try, gast.TryStar)):
            targets.update(graph.index[h] for h in stmt.handlers)
            if stmt.finalbody:
                targets.add(graph.stmt_entry[stmt.finalbody[0]])
    return frozenset(targets)


def all_nodes(graph: cfg.Graph) -> list[cfg.Node]:
    """Every node of the graph, unreachable ones included, in source order."""
    nodes = set(graph.index.values())
    nodes.add(graph.entry)
    return sorted(nodes, key=lambda n: getattr(n, "order", 0))


def fixpoint(nodes: Iterable[cfg.Node], step: Callable[[cfg.Node], bool],
             dependents: Callable[[cfg.Node], Iterable[cfg.Node]]) -> None:
    """Runs ``step(node)`` until nothing changes.

    ``step`` recomputes one node's state and returns whether it changed; the nodes that depend on
    a changed node (successors going forward, predecessors going backward) are then revisited.
    """
    queue = deque(nodes)
    queued = set(queue)
    while queue:
        node = queue.popleft()
        queued.discard(node)
        if step(node):
            for other in dependents(node):
                if other not in queued:
                    queued.add(other)
                    queue.append(other)


def exit_nodes(graph: cfg.Graph) -> frozenset[cfg.Node]:
    """Nodes after which control leaves the body (normally or by an explicit raise)."""
    return graph.exit | graph.error
