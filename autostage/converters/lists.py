"""Turns list mutations of local names into assignments, so control flow sees them as outputs.

``x.append(v)`` becomes ``x = ag__.list_append(x, v)``; ``y = x.pop(i)`` becomes
``(x, y) = ag__.list_pop(x, i)``, a bare ``x.pop(i)`` becomes ``x = ag__.list_pop(x, i)[0]`` and a
bare ``x.reverse()`` becomes ``x = ag__.list_reverse(x)``.
A ``pop`` inside a larger expression (``s += x.pop()``, ``out.append(x.pop())``, ``if x.pop():``)
goes through a box that holds the list while the statement runs: ``box = ag__.ListBox(x)``, the
statement with ``ag__.box_pop(box, i)`` for the pop and ``box.list`` for its other reads of ``x``
(Python's evaluation order is kept), then ``x = box.list``; ``x.append(x.pop() + 1)`` appends to
the list after the pop (``x = ag__.box_append(box, value)``). Pops that Python may not evaluate
(in a lambda, a comprehension, a later operand of ``and``/``or``/``if-else``/a comparison chain),
or whose list is also assigned by the statement or read in such a place, are left as written.
With Python lists the operators mutate and return the same object, so aliases see the change as
before. Only receivers that are local names of the function are rewritten: assigning a global, a
free variable or an attribute (``self.items``, whose setter would run) would change the program.
Requires nothing; runs activity analysis itself.
"""

from __future__ import annotations

import gast

from autostage.converters.local_names import LocalNamesScope, has_walrus
from autostage.pyct import templates, transformer
from autostage.pyct.static_analysis import activity

_LAZY_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _eager_parts(node: gast.AST) -> list[gast.AST]:
    """The children of ``node`` that Python evaluates whenever it evaluates ``node``."""
    if isinstance(node, _LAZY_SCOPES):
        return []
    if isinstance(node, gast.IfExp):
        return [node.test]
    if isinstance(node, gast.BoolOp):
        return node.values[:1]
    if isinstance(node, gast.Compare):
        return [node.left, node.comparators[0]]
    return list(gast.iter_child_nodes(node))


def _eager_nodes(node: gast.AST) -> list[gast.AST]:
    nodes, stack = [], [node]
    while stack:
        child = stack.pop()
        nodes.append(child)
        stack.extend(_eager_parts(child))
    return nodes


def _names(node: gast.AST | None, name: str) -> list[gast.Name]:
    return [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name] \
        if node is not None else []


def _as_list(result: gast.stmt | list[gast.stmt]) -> list[gast.stmt]:
    return result if isinstance(result, list) else [result]


class _Boxed(gast.NodeTransformer):
    """``x.pop(i)`` -> ``ag__.box_pop(box, i)`` and other reads of ``x`` -> ``box.list``."""

    def __init__(self, name: str, box: str):
        self.name, self.box = name, box

    def visit_Call(self, node: gast.Call) -> gast.AST:
        popped = _pop_receiver(node) == self.name
        node = self.generic_visit(node)
        if popped:
            return templates.replace_as_expression("ag__.box_pop(box, args)", box=self.box,
                                                   args=node.args)
        return node

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id != self.name:
            return node
        return templates.replace_as_expression("box.list", box=self.box)


def _pop_receiver(call: gast.AST) -> str | None:
    """``x`` if ``call`` is ``x.pop(...)`` with at most one positional argument."""
    if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "pop" and isinstance(call.func.value, gast.Name)
            and not call.keywords and len(call.args) <= 1
            and not any(isinstance(a, gast.Starred) for a in call.args)):
        return call.func.value.id
    return None


class ListTransformer(LocalNamesScope):
    """Rewrites ``append``, ``pop`` and ``reverse`` statements on local list names, and pops in
    expressions."""

    def _receiver(self, call: gast.AST, method: str, max_args: int) -> str | None:
        """The local name ``x`` if ``call`` is ``x.method(...)`` with up to ``max_args`` args."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)):
            return None
        receiver = call.func.value
        if (call.func.attr != method or not isinstance(receiver, gast.Name)
                or call.keywords or len(call.args) > max_args
                or any(isinstance(a, gast.Starred) for a in call.args)):
            return None
        if not self.rebindable(receiver.id):
            return None
        return receiver.id

    def visit_Expr(self, node: gast.Expr) -> gast.AST | list[gast.stmt]:
        if has_walrus(node):
            return node
        call = node.value
        name = self._receiver(call, "append", 1)
        if name is not None and len(call.args) == 1 and name in self._boxable(call.args[0], None):
            # ``x.append(f(x.pop()))``: append to the list after the pop
            box = self.ctx.namer.new_symbol(f"{name}_box")
            stmts = templates.replace("box = ag__.ListBox(x)\nx = ag__.box_append(box, value)",
                                      box=box, x=name, value=_Boxed(name, box).visit(call.args[0]))
            return [stmts[0], *_as_list(self._box_pops(stmts[1]))]
        if name is not None and len(call.args) == 1:
            return self._box_pops(templates.replace(
                "x = ag__.list_append(x, value)", x=name, value=call.args[0])[0])
        name = self._receiver(call, "pop", 1)
        if name is not None:
            return self._box_pops(templates.replace(
                "x = ag__.list_pop(x, args)[0]", x=name, args=call.args)[0])
        name = self._receiver(call, "reverse", 0)
        if name is not None:
            return templates.replace("x = ag__.list_reverse(x)", x=name)[0]
        return self._box_pops(node)

    def visit_Assign(self, node: gast.Assign) -> gast.AST | list[gast.stmt]:
        if has_walrus(node):
            return node
        name = self._receiver(node.value, "pop", 1)
        if name is None or len(node.targets) != 1 or not isinstance(node.targets[0], gast.Name):
            return self._box_pops(node)
        return self._box_pops(templates.replace(
            "x, target = ag__.list_pop(x, args)", x=name, target=node.targets[0],
            args=node.value.args)[0])

    def visit_AugAssign(self, node: gast.AugAssign) -> gast.AST | list[gast.stmt]:
        return node if has_walrus(node) else self._box_pops(node)

    visit_AnnAssign = visit_Return = visit_AugAssign

    def visit_If(self, node: gast.If) -> gast.AST | list[gast.stmt]:
        node = self.generic_visit(node)
        if has_walrus(node.test) or not self._boxable(node.test, None):
            return node
        test = self.ctx.namer.new_symbol("test_")
        hoisted = self._box_pops(templates.replace("test_ = value", test_=test,
                                                   value=node.test)[0])
        node.test = gast.Name(test, gast.Load(), None, None)
        return [*hoisted, node]

    def _boxable(self, value: gast.AST | None, targets: list | None) -> list[str]:
        """The local names popped in ``value`` that the statement may box (see module doc)."""
        if value is None:
            return []
        eager = _eager_nodes(value)
        names = {_pop_receiver(n) for n in eager} - {None}
        eager_ids = {id(n) for n in eager}
        return sorted(
            name for name in names if self.rebindable(name)
            and all(id(n) in eager_ids for n in _names(value, name))
            and not any(_names(t, name) for t in targets or ()))

    def _box_pops(self, node: gast.stmt) -> gast.stmt | list[gast.stmt]:
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        value = node.value
        names = self._boxable(value, targets)
        if not names:
            return node
        before, after = [], []
        for name in names:
            box = self.ctx.namer.new_symbol(f"{name}_box")
            node.value = value = _Boxed(name, box).visit(value)
            before += templates.replace("box = ag__.ListBox(x)", box=box, x=name)
            if not isinstance(node, gast.Return):
                after += templates.replace("x = box.list", box=box, x=name)
        return [*before, node, *after]


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites list mutations in ``node`` (a function) into assignments."""
    activity.resolve(node)
    return ListTransformer(ctx).visit(node)
