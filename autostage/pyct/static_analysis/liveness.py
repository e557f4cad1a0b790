"""Liveness: the symbols whose current value may still be read, before and after each statement.

``resolve(node, graphs)`` runs a backward dataflow over every graph of ``cfg.build_all(node)`` and
attaches ``anno.Static.LIVE_VARS_IN`` and ``LIVE_VARS_OUT`` (frozensets of QN) to every statement
of every graph, compound ones as a whole (``except`` clauses and ``case``s too): live-in is that
of the statement's first CFG node, live-out the union of what is live on the edges leaving it,
plus the exit set where control can leave the function from inside it. A function that is the
root of the analysis (no enclosing graph) gets ``LIVE_VARS_IN`` at its entry; a nested def is a
statement of its enclosing graph and gets that graph's values (its entry liveness is the
``LIVE_VARS_IN`` of its first statement). Requires activity analysis.

Writing ``a`` kills ``a``, the symbols rooted at it (``a.b``, ``a[0]``) and those it indexes
(``b[a]``); writing ``a.b`` kills ``a.b`` and what is rooted at it, not ``a``; ``del`` and the end
of an ``except ... as e`` handler kill. At exit, names declared ``global``/``nonlocal`` in a
function are live (their values escape), and so are the names a class or module body binds.
A ``for`` kills its target only on the edge into its body; a node that may raise into an
``except`` or ``finally`` kills nothing on that edge (it may raise before its bindings). A nested
function's free variables are read by its ``def`` statement (activity), so they are live there;
a walrus under ``and``/``or``/``if-else`` or in a comprehension, and a nested function's
``nonlocal`` write, do not kill. A read after a walrus in the same statement counts as a read
before it (conservative).
"""

from __future__ import annotations

from collections.abc import Mapping

import gast

from autostage.pyct import anno, cfg
from autostage.pyct.qual_names import QN
from autostage.pyct.static_analysis import dataflow

_EMPTY: frozenset = frozenset()


def _minus(live: frozenset[QN], kills: frozenset[QN]) -> frozenset[QN]:
    if not kills:
        return live
    return frozenset(q for q in live if not dataflow.is_killed(q, kills))


class _GraphLiveness:
    """Liveness over one graph, with ``exit_live`` live wherever control leaves it."""

    def __init__(self, graph: cfg.Graph, exit_live: frozenset[QN]):
        self.graph = graph
        self.exit_live = exit_live
        self.exits = dataflow.exit_nodes(graph)
        self.nodes = dataflow.all_nodes(graph)
        self.effects = {n: dataflow.effects(n, graph) for n in self.nodes}
        self.edge_kills = dataflow.edge_kills(graph)
        self.raising = dataflow.raising_targets(graph)
        self.in_: dict[cfg.Node, frozenset[QN]] = {}

    def _across(self, source: cfg.Node, target: cfg.Node) -> frozenset[QN]:
        """What is live just after ``source`` on its way to ``target``."""
        return _minus(self.in_.get(target, _EMPTY), self.edge_kills.get((source, target), _EMPTY))

    def live_out(self, nodes: frozenset[cfg.Node]) -> frozenset[QN]:
        """What is live on leaving the group ``nodes`` (one node, or a statement's nodes)."""
        live = set()
        for node in nodes:
            for succ in node.next:
                if succ not in nodes:
                    live |= self._across(node, succ)
            if node in self.exits:
                live |= self.exit_live
        return frozenset(live)

    def _step(self, node: cfg.Node) -> bool:
        effects = self.effects[node]
        live = set(effects.reads)
        for succ in node.next:
            after = self._across(node, succ)
            live |= _minus(after, effects.along(succ).kills)
            if succ in self.raising:  # the node may have raised before its bindings
                live |= after
        if node in self.exits:
            live |= _minus(self.exit_live, effects.along(None).kills)
        live_in = frozenset(live)
        changed = live_in != self.in_.get(node)
        self.in_[node] = live_in
        return changed

    def run(self) -> _GraphLiveness:
        dataflow.fixpoint(reversed(self.nodes), self._step, lambda n: n.prev)
        return self

    def annotate(self) -> None:
        for stmt, inside in self.graph.stmt_nodes.items():
            entry = self.graph.stmt_entry[stmt]
            anno.setanno(stmt, anno.Static.LIVE_VARS_IN, self.in_.get(entry, _EMPTY))
            anno.setanno(stmt, anno.Static.LIVE_VARS_OUT, self.live_out(inside))


def _exit_live(owner: gast.AST) -> frozenset[QN]:
    """Symbols whose values escape when the body of ``owner`` ends."""
    scope = anno.getanno(owner, anno.Static.BODY_SCOPE)
    if isinstance(owner, (gast.ClassDef, gast.Module)):
        return frozenset(scope.bound | scope.globals)
    return frozenset(scope.globals | scope.nonlocals)


def resolve(node: gast.AST, graphs: Mapping[gast.AST, cfg.Graph],
            ctx: object = None) -> gast.AST:
    """Annotates ``node`` with liveness (see module docstring).

    Args:
      node: the tree that activity analysis and ``cfg.build_all`` ran on.
      graphs: ``cfg.build_all(node)``.
      ctx: the conversion context; unused, accepted for a uniform pass signature.

    Returns:
      ``node``, annotated in place.
    """
    del ctx
    statements = set()
    results = {}
    for owner, graph in graphs.items():
        results[owner] = _GraphLiveness(graph, _exit_live(owner)).run()
        results[owner].annotate()
        statements.update(graph.stmt_nodes)
    for owner, result in results.items():
        if isinstance(owner, (gast.FunctionDef, gast.AsyncFunctionDef)) and (
                owner not in statements):
            anno.setanno(owner, anno.Static.LIVE_VARS_IN, result.in_.get(result.graph.entry))
    return node
