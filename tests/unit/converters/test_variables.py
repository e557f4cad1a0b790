"""variables: checked reads of possibly unbound locals, and `del` inside control flow."""

import pytest
from converter_testing import convert_with, dedent

import autostage
from autostage.converters import control_flow, variables


def maybe_unbound(c):
    if c:
        y = 2
    print(y)
    return y * 2


def test_only_possibly_unbound_reads_are_checked():
    converted = convert_with(maybe_unbound, variables)
    assert converted.source == dedent('''
        def maybe_unbound(c):
            if c:
                y = 2
            print(ag__.ld(y))
            return ag__.ld(y) * 2
    ''')
    assert converted.function(True) == 4


def test_checked_read_raises_pythons_error_after_control_flow():
    converted = convert_with(maybe_unbound, variables, control_flow)
    with pytest.raises(UnboundLocalError) as expected:
        maybe_unbound(False)
    with pytest.raises(UnboundLocalError) as actual:
        converted.function(False)
    assert str(actual.value) == str(expected.value)


def delete_in_branch(x, drop):
    if drop:
        del x
    return x


def test_del_inside_control_flow_becomes_undefined():
    converted = convert_with(delete_in_branch, variables)
    assert "x = ag__.Undefined('x')" in converted.source
    assert "return ag__.ld(x)" in converted.source
    full = convert_with(delete_in_branch, variables, control_flow)
    assert full.function(3, False) == 3
    with pytest.raises(UnboundLocalError, match="'x'"):
        full.function(3, True)
    with pytest.raises(UnboundLocalError, match="'x'"):
        delete_in_branch(3, True)


def delete_maybe_unbound(c):
    if c:
        y = 1
    if True:
        del y
    return c


def test_del_of_a_possibly_unbound_name_checks_it_first():
    full = convert_with(delete_maybe_unbound, variables, control_flow)
    assert "ag__.ld(y)" in full.source
    assert full.function(True) is True
    with pytest.raises(UnboundLocalError, match="'y'"):
        full.function(False)
    with pytest.raises(UnboundLocalError, match="'y'"):
        delete_maybe_unbound(False)


def top_level_del(x):
    y = x
    del x
    return y


def test_del_outside_control_flow_is_left_alone():
    converted = convert_with(top_level_del, variables)
    assert "del x" in converted.source
    assert converted.function(5) == 5


def comprehension_scope(xs):
    return [x * 2 for x in xs if x]


def test_comprehension_variables_are_not_checked():
    converted = convert_with(comprehension_scope, variables)
    assert "ag__.ld" not in converted.source
    assert converted.function([0, 1, 2]) == [2, 4]


def annotated_closure_local(n):  # (TheAlgorithms maths/narcissistic_number.py)
    if n <= 0:
        return 0
    cache: dict = {}

    def square(d):
        return cache.setdefault(d, d * d)
    total: int = 0
    for i in range(n):
        total += square(i)
    return total


def test_annotated_locals_become_plain_assignments():
    """Control flow makes them nonlocal in its generated functions, which an annotated name
    cannot be (a SyntaxError naming generated code); Python never evaluates the annotation."""
    converted = convert_with(annotated_closure_local, variables, control_flow)
    assert "cache = {}" in converted.source and "total = 0" in converted.source
    assert [converted.function(n) for n in (0, 3)] == [0, 5]
    assert [autostage.to_graph(annotated_closure_local)(n) for n in (0, 3)] == [0, 5]
