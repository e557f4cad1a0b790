"""Tests for autostage.pyct.naming."""

import subprocess
import sys

import pytest

from autostage.pyct import naming, parser

SOURCE = """
import numpy as np
from os import path as p
def loop_body(x, *args, k=1, **kw):
    global counter
    y = np.sum(x.shape, axis=k)
    class Model: pass
    match y:
        case [first, *rest]: pass
        case {"a": 1, **others}: pass
        case int() as whole: pass
    return lambda z: y
"""


def test_collect_names_finds_every_spelled_identifier():
    names = naming.collect_names(parser.parse_str(SOURCE, single_node=False))
    assert names == {
        "np", "numpy", "p", "os", "path", "loop_body", "x", "args", "k", "kw", "counter", "y",
        "sum", "shape", "axis", "Model", "first", "rest", "others", "int", "whole", "z"}


def test_collect_names_of_several_nodes():
    nodes = parser.parse_str("a = 1\nb.c = d", single_node=False).body
    assert naming.collect_names(nodes) == {"a", "b", "c", "d"}


def test_fresh_names_avoid_user_names_and_each_other():
    namer = naming.Namer({"x", "loop_body"})
    assert namer.new_symbol("x") == "x_1"
    assert namer.new_symbol("x") == "x_2"
    assert namer.new_symbol("loop_body") == "loop_body_1"
    assert namer.new_symbol("loop_test") == "loop_test"
    assert namer.new_symbol("loop_test") == "loop_test_1"


def test_numbered_root_counts_on_instead_of_nesting():
    namer = naming.Namer({"x", "x_1"})
    assert namer.new_symbol("x_1") == "x_2"
    assert namer.new_symbol("x_5") == "x_5"


def test_builtins_and_keywords_are_avoided():
    namer = naming.Namer()
    assert namer.new_symbol("len") == "len_1"
    assert namer.new_symbol("if") == "if_1"
    assert naming.Namer(reserve_builtins=False).new_symbol("len") == "len"


def test_reserved_for_one_call_only():
    namer = naming.Namer()
    assert namer.new_symbol("tmp", reserved={"tmp"}) == "tmp_1"
    assert namer.new_symbol("tmp") == "tmp"
    assert namer.is_used("tmp_1") and namer.is_used("tmp")


def test_reserve_and_for_entity():
    node = parser.parse_str("def f(state):\n    return helper(state)")
    namer = naming.Namer.for_entity(node, namespace={"helper_1": 1, "np": None})
    namer.reserve(["ag__"])
    assert namer.new_symbol("state") == "state_1"
    assert namer.new_symbol("helper") == "helper_2"
    assert namer.new_symbol("np") == "np_1"
    assert namer.new_symbol("ag__") == "ag___1"


def test_invalid_root():
    with pytest.raises(ValueError, match="cannot make a name from 'a b': it is not an identifier"):
        naming.Namer().new_symbol("a b")


_SCRIPT = """
from autostage.pyct import naming
namer = naming.Namer({"c", "b", "a", "x", "x_1", "loop_body"})
print([namer.new_symbol(r) for r in ["x", "loop_body", "a", "z", "x", "c"]])
"""


def test_deterministic_across_processes():
    outputs = set()
    for seed in ("0", "1", "2"):
        result = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                                env={"PYTHONHASHSEED": seed, "PATH": ""}, check=True)
        outputs.add(result.stdout.strip())
    assert outputs == {"['x_2', 'loop_body_1', 'a_1', 'z', 'x_3', 'c_1']"}
