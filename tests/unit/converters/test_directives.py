"""Tests for autostage.converters.directives and autostage.directives."""

import inspect

import gast
import pytest
from converter_testing import convert_with, dedent

import autostage.directives
from autostage import conversion
from autostage.converters import directives
from autostage.directives import set_loop_options
from autostage.directives import set_loop_options as loop_options
from autostage.pyct import anno, errors, unparser


def loops(fn):
    """The converted tree's loops, each with its directives as source text."""
    node, ctx = conversion.parse(fn)
    node = directives.transform(node, ctx)
    found = []
    for loop in gast.walk(node):
        if isinstance(loop, (gast.For, gast.While)):
            options = anno.getanno(loop, anno.Basic.DIRECTIVES, {})
            found.append({k: unparser.unparse(v) for k, v in options.items()})
    return found


def options_on_loops(xs, n):
    total = 0
    for x in xs:
        set_loop_options(parallel_iterations=4)
        total += x
        while n > 0:
            autostage.directives.set_loop_options(maximum_iterations=n * 2)
            loop_options(parallel_iterations=1)
            n -= 1
    return total, n


def test_calls_are_removed_and_recorded_on_their_loops():
    converted = convert_with(options_on_loops, directives)
    assert converted.source == dedent("""
        def options_on_loops(xs, n):
            total = 0
            for x in xs:
                total += x
                while n > 0:
                    n -= 1
            return (total, n)
    """)
    assert loops(options_on_loops) == [
        {"parallel_iterations": "4"},
        {"maximum_iterations": "n * 2", "parallel_iterations": "1"},
    ]
    for args in (([], 3), ([1, 2], 2), ([5], 0)):
        assert converted.function(*args) == options_on_loops(*args)


def test_a_directive_alone_in_a_body_leaves_pass():
    def body_is_directive(n):
        for _ in range(n):
            set_loop_options(maximum_iterations=n)
        return n

    assert convert_with(body_is_directive, directives).source == dedent("""
        def body_is_directive(n):
            for _ in range(n):
                pass
            return n
    """)


def other_calls(xs):
    out = []
    for x in xs:
        out.append(x)
        print(x)
    return out


def test_other_calls_are_left_alone():
    assert convert_with(other_calls, directives).source == dedent("""
        def other_calls(xs):
            out = []
            for x in xs:
                out.append(x)
                print(x)
            return out
    """)
    assert loops(other_calls) == [{}]


def outside_loop(n):
    set_loop_options(maximum_iterations=n)
    return n


def in_nested_if(n):
    while n:
        if n > 2:
            set_loop_options(maximum_iterations=n)
        n -= 1


def in_loop_else(xs):
    for _ in xs:
        pass
    else:
        set_loop_options(maximum_iterations=3)


def in_nested_function(xs):
    for _ in xs:
        def inner():
            set_loop_options(maximum_iterations=3)
        inner()


def positional(xs):
    for _ in xs:
        set_loop_options(3)


def unknown_keyword(xs):
    for _ in xs:
        set_loop_options(unroll=True)


def star_kwargs(xs, opts):
    for _ in xs:
        set_loop_options(**opts)


def twice(xs):
    for _ in xs:
        set_loop_options(maximum_iterations=2)
        set_loop_options(maximum_iterations=3)


@pytest.mark.parametrize("fn, message, line", [
    (outside_loop, "directly in the body of a for or while loop",
     "set_loop_options(maximum_iterations=n)"),
    (in_nested_if, "directly in the body", "set_loop_options(maximum_iterations=n)"),
    (in_loop_else, "directly in the body", "set_loop_options(maximum_iterations=3)"),
    (in_nested_function, "directly in the body", "set_loop_options(maximum_iterations=3)"),
    (positional, "keyword arguments only", "set_loop_options(3)"),
    (unknown_keyword, "no option 'unroll'; the options are maximum_iterations,",
     "set_loop_options(unroll=True)"),
    (star_kwargs, "keyword arguments only", "set_loop_options(**opts)"),
    (twice, "'maximum_iterations' is set twice", "set_loop_options(maximum_iterations=3)"),
])
def test_misuse_is_a_conversion_error_at_the_user_line(fn, message, line):
    with pytest.raises(errors.ConversionError, match=message) as info:
        convert_with(fn, directives)
    error = info.value
    assert error.filename == __file__
    assert error.source_line.strip().startswith(line)
    assert error.lineno == fn.__code__.co_firstlineno + _offset(fn, line)


def _offset(fn, line):
    """Lines from ``fn``'s def to the first line starting with ``line``."""
    source = inspect.getsource(fn).splitlines()
    return next(i for i, text in enumerate(source) if text.strip().startswith(line))


def test_set_loop_options_unconverted_is_a_no_op_with_the_same_checks():
    assert set_loop_options(maximum_iterations=3, parallel_iterations=2) is None
    with pytest.raises(TypeError):
        set_loop_options(3)  # keyword arguments only, as the converter requires
    with pytest.raises(TypeError):
        set_loop_options(unroll=True)
    assert other_calls([1]) == [1]
