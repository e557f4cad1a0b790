"""Tests for autostage.pyct.parser."""

import functools
import inspect
import math
import textwrap

import gast
import pytest

from autostage.pyct import errors, parser, unparser


def _line_of(marker: str) -> int:
    """The 1-based line of this file holding ``marker`` (in a comment)."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(f"# <{marker}>")]
    assert len(hits) == 1, marker
    return hits[0]


def plain(x, y=2):
    z = x + y  # <plain-z>
    return z


def test_plain_function():
    node, source = parser.parse_entity(plain)
    assert isinstance(node, gast.FunctionDef)
    assert node.name == "plain"
    assert [a.id for a in node.args.args] == ["x", "y"]
    assert source.startswith("def plain(x, y=2):\n")
    assert unparser.unparse(node.body[1]) == "return z"


def test_positions_are_absolute_in_the_file():
    node, _ = parser.parse_entity(plain)
    assign = node.body[0]
    assert assign.lineno == _line_of("plain-z")
    assert assign.col_offset == 4
    assert assign.value.col_offset == 8
    assert node.lineno == _line_of("plain-z") - 1
    assert node.col_offset == 0


def make_closure():
    scale = 3

    def inner(v):
        return v * scale  # <closure-return>

    return inner


def test_nested_function_and_closure():
    fn = make_closure()
    node, source = parser.parse_entity(fn)
    assert node.name == "inner"
    assert source.startswith("    def inner(v):\n")  # indentation kept, as in the file
    ret = node.body[0]
    assert (ret.lineno, ret.col_offset) == (_line_of("closure-return"), 8)
    assert unparser.unparse(ret) == "return v * scale"


class Outer:
    class Inner:
        class Deep:
            def method(self, a):
                return a + 1  # <deep-return>

    def bound(self, x):
        return x * 2

    @staticmethod
    def static(x):
        return x - 1

    @classmethod
    def klass(cls, x):
        return cls, x


@pytest.mark.parametrize("get", [
    lambda: Outer.bound, lambda: Outer().bound,
], ids=["unbound", "bound"])
def test_methods(get):
    node, _ = parser.parse_entity(get())
    assert node.name == "bound"
    assert [a.id for a in node.args.args] == ["self", "x"]


@pytest.mark.parametrize("get", [
    lambda: Outer.static, lambda: Outer().static, lambda: Outer.__dict__["static"],
], ids=["via-class", "via-instance", "descriptor"])
def test_staticmethod(get):
    node, _ = parser.parse_entity(get())
    assert node.name == "static"
    assert [unparser.unparse(d) for d in node.decorator_list] == ["staticmethod"]


@pytest.mark.parametrize("get", [
    lambda: Outer.klass, lambda: Outer().klass, lambda: Outer.__dict__["klass"],
], ids=["via-class", "via-instance", "descriptor"])
def test_classmethod(get):
    node, _ = parser.parse_entity(get())
    assert node.name == "klass"
    assert [a.id for a in node.args.args] == ["cls", "x"]
    assert [unparser.unparse(d) for d in node.decorator_list] == ["classmethod"]


def test_deeply_indented_method():
    node, source = parser.parse_entity(Outer.Inner.Deep.method)
    assert source.startswith("            def method(self, a):\n")
    ret = node.body[0]
    assert (ret.lineno, ret.col_offset) == (_line_of("deep-return"), 16)


def register(fn):
    fn.registered = True
    return fn


def tagged(tag):
    def decorate(fn):
        fn.tag = tag
        return fn
    return decorate


@register
@tagged(
    "multi-line decorator")
def decorated(x):
    return x  # <decorated-return>


def test_decorators_are_kept():
    node, source = parser.parse_entity(decorated)
    assert [unparser.unparse(d) for d in node.decorator_list] == [
        "register", "tagged('multi-line decorator')"]
    assert source.startswith("@register\n@tagged(\n")
    assert node.body[0].lineno == _line_of("decorated-return")


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def wrapped(x):
    return x + 1


def test_functools_wraps_wrapper_parses_the_wrapper():
    node, _ = parser.parse_entity(wrapped)
    assert node.name == "wrapper"
    assert node.args.vararg.id == "args"
    # The wrapped function itself is reachable through __wrapped__.
    inner, _ = parser.parse_entity(wrapped.__wrapped__)
    assert inner.name == "wrapped"
    assert unparser.unparse(inner.decorator_list[0]) == "logged"


square = lambda x: x * x  # noqa: E731  # <square>
add_one, double = lambda x: x + 1, lambda x: x * 2  # <two-lambdas>
first, second = lambda a: a, lambda b: b  # <two-args>
_CALL_LAMBDA = dict(
    x=1,
    key=lambda v: -v,  # <call-lambda>
)["key"]
_SHARED_LAMBDA = ([1, 2], lambda q: q + 10, sum([3]))[1]  # <shared-lambda>
curried = lambda x: lambda x: x + 1  # noqa: E731  # <curried>


def test_lambda_alone():
    node, source = parser.parse_entity(square)
    assert isinstance(node, gast.Lambda)
    assert unparser.unparse(node) == "lambda x: x * x"
    assert (node.lineno, node.col_offset) == (_line_of("square"), 9)
    assert source.startswith("square = lambda x: x * x")


def test_two_lambdas_on_one_line_are_told_apart():
    node1, _ = parser.parse_entity(add_one)
    node2, _ = parser.parse_entity(double)
    assert unparser.unparse(node1) == "lambda x: x + 1"
    assert unparser.unparse(node2) == "lambda x: x * 2"
    assert node1.lineno == node2.lineno == _line_of("two-lambdas")
    assert node1.col_offset < node2.col_offset


def test_lambdas_with_different_arguments_on_one_line():
    assert unparser.unparse(parser.parse_entity(first)[0]) == "lambda a: a"
    assert unparser.unparse(parser.parse_entity(second)[0]) == "lambda b: b"


def test_lambda_inside_multi_line_call():
    node, source = parser.parse_entity(_CALL_LAMBDA)
    assert unparser.unparse(node) == "lambda v: -v"
    assert (node.lineno, node.col_offset) == (_line_of("call-lambda"), 8)
    assert source == "    key=lambda v: -v,  # <call-lambda>\n"


def test_lambda_on_a_line_shared_with_other_code():
    node, _ = parser.parse_entity(_SHARED_LAMBDA)
    assert unparser.unparse(node) == "lambda q: q + 10"
    assert (node.lineno, node.col_offset) == (_line_of("shared-lambda"), 26)


def test_nested_lambdas_with_the_same_arguments():
    outer = parser.parse_entity(curried)[0]
    inner = parser.parse_entity(curried(0))[0]
    assert unparser.unparse(outer) == "lambda x: lambda x: x + 1"
    assert unparser.unparse(inner) == "lambda x: x + 1"
    assert inner.lineno == outer.lineno == _line_of("curried")


def with_comments(x):
    # a leading comment
    y = x  # trailing comment
    # a comment less indented than nothing
    return y


def continued(x):
    total = x + \
        1 + \
  2  # noqa: E128  (a continuation line less indented than the body)
    return total


def with_docstring(x):
    text = """first
second line, less indented than the code
"""
    return text, x


def test_comments_continuations_and_dedented_strings():
    node, _ = parser.parse_entity(with_comments)
    assert [unparser.unparse(s) for s in node.body] == ["y = x", "return y"]
    node, _ = parser.parse_entity(continued)
    assert unparser.unparse(node.body[0]) == "total = x + 1 + 2"
    node, _ = parser.parse_entity(with_docstring)
    assert node.body[0].value.value == "first\nsecond line, less indented than the code\n"


class Holder:
    def method(self):
        text = """
not indented at all
"""
        return text  # <holder-return>

    def commented(self):
# a comment at column 0 inside an indented method
        return 1 + \
  2  # noqa: E128


def test_column_zero_comment_and_continuation_in_method():
    node, source = parser.parse_entity(Holder.commented)
    assert unparser.unparse(node) == "def commented(self):\n    return 1 + 2"
    assert source.splitlines()[1] == "# a comment at column 0 inside an indented method"


def test_code_of_unwraps_methods_but_not_decorators():
    assert parser.code_of(Outer().bound) is Outer.bound.__code__
    assert parser.code_of(Outer.__dict__["klass"]) is Outer.klass.__func__.__code__
    assert parser.code_of(wrapped).co_name == "wrapper"


def test_dedented_string_in_indented_method():
    node, _ = parser.parse_entity(Holder.method)
    assert node.body[0].value.value == "\nnot indented at all\n"
    assert (node.body[1].lineno, node.body[1].col_offset) == (_line_of("holder-return"), 8)


async def coroutine(x):
    return x


def test_async_function():
    node, _ = parser.parse_entity(coroutine)
    assert isinstance(node, gast.AsyncFunctionDef)


def test_exec_built_function_has_no_source():
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)
    with pytest.raises(errors.SourceUnavailableError,
                       match=r"made .*source code is not available.*exec/eval"):
        parser.parse_entity(namespace["made"])


@pytest.mark.parametrize("builtin", [len, math.sqrt, print], ids=["len", "sqrt", "print"])
def test_builtins_have_no_source(builtin):
    with pytest.raises(errors.SourceUnavailableError, match="not a Python function"):
        parser.parse_entity(builtin)


def test_source_unavailable_is_an_os_error():
    assert issubclass(errors.SourceUnavailableError, OSError)


def test_parse_str():
    node = parser.parse_str("""
        def f(a):
            return a
    """)
    assert isinstance(node, gast.FunctionDef)
    assert (node.lineno, node.col_offset) == (2, 0)  # relative to the dedented string
    module = parser.parse_str("a = 1\nb = 2", single_node=False)
    assert isinstance(module, gast.Module)
    assert len(module.body) == 2
    with pytest.raises(ValueError, match="exactly one statement, found 2"):
        parser.parse_str("a = 1\nb = 2")


def test_parse_expression():
    node = parser.parse_expression("  a.b[0] + 1  ")
    assert isinstance(node, gast.BinOp)
    assert unparser.unparse(node) == "a.b[0] + 1"
    with pytest.raises(ValueError, match="single expression"):
        parser.parse_expression("x = 1")


def test_parse_str_rejects_bad_syntax():
    with pytest.raises(SyntaxError):
        parser.parse_str(textwrap.dedent("def f(:\n  pass"))
