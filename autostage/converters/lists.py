"""Turns list mutations of local names into assignments, so control flow sees them as outputs.

``x.append(v)`` becomes ``x = ag__.list_append(x, v)``; ``y = x.pop(i)`` becomes
``(x, y) = ag__.list_pop(x, i)`` and a bare ``x.pop(i)`` becomes ``x = ag__.list_pop(x, i)[0]``.
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


class ListTransformer(LocalNamesScope):
    """Rewrites ``append`` and ``pop`` statements on local list names."""

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
        if name is not None and len(call.args) == 1:
            return templates.replace(
                "x = ag__.list_append(x, value)", x=name, value=call.args[0])
        name = self._receiver(call, "pop", 1)
        if name is not None:
            return templates.replace("x = ag__.list_pop(x, args)[0]", x=name, args=call.args)
        return node

    def visit_Assign(self, node: gast.Assign) -> gast.AST | list[gast.stmt]:
        if len(node.targets) != 1 or not isinstance(node.targets[0], gast.Name):
            return node
        name = self._receiver(node.value, "pop", 1)
        if name is None or has_walrus(node):
            return node
        return templates.replace(
            "x, target = ag__.list_pop(x, args)", x=name, target=node.targets[0],
            args=node.value.args)


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Rewrites list mutations in ``node`` (a function) into assignments."""
    activity.resolve(node)
    return ListTransformer(ctx).visit(node)
