"""Effects of ops and calls (runtime/effects.py): a call has its callee's effects, so DCE removes
and CSE merges calls of pure helpers, while a helper that prints is kept; values and printed
text stay Python's on every target."""

import numpy as np
import pytest
from autostage.runtime import effects, ir, op_registry
from autostage.runtime.types import TensorType
from test_passes_support import optimized, staged

import autostage

X = np.arange(4, dtype=np.float64)
TARGETS = ("interpreter", "cpu")


def pure_helper(x):
    return np.sin(x) * 2.0


def loud_helper(x):
    print("helper got", x)
    return x + 1.0


def unused_pure_call(x):
    pure_helper(x)
    return x - 1.0


def unused_loud_call(x):
    loud_helper(x)
    return x - 1.0


def repeated_pure_call(x):
    return pure_helper(x) + pure_helper(x)


def callees(module) -> list[str]:
    return [op.attrs["callee"] for op in module.main.body.walk() if op.name == "call"]


def test_an_unused_pure_call_is_removed():
    module = staged(unused_pure_call, X)
    assert len(callees(module)) == 1
    after = optimized(module, ["dce"], (X,), (-X,))  # no inlining: the call itself goes
    assert " call @" not in after and callees(module) == []


def test_an_unused_call_that_prints_is_kept():
    module = staged(unused_loud_call, X)
    optimized(module, ["cse", "dce"], (X,), (-X,))  # also checks the printed text is the same
    assert len(callees(module)) == 1


def test_equal_pure_calls_are_merged():
    module = staged(repeated_pure_call, X)
    assert len(callees(module)) == 2
    optimized(module, ["cse", "dce"], (X,))
    assert len(callees(module)) == 1


def test_call_effects_come_from_the_callee():
    module = staged(unused_loud_call, X)
    (call,) = [op for op in module.main.body.ops if op.name == "call"]
    assert effects.of_op(call, module) == op_registry.Effects(io=True)
    assert effects.of_op(call) == op_registry.UNKNOWN  # without the module: anything


def test_a_recursive_callee_may_not_terminate():
    # f(x) = f(x), built by hand: removing an unused call of it would end a hang.
    vector = TensorType("f64", (None,))
    body = ir.Region([vector])
    call = body.append(ir.Op("call", body.args, (vector,),
                             {"callee": "f", "result_types": (vector,)}))
    body.results = call.results
    module = ir.Module("f")
    module.add(ir.Function("f", body))
    assert effects.of_op(call, module) == op_registry.Effects(may_not_terminate=True)


def _doubling_chain(depth: int) -> ir.Module:
    """f0 prints; f<k> calls f<k-1> twice (a recursion unrolled on a Python int)."""
    vector = TensorType("f64", (None,))
    module = ir.Module(f"f{depth}")
    for level in range(depth + 1):
        body = ir.Region([vector])
        if level == 0:
            body.append(ir.Op("print", body.args, (), {"parts": (0,), "stream": "stdout",
                                                       "flush": False}))
        for _ in range(2 if level else 0):
            body.append(ir.Op("call", body.args, (vector,),
                              {"callee": f"f{level - 1}", "result_types": (vector,)}))
        body.results = body.args
        module.add(ir.Function(f"f{level}", body))
    return module


def test_a_callee_reached_many_times_is_read_once(monkeypatch):
    """Each body once per question: 2**depth readings took a minute for a recursion of depth
    18 unrolled on a Python int (its compile)."""
    module, read = _doubling_chain(40), []
    real = effects.of_region
    monkeypatch.setattr(effects, "of_region", lambda region, m=None: read.append(region) or
                        real(region, m))
    call = next(op for op in module.functions["f40"].body.ops if op.name == "call")
    assert effects.of_op(call, module) == op_registry.Effects(io=True)
    assert not effects.may_fail(call, module)  # (the same memo: 2**40 bodies would hang)
    assert len(read) <= 41


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [unused_pure_call, unused_loud_call, repeated_pure_call])
def test_values_and_prints_are_pythons(fn, target, capsys):
    expected = fn(X)
    python_out = capsys.readouterr().out
    got = autostage.convert(fn, target=target)(X)
    np.testing.assert_array_equal(got, expected)
    assert capsys.readouterr().out == python_out


def indexes_in_branch(x, i):
    if x[0] > 0:
        y = x[i] * 2.0  # a staged index: IndexError
    else:
        y = np.sum(x)
    return y


def test_what_an_op_may_raise_is_one_rule_for_dce_and_try_staging():
    from autostage.runtime.staging.try_regions import may_raise

    module = staged(indexes_in_branch, X, np.int64(1))
    ops = list(module.main.body.walk())
    (cond,) = [op for op in ops if op.name == "cond"]
    assert effects.raises(cond) == () == may_raise(cond)  # its own rule: none...
    assert effects.may_fail(cond, module)  # ...but an op of its regions may
    for op in ops:
        assert may_raise(op) == effects.raises(op)
        if not op.regions:
            assert effects.may_fail(op, module) == bool(effects.raises(op))
    assert {op.name: effects.raises(op) for op in ops if op.name in ("getitem", "sum")} == {
        "getitem": (IndexError,), "sum": ()}


def counts_weighted(x, i):
    return np.bincount(i * np.ones(4, np.int64), weights=x)


def repeated(x, i):
    return np.repeat(x, i * np.ones(4, np.int64))


def drawn(x, scale):
    return np.random.normal(0.0, scale)


def quantile_of(x, q):
    return np.quantile(x[x > 10.0], q)


def spectral_norm(x, i):
    return np.linalg.norm(np.outer(x, x), 2)


def float_power_of_int(x, i):
    return x ** i


def int_power(x, i):
    return i ** i


V = np.arange(4.0)


@pytest.mark.parametrize("fn, args, name, raised", [
    (counts_weighted, (V, np.int64(-1)), "bincount", (ValueError,)),  # a negative x
    (repeated, (V, np.int64(-1)), "repeat", (ValueError,)),  # a negative count
    (drawn, (V, np.float64(-1.0)), "random_draw", (ValueError,)),  # a negative scale
    (quantile_of, (V, np.float64(0.5)), "quantile", (IndexError,)),  # an empty x
    (spectral_norm, (V * np.nan, np.int64(0)), "norm", (np.linalg.LinAlgError,)),  # NaNs: no SVD
    (float_power_of_int, (V, np.int64(-1)), "power", ()),
    (int_power, (V, np.int64(-1)), "power", (ValueError,)),  # an int to a negative int power
])
def test_what_ops_may_raise_whatever_their_operand_sizes(fn, args, name, raised):
    # (the first: a power of a run-time exponent carries pow's gradient in a region too)
    op = [op for op in staged(fn, *args).main.body.walk() if op.name == name][0]
    assert effects.raises(op) == raised
    if raised:  # as Python does with these arguments
        with pytest.raises(raised):
            fn(*args)
