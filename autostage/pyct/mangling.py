"""Private name mangling, as Python's compiler does it inside a class body.

Python rewrites every identifier ``__name`` (not ending in ``__``, no dot) written inside a class
body, its methods and the functions nested in them to ``_Class__name``: names, attributes,
parameters, ``global``/``nonlocal`` names, imports and ``except ... as`` targets, but not keyword
arguments of calls. Converted code is compiled outside the class, so the converter must do it
itself: ``mangle(node, class_name)`` rewrites a parsed function in place. A class nested in the
function is left to Python's compiler, which mangles its body with that class's own name when the
generated module is compiled.

``owning_class(qualname)`` tells which class, if any, a function's code belongs to.
"""

from __future__ import annotations

import gast

from autostage.pyct import anno, errors, templates


def owning_class(qualname: str) -> str | None:
    """The innermost class around a function with this ``__qualname__``, or None.

    ``A.m`` and ``A.m.<locals>.g`` belong to ``A``; ``f.<locals>.B.m`` to ``B``; ``f`` and
    ``f.<locals>.g`` to no class. A part followed by ``<locals>`` is a function, any other
    enclosing part a class.
    """
    parts = qualname.split(".")
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] != "<locals>" and parts[i + 1] != "<locals>":
            return parts[i]
    return None


def mangled(name: str, class_name: str) -> str:
    """``name`` as Python compiles it inside ``class class_name`` (CPython's ``_Py_Mangle``)."""
    if not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = class_name.lstrip("_")
    if not stripped:
        return name
    return f"_{stripped}{name}"


class _Mangler(gast.NodeTransformer):
    def __init__(self, class_name: str, root: gast.AST):
        self.class_name = class_name
        self.root = root

    def _mangle(self, name: str | None) -> str | None:
        return None if name is None else mangled(name, self.class_name)

    def visit_Name(self, node: gast.Name) -> gast.Name:
        node.id = self._mangle(node.id)
        return self.generic_visit(node)

    def visit_Attribute(self, node: gast.Attribute) -> gast.Attribute:
        node.attr = self._mangle(node.attr)
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.FunctionDef:
        if node is not self.root and mangled(node.name, self.class_name) != node.name:
            # The variable is mangled, the function's own __name__ is not.
            anno.setanno(node, anno.Basic.ORIGINAL_NAME, node.name)
            node.name = self._mangle(node.name)
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: gast.ClassDef) -> gast.AST | list[gast.AST]:
        # Only what the enclosing scope evaluates; Python mangles the body with the class's name.
        for field in ("decorator_list", "bases", "keywords"):
            setattr(node, field, [self.visit(child) for child in getattr(node, field)])
        binding = self._mangle(node.name)
        if binding == node.name:
            return node
        # `class __B` binds `_A__B` in the function, but the class's own name stays `__B`.
        rebind = templates.replace(f"{binding} = {node.name}\ndel {node.name}")
        origin = anno.getanno(node, anno.Basic.ORIGIN, None)
        for child in (n for statement in rebind for n in gast.walk(statement)):
            if origin is not None:
                anno.setanno(child, anno.Basic.ORIGIN, origin)
        return [node, *rebind]

    def visit_Global(self, node: gast.Global) -> gast.Global:
        node.names = [self._mangle(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_Import(self, node: gast.Import) -> gast.Import:
        for alias in node.names:
            if alias.asname is None and "." in alias.name and alias.name.startswith("__"):
                raise errors.ConversionError(
                    f"`import {alias.name}` inside a class binds the mangled name "
                    f"{mangled(alias.name.split('.')[0], self.class_name)!r}, which converted "
                    "code cannot express; use `import ... as name`", node)
            alias.name = self._mangle(alias.name)
            alias.asname = self._mangle(alias.asname)
        return node

    def visit_ImportFrom(self, node: gast.ImportFrom) -> gast.ImportFrom:
        node.module = self._mangle(node.module)
        for alias in node.names:
            alias.name = self._mangle(alias.name)
            alias.asname = self._mangle(alias.asname)
        return node

    def _visit_pattern(self, node: gast.AST) -> gast.AST:
        for field in ("name", "rest"):
            if isinstance(getattr(node, field, None), str):
                setattr(node, field, self._mangle(getattr(node, field)))
        return self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _visit_pattern


def mangle(node: gast.AST, class_name: str | None) -> gast.AST:
    """Mangles the private names of a function (or lambda) defined in ``class_name``, in place.

    Nothing happens when ``class_name`` is None (a function outside any class).

    Raises:
      ConversionError: ``import __a.b`` (the binding cannot be written as converted code).
    """
    if class_name is None:
        return node
    return _Mangler(class_name, node).visit(node)
