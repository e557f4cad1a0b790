"""Dead-code elimination: unused pure ops go (also inside regions), side effects stay."""

import numpy as np
import pytest
from autostage.runtime import ir
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.passes import dce
from autostage.runtime.types import TensorType, scalar
from test_passes_support import optimized, staged, text

import autostage

X = np.arange(4, dtype=np.float32)


def unused_chain(x):
    a = np.exp(x)
    b = a * 2.0  # noqa: F841 - dead on purpose
    print(x)
    return x + 1.0


def unused_in_branch(x):
    if np.sum(x) > 0:
        t = np.tanh(x)  # noqa: F841 - dead on purpose
        y = x - 1.0
    else:
        y = x + 1.0
    return y


def test_removes_dead_chain_keeps_print():
    module = staged(unused_chain, X)
    assert optimized(module, ["dce"], (X,), (-X,)) == """\
func @unused_chain(%0:f32[?]) -> (f32[?]):
  print %0 {flush=False, parts=(0, '\\n'), stream='stdout'}
  %1:f32[] = constant 1.0
  %2:f32[?] = add %0 %1
  return %2"""


def test_removes_dead_ops_inside_regions():
    module = staged(unused_in_branch, X)
    after = optimized(module, ["dce"], (X,), (-X,))
    assert "tanh" not in after and "cond" in after


def test_keeps_prints():
    module = staged(unused_chain, X)
    names = [op.name for op in module.main.body.ops]
    assert "print" in names
    dce.run(module)
    assert [op.name for op in module.main.body.ops if op.name == "print"] == ["print"]


def test_removes_dead_constant_of_hand_built_ir():
    f32 = scalar("f32")
    body = ir.Region([TensorType("f32", (None,))])
    body.append(ir.Op("constant", (), (f32,), {"value": as_constant_array(np.float32(1))}))
    body.results = body.args
    module = ir.Module("f")
    module.add(ir.Function("f", body))
    assert dce.run(module)
    assert text(module) == "func @f(%0:f32[?]) -> (f32[?]):\n  return %0"
    assert not dce.run(module)


def unused_but_may_fail(x, y, i):
    a = x + y  # noqa: F841 - sizes that may not broadcast: ValueError in Python
    b = x[i]  # noqa: F841 - a staged index: IndexError in Python
    c = x[0]  # noqa: F841 - a size unknown when tracing: IndexError when x is empty
    d = x[1:] * 2.0  # noqa: F841 - cannot fail: removed
    return x - 1.0


def test_unused_ops_that_may_raise_stay_and_raise_as_python_does():
    kept = [op.name for op in dce_only(unused_but_may_fail, X, X, np.int64(1))]
    assert kept.count("getitem") == 2 and "add" in kept and "multiply" not in kept
    for target in ("interpreter", "cpu"):
        staged_fn = autostage.convert(unused_but_may_fail, target=target)
        for args in ((X, X[:2], 1), (X, X, 9), (X[:0], X[:0], 0)):
            with pytest.raises((ValueError, IndexError)) as expected:
                unused_but_may_fail(*args)
            with pytest.raises(type(expected.value)):
                staged_fn(*args)
        np.testing.assert_array_equal(staged_fn(X, X, 1), X - 1.0)


def unused_that_cannot_raise_but_one(x, n):
    a = np.cumsum(np.sort(x)) + np.mean(x)  # noqa: F841 - cannot fail (OpDef.raises): removed
    b = np.zeros((2, 3)).T  # noqa: F841 - static sizes: removed
    c = np.zeros(n)  # noqa: F841 - a staged size: ValueError when negative, kept
    return x - 1.0


def test_unused_ops_that_cannot_raise_go():
    kept = [op.name for op in dce_only(unused_that_cannot_raise_but_one, X, np.int64(2))]
    assert kept.count("full") == 1 and not {"cumsum", "sort", "mean", "transpose"} & set(kept)
    with pytest.raises(ValueError, match="negative dimensions"):
        autostage.convert(unused_that_cannot_raise_but_one, target="cpu")(X, np.int64(-1))


def dce_only(fn, *args) -> list[ir.Op]:
    module = staged(fn, *args)
    dce.run(module)
    return list(module.main.body.walk())


def _fifth(x):
    return x[5] * 2.0


def unused_call_that_may_fail(x):
    _fifth(x)
    return x + 1.0


def test_an_unused_call_whose_callee_may_raise_stays():
    assert [op.name for op in dce_only(unused_call_that_may_fail, X)].count("call") == 1
    for target in ("interpreter", "cpu"):
        with pytest.raises(IndexError, match="index 5 is out of bounds"):
            autostage.convert(unused_call_that_may_fail, target=target)(X)
