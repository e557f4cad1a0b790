"""Control flow: ``if``/``while``/``for`` statements become calls of ``ag__`` operators.

Each statement becomes nested functions (branches, loop test, loop body) that take the statement's
*state* as parameters and return it, and one operator call that threads the state through::

    def if_body(x):            def loop_test(i, x):       def loop_body(i, x):
        x = x - 1                  return i < n               ...
        return (x,)                                           return (i, x)
    (x,) = ag__.if_branch(x > 0, if_body, None)(x)
                               (i, x) = ag__.while_stmt(loop_test, loop_body, (i, x))

The state of a statement is the simple names it modifies that are live before or after it (read
before written inside, or read after). Other names it modifies stay local to the generated
functions. Names the generated functions must share with the user function instead of passing
around are declared: ``global``/``nonlocal`` names of the user function, and its variables that
nested functions, lambdas or generator expressions capture (their closures must see every write,
as in Python). A state name with no definition before the statement starts as
``ag__.Undefined('x')``; one defined on some paths only is read with ``locals().get``, because
code that is not converted (``try``, ``with``, ``del``) may have left it unbound.

Requires break, continue and return lowering (no jumps remain in loops) and runs the static
analyses itself. Class bodies are left alone (their namespace is not a function's); their methods
are converted.
"""

from __future__ import annotations

from collections.abc import Iterator

import gast

from autostage.pyct import anno, templates, transformer
from autostage.pyct.static_analysis import analyze

_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef, gast.GeneratorExp)


class _Function:
    """Per user function: the names generated functions declare rather than pass."""

    def __init__(self) -> None:
        self.globals: frozenset[str] = frozenset()
        self.shared: frozenset[str] = frozenset()  # declared nonlocal in generated functions
        self.in_branches: frozenset[str] = frozenset()  # names its if/while/for bodies bind
        self.nesting = 0  # the if/while/for statements around the one being converted


def _parameters(fn: gast.FunctionDef) -> frozenset[str]:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return frozenset(a.id for a in every if isinstance(a, gast.Name))


def _own_nodes(root: gast.AST) -> Iterator[gast.AST]:
    """Nodes under ``root``, yielding but not entering nested functions, lambdas and classes."""
    stack = list(gast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED):
            stack.extend(gast.iter_child_nodes(node))


def _binding_nodes(root: gast.AST) -> Iterator[gast.AST]:
    """Like ``_own_nodes``, but without the targets of comprehensions: in Python 3 they are
    local to the comprehension (a ``:=`` inside one still binds in the function)."""
    stack = list(gast.iter_child_nodes(root))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, gast.comprehension):
            stack.extend([node.iter, *node.ifs])
        elif not isinstance(node, _NESTED) or isinstance(node, gast.GeneratorExp):
            stack.extend(gast.iter_child_nodes(node))


def _names(symbols) -> set[str]:
    return {str(qn) for qn in symbols if qn.is_simple}


def _captured(fn: gast.AST) -> frozenset[str]:
    """Locals of ``fn`` that nested functions, lambdas, classes or generators close over."""
    local = _names(anno.getanno(fn, anno.Static.BODY_SCOPE).local_names)
    captured = set()
    for node in _own_nodes(fn):
        if isinstance(node, _NESTED):
            scope = anno.getanno(node, anno.Static.BODY_SCOPE)
            used = scope.read | scope.modified | scope.deleted | scope.nested_free
            captured |= {str(qn.base) for qn in used} - _names(scope.local_names)
    return frozenset(captured & local)


# Context managers whose ``__exit__`` never swallows an exception: a loop in their block carries
# its state as outside one (a list appended in a staged loop inside ``with GradientTape()`` is a
# tensor list; declared shared, it was a Python list the loop changed, refused).
_NEVER_SWALLOW = frozenset({"GradientTape", "errstate"})


def _never_swallows(expr: gast.expr) -> bool:
    """Whether ``expr`` is a call of ``GradientTape(...)`` or ``np.errstate(...)`` (by name),
    also as ``try_statements`` wraps it (``ag__.with_region(cm)``)."""
    func = expr.func if isinstance(expr, gast.Call) else None
    if isinstance(func, gast.Attribute) and func.attr == "with_region" and expr.args:
        return _never_swallows(expr.args[0])
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    return name in _NEVER_SWALLOW


def _interruptible(fn: gast.AST) -> frozenset[str]:
    """Locals whose every write must reach the user function at once, not when a statement ends.

    An exception leaving a loop or branch inside ``try`` or ``with`` (which may swallow it) must
    leave the values Python would; and a walrus in a ``while`` test assigns in the loop test.
    """
    names = set()
    for node in _own_nodes(fn):
        if isinstance(node, (gast.Try, gast.AsyncWith)) or (isinstance(node, gast.With) and not (
                all(_never_swallows(item.context_expr) for item in node.items))) or (
                hasattr(gast, "TryStar") and isinstance(node, gast.TryStar)):
            for inner in [*node.body, *_own_nodes(node)]:
                if isinstance(inner, (gast.If, gast.While, gast.For)):
                    for key in (anno.Static.BODY_SCOPE, anno.Static.ORELSE_SCOPE,
                                anno.Static.ITERATE_SCOPE):
                        scope = anno.getanno(inner, key, None)
                        names |= _names(scope.modified) if scope is not None else set()
        if isinstance(node, gast.While):
            names |= {n.target.id for n in gast.walk(node.test) if isinstance(n, gast.NamedExpr)}
    local = _names(anno.getanno(fn, anno.Static.BODY_SCOPE).local_names)
    return frozenset(names & local)


def _header_walrus(node: gast.stmt) -> set[str]:
    """Names bound by ``:=`` in the ``if`` test or ``for`` iterable, which the user function
    evaluates itself before the operator call reads the state (lambdas bind their own)."""
    header = node.test if isinstance(node, gast.If) else getattr(node, "iter", None)
    return _walrus_targets(header) if header is not None else set()


def _walrus_targets(node: gast.AST) -> set[str]:
    """Names ``:=`` binds in ``node`` itself (not in the functions or lambdas it defines)."""
    scopes = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
    names, stack = set(), [] if isinstance(node, scopes) else [node]
    while stack:
        child = stack.pop()
        if isinstance(child, gast.NamedExpr):
            names.add(child.target.id)
        stack.extend(c for c in gast.iter_child_nodes(child) if not isinstance(c, scopes))
    return names


def _first_param(fn: gast.AST) -> str | None:
    params = fn.args.posonlyargs + fn.args.args
    return params[0].id if params else None


def _bound_in_branches(fn: gast.AST) -> frozenset[str]:
    """The names an ``if``, ``while`` or ``for`` of ``fn`` (not of a nested function) binds in
    its body or ``else``: those that may be assigned on some paths only."""
    names: set[str] = set()
    for node in _own_nodes(fn):
        if isinstance(node, gast.If | gast.While | gast.For):
            for key in (anno.Static.BODY_SCOPE, anno.Static.ORELSE_SCOPE):
                scope = anno.getanno(node, key, None)
                if scope is not None:
                    names |= _names(scope.modified)
    return frozenset(names)


def _raises(block: list[gast.stmt]) -> bool:
    """Whether ``block`` ends in a ``raise`` (so never falls through)."""
    return bool(block) and isinstance(block[-1], gast.Raise)


class ControlFlowTransformer(transformer.Base):
    """Rewrites if/while/for statements into functional form."""

    # Functions and classes -------------------------------------------------------------------

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        scope = anno.getanno(node, anno.Static.BODY_SCOPE)
        function = self.state[_Function].enter()
        function.globals = frozenset(_names(scope.globals))
        # (less the parameters: bound on every path, a branch may rebind one, `if nvals is None:
        # nvals = [4, 5]`; carried through a raising if, a Python list argument was refused)
        function.in_branches = (frozenset(_names(scope.local_names)) & _bound_in_branches(node)
                                - _parameters(node))
        captured = _captured(node) | _interruptible(node)
        function.shared = frozenset(_names(scope.nonlocals)) | captured
        self._explicit_super(node)
        body = _SharedReads(function.shared).visit_block(self.visit_block(node.body))
        node.body = self._bind_moved_names(node, captured, body)
        self.state[_Function].exit()
        return node

    def _bind_moved_names(self, fn: gast.AST, captured: frozenset[str],
                          body: list[gast.stmt]) -> list[gast.stmt]:
        """Declares captured names whose assignments all moved into generated functions.

        Their ``nonlocal`` declarations need the name to be a local of the user function; a bare
        annotation (``i: object``) makes it one without giving it a value.
        """
        bound = {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        bound |= {a.id for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        for stmt in body:
            nested = isinstance(stmt, _NESTED)
            for node in [stmt] if nested else [stmt, *_binding_nodes(stmt)]:
                if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                    bound.add(node.id)
                elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                    bound.add(node.name)
        unbound = sorted(captured - bound)
        if not unbound:
            return body
        # An annotation binds the name without a value: reads stay unbound, as in Python.
        init = [templates.replace("name: object", name=name)[0] for name in unbound]
        docstring = body[:1] if body and isinstance(body[0], gast.Expr) and isinstance(
            body[0].value, gast.Constant) and isinstance(body[0].value.value, str) else []
        return docstring + init + body[len(docstring):]

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: gast.ClassDef) -> gast.ClassDef:
        # A class body runs in the class namespace: only its methods are converted.
        node.body = [self.visit(n) if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))
                     else n for n in node.body]
        return node

    def _explicit_super(self, fn: gast.AST) -> None:
        """``super()`` needs the method's own frame; generated functions pass it explicitly."""
        first = _first_param(fn)
        for node in _own_nodes(fn):
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                    and node.func.id == "super" and not node.args and not node.keywords
                    and first is not None):
                node.args = [gast.Name("__class__", gast.Load(), None, None),
                             gast.Name(first, gast.Load(), None, None)]

    # Statements -------------------------------------------------------------------------------

    def _visit_parts(self, node: gast.stmt) -> gast.stmt:
        function = self.state[_Function]
        function.nesting += 1
        node = self.generic_visit(node)
        function.nesting -= 1
        return node

    def visit_If(self, node: gast.If) -> list[gast.stmt]:
        node = self._visit_parts(node)
        state = self._state(node)
        # Branches take the state they may read (live on entry; this includes every name an
        # `if` without `else` may leave unchanged) and return all of it.
        # A name the test binds with `:=` is defined, and may be read, when the branches run.
        live_in = _names(anno.getanno(node, anno.Static.LIVE_VARS_IN)) | _header_walrus(node)
        if (_raises(node.body) or _raises(node.orelse)) and not self.state[_Function].nesting:
            state = self._through_raise(node, state, live_in)
        inputs = [name for name in state if name in live_in]
        body_name = self.ctx.namer.new_symbol("if_body")
        statements = self._function(body_name, inputs, node.body, returns=state)
        orelse_name = None
        if node.orelse:
            orelse_name = self.ctx.namer.new_symbol("else_body")
            statements += self._function(orelse_name, inputs, node.orelse, returns=state)
        # `if_branch` returns the branch to run and the user function calls it: one frame per
        # branch, not two (deep recursion through converted code stays near Python's depth).
        anno.mark_truth_test(node.test)
        call = templates.replace_as_expression(
            "ag__.if_branch(test, body, orelse)()", test=node.test, body=body_name,
            orelse=orelse_name)
        call.args = self._initial(node, inputs).elts
        return statements + self._assign_state(state, call)

    def visit_While(self, node: gast.While) -> list[gast.stmt]:
        node = self._visit_parts(node)
        state = self._state(node)
        test_name = self.ctx.namer.new_symbol("loop_test")
        body_name = self.ctx.namer.new_symbol("loop_body")
        statements = self._test_function(test_name, state, node.test)
        statements += self._function(body_name, state, node.body)
        call = templates.replace_as_expression(
            "ag__.while_stmt(test, body, state)", test=test_name, body=body_name,
            state=self._initial(node, state))
        self._add_options(node, call)
        return statements + self._assign_state(state, call) + node.orelse

    def visit_For(self, node: gast.For) -> list[gast.stmt]:
        node = self._visit_parts(node)
        state = self._state(node)
        statements = []
        extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        test_name = None
        if extra_test is not None:
            test_name = self.ctx.namer.new_symbol("loop_test")
            statements += self._test_function(test_name, state, extra_test)
        body_name = self.ctx.namer.new_symbol("loop_body")
        target = node.target
        function = self.state[_Function]
        if (isinstance(target, gast.Name) and target.id not in state
                and target.id not in function.shared and target.id not in function.globals):
            item, body = target.id, node.body
        else:  # state, shared, global, or not a single name: assigned in the body
            item = self.ctx.namer.new_symbol("itr")
            body = templates.replace("target = item", target=target, item=item) + node.body
        statements += self._function(body_name, state, body, first_param=item)
        call = templates.replace_as_expression(
            "ag__.for_stmt(iterable, extra_test, body, state)", iterable=node.iter,
            extra_test=test_name, body=body_name, state=self._initial(node, state))
        self._add_options(node, call)
        return statements + self._assign_state(state, call) + node.orelse

    # Pieces ------------------------------------------------------------------------------------

    def _through_raise(self, node: gast.If, state: list[str], live_in: set[str]) -> list[str]:
        """The state of an ``if`` one branch of which ends in ``raise``, with the names that
        go on through it unchanged that a branch or loop before it may have assigned on some
        paths only: code after it runs only where the other branch ran, and a
        staged ``if`` knows that only of its state (the raising branch's values are never
        read), so ``if not do_return: raise E`` after a loop that returns proves the return
        value assigned (runtime/staging/raises.py). Only an ``if`` directly in the function's
        body: in a generated branch or loop function, assigning a name would make a name it
        reads from the function around it local there."""
        live_out = _names(anno.getanno(node, anno.Static.LIVE_VARS_OUT))
        function = self.state[_Function]
        through = (live_in & live_out & function.in_branches) - function.globals - function.shared
        return sorted(set(state) | through)

    def _state(self, node: gast.stmt) -> list[str]:
        """Names the statement modifies that are live before or after it, sorted."""
        modified = set()
        # The test of if/while runs in the enclosing function (or, for a while test, writes
        # shared names): its walrus targets are never state. Nor are those of a for iterable,
        # evaluated once before the loop, unless the loop itself writes them.
        for key in (anno.Static.BODY_SCOPE, anno.Static.ORELSE_SCOPE):
            scope = anno.getanno(node, key, None)
            if scope is not None:
                modified |= _names(scope.modified)
        if isinstance(node, gast.For):
            modified |= {n.id for n in gast.walk(node.target) if isinstance(n, gast.Name)}
        live = _names(anno.getanno(node, anno.Static.LIVE_VARS_IN)) | _names(
            anno.getanno(node, anno.Static.LIVE_VARS_OUT))
        function = self.state[_Function]
        return sorted((modified & live) - function.globals - function.shared)

    def _declarations(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """``global``/``nonlocal`` lines for the shared names a generated function writes."""
        written = set()
        for stmt in body:
            if isinstance(stmt, gast.Assign):  # the loop target assignment, made here
                written |= {n.id for t in stmt.targets for n in gast.walk(t)
                            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            # (a statement generated for a nested if, `x, = ag__.if_branch(test, ...)()`, has
            # no scope: a `:=` in its test binds a name here)
            written |= _walrus_targets(stmt)
            scope = anno.getanno(stmt, anno.Static.SCOPE, None)
            if scope is not None:
                written |= _names(scope.modified) | _names(scope.deleted)
        function = self.state[_Function]
        declarations = []
        if written & function.globals:
            declarations.append(gast.Global(sorted(written & function.globals)))
        if written & function.shared:
            declarations.append(gast.Nonlocal(sorted(written & function.shared)))
        return declarations

    def _function(self, name: str, state: list[str], body: list[gast.stmt],
                  first_param: str | None = None, returns: list[str] | None = None
                  ) -> list[gast.stmt]:
        """``def name([first_param,] *state): body; return returns`` (returns defaults to state)."""
        params = ([first_param] if first_param else []) + state
        returns = state if returns is None else returns
        body = self._declarations(body) + body
        if returns and not _raises(body):
            body += templates.replace("return state", state=_tuple(returns, gast.Load()))
        return _generated(templates.replace(
            "def name(params):\n    body", name=name, params=params, body=body or [gast.Pass()]))

    def _test_function(self, name: str, state: list[str], test: gast.expr) -> list[gast.stmt]:
        anno.mark_truth_test(test)
        walrus = {n.target.id for n in gast.walk(test) if isinstance(n, gast.NamedExpr)}
        function = self.state[_Function]
        declarations = []
        if walrus & function.globals:
            declarations.append(gast.Global(sorted(walrus & function.globals)))
        if walrus - function.globals:
            declarations.append(gast.Nonlocal(sorted(walrus - function.globals)))
        body = declarations + templates.replace("return test", test=test)
        return _generated(templates.replace("def name(params):\n    body", name=name,
                                            params=state, body=body))

    def _initial(self, node: gast.stmt, state: list[str]) -> gast.expr:
        """The state's values before the statement: the names, or Undefined where unbound."""
        defined = _names(anno.getanno(node, anno.Static.DEFINED_VARS_IN))
        # The test or iterable (evaluated before the state, as an earlier argument) binds these.
        must = _names(anno.getanno(node, anno.Static.MUST_DEFINED_VARS_IN)) | _header_walrus(node)
        values = []
        for name in state:
            if name in must:
                values.append(gast.Name(name, gast.Load(), None, None))
            elif name in defined:
                values.append(templates.replace_as_expression(
                    "locals().get(key, ag__.Undefined(key))", key=gast.Constant(name, None)))
            else:
                values.append(templates.replace_as_expression(
                    "ag__.Undefined(key)", key=gast.Constant(name, None)))
        return gast.Tuple(values, gast.Load())

    def _assign_state(self, state: list[str], call: gast.expr) -> list[gast.stmt]:
        if not state:
            return [gast.Expr(call)]
        return [gast.Assign([_tuple(state, gast.Store())], call, None)]

    def _add_options(self, node: gast.stmt, call: gast.Call) -> None:
        options = anno.getanno(node, anno.Basic.DIRECTIVES, None)
        if options:
            call.keywords.append(gast.keyword("opts", gast.Dict(
                [gast.Constant(k, None) for k in sorted(options)],
                [options[k] for k in sorted(options)])))


class _SharedReads(gast.NodeTransformer):
    """In generated functions, ``ag__.ld(x)`` of a shared name becomes
    ``ag__.ld_shared(lambda: x, 'x')``: there ``x`` is a free variable, whose read while unbound
    raises ``NameError`` where the user's function raised ``UnboundLocalError``."""

    def __init__(self, shared: frozenset[str]) -> None:
        self.shared = shared
        self.inside = False  # in a generated function

    def visit_block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        return [self.visit(stmt) for stmt in body] if self.shared else body

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        if not anno.getanno(node, anno.Basic.GENERATED, False):
            return node  # a user's function: its own names, converted on its own
        inside, self.inside = self.inside, True
        self.generic_visit(node)
        self.inside = inside
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.Lambda:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func, args = node.func, node.args
        if (self.inside and isinstance(func, gast.Attribute) and func.attr == "ld"
                and isinstance(func.value, gast.Name) and func.value.id == "ag__"
                and len(args) == 1 and isinstance(args[0], gast.Name)
                and args[0].id in self.shared):
            return templates.replace_as_expression(
                "ag__.ld_shared(lambda: name, key)", name=args[0].id,
                key=gast.Constant(args[0].id, None))
        return node


def _generated(definitions: list[gast.stmt]) -> list[gast.stmt]:
    for definition in definitions:
        anno.setanno(definition, anno.Basic.GENERATED, True)
    return definitions


def _tuple(names: list[str], ctx: gast.expr_context) -> gast.Tuple:
    return gast.Tuple([gast.Name(n, type(ctx)(), None, None) for n in names], ctx)


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    if isinstance(node, gast.Lambda):
        return node  # expressions only: nothing to convert
    analyze(node, ctx)
    return ControlFlowTransformer(ctx).visit(node)
