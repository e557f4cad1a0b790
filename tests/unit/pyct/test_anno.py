"""Tests for autostage.pyct.anno."""

import gast
import pytest

from autostage.pyct import anno, parser


def test_set_get_has_del():
    node = gast.Name("x", gast.Load(), None, None)
    assert not anno.hasanno(node, anno.Basic.QN)
    anno.setanno(node, anno.Basic.QN, "qn")
    assert anno.hasanno(node, anno.Basic.QN)
    assert anno.getanno(node, anno.Basic.QN) == "qn"
    assert anno.keys(node) == frozenset({anno.Basic.QN})
    anno.delanno(node, anno.Basic.QN)
    assert not anno.hasanno(node, anno.Basic.QN)
    anno.delanno(node, anno.Basic.QN)  # deleting twice is harmless
    assert anno.keys(node) == frozenset()


def test_getanno_default_and_missing_key_message():
    node = gast.Pass()
    assert anno.getanno(node, anno.Static.SCOPE, None) is None
    assert anno.getanno(node, "custom", 7) == 7
    with pytest.raises(KeyError, match="Pass node has no annotation SCOPE"):
        anno.getanno(node, anno.Static.SCOPE)


def test_keys_repr_is_their_name():
    assert repr(anno.Basic.ORIGIN) == "ORIGIN"
    assert repr(anno.Static.LIVE_VARS_IN) == "LIVE_VARS_IN"
    assert anno.Basic.ARGS_SCOPE is not anno.Static.ARGS_SCOPE


def test_copyanno_and_dup():
    a, b = gast.Pass(), gast.Pass()
    anno.setanno(a, "k", [1])
    anno.copyanno(a, b, "k")
    assert anno.getanno(b, "k") is anno.getanno(a, "k")
    anno.copyanno(a, b, "k", "renamed")
    assert anno.getanno(b, "renamed") == [1]
    anno.copyanno(a, b, "absent")
    assert not anno.hasanno(b, "absent")
    anno.dup(b, {"k": "k2", "absent": "nothing"})
    assert anno.getanno(b, "k2") == [1]
    assert anno.keys(b) == frozenset({"k", "renamed", "k2"})


def test_annotations_are_per_node():
    a, b = gast.Pass(), gast.Pass()
    anno.setanno(a, "k", 1)
    assert not anno.hasanno(b, "k")


def test_clearanno_all_and_some_keys():
    tree = parser.parse_str("x = y + 1")
    for node in gast.walk(tree):
        anno.setanno(node, "a", 1)
        anno.setanno(node, "b", 2)
    anno.clearanno(tree, ["a"])
    assert all(anno.keys(n) == frozenset({"b"}) for n in gast.walk(tree))
    anno.clearanno(tree)
    assert all(anno.keys(n) == frozenset() for n in gast.walk(tree))


def test_annotations_do_not_show_in_the_ast_fields():
    node = parser.parse_str("x = 1")
    before = gast.dump(node)
    anno.setanno(node, anno.Basic.ORIGIN, "somewhere")
    assert gast.dump(node) == before
