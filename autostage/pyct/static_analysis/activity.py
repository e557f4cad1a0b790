"""Activity analysis: which symbols each statement reads, modifies and deletes.

``resolve(node)`` attaches ``Scope`` objects: every statement gets ``anno.Static.SCOPE`` (what it
does as a whole, nested blocks included, as seen from its enclosing scope); ``If``/``While`` get
``COND_SCOPE``, ``BODY_SCOPE``, ``ORELSE_SCOPE``; ``For`` gets ``ITERATE_SCOPE`` (target,
iterable, and the ``anno.Basic.EXTRA_LOOP_TEST`` that jump lowering may add: the loop step
evaluates it), ``BODY_SCOPE``, ``ORELSE_SCOPE``; ``Try`` gets ``BODY_SCOPE``, ``ORELSE_SCOPE``;
``With``, ``ExceptHandler``, ``match_case`` and ``ClassDef`` get ``BODY_SCOPE``; functions and
lambdas get ``ARGS_SCOPE`` and ``BODY_SCOPE`` (their own namespace, with params); comprehensions
get ``BODY_SCOPE``. The node of every CFG node (simple statements, and the headers ``If``,
``While``, ``For``, ``With``, ``ExceptHandler``, ``Match``, ``match_case``) gets ``NODE_SCOPE``:
what that CFG node alone does, which is what the dataflow analyses consume.

Requires ``qual_names.resolve``; ``resolve`` runs it itself (it is idempotent), so callers need not.

Semantics: reading ``a.b`` reads ``a`` and ``a.b``; writing it modifies ``a.b`` and reads ``a``.
Type annotations are recorded in ``Scope.annotations``, not in ``read`` (locals' annotations are
never evaluated). An ``except ... as e`` handler binds ``e`` and deletes it at its end, as Python
does. A nested function's free variables (resolved past class scopes, like Python) are read by
its ``def`` statement, and its ``nonlocal`` writes count as modifications there; its ``global``
writes and writes through free objects (``a.b = 1`` with ``a`` free) are not propagated.
Comprehension targets stay local; a walrus binds in the enclosing function (PEP 572).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import gast

from autostage.pyct import anno, qual_names
from autostage.pyct.qual_names import QN

BLOCK = "block"
FUNCTION = "function"
CLASS = "class"
COMPREHENSION = "comprehension"
MODULE = "module"

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)


class Scope:
    """Symbols read, modified, deleted and bound by a region of code.

    A ``BLOCK`` scope (a statement or block) is a view inside its enclosing namespace and adds
    itself to its parent when it closes. The other kinds are *isolated* namespaces (function,
    lambda, class, comprehension, module); only their free reads and escaping writes are seen
    from outside.

    Attributes:
      parent: the enclosing scope, or None.
      kind: BLOCK, FUNCTION, CLASS, COMPREHENSION or MODULE.
      read, modified, deleted: symbols (QN) read, written and deleted.
      bound: simple names bound (assigned, imported, defined, targets).
      params: for function scopes, the parameter names.
      globals, nonlocals: names declared ``global`` / ``nonlocal``.
      annotations: symbols read in type annotations.
      nested_free: free variables of functions, lambdas, comprehensions and classes nested here;
        unlike other reads they resolve past class scopes.
    """

    def __init__(self, parent: Scope | None = None, kind: str = BLOCK):
        self.parent = parent
        self.kind = kind
        self.read: set[QN] = set()
        self.modified: set[QN] = set()
        self.deleted: set[QN] = set()
        self.bound: set[QN] = set()
        self.params: set[QN] = set()
        self.globals: set[QN] = set()
        self.nonlocals: set[QN] = set()
        self.annotations: set[QN] = set()
        self.nested_free: set[QN] = set()

    @property
    def isolated(self) -> bool:
        return self.kind != BLOCK

    @property
    def local_names(self) -> frozenset[QN]:
        """Names local to this namespace: params and bound names not declared global/nonlocal."""
        return frozenset((self.params | self.bound) - self.globals - self.nonlocals)

    def merge_from(self, other: Scope) -> None:
        for field in ("read", "modified", "deleted", "bound", "params", "globals", "nonlocals",
                      "annotations", "nested_free"):
            getattr(self, field).update(getattr(other, field))

    def mark_modified(self, qn: QN) -> None:
        self.modified.add(qn)
        if qn.is_simple:
            self.bound.add(qn)

    def __repr__(self) -> str:
        parts = []
        for field in ("read", "modified", "deleted", "params", "globals", "nonlocals"):
            values = getattr(self, field)
            if values:
                parts.append(f"{field}={sorted(map(str, values))}")
        return f"Scope({self.kind}, {', '.join(parts)})"


def _free_reads(scope: Scope) -> set[QN]:
    """Reads (composites included) whose root is not local to ``scope``."""
    if scope.kind == CLASS:
        # Class bodies see their own names, but nested functions skip the class namespace.
        local = scope.bound
        return {q for q in scope.read if q.base not in local} | scope.nested_free
    local = scope.local_names | scope.globals
    return {q for q in scope.read if q.base not in local}


class _Analyzer(gast.NodeVisitor):
    """Walks a tree, keeping the innermost scope in ``self.scope``."""

    def __init__(self, root: Scope):
        self.scope = root
        self.in_annotation = False

    @contextlib.contextmanager
    def _block(self, node: gast.AST | None = None, *keys: anno.Static) -> Iterator[Scope]:
        scope = Scope(self.scope, BLOCK)
        self.scope = scope
        yield scope
        self.scope = scope.parent
        scope.parent.merge_from(scope)
        for key in keys:
            anno.setanno(node, key, scope)

    @contextlib.contextmanager
    def _namespace(self, kind: str) -> Iterator[Scope]:
        scope = Scope(self.scope, kind)
        self.scope = scope
        yield scope
        self.scope = scope.parent

    def visit(self, node: gast.AST) -> None:
        if isinstance(node, gast.stmt):
            key = (anno.Static.NODE_SCOPE,) if _is_simple(node) else ()
            with self._block(node, anno.Static.SCOPE, *key):
                super().visit(node)
        else:
            super().visit(node)

    def visit_block(self, nodes: list[gast.AST], node: gast.AST | None = None,
                    *keys: anno.Static) -> None:
        with self._block(node, *keys):
            for child in nodes:
                self.visit(child)

    def visit_annotation(self, node: gast.AST | None) -> None:
        if node is None:
            return
        self.in_annotation, saved = True, self.in_annotation
        self.visit(node)
        self.in_annotation = saved

    # Symbols.

    def _visit_symbol(self, node: gast.AST) -> None:
        qn = anno.getanno(node, anno.Basic.QN, None)
        ctx = node.ctx
        if qn is not None:
            if isinstance(ctx, gast.Load):
                (self.scope.annotations if self.in_annotation else self.scope.read).add(qn)
            elif isinstance(ctx, gast.Store):
                self.scope.mark_modified(qn)
            elif isinstance(ctx, gast.Del):
                self.scope.deleted.add(qn)
        if isinstance(node, gast.Name):
            self.visit_annotation(node.annotation)
        else:
            self.visit(node.value)
            if isinstance(node, gast.Subscript):
                self.visit(node.slice)

    visit_Name = visit_Attribute = visit_Subscript = _visit_symbol

    def visit_NamedExpr(self, node: gast.NamedExpr) -> None:
        self.visit(node.value)
        qn = anno.getanno(node.target, anno.Basic.QN)
        self.scope.modified.add(qn)
        if self.scope.kind != COMPREHENSION:  # PEP 572: it escapes the comprehension
            self.scope.bound.add(qn)

    # Simple statements.

    def visit_AugAssign(self, node: gast.AugAssign) -> None:
        qn = anno.getanno(node.target, anno.Basic.QN, None)
        if qn is not None:
            self.scope.read.add(qn)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: gast.AnnAssign) -> None:
        self.visit_annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
        elif not isinstance(node.target, gast.Name):  # `a.b: int` still evaluates `a`
            self.visit(node.target.value)
            if isinstance(node.target, gast.Subscript):
                self.visit(node.target.slice)

    def visit_Global(self, node: gast.Global) -> None:
        self.scope.globals.update(QN(name) for name in node.names)

    def visit_Nonlocal(self, node: gast.Nonlocal) -> None:
        self.scope.nonlocals.update(QN(name) for name in node.names)

    def visit_alias(self, node: gast.alias) -> None:
        if node.name != "*":
            self.scope.mark_modified(QN(node.asname or node.name.split(".")[0]))

    # Compound statements.

    def visit_If(self, node: gast.If) -> None:
        with self._block(node, anno.Static.COND_SCOPE, anno.Static.NODE_SCOPE):
            self.visit(node.test)
        self.visit_block(node.body, node, anno.Static.BODY_SCOPE)
        self.visit_block(node.orelse, node, anno.Static.ORELSE_SCOPE)

    visit_While = visit_If

    def visit_For(self, node: gast.For) -> None:
        with self._block(node, anno.Static.ITERATE_SCOPE, anno.Static.NODE_SCOPE):
            self.visit(node.target)
            self.visit(node.iter)
            extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
            if extra_test is not None:  # evaluated by the loop step, before each next()
                self.visit(qual_names.resolve(extra_test))
        self.visit_block(node.body, node, anno.Static.BODY_SCOPE)
        self.visit_block(node.orelse, node, anno.Static.ORELSE_SCOPE)

    visit_AsyncFor = visit_For

    def visit_Try(self, node: gast.Try) -> None:
        self.visit_block(node.body, node, anno.Static.BODY_SCOPE)
        for handler in node.handlers:
            self.visit(handler)
        self.visit_block(node.orelse, node, anno.Static.ORELSE_SCOPE)
        self.visit_block(node.finalbody)

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node: gast.ExceptHandler) -> None:
        with self._block(node, anno.Static.SCOPE) as whole:
            with self._block(node, anno.Static.NODE_SCOPE):
                if node.type is not None:
                    self.visit(node.type)
                if node.name is not None:
                    self.visit(node.name)
            self.visit_block(node.body, node, anno.Static.BODY_SCOPE)
            if node.name is not None:  # Python deletes `e` when the handler ends
                whole.deleted.add(anno.getanno(node.name, anno.Basic.QN))

    def visit_With(self, node: gast.With) -> None:
        with self._block(node, anno.Static.NODE_SCOPE):
            for item in node.items:
                self.visit(item)
        self.visit_block(node.body, node, anno.Static.BODY_SCOPE)

    visit_AsyncWith = visit_With

    def visit_Match(self, node: gast.Match) -> None:
        with self._block(node, anno.Static.NODE_SCOPE):
            self.visit(node.subject)
        for case in node.cases:
            self.visit(case)

    def visit_match_case(self, node: gast.match_case) -> None:
        with self._block(node, anno.Static.SCOPE):
            with self._block(node, anno.Static.NODE_SCOPE):
                self.visit(node.pattern)
                if node.guard is not None:
                    self.visit(node.guard)
            self.visit_block(node.body, node, anno.Static.BODY_SCOPE)

    def _visit_pattern(self, node: gast.AST) -> None:
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if name is not None:
                self.scope.mark_modified(QN(name))
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _visit_pattern

    # Namespaces: functions, lambdas, classes, comprehensions.

    def visit_FunctionDef(self, node: gast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._visit_signature(node.args)
        self.visit_annotation(node.returns)
        self.scope.mark_modified(QN(node.name))
        self._visit_function(node, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: gast.Lambda) -> None:
        self._visit_signature(node.args)
        self._visit_function(node, [node.body])

    def _visit_signature(self, args: gast.arguments) -> None:
        """Defaults and annotations are evaluated where the function is defined."""
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        for param in params_of(args):
            self.visit_annotation(param.annotation)

    def _visit_function(self, node: gast.AST, body: list[gast.AST]) -> None:
        params = {anno.getanno(p, anno.Basic.QN, None) or QN(p.id) for p in params_of(node.args)}
        args_scope = Scope(self.scope, FUNCTION)
        args_scope.params.update(params)
        args_scope.modified.update(params)
        args_scope.bound.update(params)
        with self._namespace(FUNCTION) as fn:
            fn.params.update(params)
            for child in body:
                self.visit(child)
        anno.setanno(node, anno.Static.ARGS_SCOPE, args_scope)
        anno.setanno(node, anno.Static.BODY_SCOPE, fn)
        free = _free_reads(fn)
        self.scope.read.update(free)
        self.scope.nested_free.update(free)
        # Writes to names declared nonlocal are writes to the enclosing function's variables.
        self.scope.modified.update(q for q in fn.modified if q.base in fn.nonlocals)
        self.scope.deleted.update(q for q in fn.deleted if q.base in fn.nonlocals)

    def visit_ClassDef(self, node: gast.ClassDef) -> None:
        for child in node.decorator_list + node.bases + node.keywords:
            self.visit(child)
        self.scope.mark_modified(QN(node.name))
        with self._namespace(CLASS) as cls:
            for child in node.body:
                self.visit(child)
        anno.setanno(node, anno.Static.BODY_SCOPE, cls)
        free = _free_reads(cls)
        self.scope.read.update(free)
        self.scope.nested_free.update(free)

    def _visit_comprehension(self, node: gast.AST) -> None:
        generators = node.generators
        self.visit(generators[0].iter)  # the first iterable is evaluated outside
        with self._namespace(COMPREHENSION) as comp:
            for i, generator in enumerate(generators):
                if i:
                    self.visit(generator.iter)
                self.visit(generator.target)
                for test in generator.ifs:
                    self.visit(test)
            for elt in _comprehension_elts(node):
                self.visit(elt)
        anno.setanno(node, anno.Static.BODY_SCOPE, comp)
        free = _free_reads(comp)
        self.scope.read.update(free)
        self.scope.nested_free.update(free)
        for qn in comp.modified:  # walrus targets (and `a.b` targets) escape
            if qn.base not in comp.bound:
                self.scope.modified.add(qn)
                if qn.is_simple and self.scope.kind != COMPREHENSION:
                    self.scope.bound.add(qn)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension


def _is_simple(node: gast.stmt) -> bool:
    """Whether the statement is one CFG node by itself (nested defs included)."""
    return not isinstance(node, (gast.If, gast.While, gast.For, gast.AsyncFor, gast.Try,
                                 gast.TryStar, gast.With, gast.AsyncWith, gast.Match))


def params_of(args: gast.arguments) -> list[gast.Name]:
    """The parameter Name nodes of a function or lambda, in declaration order."""
    params = args.posonlyargs + args.args
    if args.vararg is not None:
        params.append(args.vararg)
    params += args.kwonlyargs
    if args.kwarg is not None:
        params.append(args.kwarg)
    return params


def _comprehension_elts(node: gast.AST) -> list[gast.AST]:
    if isinstance(node, gast.DictComp):
        return [node.key, node.value]
    return [node.elt]


def resolve(node: gast.AST, ctx: object = None) -> gast.AST:
    """Annotates ``node`` and everything under it with activity scopes (see module docstring).

    Args:
      node: a Module, a statement (typically a FunctionDef) or an expression.
      ctx: the conversion context; unused, accepted for a uniform pass signature.

    Returns:
      ``node``, annotated in place.
    """
    del ctx
    qual_names.resolve(node)
    root = Scope(None, MODULE)
    analyzer = _Analyzer(root)
    if isinstance(node, gast.Module):
        for child in node.body:
            analyzer.visit(child)
        anno.setanno(node, anno.Static.BODY_SCOPE, root)
    else:
        analyzer.visit(node)
    return node
