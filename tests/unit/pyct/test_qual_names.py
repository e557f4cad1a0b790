"""Tests for autostage.pyct.qual_names."""

import gast
import pytest

from autostage.pyct import anno, parser, qual_names
from autostage.pyct.qual_names import QN, Literal
from autostage.pyct.unparser import unparse


def _qn(expr: str):
    node = qual_names.resolve(parser.parse_expression(expr))
    return node, anno.getanno(node, anno.Basic.QN, None)


def test_simple_qn():
    a = QN("a")
    assert str(a) == repr(a) == "a"
    assert a.is_simple and not a.is_composite
    assert a.parent is None and a.attr is None and a.subscript is None
    assert a.base == a
    assert a.owner_set == frozenset()
    assert a.support_set == frozenset({a})
    assert a.ssf() == "a"


def test_attribute_qn():
    ab = QN(QN("a"), attr="b")
    abc = QN(ab, attr="c")
    assert str(abc) == "a.b.c"
    assert abc.has_attr and not abc.has_subscript and abc.attr == "c"
    assert abc.parent == ab
    assert abc.base == QN("a")
    assert abc.owner_set == frozenset({QN("a"), ab})
    assert abc.support_set == frozenset({QN("a")})
    assert abc.ssf() == "a_b_c"


def test_subscript_qn():
    a_i = QN(QN("a"), subscript=QN("i"))
    a_0 = QN(QN("a"), subscript=Literal(0))
    a_k = QN(QN("a"), subscript=Literal("k"))
    assert (str(a_i), str(a_0), str(a_k)) == ("a[i]", "a[0]", "a['k']")
    assert a_i.has_subscript and a_i.attr is None and a_i.subscript == QN("i")
    assert a_i.support_set == frozenset({QN("a"), QN("i")})
    assert a_0.support_set == frozenset({QN("a")})
    assert (a_i.ssf(), a_0.ssf(), a_k.ssf()) == ("a_sub_i", "a_sub_0", "a_sub_k")


def test_equality_and_hash():
    assert QN("a") == QN("a")
    assert hash(QN(QN("a"), attr="b")) == hash(QN(QN("a"), attr="b"))
    assert QN(QN("a"), attr="b") != QN("a")
    # a[0] and a['0'] print differently; a[1] and a[True] are different keys too.
    assert QN(QN("a"), subscript=Literal(1)) != QN(QN("a"), subscript=Literal(True))
    assert len({QN("a"), QN("a"), QN(QN("a"), attr="b")}) == 2
    assert (QN("a") == "a") is False
    assert sorted([QN("b"), QN("a")]) == [QN("a"), QN("b")]


def test_literal():
    assert Literal(0) == Literal(0)
    assert Literal(0) != Literal(False)
    assert str(Literal("k")) == "'k'"
    assert hash(Literal(2)) == hash(Literal(2))


def test_invalid_constructions():
    with pytest.raises(ValueError, match="an attribute or a subscript, not both"):
        QN(QN("a"), attr="b", subscript=QN("c"))
    with pytest.raises(ValueError, match="simple QN needs a str base"):
        QN(QN("a"))
    with pytest.raises(ValueError, match="composite QN needs a QN parent"):
        QN("a", attr="b")


@pytest.mark.parametrize("expr", ["a", "a.b", "a[0]", "a['k']", "a.b[i].c", "x[0][1]"])
def test_ast_round_trip(expr):
    node, qn = _qn(expr)
    assert str(qn) == expr
    assert unparse(qn.ast()) == expr
    assert isinstance(qn.ast().ctx, gast.Load)
    assert qn.ast() is not qn.ast()  # a fresh tree each time


def test_resolve_annotates_each_part():
    node, qn = _qn("a.b[i].c")
    assert qn == QN(QN(QN(QN("a"), attr="b"), subscript=QN("i")), attr="c")
    sub = node.value
    assert anno.getanno(sub, anno.Basic.QN) == QN(QN(QN("a"), attr="b"), subscript=QN("i"))
    assert anno.getanno(sub.slice, anno.Basic.QN) == QN("i")
    assert anno.getanno(sub.value.value, anno.Basic.QN) == QN("a")
    assert qn.support_set == frozenset({QN("a"), QN("i")})


def test_computed_subscript_has_no_qn_but_its_parts_do():
    node, qn = _qn("a[i + 1]")
    assert qn is None
    assert anno.getanno(node.value, anno.Basic.QN) == QN("a")
    assert anno.getanno(node.slice.left, anno.Basic.QN) == QN("i")
    node, qn = _qn("a[1:2]")
    assert qn is None
    node, qn = _qn("f(x).y")
    assert qn is None
    assert anno.getanno(node.value.args[0], anno.Basic.QN) == QN("x")


def test_resolve_statement_targets():
    node = qual_names.resolve(parser.parse_str("a.b = c[0]"))
    assert anno.getanno(node.targets[0], anno.Basic.QN) == QN(QN("a"), attr="b")
    assert anno.getanno(node.value, anno.Basic.QN) == QN(QN("c"), subscript=Literal(0))


def test_from_str():
    assert qual_names.from_str("a.b[0]") == QN(QN(QN("a"), attr="b"), subscript=Literal(0))
    assert qual_names.from_str("x") == QN("x")
    with pytest.raises(ValueError, match="'f\\(x\\)' is not a qualified name"):
        qual_names.from_str("f(x)")
