"""What the lists and slices converters may rewrite: local names a rewrite may assign.

Both turn a mutation (``x.append(v)``, ``x[i] = v``) into an assignment of ``x``, which is only
correct when ``x`` is a local name of the innermost function: assigning a global, a free variable
or an attribute would change the program. Requires activity analysis.
"""

from __future__ import annotations

import gast

from autostage.pyct import anno, transformer


class _Function:
    """The innermost function: the names its statements may assign."""

    def __init__(self):
        self.names: frozenset[str] = frozenset()


def rebindable_names(node: gast.FunctionDef) -> frozenset[str]:
    """Local names of ``node`` that generated code may assign without changing the program.

    Names declared ``nonlocal`` by nested functions are excluded: a call made while a rewritten
    statement is evaluated could rebind them, and the rewrite would then assign the old object.
    """
    scope = anno.getanno(node, anno.Static.BODY_SCOPE)
    names = {str(qn) for qn in scope.local_names}
    for child in gast.walk(node):
        if isinstance(child, gast.Nonlocal):
            names.difference_update(child.names)
    return frozenset(names)


def has_walrus(node: gast.AST) -> bool:
    """Whether ``node`` binds a name with ``:=``, which a rewrite could reorder."""
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(node))


class LocalNamesScope(transformer.Base):
    """Keeps, per function, the local names a rewrite may assign (``self.rebindable``)."""

    def _visit_scope(self, node: gast.AST, names: frozenset[str]) -> gast.AST:
        self.state[_Function].enter().names = names
        node = self.generic_visit(node)
        self.state[_Function].exit()
        return node

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.AST:
        return self._visit_scope(node, rebindable_names(node))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: gast.ClassDef) -> gast.AST:
        return self._visit_scope(node, frozenset())  # class bodies are left as written

    def rebindable(self, name: str) -> bool:
        """Whether ``name`` is a local of the innermost function that a rewrite may assign."""
        functions = self.state[_Function]
        return functions.level > 0 and name in functions.names
