"""Tests for autostage.pyct.unparser, including a round trip over standard-library sources."""

import ast
import importlib.util
import textwrap
import time

import gast
import pytest

from autostage.pyct import parser, unparser

# Modules chosen for syntax variety: decorators, async, f-strings, walrus, match, slices, classes.
CORPUS = [
    "argparse", "ast", "asyncio.tasks", "collections", "contextlib", "dataclasses", "difflib",
    "enum", "fractions", "functools", "inspect", "json.decoder", "pathlib", "pprint",
    "re._parser", "statistics", "string", "textwrap", "tokenize", "typing", "zipfile",
]


def _round_trip(source: str) -> tuple[str, str]:
    before = gast.parse(source)
    text = unparser.unparse(before)
    return gast.dump(before), gast.dump(gast.parse(text))


def _source_of(module_name: str) -> str:
    spec = importlib.util.find_spec(module_name)
    with open(spec.origin, encoding="utf-8") as f:
        return f.read()


def test_round_trip_corpus():
    start = time.perf_counter()
    checked = 0
    for name in CORPUS:
        before, after = _round_trip(_source_of(name))
        assert before == after, f"{name} does not round-trip"
        checked += 1
    assert checked == len(CORPUS)
    assert time.perf_counter() - start < 30  # a guard: it takes a few seconds


@pytest.mark.parametrize("code", [
    "x[:, 1:3]",
    "x[..., None, ::2]",
    "x[1:2, ::3, i]",
    "f'{a!r:>{width}} and {b=}'",
    "f'{x:.3f}' + 'plain'",
    "(y := f(x)) > 0",
    "[z for x in xs if (z := x + 1)]",
    "lambda *a, b=1, **k: (a, b, k)",
    "def f(a, /, b, *, c): pass",
    "@d1\n@d2(arg)\ndef f(): pass",
    "@dataclass(frozen=True)\nclass C(Base, metaclass=M): x: int = 0",
    "async def f():\n    async with a as b:\n        async for x in b:\n            await x",
    "try:\n    pass\nexcept* ValueError as e:\n    raise\nexcept* (TypeError, KeyError):\n    pass",
    "match p:\n    case Point(x=0, y=yy) if yy > 1:\n        pass\n    case [1, *rest]:\n"
    "        pass\n    case {'k': v, **others}:\n        pass\n    case str() | bytes() as s:\n"
    "        pass\n    case _:\n        pass",
    "global g\nnonlocal_ = {**a, 'k': 1}",
    "x = yield from gen()",
    "a, *b = c = d",
    "del a[0], b.c",
    "print(*args, sep='', **kw)",
    "x = 1 if c else 2",
    "assert 0 < x <= 10, 'message'",
    "with a as (b, c), d: pass",
])
def test_round_trip_syntax(code):
    before, after = _round_trip(code)
    assert before == after


def test_unparse_single_expression_and_statement():
    assert unparser.unparse(parser.parse_expression("x[:, 1:3]")) == "x[:, 1:3]"
    assert unparser.unparse(parser.parse_str("a =  b+1")) == "a = b + 1"


def test_unparse_statement_list():
    body = parser.parse_str("a = 1\nif a:\n  b = 2", single_node=False).body
    assert unparser.unparse(body) == "a = 1\nif a:\n    b = 2"


def test_unparse_accepts_python_ast():
    assert unparser.unparse(ast.parse("x=( 1 )")) == "x = 1"


def test_unparse_nodes_without_positions():
    node = gast.Assign([gast.Name("y", gast.Store(), None, None)],
                       gast.Constant(3, None), None)
    assert unparser.unparse(node) == "y = 3"


def test_unparse_rejects_non_nodes():
    with pytest.raises(TypeError, match="not an AST node"):
        unparser.unparse(42)


def test_unparse_keeps_indentation_of_nested_blocks():
    code = textwrap.dedent("""\
        def f(x):
            for i in range(x):
                if i:
                    continue
            else:
                return x""")
    assert unparser.unparse(parser.parse_str(code)) == code
