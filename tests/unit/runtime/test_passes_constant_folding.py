"""Constant folding: pure ops of constants become constants (by their NumPy reference)."""

import numpy as np
import pytest
from autostage.runtime import interpreter, ir, op_registry
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.passes import constant_folding
from autostage.runtime.types import TensorType
from test_passes_support import assert_same, optimized, staged

import autostage

X = np.arange(4, dtype=np.int32)


def constants(x):
    a = np.int32(3) * np.int32(4) + np.int32(1)
    return x + a


def test_folds_a_chain_in_one_sweep():
    module = staged(constants, X)
    assert optimized(module, ["constant_folding", "dce"], (X,)) == """\
func @constants(%0:i32[?]) -> (i32[?]):
  %1:i32[] = constant 13
  %2:i32[?] = add %0 %1
  return %2"""


def _binary(name, a, b):
    """A module returning ``name(a, b)`` of two constants (hand-built: the front end would compute
    constant expressions in Python before staging)."""
    body = ir.Region()
    ops = [body.append(ir.Op("constant", (), (TensorType(v.dtype, v.shape),),
                             {"value": as_constant_array(v)})) for v in (a, b)]
    types = op_registry.result_types(name, [o.results[0].type for o in ops], {})
    op = body.append(ir.Op(name, [o.results[0] for o in ops], types))
    body.results = op.results
    module = ir.Module("f")
    module.add(ir.Function("f", body))
    return module


def test_does_not_fold_what_warns():
    module = _binary("floor_divide", np.int32(1), np.int32(0))
    assert not constant_folding.run(module)


def test_does_not_fold_large_results():
    module = _binary("multiply", np.arange(100, dtype=np.int32), np.int32(2))
    assert not constant_folding.run(module)


def test_folds_small_arrays_exactly():
    module = _binary("true_divide", np.arange(4, dtype=np.float32), np.float32(3))
    expected = interpreter.run(module, [])
    assert optimized(module, ["constant_folding", "dce"], ()) == """\
func @f() -> (f32[4]):
  %0:f32[4] = constant [0.0, 0.33333334, 0.6666667, 1.0]
  return %0"""
    assert_same(expected, interpreter.run(module, []))


def running_sum(x):
    total = 0
    for i in range(x.shape[0]):  # a staged range from 0: its item is 0 + index
        total += int(x[i]) * 1
    return total


def test_a_constant_that_decides_an_overflow_test_removes_it():
    x = np.arange(4, dtype=np.int64)
    module = staged(running_sum, x)
    before = run_staged(module, x)
    folded = optimized(module, ["constant_folding", "dce"], (x,))
    # "0 + index" is the index, "item * 1" the item, and neither can overflow (5 tests before):
    # what is left are the tests of the total's addition and of the index's step
    assert "add %" in folded and folded.count("int_overflows") == 2, folded
    assert folded.count("raise_if") == 2 and "multiply" not in folded
    assert_same(before, run_staged(module, x))
    with_large = np.array([2**62, 2**62], dtype=np.int64)  # the total's test still raises
    with pytest.raises(OverflowError, match="does not fit in int64"):
        interpreter.run(module, [with_large])


def test_integer_identities_keep_the_result_type():
    module = _binary("add", np.int32(0), np.int64(5))  # an int64 result: no int32 operand
    assert constant_folding.run(module)  # folded as constants, not replaced by an operand
    assert optimized(module, ["constant_folding", "dce"], ()) == """\
func @f() -> (i64[]):
  %0:i64[] = constant 5
  return %0"""


def run_staged(module, x):
    return interpreter.run(module, [x])



def zipped(xs, ys):
    """``zip(..., strict=True)`` of two staged arrays: its length tests after the loop are
    ``done & False``-shaped when one side is known to end with the loop."""
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        total = total + x * y
    return total


def test_a_decided_and_folds_and_its_cond_goes():
    """With both sizes known (3), each test is ``done & False``: False, and the ``cond`` that
    raises goes; with sizes unknown the tests stay and raise as Python's ``zip`` does."""
    xs = np.arange(3.0)
    f = autostage.convert(zipped)
    assert "zip() argument 2 is" not in f.backend_source(xs, xs)
    assert f(xs, xs) == zipped(xs, xs)
    ys = np.arange(20.0)  # sizes unknown to the trace
    assert "zip() argument 2 is" in f.backend_source(ys, ys)
    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1"):
        f(ys, ys[:19])
