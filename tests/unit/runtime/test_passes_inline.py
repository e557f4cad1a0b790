"""Inlining of small staged callees (runtime/passes/inline.py).

A small helper's call is replaced by its body (the callee is dropped when nothing calls it any
more); a large helper, and the calls beyond a caller's budget, stay calls. Effects keep their
order, values are Python's on both targets, and a run-time error inside an inlined helper still
names the helper's line.
"""

import numpy as np
import pytest
from autostage.runtime import ir
from autostage.runtime.function import optimized
from autostage.runtime.passes import inline

import autostage

TARGETS = ("interpreter", "cpu")


def optimized_module(fn, *args) -> ir.Module:
    return optimized(autostage.convert(fn, target="cpu").get_concrete_function(*args).module)


def calls(module: ir.Module) -> list[str]:
    return [op.attrs["callee"] for f in module.functions.values() for op in f.body.walk()
            if op.name == "call"]


def rhs(y):
    dy = np.empty_like(y)
    dy[0] = y[1]
    dy[1] = -y[0]
    return dy


def euler(y, h, n):
    for _ in range(n):
        y = y + h * rhs(y)
    return y


def noisy(x):
    print("in noisy", x[0])
    return x + 1.0


def effects_in_order(x):
    print("before")
    y = noisy(x)
    print("after", y[0])
    return y


def big(x):
    for _ in range(12):  # unrolled when tracing: about 80 ops
        x = x * 1.5 + 0.25
    for _ in range(12):
        x = np.sqrt(np.abs(x)) - 0.5
    return (x + 1.0) * (x - 1.0) + np.sin(x) + np.cos(x) + np.tanh(x) + np.exp(-x) + x.sum()


def calls_big(x):
    return big(x) + big(x * 2.0)


def pick(x, i):
    return x[i]


def out_of_range(x, i):
    return pick(x, i) + 1.0


def test_a_small_helper_is_inlined_and_dropped():
    module = optimized_module(euler, np.array([1.0, 0.0]), np.float64(0.1), np.int64(3))
    assert calls(module) == []
    assert list(module.functions) == [module.entry]


@pytest.mark.parametrize("target", TARGETS)
def test_inlined_values_are_pythons(target):
    args = (np.array([1.0, 0.0]), np.float64(0.1), np.int64(7))
    np.testing.assert_array_equal(autostage.convert(euler, target=target)(*args), euler(*args))


@pytest.mark.parametrize("target", TARGETS)
def test_effects_keep_their_order(target, capsys):
    x = np.array([1.0, 2.0])
    effects_in_order(x)
    expected = capsys.readouterr().out
    autostage.convert(effects_in_order, target=target)(x)
    assert capsys.readouterr().out == expected
    assert expected.splitlines()[0] == "before"


def test_a_large_helper_stays_a_call():
    module = optimized_module(calls_big, np.arange(3.0))
    assert calls(module) == ["big", "big"]
    np.testing.assert_allclose(autostage.convert(calls_big)(np.arange(3.0)),
                               calls_big(np.arange(3.0)), rtol=1e-12)


def test_the_budget_limits_inlining_per_caller(monkeypatch):
    module = autostage.convert(rhs, target="cpu").get_concrete_function(np.ones(2)).module
    size = inline._size(module.main.body)
    monkeypatch.setattr(inline, "BUDGET", size + size // 2)  # room for one copy of `rhs`

    def twice(y):
        return rhs(y) + rhs(y * 2.0)

    module = optimized_module(twice, np.array([1.0, 2.0]))
    assert calls(module) == ["rhs"]


@pytest.mark.parametrize("target", TARGETS)
def test_an_error_in_an_inlined_helper_names_its_line(target):
    f = autostage.convert(out_of_range, target=target)
    with pytest.raises(IndexError) as info:
        f(np.arange(3.0), np.int64(5))
    notes = "\n".join(getattr(info.value, "__notes__", ()))
    line = pick.__code__.co_firstlineno + 1
    assert f"test_passes_inline.py:{line}" in notes, notes


def test_a_recursive_callee_stays_a_call():
    from autostage.runtime.types import TensorType

    f64 = TensorType(np.dtype(np.float64), ())
    module = ir.Module("f")
    body = ir.Region([f64])
    call = body.append(ir.Op("call", body.args, [f64], {"callee": "f", "result_types": (f64,)}))
    body.results = call.results
    module.add(ir.Function("f", body))
    assert inline.run(module) is False
    assert calls(module) == ["f"]
