"""Fusion: element-wise chains (and a final sum/max/min) become one ``fused`` op whose NumPy
reference equals the unfused program; values used twice stay materialized (unless one op reads
them twice, or they are cheap and every reader fuses: then each computes its own); nothing
moves across a print; random element-wise chains keep their results through ``optimize``."""

import numpy as np
import pytest
from autostage.runtime import verifier
from autostage.runtime.passes import optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from test_passes_support import assert_same, optimized, run, staged, text

X = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(1, 3, 3, dtype=np.float32)


def chain(x, y):
    return np.sum(np.tanh(x * 2.0 + y) * y)


def shared(x, y):
    a = x * y
    return np.exp(a) + 1.0, a


def across_print(x, y):
    a = x * y
    print(y)
    return a + 1.0


def last_axis_max(x, y):
    return np.max(np.abs(x - y), axis=-1)


def test_fuses_chain_with_sum():
    module = staged(chain, X, Y)
    assert optimized(module, ["fusion"], (X, Y), (X[:, :1], Y)) == """\
func @chain(%0:f32[?,?], %1:f32[?]) -> (f32[]):
  %2:f32[] = constant 2.0
  %3:f32[] = fused %0 %2 %1
    body(%4:f32[?,?], %5:f32[], %6:f32[?]):
      %7:f32[?,?] = multiply %4 %5
      %8:f32[?,?] = add %7 %6
      %9:f32[?,?] = tanh %8
      %10:f32[?,?] = multiply %9 %6
      %11:f32[] = sum %10 {axis=None, dtype=None, keepdims=False}
      yield %11
  return %3"""


def test_value_used_twice_stays_materialized():
    module = staged(shared, X, Y)
    after = optimized(module, ["fusion"], (X, Y))
    assert after.count("fused") == 1 and "= multiply %0 %1" in after


def squared_deviation(x, y):
    d = x - y
    return np.sum(d * d, axis=-1)


def test_value_read_twice_by_one_op_fuses():
    module = staged(squared_deviation, X, Y)
    after = optimized(module, ["fusion"], (X, Y), (X[:, :1], Y))
    assert after.count("fused") == 1 and "= subtract %0 %1" not in after
    body = after[after.index("body("):]
    assert "subtract" in body and "multiply" in body and "sum" in body


def mean_square_and_size(x, y):
    s = (x - y) * (x - y)
    return np.mean(s), s.size, np.mean(x, axis=-1, keepdims=True), np.mean(x.astype(np.int32))


def test_float_means_fuse_and_sizes_read_the_operand():
    module = staged(mean_square_and_size, X, Y)
    after = optimized(module, ["cse", "fusion"], (X, Y), (X[:, :1], Y))
    # the squares fuse into the mean although their size is asked for: it is x - y's size
    first = after[after.index("fused"):]
    assert "multiply" in first.split("yield")[0] and "mean" in first.split("yield")[0]
    assert "= size %0" in after or "= size %2" in after
    # a mean of ints does not take in the cast before it (NumPy adds ints cast to float64 in
    # buffers of its own); a mean alone stays as it is
    assert after.count(" mean ") == 3 and after.count("= fused") == 1
    assert "= cast %0 {dtype=i32}" in after


def mask_read_twice(x, y):
    m = (x > y).astype(np.float32)
    return np.sum(m, axis=-1), m * x


def shift_read_by_a_product(x, y):
    d = x + y
    return d @ y, d * 2.0


def shift_read_across_a_print(x, y):
    d = x + y
    a = d * 2.0
    print(y)
    return a, d * 3.0


def test_cheap_value_read_by_two_loops_is_computed_in_each():
    module = staged(mask_read_twice, X, Y)
    after = optimized(module, ["fusion"], (X, Y), (X[:, :1], Y))
    top = "\n".join(line for line in after.splitlines() if line.startswith("  %"))
    assert after.count("= fused") == 2 and "greater" not in top and "cast" not in top
    assert after.count("greater") == 2 and after.count("cast") == 2  # one copy per loop


def test_cheap_value_stays_when_a_reader_does_not_fuse_or_an_effect_intervenes():
    for fn in (shift_read_by_a_product, shift_read_across_a_print):
        module = staged(fn, X, Y)
        after = optimized(module, ["fusion"], (X, Y))
        assert after.count(" add ") == 1, fn.__name__


COEFFICIENTS = [k / 7 for k in range(40)]


def clenshaw(x, y):
    """NumPy's ``_chbevl``: a recurrence unrolled from a loop over a Python list, each value
    read by the next two steps."""
    b0, b1, b2 = COEFFICIENTS[0] + 0 * x, 0.0, 0.0
    for c in COEFFICIENTS[1:]:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def test_copies_of_cheap_values_stay_linear_in_an_unrolled_recurrence():
    """Copying each cheap value per reader copied every path through the recurrence: 2**40
    ops (the pass never ended)."""
    module = staged(clenshaw, X, Y)
    before = text(module).count("\n")
    after = optimized(module, ["fusion"], (X, Y))
    assert after.count("\n") < 3 * before


def test_nothing_moves_across_a_print():
    module = staged(across_print, X, Y)
    after = optimized(module, ["fusion"], (X, Y))
    assert "fused" not in after


def test_last_axis_max():
    module = staged(last_axis_max, X, Y)
    after = optimized(module, ["fusion"], (X, Y))
    assert "fused" in after and "max" in after


def test_verifier_rejects_captures():
    module = staged(chain, X, Y)
    optimize(module, ["fusion"], verify=True)
    fused = next(op for op in module.main.body.ops if op.name == "fused")
    inner = fused.regions[0].ops[0]
    inner.operands = (module.main.body.args[0], *inner.operands[1:])
    with pytest.raises(verifier.VerificationError, match="captures"):
        verifier.verify(module)


UNARY = ["negative", "tanh", "exp", "absolute", "square", "sin"]
BINARY = ["+", "-", "*", "maximum", "minimum"]


def _apply(ops, x, y):
    """A random element-wise program: each step combines the running value with x or y."""
    v = x
    for kind, name, other in ops:
        w = y if other else x
        if kind == "u":
            v = getattr(np, name)(v)
        elif name == "+":
            v = v + w
        elif name == "-":
            v = v - w
        elif name == "*":
            v = v * w
        else:
            v = getattr(np, name)(v, w)
    return v


_STEP = st.one_of(st.tuples(st.just("u"), st.sampled_from(UNARY), st.booleans()),
                  st.tuples(st.just("b"), st.sampled_from(BINARY), st.booleans()))


@settings(max_examples=25, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=6), st.booleans())
def test_optimize_preserves_random_chains(ops, reduce):
    module = staged(_Closure(ops, reduce).call, X, Y)
    before = run(module, (X, Y))
    optimize(module, verify=True)
    after = run(module, (X, Y))
    assert_same(before[0], after[0])
    assert len(module.main.body.ops) <= 3  # one chain: a constant at most, the fused op


class _Closure:
    """Holds the random program so the staged method has a real source file."""

    def __init__(self, ops, reduce):
        self.ops, self.reduce = ops, reduce

    def call(self, x, y):
        v = _apply(self.ops, x, y)
        if self.reduce:
            return np.sum(v)
        return v
