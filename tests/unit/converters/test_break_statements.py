"""Tests for autostage.converters.break_statements: generated source, and Python's behaviour.

A ``for`` loop's break ends it through ``anno.Basic.EXTRA_LOOP_TEST``, which control_flow honours;
``converter_testing.ExtraTestsAsBreaks`` honours it in plain Python instead (``if not (extra):
break`` at the top of the body), so the behaviour tests run on break lowering alone.
"""

import contextlib

import gast
import pytest
from converter_testing import (
    ExtraTestsAsBreaks,
    assert_same_behaviour,
    convert_with,
    dedent,
    outcome,
)

from autostage import conversion
from autostage.converters import break_statements
from autostage.pyct import anno, unparser


def run_converted(fn):
    return convert_with(fn, break_statements, ExtraTestsAsBreaks).function


def assert_same(fn, inputs):
    assert_same_behaviour(fn, inputs, break_statements)


def loop_node(fn, kind=gast.For):
    node, ctx = conversion.parse(fn)
    node = break_statements.transform(node, ctx)
    return [n for n in gast.walk(node) if isinstance(n, kind)]


# Source ------------------------------------------------------------------------------------------

def for_with_break_and_else(xs, limit):
    total = 0
    for x in xs:
        if x > limit:
            break
        total += x
    else:
        total = -total
    return total


def test_for_loop_break_becomes_flag_guard_and_else():
    assert convert_with(for_with_break_and_else, break_statements).source == dedent("""
        def for_with_break_and_else(xs, limit):
            total = 0
            break_ = False
            for x in xs:
                if x > limit:
                    break_ = True
                if not break_:
                    total += x
            if not break_:
                total = -total
            return total
    """)


def test_for_loop_gets_the_extra_loop_test():
    (loop,) = loop_node(for_with_break_and_else)
    assert unparser.unparse(anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST)) == "not break_"


def test_existing_extra_loop_test_is_kept():
    node, ctx = conversion.parse(for_with_break_and_else)
    (loop,) = [n for n in gast.walk(node) if isinstance(n, gast.For)]
    anno.setanno(loop, anno.Basic.EXTRA_LOOP_TEST, gast.Name("more", gast.Load(), None, None))
    break_statements.transform(node, ctx)
    assert unparser.unparse(anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST)) == (
        "not break_ and more")


def while_true_with_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def while_with_test_and_else(n, stop):
    i = 0
    while i < n and i != stop:
        i += 1
        if i * i > stop:
            break
    else:
        i = -i
    return i


def test_while_test_gets_the_flag():
    assert convert_with(while_true_with_break, break_statements).source == dedent("""
        def while_true_with_break(n):
            i = 0
            break_ = False
            while not break_:
                i += 1
                if i >= n:
                    break_ = True
            return i
    """)
    assert convert_with(while_with_test_and_else, break_statements).source == dedent("""
        def while_with_test_and_else(n, stop):
            i = 0
            break_ = False
            while not break_ and (i < n and i != stop):
                i += 1
                if i * i > stop:
                    break_ = True
            if not break_:
                i = -i
            return i
    """)


def nested(n, m):
    log = []
    for i in range(n):
        for j in range(m):
            if j > i:
                break
            log.append((i, j))
        else:
            log.append(("inner done", i))
            if i > 2:
                break
            log.append(("continuing", i))
        log.append(("outer", i))
    return log


def test_nested_loops_have_their_own_flags_and_inner_else_breaks_the_outer_loop():
    assert convert_with(nested, break_statements).source == dedent("""
        def nested(n, m):
            log = []
            break_ = False
            for i in range(n):
                break_1 = False
                for j in range(m):
                    if j > i:
                        break_1 = True
                    if not break_1:
                        log.append((i, j))
                if not break_1:
                    log.append(('inner done', i))
                    if i > 2:
                        break_ = True
                    if not break_:
                        log.append(('continuing', i))
                if not break_:
                    log.append(('outer', i))
            return log
    """)
    loops = loop_node(nested)
    tests = [unparser.unparse(anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST)) for loop in loops]
    assert tests == ["not break_", "not break_1"]


def loops_without_break(xs):
    out = []
    for x in xs:
        out.append(x)
    else:
        out.append("for else")
    while out and len(out) > 10:
        out.pop()
    else:
        out.append("while else")
    return out


def test_else_of_loop_without_break_follows_the_loop():
    assert convert_with(loops_without_break, break_statements).source == dedent("""
        def loops_without_break(xs):
            out = []
            for x in xs:
                out.append(x)
            out.append('for else')
            while out and len(out) > 10:
                out.pop()
            out.append('while else')
            return out
    """)
    (loop,) = loop_node(loops_without_break)
    assert not anno.hasanno(loop, anno.Basic.EXTRA_LOOP_TEST)


def break_in_try_and_with(xs, log):
    for x in xs:
        try:
            with contextlib.suppress(KeyError):
                if x == 0:
                    break
                log.append(("with", x))
            log.append(("try", x))
        except ZeroDivisionError:
            log.append("never")
        else:
            log.append(("else", x))
        finally:
            log.append(("finally", x))
        log.append(("after", x))
    return log


def test_break_in_try_skips_the_try_else_and_runs_finally():
    assert convert_with(break_in_try_and_with, break_statements).source == dedent("""
        def break_in_try_and_with(xs, log):
            break_ = False
            for x in xs:
                try:
                    with contextlib.suppress(KeyError):
                        if x == 0:
                            break_ = True
                        if not break_:
                            log.append(('with', x))
                    if not break_:
                        log.append(('try', x))
                except ZeroDivisionError:
                    log.append('never')
                else:
                    if not break_:
                        log.append(('else', x))
                finally:
                    log.append(('finally', x))
                if not break_:
                    log.append(('after', x))
            return log
    """)


def break_in_finally(xs, log):
    for x in xs:
        try:
            log.append(x)
            if x < 0:
                raise ValueError(x)
        finally:
            if x == 0 or x < -1:
                break  # noqa: B012 - the silenced exception is what is tested
    return log


def test_break_in_finally_discards_the_exception_in_flight():
    assert convert_with(break_in_finally, break_statements).source == dedent("""
        def break_in_finally(xs, log):
            break_ = False
            for x in xs:
                try:
                    log.append(x)
                    if x < 0:
                        raise ValueError(x)
                except BaseException:
                    if x == 0 or x < -1:
                        break_ = True
                    if not break_:
                        raise
                else:
                    if x == 0 or x < -1:
                        break_ = True
            return log
    """)


def walrus_test_with_else(items, stop):
    xs, seen = list(items), []
    while (x := xs.pop()) != stop:
        if x < 0:
            break
        if x == 0:
            continue
        seen.append(x)
    else:
        seen.append("ended")
    return seen, x


def test_while_test_binding_a_name_runs_first_in_the_body():
    assert convert_with(walrus_test_with_else, break_statements).source == dedent("""
        def walrus_test_with_else(items, stop):
            xs, seen = (list(items), [])
            ended_ = False
            break_ = False
            while not break_:
                if not (x := xs.pop()) != stop:
                    ended_ = True
                    break_ = True
                if not break_:
                    if x < 0:
                        break_ = True
                    if not break_:
                        if x == 0:
                            continue
                        seen.append(x)
            if ended_:
                seen.append('ended')
            return (seen, x)
    """)


def walrus_in_nested_loops(rows):
    out = []
    for row in map(list, rows):
        while (v := row.pop()) > 0:
            out.append(v)
        else:
            if v < -5:
                break
            out.append("end")
        out.append(v)
    return out


def test_generated_statements_point_at_the_user_lines():
    node, ctx = conversion.parse(for_with_break_and_else)
    node = break_statements.transform(node, ctx)
    lines = {}
    for stmt in gast.walk(node):
        if isinstance(stmt, gast.stmt):
            origin = anno.getanno(stmt, anno.Basic.ORIGIN)
            lines[unparser.unparse(stmt).splitlines()[0]] = origin.source_code_line.strip()
    assert lines["break_ = True"] == "break"
    assert lines["break_ = False"] == "for x in xs:"
    assert lines["if not break_:"] in ("total += x", "total = -total")


def test_source_is_deterministic():
    sources = {convert_with(nested, break_statements).source for _ in range(3)}
    assert len(sources) == 1


# Behaviour ---------------------------------------------------------------------------------------

def test_while_test_binding_a_name_behaves_like_python():
    assert_same(walrus_test_with_else, [((1, 2, 3), 9), ((1, 2, 3), 2), ((5, 0, 4), 9),
                                        ((7, -1, 2), 9), ((4,), 4), ((), 1)])
    assert_same(walrus_in_nested_loops, [(((1, 0, 3), (-1, 2)),), (((2, -9, 1), (0,)),),
                                         ((),), (((0,), (0,)),), (((3,),),)])


def test_for_with_break_and_else_behaves_like_python():
    assert_same(for_with_break_and_else,
                [([], 3), ([1, 2], 3), ([1, 5, 2], 3), ([5], 3), ([1, 2, 3], 3)])


def test_while_loops_behave_like_python():
    assert_same(while_true_with_break, [(0,), (1,), (5,)])
    assert_same(while_with_test_and_else, [(0, 0), (5, 3), (5, 100), (3, 2), (10, 30)])


def test_nested_loops_behave_like_python():
    assert_same(nested, [(0, 0), (3, 0), (2, 5), (6, 2), (6, 6)])


def test_loops_without_break_behave_like_python():
    assert_same(loops_without_break, [([],), ([1, 2],), (list(range(20)),)])


def test_break_in_try_and_with_behaves_like_python():
    converted = run_converted(break_in_try_and_with)
    for xs in ([], [1, 2], [3, 0, 4], [0]):
        assert converted(xs, []) == break_in_try_and_with(xs, []), xs


def test_break_in_finally_behaves_like_python():
    converted = run_converted(break_in_finally)
    for xs in ([], [1, 2], [1, 0, 2], [3, -2, 4], [3, -1, 4]):
        assert outcome(converted, xs, []) == outcome(break_in_finally, xs, []), xs
    log_py, log_conv = [], []
    assert outcome(converted, [1, -1, 0], log_conv) == outcome(break_in_finally, [1, -1, 0], log_py)
    assert log_conv == log_py == [1, -1]


@pytest.mark.parametrize("xs", [[], [1], [2, 7, 1], [9, 9]])
def test_break_out_of_a_search_loop(xs):
    def first_big(items):
        found = None
        for index, item in enumerate(items):
            if item > 5:
                found = index
                break
        return found

    assert outcome(run_converted(first_big), xs) == outcome(first_big, xs)
