"""The analyses on real code: every top-level function and method of some stdlib modules.

They must not crash, and their results must hang together: every statement and Name is
annotated, definitions are of the symbol used, must-defined is within defined, and a statement's
reads are live on entry to it.
"""

import importlib
import time

import gast
import pytest

from autostage.pyct import anno
from autostage.pyct.static_analysis import analyze

S = anno.Static
MODULES = ("ast", "inspect", "textwrap", "json.decoder", "argparse", "collections", "dataclasses",
           "functools", "typing", "difflib", "tokenize", "pathlib", "email.message")
_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def _parse(module_name: str) -> gast.Module:
    path = importlib.import_module(module_name).__file__
    with open(path, encoding="utf-8") as f:
        return gast.parse(f.read())


def _functions(module_name: str) -> list[gast.AST]:
    tree = _parse(module_name)
    found = []
    for node in tree.body:
        if isinstance(node, _FUNCTIONS):
            found.append(node)
        elif isinstance(node, gast.ClassDef):
            found += [n for n in node.body if isinstance(n, _FUNCTIONS)]
    return found


def _check_function(fn: gast.AST) -> int:
    graphs = analyze(fn)
    assert fn in graphs
    assert isinstance(anno.getanno(fn, S.LIVE_VARS_IN), frozenset)
    statements = 0
    for node in gast.walk(fn):
        if isinstance(node, gast.stmt) and node is not fn:
            statements += 1
            _check_statement(node)
        elif isinstance(node, gast.Name):
            defs = anno.getanno(node, S.DEFINITIONS)
            qn = anno.getanno(node, anno.Basic.QN)
            assert all(d.symbol == qn for d in defs), (node.id, getattr(node, "lineno", None))
    return statements


def _check_statement(node: gast.stmt) -> None:
    where = (type(node).__name__, getattr(node, "lineno", None))
    live_in = anno.getanno(node, S.LIVE_VARS_IN)
    assert isinstance(anno.getanno(node, S.LIVE_VARS_OUT), frozenset), where
    defined = anno.getanno(node, S.DEFINED_VARS_IN)
    assert anno.getanno(node, S.MUST_DEFINED_VARS_IN) <= defined, where
    if anno.hasanno(node, S.NODE_SCOPE):  # a simple statement reads what it reads first
        assert anno.getanno(node, S.NODE_SCOPE).read <= live_in, where


@pytest.mark.parametrize("module_name", MODULES)
def test_analyses_hold_on_stdlib_module(module_name):
    functions = _functions(module_name)
    assert len(functions) > 5
    start = time.perf_counter()
    statements = sum(_check_function(fn) for fn in functions)
    assert statements > 50
    assert time.perf_counter() - start < 10, "analyses got much slower"


@pytest.mark.parametrize("module_name", MODULES[:4])
def test_analyses_hold_on_whole_module(module_name):
    tree = _parse(module_name)
    graphs = analyze(tree)
    assert len(graphs) > 10
    names = [n for n in gast.walk(tree) if isinstance(n, gast.Name)]
    assert all(anno.hasanno(n, S.DEFINITIONS) for n in names)
    for node in gast.walk(tree):
        if isinstance(node, gast.stmt):
            _check_statement(node)
