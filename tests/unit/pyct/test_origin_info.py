"""Tests for autostage.pyct.origin_info."""

import inspect

import gast
import pytest

from autostage.pyct import anno, loader, origin_info, parser, templates, transformer, unparser

THIS_FILE = inspect.getsourcefile(inspect.getmodule(lambda: None))


def _line_of(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(f"# <{marker}>")]
    assert len(hits) == 1, marker
    return hits[0]


def user_function(x, n):
    total = 0  # start at zero  # <total>
    while n > 0:  # <while>
        total += x * 2
        n -= 1

    def helper(v):
        return v + 1  # <helper-return>

    return helper(total)  # <return>


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(loader.ENV_VAR, str(tmp_path / "cache"))


def _parsed(fn):
    node, source = parser.parse_entity(fn)
    origin_info.resolve_entity(node, source, fn)
    return node, source


def test_resolve_entity_annotates_every_positioned_node():
    node, _ = _parsed(user_function)
    total = node.body[0]
    origin = anno.getanno(total, anno.Basic.ORIGIN)
    assert origin.loc == origin_info.Location(THIS_FILE, _line_of("total"), 4)
    assert origin.function_name == "user_function"
    assert origin.source_code_line == "    total = 0  # start at zero  # <total>"
    assert origin.comment == "start at zero  # <total>"
    target = anno.getanno(total.targets[0], anno.Basic.ORIGIN)
    assert (target.loc.lineno, target.loc.col_offset) == (_line_of("total"), 4)
    positioned = [n for n in gast.walk(node) if hasattr(n, "lineno")]
    assert all(anno.hasanno(n, anno.Basic.ORIGIN) for n in positioned)
    assert not anno.hasanno(node.args, anno.Basic.ORIGIN)  # arguments have no position


def test_nested_function_nodes_name_their_own_function():
    node, _ = _parsed(user_function)
    helper = next(n for n in node.body if isinstance(n, gast.FunctionDef))
    ret = anno.getanno(helper.body[0], anno.Basic.ORIGIN)
    assert ret.function_name == "helper"
    assert ret.loc.lineno == _line_of("helper-return")
    assert anno.getanno(helper, anno.Basic.ORIGIN).function_name == "helper"
    assert anno.getanno(node.body[-1], anno.Basic.ORIGIN).function_name == "user_function"


def test_origin_info_formats():
    node, _ = _parsed(user_function)
    origin = anno.getanno(node.body[-1], anno.Basic.ORIGIN)
    assert str(origin) == f"{THIS_FILE}:{_line_of('return')}:4 in user_function"
    assert origin.as_frame() == (THIS_FILE, _line_of("return"), "user_function",
                                 "return helper(total)  # <return>")
    assert origin.loc.line_loc == origin_info.LineLocation(THIS_FILE, _line_of("return"))


scaled = lambda a: a * 3  # noqa: E731  # <lambda>


def test_lambda_origin():
    node, _ = _parsed(scaled)
    origin = anno.getanno(node.body, anno.Basic.ORIGIN)
    assert origin.loc == origin_info.Location(THIS_FILE, _line_of("lambda"), 19)
    assert origin.function_name == "<lambda>"
    assert origin.comment == "noqa: E731  # <lambda>"


def test_resolve_relative_positions_with_offsets():
    snippet = "y = f(x)  # note\nz = y\n"
    node = parser.parse_str(snippet, single_node=False)
    origin_info.resolve(node, snippet, "model.py", source_lineno=41, line_offset=40,
                        col_offset=8, function_name="outer")
    second = anno.getanno(node.body[1], anno.Basic.ORIGIN)
    assert second == origin_info.OriginInfo(
        origin_info.Location("model.py", 42, 8), "outer", "z = y", None)
    first = anno.getanno(node.body[0].value, anno.Basic.ORIGIN)
    assert (first.loc.lineno, first.loc.col_offset, first.comment) == (41, 12, "note")


def _generated(node):
    """Wraps the user's statements in generated code, as a converter would."""
    body = templates.replace("""
        def fn_converted(args):
            log('enter')
            body
            log('exit')
    """, fn_converted="user_function_converted", args=[a.id for a in node.args.args],
        body=node.body)
    return body


def test_source_map_points_at_the_user_lines():
    node, _ = _parsed(user_function)
    generated = _generated(node)
    code = unparser.unparse(generated)
    source_map = origin_info.create_source_map(generated, code, "generated.py")
    lines = code.splitlines()
    by_text = {lines[loc.lineno - 1].strip(): origin for loc, origin in source_map.items()}
    assert by_text["total = 0"].loc == origin_info.Location(THIS_FILE, _line_of("total"), 4)
    assert by_text["while n > 0:"].loc.lineno == _line_of("while")
    assert by_text["return v + 1"].loc.lineno == _line_of("helper-return")
    assert by_text["return v + 1"].function_name == "helper"
    assert by_text["return helper(total)"].loc.lineno == _line_of("return")
    # Lines the template made have no user origin.
    assert "log('enter')" not in by_text
    assert "def user_function_converted(x, n):" not in by_text
    assert all(loc.filename == "generated.py" for loc in source_map)


class _RewriteWhile(transformer.Base):
    """Replaces ``while`` loops by a call to a generated loop function."""

    def visit_While(self, node):
        self.generic_visit(node)
        return templates.replace("""
            def loop_body():
                body
            run_while(loop_body)
        """, body=node.body)


def test_source_map_survives_a_transformer_rewrite(cache):
    node, _ = _parsed(user_function)
    node = _RewriteWhile(None).visit(node)
    loaded = loader.load_function(node, "user_function", user_function.__globals__,
                                  loader.cells_of(user_function), like=user_function)
    source_map = origin_info.create_source_map(loaded.nodes, loaded.source, loaded.filename)
    lines = loaded.source.splitlines()
    by_text = {lines[loc.lineno - 1].strip(): origin for loc, origin in source_map.items()}
    # The generated loop function and its call inherit the origin of the `while` they replace.
    assert by_text["def loop_body():"].loc.lineno == _line_of("while")
    assert by_text["run_while(loop_body)"].loc.lineno == _line_of("while")
    assert by_text["total += x * 2"].loc.lineno == _line_of("while") + 1
    assert by_text["total = 0"].loc == origin_info.Location(THIS_FILE, _line_of("total"), 4)
    assert {loc.filename for loc in source_map} == {loaded.filename}


def test_own_origin_beats_inherited_and_earliest_wins():
    user = parser.parse_str("a = b\nc = d", single_node=False)
    origin_info.resolve(user, "a = b\nc = d\n", "user.py")
    first, second = user.body
    # A generated `if` from line 1; inside it, a generated statement whose value is `d` (line 2):
    # its own origin beats the one the generated target inherits from the `if`.
    nodes = templates.replace("if flag:\n    tmp = value", flag="f", value=second.value)
    anno.setanno(nodes[0], anno.Basic.ORIGIN, anno.getanno(first, anno.Basic.ORIGIN))
    # A generated line holding parts of both user lines: the earliest user position wins.
    nodes += templates.replace("pair = (left, right)", left=second.value, right=first.value)
    code = unparser.unparse(nodes)
    source_map = origin_info.create_source_map(nodes, code, "gen.py")
    assert code.splitlines()[1:] == ["    tmp = d", "pair = (d, b)"]
    assert source_map[origin_info.LineLocation("gen.py", 1)].loc.lineno == 1
    assert source_map[origin_info.LineLocation("gen.py", 2)].loc.lineno == 2
    assert source_map[origin_info.LineLocation("gen.py", 3)].loc == origin_info.Location(
        "user.py", 1, 4)


def test_unannotated_code_has_an_empty_map():
    nodes = parser.parse_str("x = 1\ny = 2", single_node=False)
    assert origin_info.create_source_map(nodes, unparser.unparse(nodes), "f.py") == {}
