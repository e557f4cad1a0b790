"""Code templates: new code is written as Python source with placeholder names, then filled in.

``replace('target = fn(arg)', target='y', fn=some_node, arg=other_node)`` parses the template and
substitutes each placeholder name. A replacement may be:

* a ``str`` identifier, a ``gast.Name`` or a simple ``QN``: renames the placeholder wherever a name
  can stand, including function, argument, attribute (``a.placeholder``), keyword, ``global`` and
  ``nonlocal`` names; a dotted ``str`` or a composite ``QN`` is an attribute/subscript expression;
* any ``gast.expr`` (copied), or a ``None``/``bool``/``int``/``float``/``complex`` constant;
* a list or tuple of the above: spliced into argument lists, call arguments, tuple/list/set
  displays, ``del``, ``global``, and otherwise built into a tuple (``a, b = ...``);
* a ``gast.stmt`` or a list of them, where the placeholder stands alone as a statement.

Replacement nodes are copied every time they are used, with their annotations (origins, QNs), and
their load/store/del/param contexts are set by where they land. A replacement that cannot stand
where its placeholder is, and a replacement whose placeholder does not occur, raise TemplateError.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any

import gast

from autostage.pyct import anno, errors, parser, qual_names

_CONSTANT_TYPES = (type(None), bool, int, float, complex)

# List fields into which a list replacement is spliced; other list fields get a tuple.
_SPLICE_FIELDS = frozenset({
    (gast.Call, "args"), (gast.Tuple, "elts"), (gast.List, "elts"), (gast.Set, "elts"),
    (gast.Delete, "targets"), (gast.arguments, "args"), (gast.arguments, "posonlyargs"),
    (gast.arguments, "kwonlyargs"), (gast.FunctionDef, "decorator_list"),
    (gast.AsyncFunctionDef, "decorator_list"), (gast.ClassDef, "decorator_list"),
    (gast.ClassDef, "bases"),
})

# String fields that hold an identifier a placeholder may rename.
_NAME_FIELDS = frozenset({
    (gast.FunctionDef, "name"), (gast.AsyncFunctionDef, "name"), (gast.ClassDef, "name"),
    (gast.keyword, "arg"), (gast.Attribute, "attr"),
})
_NAME_LIST_FIELDS = frozenset({(gast.Global, "names"), (gast.Nonlocal, "names")})

def copy_node(node: Any) -> Any:
    """Deep-copies an AST (or a list of them) with annotations and positions.

    The annotation dict is copied, its values shared: annotations such as analysis scopes refer to
    other nodes and must not be duplicated with them.
    """
    if isinstance(node, list):
        return [copy_node(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = type(node)(**{f: copy_node(getattr(node, f, None)) for f in node._fields})
    for attr in node._attributes:
        if hasattr(node, attr):
            setattr(new, attr, getattr(node, attr))
    for key in anno.keys(node):
        anno.setanno(new, key, anno.getanno(node, key))
    return new


def _kind(value: Any) -> str:
    return type(value).__name__


def _is_statements(value: Any) -> bool:
    if isinstance(value, gast.stmt):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(v, gast.stmt) for v in value)


def _identifier(value: Any, placeholder: str) -> str:
    """The identifier a replacement stands for, where only a name can go."""
    if isinstance(value, gast.Name):
        value = value.id
    elif isinstance(value, qual_names.QN):
        if not value.is_simple:
            raise errors.TemplateError(
                f"placeholder {placeholder!r} stands where only a name can go; got the composite"
                f" name {value}")
        value = str(value)
    if not isinstance(value, str):
        raise errors.TemplateError(
            f"placeholder {placeholder!r} stands where only a name can go; got a {_kind(value)}")
    if not value.isidentifier() or keyword.iskeyword(value):
        raise errors.TemplateError(
            f"placeholder {placeholder!r} stands where only a name can go; {value!r} is not an"
            " identifier")
    return value


def _set_ctx(node: gast.expr, ctx: gast.expr_context, placeholder: str) -> None:
    """Gives a substituted expression the context of the place it lands in."""
    if isinstance(node, gast.Name):
        node.ctx = type(ctx)()
    elif isinstance(ctx, gast.Param):
        raise errors.TemplateError(
            f"placeholder {placeholder!r} is a parameter; it needs a name, got a {_kind(node)}")
    elif isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = type(ctx)()
        for elt in node.elts:
            _set_ctx(elt, ctx, placeholder)
    elif isinstance(node, gast.Starred):
        node.ctx = type(ctx)()
        _set_ctx(node.value, ctx, placeholder)
    elif isinstance(node, (gast.Attribute, gast.Subscript)):
        node.ctx = type(ctx)()
    elif not isinstance(ctx, gast.Load):
        verb = "assign to" if isinstance(ctx, gast.Store) else "delete"
        raise errors.TemplateError(
            f"placeholder {placeholder!r} is a target, and Python cannot {verb} a {_kind(node)}")


def _expression(value: Any, ctx: gast.expr_context, placeholder: str) -> gast.expr:
    """A fresh expression node for one (non-list) replacement value."""
    if isinstance(value, str):
        if not value.isidentifier() or keyword.iskeyword(value):
            try:
                value = qual_names.from_str(value)
            except (SyntaxError, ValueError) as e:
                raise errors.TemplateError(
                    f"placeholder {placeholder!r}: {value!r} is neither an identifier nor a"
                    " dotted name; pass an AST node for other expressions") from e
        else:
            value = gast.Name(value, gast.Load(), None, None)
    if isinstance(value, qual_names.QN):
        node = value.ast()
    elif _is_statements(value):
        raise errors.TemplateError(
            f"placeholder {placeholder!r} needs an expression, got statement(s); statements fit"
            " only a placeholder that stands alone as a statement")
    elif isinstance(value, gast.expr):
        node = copy_node(value)
    elif isinstance(value, _CONSTANT_TYPES):
        node = gast.Constant(value, None)
    else:
        raise errors.TemplateError(
            f"placeholder {placeholder!r}: cannot substitute a {_kind(value)}; expected a str, a"
            " QN, a gast node, a constant, or a list of them")
    _set_ctx(node, ctx, placeholder)
    return node


class _Substituter:
    """Walks a parsed template once, replacing placeholders; never visits replacement nodes."""

    def __init__(self, replacements: Mapping[str, Any]):
        self.replacements = replacements
        self.used: set[str] = set()

    def _lookup(self, name: str) -> Any:
        self.used.add(name)
        return self.replacements[name]

    def visit(self, node: gast.AST) -> None:
        for field, value in gast.iter_fields(node):
            key = (type(node), field)
            if isinstance(node, gast.arguments) and field in ("kwonlyargs", "kw_defaults"):
                if field == "kwonlyargs":
                    self._visit_kwonly(node)
            elif isinstance(value, list):
                setattr(node, field, self._visit_list(node, field, value))
                if field == "body" and not node.body and not isinstance(node, gast.Module):
                    node.body = [gast.Pass()]  # a block emptied by an empty statement list
            elif isinstance(value, gast.AST):
                setattr(node, field, self._visit_single(value))
            elif isinstance(value, str) and key in _NAME_FIELDS and value in self.replacements:
                setattr(node, field, _identifier(self._lookup(value), value))

    def _visit_list(self, parent: gast.AST, field: str, items: list) -> list:
        key = (type(parent), field)
        splice = key in _SPLICE_FIELDS
        result = []
        for item in items:
            if isinstance(item, str) and key in _NAME_LIST_FIELDS and item in self.replacements:
                value = self._lookup(item)
                values = value if isinstance(value, (list, tuple)) else [value]
                result.extend(_identifier(v, item) for v in values)
            elif isinstance(item, gast.Expr) and self._is_placeholder(item.value):
                result.extend(self._statement(item))
            elif isinstance(item, gast.Name) and item.id in self.replacements:
                new = self._name(item, splice)
                result += new if isinstance(new, list) else [new]
            elif isinstance(item, gast.AST):
                self.visit(item)
                result.append(item)
            else:
                result.append(item)
        return result

    def _visit_kwonly(self, node: gast.arguments) -> None:
        """Keyword-only arguments: a spliced placeholder's default goes to each of its names."""
        args, defaults = [], []
        for arg, default in zip(node.kwonlyargs, node.kw_defaults, strict=True):
            new = self._visit_list(node, "kwonlyargs", [arg])
            if default is not None:
                default = self._visit_single(default)
            args += new
            defaults += [default] + [copy_node(default) for _ in new[1:]]
        node.kwonlyargs, node.kw_defaults = args, defaults

    def _visit_single(self, node: gast.AST) -> gast.AST:
        if isinstance(node, gast.Name) and node.id in self.replacements:
            return self._name(node, splice=False)
        self.visit(node)
        return node

    def _is_placeholder(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Name) and node.id in self.replacements

    def _statement(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A placeholder standing alone as a statement: statements expand in place."""
        name = stmt.value.id
        value = self.replacements[name]
        if isinstance(value, gast.stmt):
            self.used.add(name)
            return [copy_node(value)]
        if isinstance(value, (list, tuple)) and all(isinstance(v, gast.stmt) for v in value):
            self.used.add(name)
            return copy_node(list(value))
        if isinstance(value, (list, tuple)) and any(isinstance(v, gast.stmt) for v in value):
            raise errors.TemplateError(
                f"placeholder {name!r}: a list mixing statements and expressions")
        stmt.value = self._name(stmt.value, splice=False)
        return [stmt]

    def _name(self, node: gast.Name, splice: bool) -> gast.expr | list[gast.expr]:
        name = node.id
        value = self._lookup(name)
        if node.annotation is not None:  # `def f(x: T)`: T may be a placeholder too
            node.annotation = self._visit_single(node.annotation)
        if isinstance(value, (list, tuple)) and not _is_statements(value):
            items = [_expression(v, node.ctx, name) for v in value]
            if splice:
                return items
            if isinstance(node.ctx, gast.Param):
                raise errors.TemplateError(
                    f"placeholder {name!r}: a list of names fits only an argument list")
            return gast.Tuple(items, type(node.ctx)())
        if isinstance(node.ctx, gast.Param) and not isinstance(value, gast.Name):
            new = gast.Name(_identifier(value, name), gast.Param(), None, None)
        else:
            new = _expression(value, node.ctx, name)
        if isinstance(new, gast.Name) and isinstance(node.ctx, gast.Param) and (
                node.annotation is not None and new.annotation is None):
            new.annotation = node.annotation
        return new


def replace(template: str, **replacements: Any) -> list[gast.stmt]:
    """Parses ``template`` and substitutes its placeholders; returns its statements.

    Raises:
      TemplateError: a replacement does not fit where its placeholder stands, has an unsupported
        type, or its placeholder does not occur in the template.
    """
    module = parser.parse_str(template, single_node=False)
    substituter = _Substituter(replacements)
    module.body = substituter._visit_list(module, "body", module.body)
    unused = sorted(set(replacements) - substituter.used)
    if unused:
        raise errors.TemplateError(
            f"replacements {unused} name no placeholder in the template:\n{template}")
    return module.body


def replace_as_expression(template: str, **replacements: Any) -> gast.expr:
    """Like ``replace``, for a template that is a single expression; returns that expression."""
    body = replace(template, **replacements)
    if len(body) != 1 or not isinstance(body[0], gast.Expr):
        raise errors.TemplateError(
            f"the template is not a single expression once filled in:\n{template}")
    return body[0].value
