"""Constant folding: pure ops of constants become constants (by their NumPy reference)."""

import numpy as np
from autostage.runtime import interpreter, ir, op_registry
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.passes import constant_folding
from autostage.runtime.types import TensorType
from test_passes_support import assert_same, optimized, staged

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
