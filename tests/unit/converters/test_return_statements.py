"""Tests for autostage.converters.return_statements: generated source, and Python's behaviour.

A ``for`` loop that may return ends through ``anno.Basic.EXTRA_LOOP_TEST``, which control_flow
honours; ``ExtraTestsAsBreaks`` honours it in plain Python for the behaviour tests.
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
from autostage.converters import break_statements, continue_statements, return_statements
from autostage.pyct import anno, unparser

LOWERING = (break_statements, continue_statements, return_statements)


def source(fn):
    return convert_with(fn, return_statements).source


def assert_same(fn, inputs, converters=(return_statements,)):
    assert_same_behaviour(fn, inputs, *converters)


# Source ------------------------------------------------------------------------------------------

def top_level_returns_only(x):
    if x:
        x = 2
    return x


def test_functions_returning_only_at_the_top_level_are_left_alone():
    assert source(top_level_returns_only) == dedent("""
        def top_level_returns_only(x):
            if x:
                x = 2
            return x
    """)


def early_return(x):
    """Docstring stays first."""
    if x > 0:
        return "positive"
    x = -x
    return x


def test_return_becomes_flags_and_a_single_final_return():
    assert source(early_return) == dedent('''
        def early_return(x):
            """Docstring stays first."""
            do_return = False
            retval_ = None
            if x > 0:
                retval_ = 'positive'
                do_return = True
            if not do_return:
                x = -x
                retval_ = x
            return retval_
    ''')


def search(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            return i
    i = 0
    while i < len(xs):
        if xs[i] > target:
            return
        i += 1


def test_loops_that_may_return_get_the_extra_test():
    assert source(search) == dedent("""
        def search(xs, target):
            do_return = False
            retval_ = None
            for i, x in enumerate(xs):
                if x == target:
                    retval_ = i
                    do_return = True
            if not do_return:
                i = 0
                while not do_return and i < len(xs):
                    if xs[i] > target:
                        retval_ = None
                        do_return = True
                    if not do_return:
                        i += 1
            return retval_
    """)
    node, ctx = conversion.parse(search)
    node = return_statements.transform(node, ctx)
    (loop,) = [n for n in gast.walk(node) if isinstance(n, gast.For)]
    assert unparser.unparse(anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST)) == "not do_return"


def find_pair(rows):
    for row in rows:
        for x in row:
            if x < 0:
                break
            if x > 10:
                return x
        else:
            continue
        return -1
    return None


def test_after_break_and_continue_lowering_guards_wrap_their_code():
    assert convert_with(find_pair, *LOWERING).source == dedent("""
        def find_pair(rows):
            do_return = False
            retval_ = None
            for row in rows:
                continue_ = False
                break_ = False
                for x in row:
                    if x < 0:
                        break_ = True
                    if not break_:
                        if x > 10:
                            retval_ = x
                            do_return = True
                if not do_return:
                    if not break_:
                        continue_ = True
                    if not continue_:
                        retval_ = -1
                        do_return = True
            if not do_return:
                retval_ = None
            return retval_
    """)
    node, ctx = conversion.parse(find_pair)
    for converter in LOWERING:
        node = converter.transform(node, ctx)
    tests = [unparser.unparse(anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST))
             for loop in gast.walk(node) if isinstance(loop, gast.For)]
    assert tests == ["not do_return", "not (do_return or break_)"]


def loop_else(xs):
    for x in xs:
        if x:
            return x
    else:
        xs = None
    return xs


def test_a_return_skips_the_loop_else_when_it_is_still_there():
    assert source(loop_else) == dedent("""
        def loop_else(xs):
            do_return = False
            retval_ = None
            for x in xs:
                if x:
                    retval_ = x
                    do_return = True
            else:
                if not do_return:
                    xs = None
            if not do_return:
                retval_ = xs
            return retval_
    """)


def nested_functions(xs):
    def first_positive(ys):
        for y in ys:
            if y > 0:
                return y
        return 0

    scale = lambda v: v * 2  # noqa: E731 - a lambda's value is its own
    if not xs:
        return None
    return scale(first_positive(xs))


def test_nested_functions_are_lowered_on_their_own():
    assert source(nested_functions) == dedent("""
        def nested_functions(xs):
            do_return = False
            retval_ = None

            def first_positive(ys):
                do_return_1 = False
                retval_1 = None
                for y in ys:
                    if y > 0:
                        retval_1 = y
                        do_return_1 = True
                if not do_return_1:
                    retval_1 = 0
                return retval_1
            scale = lambda v: v * 2
            if not xs:
                retval_ = None
                do_return = True
            if not do_return:
                retval_ = scale(first_positive(xs))
            return retval_
    """)


def return_in_finally(x, log):
    try:
        log.append("try")
        if x == 0:
            return "from try"
        if x < 0:
            raise ValueError(x)
    finally:
        log.append("finally")
        if x < -1 or x == 0:
            return "from finally"  # noqa: B012 - the silenced exception is what is tested
    return "end"


def test_return_in_finally_overrides_and_discards_the_exception():
    assert source(return_in_finally) == dedent("""
        def return_in_finally(x, log):
            do_return = False
            retval_ = None
            try:
                log.append('try')
                if x == 0:
                    retval_ = 'from try'
                    do_return = True
                if not do_return:
                    if x < 0:
                        raise ValueError(x)
            except BaseException:
                log.append('finally')
                if x < -1 or x == 0:
                    retval_ = 'from finally'
                    do_return = True
                if not do_return:
                    raise
            else:
                log.append('finally')
                if x < -1 or x == 0:
                    retval_ = 'from finally'
                    do_return = True
            if not do_return:
                retval_ = 'end'
            return retval_
    """)


def test_origins_of_generated_statements():
    node, ctx = conversion.parse(early_return)
    node = return_statements.transform(node, ctx)

    def line(stmt):
        return anno.getanno(stmt, anno.Basic.ORIGIN).source_code_line.strip()

    init, final = node.body[1], node.body[-1]
    assert line(init) == line(final) == "def early_return(x):"
    flag_set = node.body[3].body[1]
    assert unparser.unparse(flag_set) == "do_return = True"
    assert line(flag_set) == 'return "positive"'
    assert line(node.body[4]) == "x = -x"  # the guard


# Behaviour ---------------------------------------------------------------------------------------

def test_simple_functions_behave_like_python():
    assert_same(early_return, [(3,), (0,), (-4,)])
    assert_same(search, [([], 1), ([3, 1, 2], 1), ([0, 5], 1), ([0, 1], 7)])
    assert_same(loop_else, [([],), ([0, 0],), ([0, 3, 4],)])
    assert_same(nested_functions, [([],), ([-1, 0],), ([-1, 4, 5],)])


@pytest.mark.parametrize("rows", [[], [[]], [[1, 2]], [[1, -1, 20]], [[1, 20]], [[3], [-1], [11]]])
def test_with_break_and_continue_behaves_like_python(rows):
    assert_same(find_pair, [(rows,)], LOWERING)


def test_return_in_finally_behaves_like_python():
    converted = convert_with(return_in_finally, return_statements).function
    for x in (1, 0, -1, -2):
        log_py, log_conv = [], []
        assert outcome(converted, x, log_conv) == outcome(return_in_finally, x, log_py), x
        assert log_conv == log_py


@contextlib.contextmanager
def logged(log, name):
    log.append(("enter", name))
    try:
        yield
    finally:
        log.append(("exit", name))


def returns_in_with_and_try(xs, log):
    for x in xs:
        with logged(log, x):
            try:
                if x == 0:
                    return 1 / x
                if x > 5:
                    return x
            except ZeroDivisionError:
                log.append("caught")
            log.append(("body", x))
    return "done"


def test_returns_in_with_and_try_behave_like_python():
    converted = convert_with(returns_in_with_and_try, *LOWERING, ExtraTestsAsBreaks).function
    for xs in ([], [1, 2], [1, 0, 3], [2, 7, 9]):
        log_py, log_conv = [], []
        assert outcome(converted, xs, log_conv) == outcome(returns_in_with_and_try, xs, log_py)
        assert log_conv == log_py, xs
