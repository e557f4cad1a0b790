"""Tests for autostage.pyct.templates."""

import gast
import pytest

from autostage.pyct import anno, errors, parser, qual_names, templates
from autostage.pyct.qual_names import QN
from autostage.pyct.unparser import unparse


def _name(name, ctx=gast.Load):
    return gast.Name(name, ctx(), None, None)


def _ctx_of(nodes, name):
    return [type(n.ctx).__name__ for n in gast.walk(gast.Module(nodes, []))
            if isinstance(n, gast.Name) and n.id == name]


def test_rename_with_strings_everywhere_a_name_goes():
    body = templates.replace(
        """
        def fn(arg, *, kw=1):
            a.attr = call(key=arg)
            global g
            return fn
        """, fn="step", arg="x", kw="training", attr="value", call="run", key="inputs", g="G")
    assert unparse(body) == (
        "def step(x, *, training=1):\n    a.value = run(inputs=x)\n    global G\n    return step")


def test_name_node_and_qn_replacements():
    body = templates.replace("target = source + other", target=_name("y"),
                             source=QN(QN("self"), attr="w"), other=QN("b"))
    assert unparse(body) == "y = self.w + b"
    assert _ctx_of(body, "y") == ["Store"]
    assert anno.getanno(body[0].value.left, anno.Basic.QN, None) is None  # QN.ast() is bare


def test_dotted_string_becomes_an_attribute_expression():
    body = templates.replace("x = fn(x)", fn="ag__.converted_call")
    call = body[0].value.func
    assert isinstance(call, gast.Attribute)
    assert unparse(body) == "x = ag__.converted_call(x)"


def test_expression_replacement_is_copied_each_use():
    expr = parser.parse_expression("a + b")
    body = templates.replace("x = e\ny = e * e", e=expr)
    uses = [n for n in gast.walk(gast.Module(body, [])) if isinstance(n, gast.BinOp)
            and isinstance(n.op, gast.Add)]
    assert len(uses) == 3
    assert len({id(n) for n in uses}) == 3
    assert all(n is not expr for n in uses)
    assert unparse(body) == "x = a + b\ny = (a + b) * (a + b)"


def test_annotations_of_replacements_are_kept():
    expr = parser.parse_expression("f(a)")
    anno.setanno(expr, anno.Basic.ORIGIN, "origin-of-call")
    anno.setanno(expr.args[0], "custom", [1, 2])
    body = templates.replace("result = e", e=expr)
    call = body[0].value
    assert anno.getanno(call, anno.Basic.ORIGIN) == "origin-of-call"
    assert anno.getanno(call.args[0], "custom") == [1, 2]
    # The annotation dict is new, its values shared.
    anno.setanno(call, "extra", 1)
    assert not anno.hasanno(expr, "extra")
    assert anno.getanno(call.args[0], "custom") is anno.getanno(expr.args[0], "custom")


def test_statement_list_expands_in_place():
    stmts = parser.parse_str("a = 1\nb = 2", single_node=False).body
    body = templates.replace("""
        if cond:
            body
        else:
            orelse
        done()
    """, cond="c", body=stmts, orelse=stmts[0])
    assert unparse(body) == "if c:\n    a = 1\n    b = 2\nelse:\n    a = 1\ndone()"
    assert body[0].body[0] is not stmts[0]


def test_empty_statement_list_leaves_a_pass():
    body = templates.replace("while test:\n    body", test="t", body=[])
    assert unparse(body) == "while t:\n    pass"


def test_argument_lists_are_spliced():
    body = templates.replace("def f(a, args, z=0):\n    return call(args)",
                             args=["p", _name("q"), QN("r")])
    assert unparse(body) == "def f(a, p, q, r, z=0):\n    return call(p, q, r)"
    assert [type(a.ctx).__name__ for a in body[0].args.args] == ["Param"] * 5
    assert _ctx_of(body[0].body, "q") == ["Load"]


def test_annotated_argument_keeps_its_substituted_annotation():
    body = templates.replace("def f(x: T) -> T: pass", x="value", T="int")
    assert unparse(body) == "def f(value: int) -> int:\n    pass"


def test_keyword_only_placeholder_keeps_its_default_for_each_name():
    body = templates.replace("def f(*, opts=None, last=1): pass", opts=["a", "b"])
    assert unparse(body) == "def f(*, a=None, b=None, last=1):\n    pass"
    defaults = body[0].args.kw_defaults
    assert defaults[0] is not defaults[1]


def test_target_tuple_and_contexts():
    body = templates.replace("targets = values\ndel gone", targets=("a", _name("b")),
                             values=["c", "d"], gone=QN(QN("o"), subscript=qual_names.Literal(0)))
    assert unparse(body) == "a, b = (c, d)\ndel o[0]"
    assert type(body[0].targets[0].ctx).__name__ == "Store"
    assert _ctx_of(body, "a") == ["Store"] and _ctx_of(body, "b") == ["Store"]
    assert _ctx_of(body, "c") == ["Load"]
    assert type(body[1].targets[0].ctx).__name__ == "Del"
    assert _ctx_of(body, "o") == ["Load"]  # the subscripted value is read


def test_store_context_reaches_nested_targets():
    target = parser.parse_expression("(x, [y, *z])")
    body = templates.replace("for t in it:\n    pass", t=target, it="items")
    assert unparse(body) == "for x, [y, *z] in items:\n    pass"
    for name in "xyz":
        assert _ctx_of(body, name) == ["Store"]


def test_load_name_replaced_in_store_position_gets_store():
    loaded = _name("v")  # e.g. taken from a read elsewhere
    body = templates.replace("n = n + 1", n=loaded)
    assert [type(n.ctx).__name__ for n in (body[0].targets[0], body[0].value.left)] == [
        "Store", "Load"]
    assert type(loaded.ctx).__name__ == "Load"  # the original is untouched


def test_constants_and_global_lists():
    body = templates.replace("def f():\n    global names\n    return (k, flag, none)",
                             names=["a", "b"], k=3, flag=True, none=None)
    assert unparse(body) == "def f():\n    global a, b\n    return (3, True, None)"


def test_replace_as_expression():
    expr = templates.replace_as_expression(
        "fn(x, *rest)", fn="g", x=parser.parse_expression("1 + 2"), rest="args")
    assert isinstance(expr, gast.Call)
    assert unparse(expr) == "g(1 + 2, *args)"


def test_placeholder_in_lambda_and_comprehension():
    expr = templates.replace_as_expression("lambda arg: [arg * k for k in ks]", arg="x", ks="items")
    assert unparse(expr) == "lambda x: [x * k for k in items]"
    assert type(expr.args.args[0].ctx).__name__ == "Param"


def test_replacement_is_not_substituted_again():
    # A replacement that spells a placeholder name must stay as it is.
    body = templates.replace("a = b", a="b", b="a")
    assert unparse(body) == "b = a"


def test_error_statement_where_expression_is_needed():
    stmt = parser.parse_str("y = 1")
    with pytest.raises(errors.TemplateError,
                       match="placeholder 'e' needs an expression, got statement"):
        templates.replace("x = e", e=stmt)


def test_error_unknown_replacement_type():
    with pytest.raises(errors.TemplateError, match="cannot substitute a dict"):
        templates.replace("x = e", e={"a": 1})


def test_error_unused_replacement():
    with pytest.raises(errors.TemplateError, match=r"replacements \['typo'\] name no placeholder"):
        templates.replace("x = e", e="y", typo="z")


def test_error_expression_where_a_name_is_needed():
    with pytest.raises(errors.TemplateError, match="only a name can go; got a Call"):
        templates.replace("def fn(): pass", fn=parser.parse_expression("f()"))
    with pytest.raises(errors.TemplateError, match="is a parameter; it needs a name"):
        templates.replace("def f(args): pass", args=["a.b"])
    with pytest.raises(errors.TemplateError, match="'1x' is not an identifier"):
        templates.replace("o.attr", attr="1x")


def test_error_cannot_assign_to_a_call():
    with pytest.raises(errors.TemplateError, match="Python cannot assign to a Call"):
        templates.replace("t = 1", t=parser.parse_expression("f()"))
    with pytest.raises(errors.TemplateError, match="Python cannot delete a Constant"):
        templates.replace("del t", t=3)


def test_error_bad_string_and_mixed_list():
    with pytest.raises(errors.TemplateError, match="neither an identifier nor a dotted name"):
        templates.replace("x = e", e="a + b")
    mixed = [parser.parse_str("a = 1"), _name("b")]
    with pytest.raises(errors.TemplateError, match="mixing statements and expressions"):
        templates.replace("body", body=mixed)


def test_error_template_not_an_expression():
    with pytest.raises(errors.TemplateError, match="not a single expression"):
        templates.replace_as_expression("x = e", e="y")
    assert issubclass(errors.TemplateError, ValueError)


def test_copy_node_copies_positions_and_lists():
    node = parser.parse_str("x = [a, b]  # c")
    copy = templates.copy_node(node)
    assert gast.dump(copy, include_attributes=True) == gast.dump(node, include_attributes=True)
    assert copy.value.elts is not node.value.elts
    assert copy.targets[0] is not node.targets[0]
