"""Tests for autostage.pyct.cfg: the full edge set of many small functions, by node label."""

import argparse
import ast
import asyncio.base_events
import inspect
import json.decoder
import pathlib
import textwrap

import gast
import pytest

from autostage.pyct import cfg, parser

SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return, gast.Raise,
          gast.Assert, gast.Delete, gast.Pass, gast.Break, gast.Continue, gast.Global,
          gast.Nonlocal, gast.Import, gast.ImportFrom) + SCOPES


def own_statements(scope):
    """Every statement (and except/case clause) of a body, not looking into nested scopes."""
    todo = list(scope.body)
    while todo:
        stmt = todo.pop()
        yield stmt
        if not isinstance(stmt, SCOPES):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                todo.extend(getattr(stmt, field, None) or [])


def check_invariants(scope, graph):
    nodes = set(graph.index.values())
    for node in nodes:
        assert isinstance(node.next, frozenset) and isinstance(node.prev, frozenset)
        assert node.next <= nodes and node.prev <= nodes
        assert all(node in succ.prev for succ in node.next)
        assert all(node in pred.next for pred in node.prev)
    assert graph.entry in nodes and graph.exit <= nodes and graph.error <= nodes
    for stmt in own_statements(scope):
        assert stmt in graph.stmt_nodes, gast.dump(stmt)
        assert graph.stmt_entry[stmt] in graph.stmt_nodes[stmt]
        if isinstance(stmt, SIMPLE):
            assert graph.stmt_nodes[stmt] == {graph.index[stmt]}
    assert not any(isinstance(n, (gast.Try, gast.TryStar)) for n in graph.index)


def edges(graph):
    return {(repr(a), repr(b)) for a in graph.index.values() for b in a.next}


def labels(nodes):
    return {repr(n) for n in nodes}


def assert_graph(graph, expected, entry, exit, error=()):
    assert len(labels(graph.index.values())) == len(graph.index), "labels must be unique"
    assert edges(graph) == set(expected)
    assert repr(graph.entry) == entry
    assert labels(graph.exit) == set(exit)
    assert labels(graph.error) == set(error)


def build(src):
    node = parser.parse_str(src)
    graph = cfg.build(node)
    check_invariants(node, graph)
    return graph


def check(src, expected, entry, exit, error=()):
    graph = build(src)
    assert_graph(graph, expected, entry, exit, error)
    return graph


def stmt_labels(graph, table, stmt):
    value = getattr(graph, table)[stmt]
    return repr(value) if isinstance(value, cfg.Node) else labels(value)


# Straight line and if


def test_straight_line():
    check("""
        def f(x):
            a = x + 1
            b: int = a * 2
            return b
    """, [("a = x + 1", "b: int = a * 2"), ("b: int = a * 2", "return b")],
          entry="a = x + 1", exit={"return b"})


def test_falls_off_the_end():
    check("""
        def f(x):
            print(x)
            x += 1
    """, [("print(x)", "x += 1")], entry="print(x)", exit={"x += 1"})


def test_if():
    check("""
        def f(x):
            if x > 0:
                x = 1
            return x
    """, [("if x > 0", "x = 1"), ("if x > 0", "return x"), ("x = 1", "return x")],
          entry="if x > 0", exit={"return x"})


def test_if_else():
    check("""
        def f(x):
            if x > 0:
                y = 1
            else:
                y = 2
            return y
    """, [("if x > 0", "y = 1"), ("if x > 0", "y = 2"), ("y = 1", "return y"),
          ("y = 2", "return y")], entry="if x > 0", exit={"return y"})


def test_elif_chain():
    check("""
        def f(x):
            if x > 0:
                y = 1
            elif x < 0:
                y = 2
            elif x == 0:
                y = 3
            else:
                y = 4
            return y
    """, [("if x > 0", "y = 1"), ("if x > 0", "if x < 0"), ("if x < 0", "y = 2"),
          ("if x < 0", "if x == 0"), ("if x == 0", "y = 3"), ("if x == 0", "y = 4"),
          ("y = 1", "return y"), ("y = 2", "return y"), ("y = 3", "return y"),
          ("y = 4", "return y")], entry="if x > 0", exit={"return y"})


def test_elif_without_else():
    check("""
        def f(x):
            y = 0
            if x > 0:
                y = 1
            elif x < 0:
                y = 2
            return y
    """, [("y = 0", "if x > 0"), ("if x > 0", "y = 1"), ("if x > 0", "if x < 0"),
          ("if x < 0", "y = 2"), ("if x < 0", "return y"), ("y = 1", "return y"),
          ("y = 2", "return y")], entry="y = 0", exit={"return y"})


def test_nested_ifs():
    check("""
        def f(a, b):
            if a:
                if b:
                    x = 1
                else:
                    x = 2
                y = x
            else:
                y = 3
            return y
    """, [("if a", "if b"), ("if b", "x = 1"), ("if b", "x = 2"), ("x = 1", "y = x"),
          ("x = 2", "y = x"), ("if a", "y = 3"), ("y = x", "return y"), ("y = 3", "return y")],
          entry="if a", exit={"return y"})


def test_if_at_the_end_exits_from_test_and_body():
    check("""
        def f(x):
            if x:
                print(x)
    """, [("if x", "print(x)")], entry="if x", exit={"if x", "print(x)"})


def test_return_in_both_branches_leaves_the_rest_unreachable():
    graph = check("""
        def f(x):
            if x:
                return 1
            else:
                return 2
            print(x)
    """, [("if x", "return 1"), ("if x", "return 2")],
                  entry="if x", exit={"return 1", "return 2", "print(x)"})
    assert {repr(n) for n in graph.index.values() if not n.prev} == {"if x", "print(x)"}


# Loops


def test_while():
    check("""
        def f(i, n):
            while i < n:
                i = i + 1
            return i
    """, [("while i < n", "i = i + 1"), ("i = i + 1", "while i < n"),
          ("while i < n", "return i")], entry="while i < n", exit={"return i"})


def test_while_else():
    check("""
        def f(i, n):
            while i < n:
                i += 1
            else:
                i = -1
            return i
    """, [("while i < n", "i += 1"), ("i += 1", "while i < n"), ("while i < n", "i = -1"),
          ("i = -1", "return i")], entry="while i < n", exit={"return i"})


def test_while_true_keeps_the_edge_out_of_the_header():
    # Constant tests are not special-cased: `while True` still has an edge past the loop.
    check("""
        def f(x):
            while True:
                x = g(x)
                if x:
                    break
            return x
    """, [("while True", "x = g(x)"), ("x = g(x)", "if x"), ("if x", "break"),
          ("if x", "while True"), ("break", "return x"), ("while True", "return x")],
          entry="while True", exit={"return x"})


def test_while_continue_and_else():
    check("""
        def f(i):
            while i:
                i -= 1
                if i % 2:
                    continue
                print(i)
            else:
                print('end')
    """, [("while i", "i -= 1"), ("i -= 1", "if i % 2"), ("if i % 2", "continue"),
          ("continue", "while i"), ("if i % 2", "print(i)"), ("print(i)", "while i"),
          ("while i", "print('end')")], entry="while i", exit={"print('end')"})


def test_for():
    check("""
        def f(xs):
            s = 0
            for x in xs:
                s += x
            return s
    """, [("s = 0", "for x in xs"), ("for x in xs", "s += x"), ("s += x", "for x in xs"),
          ("for x in xs", "return s")], entry="s = 0", exit={"return s"})


def test_for_else():
    check("""
        def f(xs):
            for i, x in enumerate(xs):
                print(x)
            else:
                print('done')
            return 1
    """, [("for i, x in enumerate(xs)", "print(x)"), ("print(x)", "for i, x in enumerate(xs)"),
          ("for i, x in enumerate(xs)", "print('done')"), ("print('done')", "return 1")],
          entry="for i, x in enumerate(xs)", exit={"return 1"})


def test_for_else_break_skips_else():
    check("""
        def f(xs, k):
            for x in xs:
                if x == k:
                    found = x
                    break
            else:
                found = None
            return found
    """, [("for x in xs", "if x == k"), ("if x == k", "found = x"), ("found = x", "break"),
          ("if x == k", "for x in xs"), ("break", "return found"),
          ("for x in xs", "found = None"), ("found = None", "return found")],
          entry="for x in xs", exit={"return found"})


def test_continue_in_for_with_else():
    check("""
        def f(xs):
            for x in xs:
                if x:
                    continue
                print(x)
            else:
                print(xs)
            return xs
    """, [("for x in xs", "if x"), ("if x", "continue"), ("continue", "for x in xs"),
          ("if x", "print(x)"), ("print(x)", "for x in xs"), ("for x in xs", "print(xs)"),
          ("print(xs)", "return xs")], entry="for x in xs", exit={"return xs"})


def test_break_in_inner_loop_only_leaves_inner():
    check("""
        def f(rows):
            for row in rows:
                for x in row:
                    if x:
                        break
                    print(x)
                print(row)
            return 0
    """, [("for row in rows", "for x in row"), ("for row in rows", "return 0"),
          ("for x in row", "if x"), ("if x", "break"), ("if x", "print(x)"),
          ("print(x)", "for x in row"), ("break", "print(row)"), ("for x in row", "print(row)"),
          ("print(row)", "for row in rows")], entry="for row in rows", exit={"return 0"})


def test_nested_loops_continue_and_break_in_inner():
    check("""
        def f(rows):
            while rows:
                for x in rows.pop():
                    if x < 0:
                        continue
                    if x == 0:
                        break
                    print(x)
                rows = rows[1:]
            return rows
    """, [("while rows", "for x in rows.pop()"), ("while rows", "return rows"),
          ("for x in rows.pop()", "if x < 0"), ("if x < 0", "continue"),
          ("continue", "for x in rows.pop()"), ("if x < 0", "if x == 0"),
          ("if x == 0", "break"), ("if x == 0", "print(x)"), ("print(x)", "for x in rows.pop()"),
          ("break", "rows = rows[1:]"), ("for x in rows.pop()", "rows = rows[1:]"),
          ("rows = rows[1:]", "while rows")], entry="while rows", exit={"return rows"})


def test_break_in_loop_else_targets_the_outer_loop():
    check("""
        def f(rows):
            for row in rows:
                for x in row:
                    print(x)
                else:
                    break
            return rows
    """, [("for row in rows", "for x in row"), ("for row in rows", "return rows"),
          ("for x in row", "print(x)"), ("print(x)", "for x in row"), ("for x in row", "break"),
          ("break", "return rows")], entry="for row in rows", exit={"return rows"})


def test_return_in_loop():
    check("""
        def f(xs):
            for x in xs:
                if x:
                    return x
            return None
    """, [("for x in xs", "if x"), ("if x", "return x"), ("if x", "for x in xs"),
          ("for x in xs", "return None")], entry="for x in xs", exit={"return x", "return None"})


def test_unreachable_after_break():
    graph = check("""
        def f(xs):
            for x in xs:
                break
                print(x)
            return xs
    """, [("for x in xs", "break"), ("for x in xs", "return xs"), ("break", "return xs"),
          ("print(x)", "for x in xs")], entry="for x in xs", exit={"return xs"})
    assert {repr(n) for n in graph.index.values() if not n.prev} == {"print(x)"}


# Return, raise and unreachable code


def test_unreachable_after_return():
    graph = check("""
        def f(x):
            return x
            y = x + 1
            return y
    """, [("y = x + 1", "return y")], entry="return x", exit={"return x", "return y"})
    assert {repr(n) for n in graph.index.values() if not n.prev} == {"return x", "y = x + 1"}


def test_raise_uncaught():
    check("""
        def f(x):
            if x < 0:
                raise ValueError(x)
            return x
    """, [("if x < 0", "raise ValueError(x)"), ("if x < 0", "return x")],
          entry="if x < 0", exit={"return x"}, error={"raise ValueError(x)"})


def test_raise_caught_by_bare_except():
    check("""
        def f(x):
            try:
                if x:
                    raise ValueError(x)
                a = 1
            except:
                a = 2
            return a
    """, [("if x", "raise ValueError(x)"), ("if x", "a = 1"), ("if x", "except"),
          ("raise ValueError(x)", "except"), ("a = 1", "except"), ("a = 1", "return a"),
          ("except", "a = 2"), ("a = 2", "return a")], entry="if x", exit={"return a"})


def test_raise_under_a_specific_handler_may_still_escape():
    check("""
        def f(x):
            try:
                raise KeyError(x)
            except KeyError:
                return 0
    """, [("raise KeyError(x)", "except KeyError"), ("except KeyError", "return 0")],
          entry="raise KeyError(x)", exit={"return 0"}, error={"raise KeyError(x)"})


def test_unreachable_after_raise_in_try():
    check("""
        def f(x):
            try:
                raise ValueError(x)
                x = 1
            except ValueError:
                pass
            return x
    """, [("raise ValueError(x)", "except ValueError"), ("x = 1", "except ValueError"),
          ("x = 1", "return x"), ("except ValueError", "pass"), ("pass", "return x")],
          entry="raise ValueError(x)", exit={"return x"}, error={"raise ValueError(x)"})


# Try


def test_try_except_else():
    check("""
        def f(x):
            try:
                y = g(x)
            except ValueError as e:
                y = e
            else:
                y = y + 1
            return y
    """, [("y = g(x)", "except ValueError as e"), ("y = g(x)", "y = y + 1"),
          ("except ValueError as e", "y = e"), ("y = e", "return y"), ("y = y + 1", "return y")],
          entry="y = g(x)", exit={"return y"})


def test_try_with_several_handlers():
    check("""
        def f(x):
            try:
                a = g(x)
                b = h(a)
            except (KeyError, IndexError):
                b = 1
            except ValueError as e:
                b = 2
            return b
    """, [("a = g(x)", "b = h(a)"), ("a = g(x)", "except (KeyError, IndexError)"),
          ("a = g(x)", "except ValueError as e"), ("b = h(a)", "except (KeyError, IndexError)"),
          ("b = h(a)", "except ValueError as e"), ("b = h(a)", "return b"),
          ("except (KeyError, IndexError)", "b = 1"), ("except ValueError as e", "b = 2"),
          ("b = 1", "return b"), ("b = 2", "return b")], entry="a = g(x)", exit={"return b"})


def test_catch_all_stops_the_walk_but_its_handler_may_raise_outwards():
    check("""
        def f(x):
            try:
                try:
                    a = g(x)
                except BaseException:
                    a = 0
                b = a
            except Exception:
                b = 1
            return b
    """, [("a = g(x)", "except BaseException"), ("a = g(x)", "b = a"),
          ("except BaseException", "a = 0"), ("except BaseException", "except Exception"),
          ("a = 0", "b = a"), ("a = 0", "except Exception"), ("b = a", "except Exception"),
          ("b = a", "return b"), ("except Exception", "b = 1"), ("b = 1", "return b")],
          entry="a = g(x)", exit={"return b"})


def test_try_finally():
    check("""
        def f(x):
            try:
                a = g(x)
            finally:
                print(x)
            return a
    """, [("a = g(x)", "print(x)"), ("print(x)", "return a")],
          entry="a = g(x)", exit={"return a"})


def test_return_inside_try_finally():
    check("""
        def f(x):
            try:
                if x:
                    return g(x)
                a = 1
            finally:
                print(x)
            return a
    """, [("if x", "return g(x)"), ("if x", "a = 1"), ("if x", "print(x)"),
          ("return g(x)", "print(x)"), ("a = 1", "print(x)"), ("print(x)", "return a")],
          entry="if x", exit={"print(x)", "return a"})


def test_finally_after_a_body_that_always_returns_does_not_fall_through():
    check("""
        def f(x):
            try:
                return g(x)
            finally:
                print(x)
            y = 1
    """, [("return g(x)", "print(x)")], entry="return g(x)", exit={"print(x)", "y = 1"})


def test_return_in_try_and_handler_with_finally():
    check("""
        def f(x):
            try:
                return g(x)
            except ValueError:
                return None
            finally:
                print(x)
    """, [("return g(x)", "except ValueError"), ("return g(x)", "print(x)"),
          ("except ValueError", "return None"), ("except ValueError", "print(x)"),
          ("return None", "print(x)")], entry="return g(x)", exit={"print(x)"})


def test_break_inside_try_finally_in_loop():
    check("""
        def f(xs):
            for x in xs:
                try:
                    if x:
                        break
                    a = x
                finally:
                    print(x)
                b = a
            return xs
    """, [("for x in xs", "if x"), ("for x in xs", "return xs"), ("if x", "break"),
          ("if x", "a = x"), ("if x", "print(x)"), ("break", "print(x)"), ("a = x", "print(x)"),
          ("print(x)", "b = a"), ("print(x)", "return xs"), ("b = a", "for x in xs")],
          entry="for x in xs", exit={"return xs"})


def test_continue_inside_try_finally_in_loop():
    check("""
        def f(xs):
            for x in xs:
                try:
                    if x:
                        continue
                    a = x
                finally:
                    print(x)
                b = a
            return xs
    """, [("for x in xs", "if x"), ("for x in xs", "return xs"), ("if x", "continue"),
          ("if x", "a = x"), ("if x", "print(x)"), ("continue", "print(x)"),
          ("a = x", "print(x)"), ("print(x)", "b = a"), ("print(x)", "for x in xs"),
          ("b = a", "for x in xs")], entry="for x in xs", exit={"return xs"})


def test_break_through_two_finally_blocks():
    check("""
        def f(xs):
            while xs:
                try:
                    try:
                        break
                    finally:
                        print(1)
                finally:
                    print(2)
            return xs
    """, [("while xs", "break"), ("while xs", "return xs"), ("break", "print(1)"),
          ("print(1)", "print(2)"), ("print(2)", "return xs")],
          entry="while xs", exit={"return xs"})


def test_break_in_handler_goes_through_finally():
    check("""
        def f(xs):
            while xs:
                try:
                    xs = g(xs)
                except ValueError:
                    break
                finally:
                    print(xs)
            return xs
    """, [("while xs", "xs = g(xs)"), ("while xs", "return xs"),
          ("xs = g(xs)", "except ValueError"), ("xs = g(xs)", "print(xs)"),
          ("except ValueError", "break"), ("except ValueError", "print(xs)"),
          ("break", "print(xs)"), ("print(xs)", "while xs"), ("print(xs)", "return xs")],
          entry="while xs", exit={"return xs"})


def test_continue_in_handler_and_break_in_else():
    check("""
        def f(xs):
            for x in xs:
                try:
                    y = g(x)
                except ValueError:
                    continue
                else:
                    break
            return y
    """, [("for x in xs", "y = g(x)"), ("for x in xs", "return y"),
          ("y = g(x)", "except ValueError"), ("y = g(x)", "break"),
          ("except ValueError", "continue"), ("continue", "for x in xs"), ("break", "return y")],
          entry="for x in xs", exit={"return y"})


def test_return_inside_finally_swallows_the_exception():
    check("""
        def f(x):
            try:
                a = g(x)
            except ValueError:
                raise
            finally:
                return 0
    """, [("a = g(x)", "except ValueError"), ("a = g(x)", "return 0"),
          ("except ValueError", "raise"), ("except ValueError", "return 0"),
          ("raise", "return 0")], entry="a = g(x)", exit={"return 0"})


def test_raise_inside_try_finally_reraises_from_finally():
    check("""
        def f(x):
            try:
                if x:
                    raise ValueError(x)
            finally:
                print(x)
            return x
    """, [("if x", "raise ValueError(x)"), ("if x", "print(x)"),
          ("raise ValueError(x)", "print(x)"), ("print(x)", "return x")],
          entry="if x", exit={"return x"}, error={"print(x)"})


def test_raise_in_handler_with_finally():
    check("""
        def f(x):
            try:
                a = g(x)
            except ValueError as e:
                raise TypeError(x) from e
            finally:
                print(x)
            return a
    """, [("a = g(x)", "except ValueError as e"), ("a = g(x)", "print(x)"),
          ("except ValueError as e", "raise TypeError(x) from e"),
          ("except ValueError as e", "print(x)"), ("raise TypeError(x) from e", "print(x)"),
          ("print(x)", "return a")], entry="a = g(x)", exit={"return a"}, error={"print(x)"})


def test_try_except_else_finally():
    check("""
        def f(x):
            try:
                a = g(x)
            except ValueError:
                a = 0
            else:
                a += 1
            finally:
                print(a)
            return a
    """, [("a = g(x)", "except ValueError"), ("a = g(x)", "a += 1"), ("a = g(x)", "print(a)"),
          ("except ValueError", "a = 0"), ("except ValueError", "print(a)"),
          ("a = 0", "print(a)"), ("a += 1", "print(a)"), ("print(a)", "return a")],
          entry="a = g(x)", exit={"return a"})


def test_nested_try_finally_reraises_into_outer_handler():
    check("""
        def f(x):
            try:
                try:
                    a = g(x)
                finally:
                    print(x)
                b = a
            except ValueError:
                b = 0
            return b
    """, [("a = g(x)", "print(x)"), ("print(x)", "b = a"), ("print(x)", "except ValueError"),
          ("b = a", "except ValueError"), ("b = a", "return b"), ("except ValueError", "b = 0"),
          ("b = 0", "return b")], entry="a = g(x)", exit={"return b"})


def test_return_through_nested_finally_blocks():
    check("""
        def f(x):
            try:
                try:
                    return g(x)
                finally:
                    print(1)
            finally:
                print(2)
    """, [("return g(x)", "print(1)"), ("print(1)", "print(2)")],
          entry="return g(x)", exit={"print(2)"})


def test_try_star():
    check("""
        def f(x):
            try:
                a = g(x)
            except* ValueError as e:
                a = e
            except* TypeError:
                a = None
            return a
    """, [("a = g(x)", "except* ValueError as e"), ("a = g(x)", "except* TypeError"),
          ("a = g(x)", "return a"), ("except* ValueError as e", "a = e"),
          ("except* TypeError", "a = None"), ("a = e", "return a"), ("a = None", "return a")],
          entry="a = g(x)", exit={"return a"})


# Other statements


def test_with():
    check("""
        def f(path):
            with open(path) as fp:
                data = fp.read()
            return data
    """, [("with open(path) as fp", "data = fp.read()"), ("data = fp.read()", "return data")],
          entry="with open(path) as fp", exit={"return data"})


def test_with_several_items_and_return():
    check("""
        def f(a):
            with lock, open(a) as fa:
                return fa.read()
    """, [("with lock, open(a) as fa", "return fa.read()")],
          entry="with lock, open(a) as fa", exit={"return fa.read()"})


def test_raise_in_with_may_be_suppressed():
    # __exit__ may suppress the raise (contextlib.suppress): the code after the with is reached.
    check("""
        def f(x):
            with suppress(ValueError):
                raise ValueError(x)
            return x
    """, [("with suppress(ValueError)", "raise ValueError(x)"),
          ("raise ValueError(x)", "return x")],
          entry="with suppress(ValueError)", exit={"return x"}, error={"raise ValueError(x)"})


def test_assert_del_and_pass():
    check("""
        def f(d, k):
            assert k in d, 'missing'
            del d[k], k
            pass
    """, [("assert k in d, 'missing'", "del d[k], k"), ("del d[k], k", "pass")],
          entry="assert k in d, 'missing'", exit={"pass"})


def test_imports():
    check("""
        def f():
            import numpy as np
            from os import path as p, sep
            return np, p, sep
    """, [("import numpy as np", "from os import path as p, sep"),
          ("from os import path as p, sep", "return (np, p, sep)")],
          entry="import numpy as np", exit={"return (np, p, sep)"})


def test_global_and_nonlocal():
    node = parser.parse_str("""
        def f():
            global counter
            total = 0
            def inc():
                nonlocal total
                total += 1
                return total
            counter += inc()
            return total
    """)
    graphs = cfg.build_all(node)
    inc = node.body[2]
    assert set(graphs) == {node, inc}
    assert_graph(graphs[node], [("global counter", "total = 0"), ("total = 0", "def inc"),
                                ("def inc", "counter += inc()"),
                                ("counter += inc()", "return total")],
                 entry="global counter", exit={"return total"})
    assert_graph(graphs[inc], [("nonlocal total", "total += 1"), ("total += 1", "return total")],
                 entry="nonlocal total", exit={"return total"})


def test_match_with_irrefutable_last_case():
    check("""
        def f(p):
            match p:
                case (a, b):
                    r = a
                case {'k': v} if v:
                    r = v
                case _:
                    r = None
            return r
    """, [("match p", "case (a, b)"), ("case (a, b)", "r = a"),
          ("case (a, b)", "case {'k': v} if v"), ("case {'k': v} if v", "r = v"),
          ("case {'k': v} if v", "case _"), ("case _", "r = None"), ("r = a", "return r"),
          ("r = v", "return r"), ("r = None", "return r")], entry="match p", exit={"return r"})


def test_match_without_irrefutable_case_falls_through():
    check("""
        def f(p):
            r = 0
            match p:
                case 1 | 2:
                    r = 1
                case Point(x=0):
                    r = 2
            return r
    """, [("r = 0", "match p"), ("match p", "case 1 | 2"), ("case 1 | 2", "r = 1"),
          ("case 1 | 2", "case Point(x=0)"), ("case Point(x=0)", "r = 2"),
          ("case Point(x=0)", "return r"), ("r = 1", "return r"), ("r = 2", "return r")],
          entry="r = 0", exit={"return r"})


def test_match_guarded_wildcard_is_refutable_and_capture_is_not():
    check("""
        def f(p, c):
            match p:
                case _ if c:
                    r = 1
                case other:
                    r = other
            return r
    """, [("match p", "case _ if c"), ("case _ if c", "r = 1"), ("case _ if c", "case other"),
          ("case other", "r = other"), ("r = 1", "return r"), ("r = other", "return r")],
          entry="match p", exit={"return r"})


def test_lambda_and_comprehensions_are_plain_expressions():
    node = parser.parse_str("""
        def f(xs):
            g = lambda x: x + 1
            ys = [g(x) for x in xs if x]
            return {k: v for k, v in zip(xs, ys)}
    """)
    graphs = cfg.build_all(node)
    assert set(graphs) == {node}
    assert_graph(graphs[node], [("g = lambda x: x + 1", "ys = [g(x) for x in xs if x]"),
                                ("ys = [g(x) for x in xs if x]",
                                 "return {k: v for k, v in zip(xs, ys)}")],
                 entry="g = lambda x: x + 1", exit={"return {k: v for k, v in zip(xs, ys)}"})


def test_nested_function_is_one_node_and_its_own_graph():
    node = parser.parse_str("""
        def outer(x):
            y = x + 1
            def inner(z):
                if z:
                    return y
                return z
            return inner
    """)
    graphs = cfg.build_all(node)
    inner = node.body[1]
    assert set(graphs) == {node, inner}
    assert_graph(graphs[node], [("y = x + 1", "def inner"), ("def inner", "return inner")],
                 entry="y = x + 1", exit={"return inner"})
    assert graphs[node].stmt_nodes[inner] == {graphs[node].index[inner]}
    assert_graph(graphs[inner], [("if z", "return y"), ("if z", "return z")],
                 entry="if z", exit={"return y", "return z"})


def test_nested_class_and_method():
    node = parser.parse_str("""
        def f():
            class C:
                n = 0
                def m(self):
                    return self.n
            return C
    """)
    graphs = cfg.build_all(node)
    cls = node.body[0]
    method = cls.body[1]
    assert set(graphs) == {node, cls, method}
    assert_graph(graphs[node], [("class C", "return C")], entry="class C", exit={"return C"})
    assert_graph(graphs[cls], [("n = 0", "def m")], entry="n = 0", exit={"def m"})
    assert_graph(graphs[method], [], entry="return self.n", exit={"return self.n"})


def test_async_def_for_and_with():
    node = parser.parse_str("""
        async def f(xs):
            async with lock() as l:
                async for x in xs:
                    await g(x)
            return l
    """)
    graph = cfg.build_all(node)[node]
    check_invariants(node, graph)
    assert_graph(graph, [("async with lock() as l", "async for x in xs"),
                         ("async for x in xs", "await g(x)"), ("await g(x)", "async for x in xs"),
                         ("async for x in xs", "return l")],
                 entry="async with lock() as l", exit={"return l"})


def test_module_and_class_bodies():
    module = parser.parse_str("""
        x = 1
        if x:
            y = 2
    """, single_node=False)
    assert_graph(cfg.build(module), [("x = 1", "if x"), ("if x", "y = 2")],
                 entry="x = 1", exit={"if x", "y = 2"})
    cls = parser.parse_str("""
        class A(Base):
            a = 1
            async def m(self):
                pass
    """)
    assert_graph(cfg.build(cls), [("a = 1", "async def m")], entry="a = 1",
                 exit={"async def m"})


def test_labels_of_the_contract():
    graph = build("""
        def f(x, i, n, p):
            x = 1
            if x > 0:
                pass
            while i < n:
                pass
            for i in range(3):
                pass
            with open(f) as g:
                pass
            try:
                pass
            except ValueError as e:
                pass
            match p:
                case (a, b):
                    pass
                case [c]:
                    pass
            def g():
                pass
            class C:
                pass
            return x
    """)
    assert labels(graph.index.values()) == {
        "x = 1", "if x > 0", "pass", "while i < n", "for i in range(3)", "with open(f) as g",
        "except ValueError as e", "match p", "case (a, b)", "case (c,)", "def g", "class C",
        "return x"}


# Per-statement views


def test_stmt_views_of_an_if_with_break_in_a_loop():
    node = parser.parse_str("""
        def f(xs):
            for x in xs:
                if x:
                    print(x)
                    break
                x += 1
            return x
    """)
    graph = cfg.build(node)
    loop = node.body[0]
    if_stmt, step = loop.body
    assert stmt_labels(graph, "stmt_next", if_stmt) == {"return x", "x += 1"}
    assert stmt_labels(graph, "stmt_prev", if_stmt) == {"for x in xs"}
    assert stmt_labels(graph, "stmt_nodes", if_stmt) == {"if x", "print(x)", "break"}
    assert stmt_labels(graph, "stmt_entry", if_stmt) == "if x"
    # The loop's own back edge stays inside it.
    assert stmt_labels(graph, "stmt_prev", loop) == set()
    assert stmt_labels(graph, "stmt_next", loop) == {"return x"}
    assert stmt_labels(graph, "stmt_nodes", loop) == {
        "for x in xs", "if x", "print(x)", "break", "x += 1"}
    assert stmt_labels(graph, "stmt_entry", loop) == "for x in xs"
    assert stmt_labels(graph, "stmt_next", step) == {"for x in xs"}
    assert stmt_labels(graph, "stmt_next", if_stmt.body[1]) == {"return x"}


def test_stmt_views_of_try_and_handler():
    node = parser.parse_str("""
        def f(x):
            a = 0
            try:
                a = g(x)
            except ValueError:
                a = 1
            finally:
                print(a)
            return a
    """)
    graph = cfg.build(node)
    try_stmt = node.body[1]
    handler = try_stmt.handlers[0]
    assert try_stmt not in graph.index
    assert stmt_labels(graph, "stmt_entry", try_stmt) == "a = g(x)"
    assert stmt_labels(graph, "stmt_prev", try_stmt) == {"a = 0"}
    assert stmt_labels(graph, "stmt_next", try_stmt) == {"return a"}
    assert stmt_labels(graph, "stmt_nodes", try_stmt) == {
        "a = g(x)", "except ValueError", "a = 1", "print(a)"}
    assert stmt_labels(graph, "stmt_next", try_stmt.body[0]) == {"except ValueError", "print(a)"}
    assert stmt_labels(graph, "stmt_nodes", handler) == {"except ValueError", "a = 1"}
    assert stmt_labels(graph, "stmt_prev", handler) == {"a = g(x)"}
    assert stmt_labels(graph, "stmt_next", handler) == {"print(a)"}


def test_stmt_views_of_match_cases_and_continue():
    node = parser.parse_str("""
        def f(ps):
            for p in ps:
                match p:
                    case 0:
                        continue
                    case n:
                        print(n)
            return ps
    """)
    graph = cfg.build(node)
    match = node.body[0].body[0]
    first, second = match.cases
    assert stmt_labels(graph, "stmt_next", first) == {"case n", "for p in ps"}
    assert stmt_labels(graph, "stmt_nodes", first) == {"case 0", "continue"}
    assert stmt_labels(graph, "stmt_next", first.body[0]) == {"for p in ps"}
    assert stmt_labels(graph, "stmt_prev", second) == {"case 0"}
    assert stmt_labels(graph, "stmt_next", match) == {"for p in ps"}


# Dump


def test_dump_golden():
    graph = build("""
        def f(n):
            i = 0
            while i < n:
                if i % 2:
                    break
                i += 1
            return i
    """)
    assert str(graph) == textwrap.dedent("""\
        [0] i = 0 -> [1]  <entry>
        [1] while i < n -> [2] [5]
        [2] if i % 2 -> [3] [4]
        [3] break -> [5]
        [4] i += 1 -> [1]
        [5] return i  <exit>""")


def test_dump_marks_error_and_several_tags():
    graph = build("""
        def f(x):
            raise ValueError(x)
    """)
    assert str(graph) == "[0] raise ValueError(x)  <entry, error>"
    assert str(build("def f():\n    return 1")) == "[0] return 1  <entry, exit>"


# Errors and robustness


def test_errors():
    with pytest.raises(SyntaxError, match="'break' outside loop"):
        cfg.build(parser.parse_str("def f():\n    break"))
    with pytest.raises(TypeError, match="expected a function, class or module"):
        cfg.build(parser.parse_str("if x:\n    pass"))
    empty = gast.parse("")
    with pytest.raises(ValueError, match="empty body"):
        cfg.build(empty)
    assert cfg.build_all(empty) == {}


@pytest.mark.parametrize("module", [ast, inspect, textwrap, json.decoder, argparse,
                                    asyncio.base_events],
                         ids=lambda m: m.__name__)
def test_build_all_on_stdlib_modules(module):
    tree = gast.parse(pathlib.Path(module.__file__).read_text(encoding="utf-8"))
    graphs = cfg.build_all(tree)
    scopes = {n for n in gast.walk(tree) if isinstance(n, SCOPES)}
    assert set(graphs) == scopes | {tree}
    assert len(scopes) > 10
    for scope, graph in graphs.items():
        check_invariants(scope, graph)
