"""Reaching definitions: which bindings of a symbol may reach each use.

``resolve(node, graphs)`` runs a forward dataflow over every graph of ``cfg.build_all(node)`` and
attaches ``anno.Static.DEFINITIONS`` to every Name: for a load (or a ``del`` target) the tuple of
``Definition``s that may reach it, for a store or a parameter a 1-tuple of its own. Every statement
(simple or compound, ``except`` clauses and ``case``s included) gets ``DEFINED_VARS_IN`` (symbols
with a definition on some path into it from outside: a loop's back edges do not count) and
``MUST_DEFINED_VARS_IN`` (on every path), as frozensets of QN. Requires activity analysis.

Parameters are defined at the entry of their function. ``del x`` and the end of an
``except ... as x`` handler kill ``x``; writing ``a`` also kills ``a.b`` and ``b[a]``. A ``for``
binds its target only on the edge into its body (an exhausted iterator binds nothing); a ``case``
binds its names on the edge into its body and may have bound them on the edge to the next case.
An ``except`` clause or ``finally`` sees the state before as well as after each node that may
raise into it. A root function or class (no statement of an analysed graph) gets the
DEFINED_VARS_IN / MUST_DEFINED_VARS_IN of its entry; its decorators and defaults run outside
every analysed graph, so their Names get empty DEFINITIONS.

Approximations: the free variables of a nested function or class get the definitions that reach
its ``def``/``class`` statement (not those reaching its calls), and those of a lambda or
comprehension the ones reaching its statement; a walrus under ``and``/``or``/``if-else`` or in a
comprehension, and a nested function's ``nonlocal`` write, define without killing; loads after a
walrus in the same statement also see the definitions from before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import gast

from autostage.pyct import anno, cfg
from autostage.pyct.qual_names import QN
from autostage.pyct.static_analysis import activity, dataflow

_EMPTY: frozenset = frozenset()
_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


class Definition:
    """One binding of a symbol: an assignment target, parameter, def, import or pattern.

    Attributes:
      symbol: the QN it binds.
      node: the AST node that binds it (a Name/Attribute/Subscript target, a parameter's Name,
        a FunctionDef/ClassDef, an import alias, a match pattern).
      param_of: the function or lambda whose parameter this is, else None.
    """

    __slots__ = ("symbol", "node", "param_of")

    def __init__(self, symbol: QN, node: gast.AST, param_of: gast.AST | None = None):
        self.symbol = symbol
        self.node = node
        self.param_of = param_of

    def __repr__(self) -> str:
        line = getattr(self.node, "lineno", "?")
        kind = "param " if self.param_of is not None else ""
        return f"Definition({kind}{self.symbol} @ line {line})"


class _State(NamedTuple):
    """Definitions that may reach a point, and symbols defined on every path to it.

    ``must`` is None where no path has been seen yet (the top of the must lattice).
    """

    defs: Mapping[QN, frozenset[Definition]]
    must: frozenset[QN] | None

    def without(self, kills: frozenset[QN]) -> _State:
        if not kills:
            return self
        defs = {q: d for q, d in self.defs.items() if not dataflow.is_killed(q, kills)}
        must = None if self.must is None else frozenset(
            q for q in self.must if not dataflow.is_killed(q, kills))
        return _State(defs, must)


_UNREACHED = _State({}, None)


def _join(states: list[_State]) -> _State:
    defs: dict[QN, frozenset[Definition]] = {}
    must = None
    for state in states:
        for qn, ds in state.defs.items():
            defs[qn] = defs.get(qn, _EMPTY) | ds
        if state.must is not None:
            must = state.must if must is None else must & state.must
    return _State(defs, must)


class _GraphAnalysis:
    """Reaching definitions over one graph, from the state ``seed`` at its entry."""

    def __init__(self, graph: cfg.Graph, seed: _State, sites: dict[dataflow.Store, Definition]):
        self.graph = graph
        self.seed = seed
        self.sites = sites
        self.nodes = dataflow.all_nodes(graph)
        self.effects = {n: dataflow.effects(n, graph) for n in self.nodes}
        self.edge_kills = dataflow.edge_kills(graph)
        self.raising = dataflow.raising_targets(graph)
        self.in_: dict[cfg.Node, _State] = {}
        self.out: dict[cfg.Node, _State] = {}  # on the edge into a for/case body, or everywhere
        self.out_elsewhere: dict[cfg.Node, _State] = {}  # for/case: on their other edges

    def definition(self, store: dataflow.Store) -> Definition:
        if store not in self.sites:
            self.sites[store] = Definition(store.symbol, store.site)
        return self.sites[store]

    def _transfer(self, effects: dataflow.Effects, state: _State) -> _State:
        state = state.without(effects.kills)
        defs = dict(state.defs)
        certain: dict[QN, frozenset[Definition]] = {}
        for store in effects.stores:
            certain[store.symbol] = certain.get(store.symbol, _EMPTY) | {self.definition(store)}
        defs.update(certain)
        for store in effects.maybe_stores:
            defs[store.symbol] = defs.get(store.symbol, _EMPTY) | {self.definition(store)}
        must = None if state.must is None else state.must | frozenset(certain)
        return _State(defs, must)

    def state_along(self, source: cfg.Node, target: cfg.Node) -> _State:
        """What flows from ``source`` to ``target``."""
        effects = self.effects[source]
        if effects.binds_into is None or target is effects.binds_into:
            state = self.out.get(source, _UNREACHED)
        else:
            state = self.out_elsewhere.get(source, _UNREACHED)
        if target in self.raising:  # the source may have raised before its bindings
            state = _join([state, self.state_in(source)])
        return state.without(self.edge_kills.get((source, target), _EMPTY))

    def _step(self, node: cfg.Node) -> bool:
        incoming = [self.state_along(p, node) for p in node.prev]
        if node is self.graph.entry:
            incoming.append(self.seed)
        before = (self.in_.get(node), self.out.get(node), self.out_elsewhere.get(node))
        self.in_[node] = _join(incoming)
        effects = self.effects[node]
        self.out[node] = self._transfer(effects, self.in_[node])
        if effects.binds_into is not None:
            self.out_elsewhere[node] = self._transfer(effects.along(None), self.in_[node])
        return before != (self.in_[node], self.out[node], self.out_elsewhere.get(node))

    def run(self) -> _GraphAnalysis:
        dataflow.fixpoint(self.nodes, self._step, lambda n: n.next)
        return self

    def state_in(self, node: cfg.Node) -> _State:
        return self.in_.get(node, _UNREACHED)

    def annotate(self) -> None:
        for node in self.nodes:
            effects = self.effects[node]
            for store in effects.stores + effects.maybe_stores:
                self.definition(store)
            parts = dataflow.header_parts(node.ast_node)
            walrus = self._walrus(parts)
            state = self.state_in(node)
            for part in parts:
                if part is getattr(node.ast_node, "guard", None):
                    state = self.out.get(node, _UNREACHED)  # the guard sees the pattern's names
                _NameAnnotator(state.defs, self.sites, walrus).visit(part)
        for stmt in self.graph.stmt_entry:
            state = self.state_entering(stmt)
            anno.setanno(stmt, anno.Static.DEFINED_VARS_IN, frozenset(state.defs))
            anno.setanno(stmt, anno.Static.MUST_DEFINED_VARS_IN, state.must or _EMPTY)

    def state_entering(self, stmt: gast.AST) -> _State:
        """What flows into a statement from outside it: a loop's own back edges do not count."""
        inside = self.graph.stmt_nodes[stmt]
        incoming = [self.state_along(p, n) for n in inside for p in n.prev if p not in inside]
        if self.graph.entry in inside:
            incoming.append(self.seed)
        return _join(incoming)

    def _walrus(self, parts: list[gast.AST]) -> dict[QN, frozenset[Definition]]:
        """The node's walrus definitions: later loads in the same node may see them too."""
        walrus: dict[QN, frozenset[Definition]] = {}
        for part in parts:
            for child in gast.walk(part):
                key = _key(child.target) if isinstance(child, gast.NamedExpr) else None
                if key in self.sites:
                    definition = self.sites[key]
                    walrus[definition.symbol] = walrus.get(definition.symbol, _EMPTY) | {
                        definition}
        return walrus


class _NameAnnotator(gast.NodeVisitor):
    """Annotates the Names of one CFG node; lambdas and comprehensions bind their own locals."""

    def __init__(self, defs: Mapping[QN, frozenset[Definition]],
                 sites: dict[dataflow.Store, Definition], walrus: Mapping[QN, frozenset]):
        self.defs = defs
        self.sites = sites
        self.walrus = walrus
        self.frames: list[dict[QN, frozenset[Definition]]] = []

    def _lookup(self, qn: QN) -> frozenset[Definition]:
        for frame in reversed(self.frames):
            if qn in frame:
                return frame[qn]
        return self.defs.get(qn, _EMPTY) | self.walrus.get(qn, _EMPTY)

    def visit_Name(self, node: gast.Name) -> None:
        qn = anno.getanno(node, anno.Basic.QN)
        if isinstance(node.ctx, (gast.Store, gast.Param)):
            definition = self.sites.get(_key(node))
            if definition is None:  # a lambda's or comprehension's own local
                definition = Definition(qn, node)
                if self.frames:
                    self.frames[-1][qn] = frozenset((definition,))
            anno.setanno(node, anno.Static.DEFINITIONS, (definition,))
        else:
            anno.setanno(node, anno.Static.DEFINITIONS, _ordered(self._lookup(qn)))

    def visit_Lambda(self, node: gast.Lambda) -> None:
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        frame = {}
        for param in activity.params_of(node.args):
            definition = Definition(anno.getanno(param, anno.Basic.QN), param, param_of=node)
            frame[definition.symbol] = frozenset((definition,))
            anno.setanno(param, anno.Static.DEFINITIONS, (definition,))
        self.frames.append(frame)
        self.visit(node.body)
        self.frames.pop()

    def _visit_comprehension(self, node: gast.AST) -> None:
        self.visit(node.generators[0].iter)  # evaluated outside the comprehension
        self.frames.append({})
        for i, generator in enumerate(node.generators):
            if i:
                self.visit(generator.iter)
            self.visit(generator.target)
            for test in generator.ifs:
                self.visit(test)
        for elt in ([node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]):
            self.visit(elt)
        self.frames.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension


def _key(name: gast.Name) -> dataflow.Store:
    return dataflow.Store(anno.getanno(name, anno.Basic.QN), name)


def _ordered(defs: frozenset[Definition]) -> tuple[Definition, ...]:
    """Definitions in source order, so that annotations are deterministic."""
    return tuple(sorted(defs, key=lambda d: (getattr(d.node, "lineno", 0) or 0,
                                             getattr(d.node, "col_offset", 0) or 0)))


def _parents(graphs: Mapping[gast.AST, cfg.Graph]) -> dict[gast.AST, gast.AST]:
    """Maps each nested function/class to the scope whose graph holds its def statement."""
    parents = {}
    for owner, graph in graphs.items():
        for ast_node in graph.index:
            if ast_node in graphs and ast_node is not owner:
                parents[ast_node] = owner
    return parents


def _depth(node: gast.AST, parents: dict[gast.AST, gast.AST]) -> int:
    depth = 0
    while node in parents:
        node, depth = parents[node], depth + 1
    return depth


class _Resolver:
    """Runs the graphs outermost first, so that nested ones see what reaches their definition."""

    def __init__(self, graphs: Mapping[gast.AST, cfg.Graph]):
        self.graphs = graphs
        self.parents = _parents(graphs)
        self.sites: dict[dataflow.Store, Definition] = {}
        self.analyses: dict[gast.AST, _GraphAnalysis] = {}
        self.visible: dict[gast.AST, tuple[_State, bool]] = {}

    def run(self) -> None:
        for owner in sorted(self.graphs, key=lambda n: _depth(n, self.parents)):
            seed = self._seed(owner)
            analysis = _GraphAnalysis(self.graphs[owner], seed, self.sites)
            self.analyses[owner] = analysis.run()
            analysis.annotate()
            if owner not in self.parents and not isinstance(owner, gast.Module):
                self._annotate_root(owner, seed)

    def _annotate_root(self, owner: gast.AST, seed: _State) -> None:
        """The root is no statement of an analysed graph: it gets what is defined at its entry,
        and its decorators and defaults, which run outside every graph, get no definitions."""
        anno.setanno(owner, anno.Static.DEFINED_VARS_IN, frozenset(seed.defs))
        anno.setanno(owner, anno.Static.MUST_DEFINED_VARS_IN, seed.must or _EMPTY)
        annotator = _NameAnnotator({}, self.sites, {})
        for part in dataflow.header_parts(owner):
            annotator.visit(part)

    def _outer_state(self, owner: gast.AST) -> tuple[_State, bool]:
        """What reaches ``owner``'s definition, skipping class namespaces; and whether it is the
        module's (where ``global`` names live)."""
        if owner not in self.visible:
            parent = self.parents.get(owner)
            if parent is None:
                self.visible[owner] = (_State({}, _EMPTY), False)
            elif isinstance(parent, gast.ClassDef):
                self.visible[owner] = self._outer_state(parent)
            else:
                analysis = self.analyses[parent]
                state = analysis.state_in(analysis.graph.index[owner])
                self.visible[owner] = (state, isinstance(parent, gast.Module))
        return self.visible[owner]

    def _seed(self, owner: gast.AST) -> _State:
        if isinstance(owner, gast.Module):
            return _State({}, _EMPTY)
        state, from_module = self._outer_state(owner)
        if state.must is None:
            state = _State(state.defs, _EMPTY)
        if isinstance(owner, gast.ClassDef):
            return state  # a class body reads enclosing names until it binds its own
        scope = anno.getanno(owner, anno.Static.BODY_SCOPE)
        shadowed = scope.local_names | (_EMPTY if from_module else frozenset(scope.globals))
        defs = {q: d for q, d in state.defs.items() if q.base not in shadowed}
        must = {q for q in state.must if q.base not in shadowed}
        for param in activity.params_of(owner.args):
            definition = Definition(anno.getanno(param, anno.Basic.QN), param, param_of=owner)
            self.sites[_key(param)] = definition
            anno.setanno(param, anno.Static.DEFINITIONS, (definition,))
            defs[definition.symbol] = frozenset((definition,))
            must.add(definition.symbol)
        return _State(defs, frozenset(must))


def resolve(node: gast.AST, graphs: Mapping[gast.AST, cfg.Graph],
            ctx: object = None) -> gast.AST:
    """Annotates ``node`` with reaching definitions (see module docstring).

    Args:
      node: the tree that activity analysis and ``cfg.build_all`` ran on.
      graphs: ``cfg.build_all(node)``.
      ctx: the conversion context; unused, accepted for a uniform pass signature.

    Returns:
      ``node``, annotated in place.
    """
    del ctx
    _Resolver(graphs).run()
    return node
