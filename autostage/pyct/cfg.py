"""Intra-procedural control-flow graphs of Python function, class and module bodies.

``build(fn)`` returns a ``Graph`` whose nodes are the simple statements of the body and the
headers of its compound statements (the test of ``if``/``while``, the step of ``for``, the items
of ``with``, each ``except`` clause, the subject of ``match`` and each ``case``). ``try`` has no
node of its own. Nested ``def``/``class`` statements are single nodes that bind their name; their
bodies get their own graphs from ``build_all``. Lambdas and comprehensions are expressions inside
the node of their statement. Unreachable statements still get nodes, with no predecessors.

Exception model: every node inside a ``try`` may raise. Its targets come from walking the
enclosing ``try`` statements outwards: from a ``try`` body, an edge goes to each handler and the
walk stops there if one handler is a catch-all (bare ``except:`` or ``except BaseException``); a
``try`` with a ``finally`` (entered from its body, handlers or else) gets an edge to its finally,
and the walk stops: the finally re-raises, so its last nodes continue the walk outwards. A walk
from an explicit ``raise`` that leaves the function puts its nodes in ``Graph.error``; an implicit
"may raise" does not. ``return``/``break``/``continue`` inside ``try``/``finally`` go through the
finally, whose last nodes then continue to the jump's target (through outer finally blocks first).
A finally block is built once and shared by every path through it, so its last nodes lead to the
union of the places those paths were going. ``with`` is a header followed by its body; an explicit
``raise`` in the body also leads past the ``with`` (``__exit__`` may suppress it:
``contextlib.suppress``), as well as outwards. Implicit exceptions suppressed by ``__exit__`` are
not modelled (the body's normal end already leads past the ``with``).

Loops are uniform: the header has an edge into the body and one to the ``else`` clause (or past
the loop), even for ``while True:`` (constant tests are not special-cased); ``break`` skips the
``else``. ``match`` tries cases in order: the subject leads to the first case, each case to its
body and to the next case; the last case leads past the ``match`` unless it is irrefutable
(``case _:`` or ``case name:`` without a guard). Requires only gast.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import gast

from autostage.pyct import unparser


class Node:
    """A CFG node: one simple statement, or the header of a compound statement."""

    __slots__ = ("ast_node", "next", "prev", "order", "label")

    def __init__(self, ast_node: gast.AST, order: int, label: str) -> None:
        self.ast_node = ast_node
        self.order = order  # creation order, which is source order
        self.label = label
        self.next: frozenset[Node] | set[Node] = set()
        self.prev: frozenset[Node] | set[Node] = set()

    def __repr__(self) -> str:
        return self.label


class Graph(NamedTuple):
    """The CFG of one body, with per-statement views for the analyses."""

    entry: Node
    exit: frozenset[Node]
    error: frozenset[Node]
    index: dict[gast.AST, Node]
    stmt_prev: dict[gast.AST, frozenset[Node]]
    stmt_next: dict[gast.AST, frozenset[Node]]
    stmt_nodes: dict[gast.AST, frozenset[Node]]
    stmt_entry: dict[gast.AST, Node]

    def __str__(self) -> str:
        """One line per node in source order: ``[3] x = x + 1 -> [2] [4]  <exit>``."""
        lines = []
        for node in sorted(self.index.values(), key=lambda n: n.order):
            line = f"[{node.order}] {node!r}"
            if node.next:
                line += " -> " + " ".join(f"[{n.order}]" for n in _sorted(node.next))
            tags = [tag for tag, on in (("entry", node is self.entry), ("exit", node in self.exit),
                                        ("error", node in self.error)) if on]
            if tags:
                line += "  <" + ", ".join(tags) + ">"
            lines.append(line)
        return "\n".join(lines)


def _sorted(nodes) -> list[Node]:
    return sorted(nodes, key=lambda n: n.order)


# Labels


def _one_line(text: str) -> str:
    first, _, rest = text.partition("\n")
    return first + " ..." if rest else first


def _header(node: gast.AST, **fields) -> str:
    """The first line of a compound statement unparsed without its blocks (``if x > 0``)."""
    shallow = copy.copy(node)
    for name, value in fields.items():
        setattr(shallow, name, value)
    return unparser.unparse(shallow).partition("\n")[0].removesuffix(":")


def _case_label(node: gast.match_case) -> str:
    pattern = node.pattern
    if isinstance(pattern, gast.MatchSequence):
        # The unparser writes every sequence pattern as [a, b]; tuples read better at the top.
        items = [unparser.unparse(p) for p in pattern.patterns]
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    else:
        text = unparser.unparse(pattern)
    if node.guard is not None:
        text += " if " + unparser.unparse(node.guard)
    return "case " + text


def _handler_label(node: gast.ExceptHandler, star: bool) -> str:
    text = "except*" if star else "except"
    if node.type is not None:
        text += " " + unparser.unparse(node.type)
    if node.name is not None:
        text += " as " + unparser.unparse(node.name)
    return text


def _label(node: gast.AST) -> str:
    """A short label for the CFG node of ``node``; handlers are labelled by the builder."""
    no_body = [gast.Pass()]
    if isinstance(node, (gast.If, gast.While, gast.For, gast.AsyncFor)):
        return _header(node, body=no_body, orelse=[])
    if isinstance(node, (gast.With, gast.AsyncWith)):
        return _header(node, body=no_body)
    if isinstance(node, gast.Match):
        return "match " + unparser.unparse(node.subject)
    if isinstance(node, gast.match_case):
        return _case_label(node)
    if isinstance(node, gast.FunctionDef):
        return "def " + node.name
    if isinstance(node, gast.AsyncFunctionDef):
        return "async def " + node.name
    if isinstance(node, gast.ClassDef):
        return "class " + node.name
    return _one_line(unparser.unparse(node))


def _is_catch_all(handler: gast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, gast.Tuple) else [handler.type]
    return any(k is None or (isinstance(k, gast.Name) and k.id == "BaseException")
               for k in kinds)


def _is_irrefutable(case: gast.match_case) -> bool:
    """Whether a case always matches, so that nothing runs past it (``case _:``, ``case x:``)."""
    if case.guard is not None:
        return False
    pattern = case.pattern
    while isinstance(pattern, gast.MatchAs) and pattern.pattern is not None:
        pattern = pattern.pattern  # `case (_ as whole):`
    if isinstance(pattern, gast.MatchOr):
        return any(isinstance(p, gast.MatchAs) and p.pattern is None for p in pattern.patterns)
    return isinstance(pattern, gast.MatchAs) and pattern.pattern is None


# Builder


def _link(sources, target: Node) -> None:
    for source in sources:
        source.next.add(target)
        target.prev.add(source)


class _Loop:
    """An enclosing loop while its body is built: where continue and break go."""

    def __init__(self, header: Node) -> None:
        self.header = header
        self.breaks: list[Node] = []  # nodes whose successor is the node after the loop


class _Try:
    """An enclosing try while its body, handlers or else are built: where exceptions go."""

    def __init__(self, node: gast.AST) -> None:
        self.node = node
        self.in_body = True  # False in handlers and else, which only the finally protects
        self.catch_all = any(_is_catch_all(h) for h in node.handlers)
        self.handler_sources: list[Node] = []  # nodes that may raise into the handlers
        self.finally_sources: list[Node] = []  # jumps and exceptions entering the finally
        self.jumps: dict[tuple[str, _Loop | None], None] = {}  # where the finally goes on to
        self.reraise: bool | None = None  # None: no exception enters; True: an explicit raise


class _With:
    """An enclosing with while its body is built: explicit raises its manager may suppress."""

    def __init__(self) -> None:
        self.raises: list[Node] = []  # nodes whose exception may be suppressed by __exit__


class _Builder:
    """Builds one graph; nodes are created in source order, linked from the current leaves."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.index: dict[gast.AST, Node] = {}
        self.spans: dict[gast.AST, tuple[int, int]] = {}
        self.leaves: list[Node] = []  # the nodes whose successor is the next node created
        self.frames: list[_Loop | _Try | _With] = []  # enclosing loops, trys, withs; innermost last
        self.exit: set[Node] = set()
        self.error: set[Node] = set()

    def build(self, body: list[gast.stmt]) -> Graph:
        if not body:
            raise ValueError("cannot build a control-flow graph of an empty body")
        self._block(body)
        self.exit.update(self.leaves)
        for node in self.nodes:
            node.next = frozenset(node.next)
            node.prev = frozenset(node.prev)
        stmt_nodes = {s: frozenset(self.nodes[a:b]) for s, (a, b) in self.spans.items()}
        return Graph(
            entry=self.nodes[0],
            exit=frozenset(self.exit),
            error=frozenset(self.error),
            index=self.index,
            stmt_prev={s: _outside(ns, "prev") for s, ns in stmt_nodes.items()},
            stmt_next={s: _outside(ns, "next") for s, ns in stmt_nodes.items()},
            stmt_nodes=stmt_nodes,
            stmt_entry={s: self.nodes[a] for s, (a, _) in self.spans.items()},
        )

    # Plumbing

    def _add(self, ast_node: gast.AST, label: str | None = None,
             explicit_raise: bool = False) -> Node:
        node = Node(ast_node, len(self.nodes), label or _label(ast_node))
        _link(self.leaves, node)
        self.leaves = [node]
        self.nodes.append(node)
        self.index[ast_node] = node
        self._throw([node], explicit_raise)
        return node

    def _throw(self, sources: list[Node], explicit: bool) -> None:
        """Routes an exception raised after ``sources`` to the enclosing handlers or finally."""
        for frame in reversed(self.frames):
            if isinstance(frame, _With) and explicit:
                frame.raises.extend(sources)  # (and on outwards: it may not be suppressed)
            if not isinstance(frame, _Try):
                continue
            if frame.in_body and frame.node.handlers:
                frame.handler_sources.extend(sources)
                if frame.catch_all:
                    return
            if frame.node.finalbody:
                frame.finally_sources.extend(sources)
                frame.reraise = bool(frame.reraise) or explicit
                return
        if explicit:
            self.error.update(sources)

    def _jump(self, sources: list[Node], kind: str, loop: _Loop | None = None) -> None:
        """Routes a return, break or continue after ``sources`` through enclosing finally blocks."""
        for frame in reversed(self.frames):
            if frame is loop:
                if kind == "break":
                    loop.breaks.extend(sources)
                else:
                    _link(sources, loop.header)
                return
            if isinstance(frame, _Try) and frame.node.finalbody:
                frame.finally_sources.extend(sources)
                frame.jumps[(kind, loop)] = None
                return
        self.exit.update(sources)

    def _block(self, stmts: list[gast.AST]) -> None:
        for stmt in stmts:
            self._visit(stmt)

    def _visit(self, node: gast.AST) -> None:
        start = len(self.nodes)
        getattr(self, "_visit_" + type(node).__name__, self._add)(node)
        self.spans[node] = (start, len(self.nodes))

    def _innermost_loop(self, node: gast.AST) -> _Loop:
        for frame in reversed(self.frames):
            if isinstance(frame, _Loop):
                return frame
        keyword = type(node).__name__.lower()
        raise SyntaxError(f"'{keyword}' outside loop (line {getattr(node, 'lineno', '?')})")

    # Jumps

    def _visit_Return(self, node: gast.Return) -> None:
        self._jump([self._add(node)], "return")
        self.leaves = []

    def _visit_Raise(self, node: gast.Raise) -> None:
        self._add(node, explicit_raise=True)
        self.leaves = []

    def _visit_Break(self, node: gast.Break) -> None:
        loop = self._innermost_loop(node)
        self._jump([self._add(node)], "break", loop)
        self.leaves = []

    def _visit_Continue(self, node: gast.Continue) -> None:
        loop = self._innermost_loop(node)
        self._jump([self._add(node)], "continue", loop)
        self.leaves = []

    # Compound statements

    def _visit_If(self, node: gast.If) -> None:
        header_leaves = [self._add(node)]
        self._block(node.body)
        body_leaves = self.leaves
        self.leaves = header_leaves
        self._block(node.orelse)  # without an else, the header falls through
        self.leaves = body_leaves + self.leaves

    def _visit_While(self, node: gast.While | gast.For) -> None:
        header = self._add(node)
        loop = _Loop(header)
        self.frames.append(loop)
        self._block(node.body)
        self.frames.pop()
        _link(self.leaves, header)
        # The else clause runs when the header finds the loop done; break skips it.
        self.leaves = [header]
        self._block(node.orelse)
        self.leaves = self.leaves + loop.breaks

    _visit_For = _visit_AsyncFor = _visit_While

    def _visit_With(self, node: gast.With) -> None:
        self._add(node)
        frame = _With()
        self.frames.append(frame)
        self._block(node.body)
        self.frames.pop()
        self.leaves = self.leaves + frame.raises

    _visit_AsyncWith = _visit_With

    def _visit_Match(self, node: gast.Match) -> None:
        no_match = [self._add(node)]
        matched: list[Node] = []
        for case in node.cases:
            self.leaves = no_match
            self._visit(case)
            matched += self.leaves
            no_match = [self.index[case]]  # the pattern or guard failed: try the next case
        if node.cases and _is_irrefutable(node.cases[-1]):
            no_match = []
        self.leaves = matched + no_match

    def _visit_match_case(self, node: gast.match_case) -> None:
        self._add(node)
        self._block(node.body)

    def _visit_Try(self, node: gast.Try) -> None:
        frame = _Try(node)
        self.frames.append(frame)
        self._block(node.body)
        body_leaves = self.leaves
        frame.in_body = False
        handled: list[Node] = []
        for handler in node.handlers:
            self.leaves = list(frame.handler_sources)
            self._visit(handler)
            handled += self.leaves
        self.leaves = body_leaves
        self._block(node.orelse)  # else runs when the body ends without an exception
        normal = self.leaves + handled
        self.frames.pop()
        if not node.finalbody:
            self.leaves = normal
            return
        self.leaves = normal + frame.finally_sources
        self._block(node.finalbody)
        ends = self.leaves
        # A return or raise inside the finally leaves `ends` empty: nothing continues onwards.
        self.leaves = ends if normal else []
        for kind, loop in frame.jumps:
            self._jump(ends, kind, loop)
        if frame.reraise is not None:
            self._throw(ends, frame.reraise)

    _visit_TryStar = _visit_Try

    def _visit_ExceptHandler(self, node: gast.ExceptHandler) -> None:
        star = isinstance(self.frames[-1].node, gast.TryStar)
        self._add(node, _handler_label(node, star))
        self._block(node.body)


def _outside(nodes: frozenset[Node], direction: str) -> frozenset[Node]:
    """The neighbours (``prev`` or ``next``) of ``nodes`` that are not among them."""
    return frozenset(n for node in nodes for n in getattr(node, direction) if n not in nodes)


_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


def build(node: gast.AST) -> Graph:
    """Builds the graph of the body of a function, class or module.

    Raises:
      TypeError: ``node`` has no body of statements of its own.
      ValueError: the body is empty (only a module's can be).
      SyntaxError: a ``break`` or ``continue`` outside a loop.
    """
    if not isinstance(node, (*_SCOPES, gast.Module)):
        raise TypeError(f"expected a function, class or module, got {type(node).__name__}")
    return _Builder().build(node.body)


def build_all(node: gast.AST) -> dict[gast.AST, Graph]:
    """Builds a graph for ``node`` (a function, class or module) and for every function or class
    nested anywhere under it, each body on its own.

    An empty module has no graph (there is no statement to enter).
    """
    graphs = {}
    if not (isinstance(node, gast.Module) and not node.body):
        graphs[node] = build(node)
    for child in gast.walk(node):
        if child is not node and isinstance(child, _SCOPES):
            graphs[child] = build(child)
    return graphs
