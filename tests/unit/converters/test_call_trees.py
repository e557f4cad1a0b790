"""Tests for autostage.converters.call_trees: generated source, and behaviour equal to Python's."""

import functools
import math
import os.path
import random
import types

import numpy as np
import pytest
from converter_testing import convert_with, dedent

import autostage
from autostage import ag, config, conversion
from autostage.converters import call_trees
from autostage.operators import BUILTINS
from autostage.pyct import unparser

POLICY = call_trees.CallPolicy(overloads=BUILTINS, as_is_modules=config.do_not_convert_modules)


def convert(fn, policy=POLICY):
    """call_trees alone, with ``policy`` (None: the converter's default) in the context."""
    return convert_with(fn, call_trees, user=types.SimpleNamespace(call_policy=policy))


@pytest.fixture
def routed(monkeypatch):
    """Records the callees that reach ``ag__.converted``, which here returns them as they are."""
    callees = []

    def converted(f, /):
        callees.append(f)
        return f

    monkeypatch.setattr(ag, "converted", converted, raising=False)
    return callees


def helper(x, *rest, scale=1, **kw):
    return (x * scale, rest, sorted(kw.items()))


def mixed(x, rest, kw, obj):
    print(x, end="")
    n = len(rest) + abs(-x)
    y = np.linalg.norm(np.ones(n)) + math.sqrt(4) + len(os.path.join("a", "b"))
    z = helper(x, *rest, scale=2, **kw)
    w = obj.get("k", n)
    return n, y, z, w, list(rest), np.float32(x), unknown_name(x) if x < 0 else None  # noqa: F821


def test_calls_are_routed_or_left_as_they_are():
    assert convert(mixed).source == dedent("""
        def mixed(x, rest, kw, obj):
            ag__.print_(x, end='')
            n = ag__.len_(rest) + ag__.abs_(-x)
            y = np.linalg.norm(ag__.np_ones(n)) + ag__.math_sqrt(4) + ag__.len_(os.path.join('a', 'b'))
            z = ag__.converted(helper)(x, *rest, scale=2, **kw)
            w = ag__.converted(obj.get)('k', n)
            return (n, y, z, w, ag__.list_(rest), ag__.np_float32(x), ag__.converted(unknown_name)(x) if x < 0 else None)
    """)  # noqa: E501


@pytest.mark.parametrize("x", [1, 3])
def test_routed_calls_behave_like_python(x, routed, capsys):
    args = (x, (4, 5), {"b": 1}, {"k": 9})
    expected = mixed(*args)
    expected_out = capsys.readouterr().out
    assert convert(mixed).function(*args) == expected
    assert capsys.readouterr().out == expected_out == str(x)
    assert [getattr(f, "__name__", None) for f in routed] == ["helper", "get"]


def test_unknown_names_fail_as_in_python(routed):
    with pytest.raises(NameError, match="unknown_name"):
        convert(mixed).function(-1, (), {}, {})


def shadows(x, len):
    def print(*args):
        return args

    return len(x), print(x), [range(v) for range in (list,) for v in [x]]


def test_locally_bound_names_are_not_resolved(routed):
    assert convert(shadows).source == dedent("""
        def shadows(x, len):

            def print(*args):
                return args
            return (ag__.converted(len)(x), ag__.converted(print)(x), [ag__.converted(range)(v) for range in (list,) for v in [x]])
    """)  # noqa: E501
    assert convert(shadows).function("ab", str.upper) == shadows("ab", str.upper)
    assert routed[0] is str.upper


def trace(log, name, value):
    log.append(name)
    return value


def ordered(log):
    def fn(*args, **kwargs):
        log.append("call")
        return args, kwargs

    return trace(log, "callee", fn)(trace(log, "a", 1), *trace(log, "b", [2]),
                                    k=trace(log, "c", 3), **trace(log, "d", {"e": 4}))


def test_evaluation_order_is_pythons(routed):
    expected_log, got_log = [], []
    assert convert(ordered).function(got_log) == ordered(expected_log)
    assert got_log == expected_log == ["callee", "a", "b", "c", "d", "call"]
    assert ("ag__.converted(ag__.converted(trace)(log, 'callee', fn))"
            "(ag__.converted(trace)(log, 'a', 1)") in convert(ordered).source


def deco(f):
    f.decorated = True
    return f


def make_deco(tag):
    def decorate(f):
        f.tag = tag
        return f

    return decorate


def nested(xs):
    @deco
    @make_deco(helper(2))
    def inner(v=helper(1)):  # noqa: B008
        return helper(v)

    square = lambda v: helper(v, scale=v)  # noqa: E731
    gen = (helper(v) for v in xs)
    return inner.tag, inner(), [square(v) for v in xs], {helper(v)[0]: v for v in xs}, list(gen)


def test_nested_functions_lambdas_and_comprehensions(routed):
    assert convert(nested).source == dedent("""
        def nested(xs):

            @deco
            @ag__.converted(make_deco)(ag__.converted(helper)(2))
            def inner(v=ag__.converted(helper)(1)):
                return ag__.converted(helper)(v)
            square = lambda v: ag__.converted(helper)(v, scale=v)
            gen = (ag__.converted(helper)(v) for v in xs)
            return (inner.tag, ag__.converted(inner)(), [ag__.converted(square)(v) for v in xs], {ag__.converted(helper)(v)[0]: v for v in xs}, ag__.list_(gen))
    """)  # noqa: E501
    assert convert(nested).function([2, 3]) == nested([2, 3])


class Base:
    def describe(self, x):
        return ("base", x)


class Child(Base):
    def describe(self, x):
        return super().describe(len(vars(self)) + x), globals()["Base"].__name__


def test_super_and_frame_builtins_stay_as_they_are(routed):
    # (locals(), and vars() without an argument, make a function unconvertible: test_api)
    assert convert(Child.describe).source == dedent("""
        def describe(self, x):
            return (ag__.converted(super().describe)(ag__.len_(vars(self)) + x), globals()['Base'].__name__)
    """)  # noqa: E501
    converted = types.MethodType(convert(Child.describe).function, Child())
    assert converted(2) == Child().describe(2) == (("base", 2), "Base")


def partial_and_methods(x):
    return scaled(x), bound(x), str.upper(x)


scaled = functools.partial(helper, scale=3)
bound = "{}!".format


def test_partials_and_bound_methods(routed):
    # A partial may wrap user code: converted_call decides; methods of builtins run as they are.
    assert convert(partial_and_methods).source == dedent("""
        def partial_and_methods(x):
            return (ag__.converted(scaled)(x), bound(x), str.upper(x))
    """)
    assert convert(partial_and_methods).function("a") == partial_and_methods("a")


def test_without_a_policy_builtins_go_through_ag_converted(routed):
    assert convert(mixed, policy=None).source.splitlines()[1:3] == [
        "    ag__.converted(print)(x, end='')",
        "    n = ag__.converted(len)(rest) + ag__.converted(abs)(-x)",
    ]
    assert "np.linalg.norm(np.ones(n)) + math.sqrt(4)" in convert(mixed, policy=None).source
    assert convert(mixed, policy=None).function(2, (), {}, {}) == mixed(2, (), {}, {})


class _LoudHash:
    """A callable object whose __hash__ and __eq__ record that they ran."""

    calls: list[str] = []

    def __hash__(self):
        self.calls.append("hash")
        return 0

    def __eq__(self, other):
        self.calls.append("eq")
        return False

    def __call__(self, x):
        return x + 1


loud = _LoudHash()


def calls_a_callable_object(x):
    return loud(x) + helper(x)[0]


def test_conversion_runs_no_user_hash_or_eq(routed):
    # Converting used to look the callee up in the builtin tables (`value in frozenset`,
    # `dict.get`), which runs a user object's __hash__/__eq__ at conversion time: effects Python
    # never has, and a deadlock when that user code needs conversion itself.
    _LoudHash.calls.clear()
    converted = convert(calls_a_callable_object)
    assert _LoudHash.calls == []
    assert "ag__.converted(loud)(x)" in converted.source
    assert converted.function(1) == calls_a_callable_object(1) == 3


def test_policy_mirrors_converted_call():
    policy = POLICY
    assert policy.overload(len) == "len_" and policy.overload(helper) is None
    assert policy.overload([]) is None  # unhashable values are never overloaded
    for as_is in (list, np.sum, np.exp, np.float32, math.sqrt, os.path.join, Child().__init__):
        assert policy.runs_as_is(as_is), as_is
    for routed_value in (helper, Child().describe, scaled, Child, math, lambda: 0):
        assert not policy.runs_as_is(routed_value), routed_value
    # Python's random module: refused while tracing, so its calls go through ag__.converted.
    for drawn in (random.random, random.gauss, random.Random(0).uniform,
                  random.SystemRandom().random):
        assert not policy.runs_as_is(drawn), drawn
    assert not call_trees.CallPolicy().runs_as_is(list)  # overloads unknown


def after_lists(x, v):
    x.append(helper(v))
    return x


def test_generated_operator_calls_are_kept_and_their_arguments_visited(routed):
    from autostage.converters import lists

    node, ctx = conversion.parse(after_lists)
    ctx.user = types.SimpleNamespace(call_policy=POLICY)
    node = conversion.transform(node, ctx, (lists, call_trees))
    assert unparser.unparse(node) == dedent("""
        def after_lists(x, v):
            x = ag__.list_append(x, ag__.converted(helper)(v))
            return x
    """)


def real_function(f_real):
    def f(x):
        return f_real(float(x))

    return f


def late_binding():
    def g(x):
        return len(x)  # `len` is a cell of late_binding's, empty when g is first converted

    len = math.floor  # noqa: A001
    first = autostage.to_graph(g)(2.5)
    len = math.ceil  # noqa: A001
    return first, autostage.to_graph(g)(2.5)


def test_free_variables_are_not_resolved_at_conversion_time():
    # Found by mpmath's fp context (libfp): `ceil = _mathfun_real(math.ceil, ...)` converted
    # returned floor's values. Closures made from one code share its converted code (rebound to
    # each one's cells), so a free variable's value at the first conversion (math.floor) must
    # not become an operator (ag__.math_floor) in the code the others run.
    floor, ceil = real_function(math.floor), real_function(math.ceil)
    assert autostage.to_graph(floor)(2.5) == 2
    assert autostage.to_graph(ceil)(2.5) == 3
    assert "ag__.converted(f_real)(ag__.float_(x))" in autostage.to_code(ceil)
    # A cell is no constant either, nor is an empty one the global or builtin of its name.
    assert late_binding() == (2, 3)


def test_the_context_names_the_free_variables():
    _, ctx = conversion.parse(real_function(math.floor))
    assert ctx.info.free_names == {"f_real"}
    assert conversion.parse(helper)[1].info.free_names == frozenset()


def financial(rate, nper, pmt, pv):  # (numpy_financial.fv's first line)
    rate, nper, pmt, pv = map(np.asarray, [rate, nper, pmt, pv])
    scalars = list(filter(lambda v: v.ndim == 0, [rate, nper]))
    return pv * (1 + rate) ** nper + pmt * nper, len(scalars), list(map(float, [rate]))


def test_the_function_given_to_map_or_filter_is_called_as_converted_code_calls_it():
    assert convert(financial).source == dedent("""
        def financial(rate, nper, pmt, pv):
            rate, nper, pmt, pv = ag__.map_(ag__.converted(np.asarray), [rate, nper, pmt, pv])
            scalars = ag__.list_(ag__.filter_(lambda v: v.ndim == 0, [rate, nper]))
            return (pv * (1 + rate) ** nper + pmt * nper, ag__.len_(scalars), ag__.list_(ag__.map_(ag__.converted(float), [rate])))
    """)  # noqa: E501
    args = (np.float64(0.05), np.float64(10.0), np.float64(-100.0), np.float64(-100.0))
    for target in ("interpreter", "cpu"):  # np.asarray of a staged value is staged
        assert autostage.convert(financial, target=target)(*args) == financial(*args)
