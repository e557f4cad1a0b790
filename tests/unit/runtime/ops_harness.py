"""Test helpers for the op library: trace a function by hand and run its IR with each op's NumPy
reference (a minimal evaluator, independent of the real interpreter), then compare with NumPy."""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir, op_registry, tracing
from autostage.runtime.tensor import Tensor, mark_argument
from autostage.runtime.types import TensorType


def trace(fn, param_types, names=None) -> ir.Function:
    """Traces ``fn`` on tensors of ``param_types``; the results are its (tuple of) tensors."""
    module = ir.Module("f")
    trace_ = tracing.Trace(module, "f", param_types)
    with tracing.tracing(trace_):
        params = [Tensor(v) for v in trace_.function.body.args]
        for p, name in zip(params, names or (), strict=False):
            mark_argument(p, name)
        out = fn(*params)
        outs = out if isinstance(out, tuple) else (out,)
        trace_.function.body.results = tuple(o.value for o in outs)
    trace_.finished = True
    module.add(trace_.function)
    return trace_.function


def run_region(region: ir.Region, args, env=None) -> tuple:
    env = dict(env or {})
    env.update(zip(region.args, args, strict=True))
    for op in region.ops:
        values = tuple(env[v] for v in op.operands)
        results = op_registry.lookup(op.name).evaluate(
            op, values, lambda r, a, _env=env: run_region(r, a, _env))
        env.update(zip(op.results, results, strict=True))
    return tuple(env[v] for v in region.results)


def evaluate(function: ir.Function, *args) -> tuple:
    return run_region(function.body, args)


def param_type(value, known=False) -> TensorType:
    value = np.asarray(value)
    return TensorType(value.dtype, value.shape if known else (None,) * value.ndim)


def stage(fn, *arrays, known=False):
    """Traces ``fn`` on staged versions of ``arrays`` and evaluates it: (types, values)."""
    function = trace(fn, [param_type(a, known) for a in arrays])
    with np.errstate(all="ignore"):
        values = evaluate(function, *(np.asarray(a) for a in arrays))
    return function.result_types, values


def check_type(t: TensorType, value) -> None:
    """The inferred type describes the computed value: same dtype, known dims equal."""
    value = np.asarray(value)
    assert t.dtype == value.dtype, (t, value.dtype)
    assert t.ndim == value.ndim, (t, value.shape)
    for d, n in zip(t.shape, value.shape, strict=True):
        assert d is None or d == n, (t, value.shape)


def assert_same(staged, expected) -> None:
    """Same dtype, shape and values (NaNs in the same places)."""
    staged, expected = np.asarray(staged), np.asarray(expected)
    assert staged.dtype == expected.dtype, (staged.dtype, expected.dtype)
    assert staged.shape == expected.shape, (staged.shape, expected.shape)
    np.testing.assert_array_equal(staged, expected)


def check_against_numpy(fn, *arrays, known=False):
    """Stages ``fn`` on ``arrays`` and checks type and value against ``fn`` on NumPy arrays."""
    with np.errstate(all="ignore"):
        expected = fn(*(np.asarray(a) for a in arrays))
    types, values = stage(fn, *arrays, known=known)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for t, v, e in zip(types, values, expected, strict=True):
        check_type(t, v)
        assert_same(v, e)
    return types
