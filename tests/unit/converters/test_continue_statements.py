"""Tests for autostage.converters.continue_statements: generated source, and Python's behaviour.

Continue lowering keeps loops as loops, so the converted functions run as plain Python.
"""

import pytest
from converter_testing import assert_same_behaviour, convert_with, dedent

from autostage import conversion
from autostage.converters import break_statements, continue_statements
from autostage.pyct import anno, errors, unparser


def assert_same(fn, inputs, *converters):
    assert_same_behaviour(fn, inputs, *(converters or (continue_statements,)))


def skip_negatives(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        total += x
    else:
        total += 1000
    return total


def test_continue_becomes_a_flag_reset_each_iteration():
    assert convert_with(skip_negatives, continue_statements).source == dedent("""
        def skip_negatives(xs):
            total = 0
            for x in xs:
                continue_ = False
                if x < 0:
                    continue_ = True
                if not continue_:
                    total += x
            else:
                total += 1000
            return total
    """)


def while_with_continues(n):
    log = []
    i = 0
    while i < n:
        i += 1
        if i % 2:
            log.append(("odd", i))
            continue
        log.append(("even", i))
        if i % 3 == 0:
            continue
        log.append(("not a multiple of 3", i))
    return log


def test_each_possible_continue_guards_what_follows():
    assert convert_with(while_with_continues, continue_statements).source == dedent("""
        def while_with_continues(n):
            log = []
            i = 0
            while i < n:
                continue_ = False
                i += 1
                if i % 2:
                    log.append(('odd', i))
                    continue_ = True
                if not continue_:
                    log.append(('even', i))
                    if i % 3 == 0:
                        continue_ = True
                    if not continue_:
                        log.append(('not a multiple of 3', i))
            return log
    """)


def nested(n):
    log = []
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            log.append((i, j))
        else:
            if i % 2:
                continue
        log.append(i)
    return log


def test_nested_loops_have_their_own_flags_and_inner_else_continues_the_outer_loop():
    assert convert_with(nested, continue_statements).source == dedent("""
        def nested(n):
            log = []
            for i in range(n):
                continue_ = False
                for j in range(n):
                    continue_1 = False
                    if j == i:
                        continue_1 = True
                    if not continue_1:
                        log.append((i, j))
                else:
                    if i % 2:
                        continue_ = True
                if not continue_:
                    log.append(i)
            return log
    """)


def no_continue(xs):
    out = []
    for x in xs:
        out.append(x)
    return out


def test_loops_without_continue_are_left_alone():
    assert convert_with(no_continue, continue_statements).source == dedent("""
        def no_continue(xs):
            out = []
            for x in xs:
                out.append(x)
            return out
    """)


def continue_in_try(xs, log):
    for x in xs:
        try:
            if x == 0:
                continue
            log.append(1 / x)
        except ZeroDivisionError:
            log.append("never")
        else:
            log.append(("else", x))
        finally:
            log.append(("finally", x))
        log.append(("after", x))
    return log


def test_continue_in_try_skips_the_try_else_and_runs_finally():
    assert convert_with(continue_in_try, continue_statements).source == dedent("""
        def continue_in_try(xs, log):
            for x in xs:
                continue_ = False
                try:
                    if x == 0:
                        continue_ = True
                    if not continue_:
                        log.append(1 / x)
                except ZeroDivisionError:
                    log.append('never')
                else:
                    if not continue_:
                        log.append(('else', x))
                finally:
                    log.append(('finally', x))
                if not continue_:
                    log.append(('after', x))
            return log
    """)


def break_and_continue(xs):
    log = []
    for x in xs:
        if x < 0:
            continue
        if x > 100:
            break
        log.append(x)
    return log


def test_with_break_lowering_before_it():
    assert convert_with(break_and_continue, break_statements, continue_statements).source == (
        dedent("""
            def break_and_continue(xs):
                log = []
                break_ = False
                for x in xs:
                    continue_ = False
                    if x < 0:
                        continue_ = True
                    if not continue_:
                        if x > 100:
                            break_ = True
                        if not break_:
                            log.append(x)
                return log
        """))


def test_reset_points_at_the_loop_line():
    node, ctx = conversion.parse(skip_negatives)
    node = continue_statements.transform(node, ctx)
    reset = node.body[1].body[0]
    assert unparser.unparse(reset) == "continue_ = False"
    assert anno.getanno(reset, anno.Basic.ORIGIN).source_code_line.strip() == "for x in xs:"


# Behaviour ---------------------------------------------------------------------------------------

def test_behaves_like_python():
    assert_same(skip_negatives, [([],), ([1, -2, 3],), ([-1, -1],)])
    assert_same(while_with_continues, [(0,), (1,), (7,)])
    assert_same(nested, [(0,), (1,), (4,)])
    assert_same(no_continue, [([],), ([1, 2],)])


def test_continue_in_try_behaves_like_python():
    converted = convert_with(continue_in_try, continue_statements).function
    for xs in ([], [1, 2], [2, 0, 4], [0]):
        assert converted(xs, []) == continue_in_try(xs, []), xs


def pop_until_big(xs):
    log = []
    while xs:
        x = xs.pop(0)
        if x < 0:
            continue
        if x > 100:
            break
        log.append(x)
    else:
        log.append("exhausted")
    return log, xs


def test_break_and_continue_together_behave_like_python():
    converted = convert_with(pop_until_big, break_statements, continue_statements).function
    for xs in ([], [1, -1, 2], [-5, 3, 200, 4, -1], [300]):
        assert converted(list(xs)) == pop_until_big(list(xs)), xs


def continue_in_body_break_in_finally(xs):
    out = []
    for x in xs:
        try:
            if x == 2:
                continue
            out.append(x)
        finally:
            out.append(-1)
            if x == 3:
                break  # noqa: B012 - the subject
    return out


def return_in_body_continue_in_finally(xs):
    for x in xs:
        try:
            return x
        finally:
            if x == 1:
                continue  # noqa: B012 - the subject: it discards the return
    return None


def break_in_body_continue_in_finally(xs):
    for x in xs:
        try:
            if x == 1:
                break
        finally:
            if x == 1:
                continue  # noqa: B012 - the subject: it discards the break
    else:
        return "else"
    return "broke"


def test_a_finally_split_by_an_earlier_lowering_runs_after_a_later_jump():
    # Break lowering turns a finally that breaks into an else clause (and an except clause); the
    # continue lowering then took that else for the user's and skipped it after a continue: the
    # finally's out.append(-1) was missing for x == 2.
    assert_same(continue_in_body_break_in_finally, [([1, 2, 3],), ([3, 1, 2],), ([2, 2],), ([],)],
                *conversion.converters())


@pytest.mark.parametrize("fn, pending", [(return_in_body_continue_in_finally, "return"),
                                         (break_in_body_continue_in_finally, "break")])
def test_a_jump_in_finally_that_discards_a_pending_one_is_refused(fn, pending):
    # (both flags stayed set and the pending jump won: [1, 2] returned 1, Python 2; the second
    # returned 'broke', Python 'else')
    assert fn([1, 2]) == (2 if pending == "return" else "else")
    with pytest.raises(errors.ConversionError,
                       match=rf"test_continue_statements\.py:\d+: this 'continue' in a finally "
                             rf"clause discards the '{pending}'"):
        convert_with(fn, *conversion.converters())
