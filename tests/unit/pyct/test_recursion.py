"""Tests for pyct/recursion.py and its use by conversion (issue 9, item 9): expressions CPython
compiles (a sum of 300 or 1,000 terms) convert and stage, with the recursion limit raised only
while converting, by a bounded amount."""

import ast
import importlib.util
import sys

import numpy as np
import pytest

import autostage
from autostage.pyct import recursion

TARGETS = ["interpreter", "cpu"]


def test_depth_is_measured_without_recursion():
    terms = 20 * sys.getrecursionlimit()  # far deeper than a recursive walk could go
    tree = ast.BinOp(ast.Constant(0), ast.Add(), ast.Constant(1))
    for _ in range(terms):
        tree = ast.BinOp(tree, ast.Add(), ast.Constant(1))
    assert recursion.depth(tree) == terms + 2


def test_headroom_is_bounded_and_restored():
    before = sys.getrecursionlimit()
    with recursion.headroom(1000):
        inside = sys.getrecursionlimit()
    assert before < inside <= before + 1000 * recursion.FRAMES_PER_LEVEL + 200 + 500
    assert sys.getrecursionlimit() == before


def _module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("terms", [300, 1000])
def test_a_long_sum_converts_and_stages(tmp_path, target, terms):
    body = " + ".join(f"x * {i}" for i in range(terms))
    module = _module(tmp_path, f"long_sum_{terms}_{target}", f"def f(x):\n    return {body}\n")
    before = sys.getrecursionlimit()
    x = np.array([1.0, 2.0])
    staged = autostage.convert(target=target)(module.f)(x)
    assert staged.tolist() == module.f(x).tolist() == [sum(range(terms)), 2 * sum(range(terms))]
    assert sys.getrecursionlimit() == before


def test_code_deeper_than_the_bound_is_a_conversion_error(tmp_path, monkeypatch):
    body = " + ".join(f"x * {i}" for i in range(1200))
    module = _module(tmp_path, "too_deep", f"def f(x):\n    return {body}\n")
    monkeypatch.setattr(recursion, "MAX_DEPTH", 600)
    # Python's default limit, whatever an earlier test left: the first attempt must run out of
    # recursion, as it does in a fresh process, for the depth to be measured and refused
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with pytest.raises(autostage.ConversionError) as info:
            autostage.to_graph(module.f)
    finally:
        sys.setrecursionlimit(limit)
    message = str(info.value)
    assert "too_deep.py:1" in message and "f is nested 1" in message and "up to 600" in message
