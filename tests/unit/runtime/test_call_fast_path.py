"""The fast path of a staged call (``runtime/fast_calls.py``): a repeated call with plain
arrays or NumPy scalars of the same types, dtypes and ranks skips flattening, keying and the
cache lookup. Whatever it skips must not change a result, an error or the trace cache."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.call_slot import Plan
from autostage.runtime.fast_calls import MISS
from autostage.runtime.fp_state import FloatingPointModeError

import autostage
from autostage import config

TARGETS = ["interpreter", "cpu"]


def python_fast(f):
    """``f``'s generated Python fast path: the C level's fallback where ``f`` has a Plan."""
    return f._fast.fallback if isinstance(f._fast, Plan) else f._fast


def add_one(x):
    return x + 1


def pick(x, i):
    return x[i]


@pytest.mark.parametrize("target", TARGETS)
def test_other_dtypes_ranks_and_types_take_their_own_trace(target):
    f = autostage.convert(add_one, target=target)
    a32, a64, m = np.ones(3, np.float32), np.ones((2, 2)), np.ones(2, np.int64)
    for _ in range(3):
        for x in (a32, a64, m, np.float32(2.0), a32):
            got = f(x)
            assert got.dtype == (x + 1).dtype and np.array_equal(got, x + 1)
    assert f.trace_count == 4
    assert f._fast  # the fast path is in use
    with pytest.raises(TypeError, match="matrix"):  # a subclass is still refused
        f(np.matrix([[1.0, 2.0]]))
    assert type(f(a32)) is np.ndarray


@pytest.mark.parametrize("target", TARGETS)
def test_a_dropped_trace_is_not_run(target):
    f = autostage.convert(add_one, target=target)
    with config.MAX_TRACES.override(1):
        a32, a64 = np.ones(3, np.float32), np.ones(3)
        for x in (a32, a32, a64, a32, a32):
            assert np.array_equal(f(x), x + 1) and f(x).dtype == x.dtype
        assert len(f.concrete_functions) == 1
    assert f.trace_count == 3


@pytest.mark.parametrize("target", TARGETS)
def test_run_time_errors_still_name_the_line(target):
    f = autostage.convert(pick, target=target)
    x = np.arange(3.0)
    assert f(x, np.int64(1)) == 1.0
    assert f(x, np.int64(2)) == 2.0
    with pytest.raises(IndexError, match="out of bounds") as info:
        f(x, np.int64(7))
    assert any("test_call_fast_path.py" in note for note in info.value.__notes__)


def test_floating_point_settings_are_still_checked():
    f = autostage.convert(_divide)
    x = np.ones(2)
    with np.errstate(divide="ignore"):
        f(x)
        f(x)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointModeError, match="_divide"):
        f(x)


def _divide(x):
    return x / 0.0


def constant_rows(x):
    table = np.array([[1.0, 2.0], [3.0, 4.0]])
    return table[1] + 0.0 * x[0], table


def ten(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9):
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9


def test_compiled_code_called_directly_keeps_every_check():
    f = autostage.convert(ten)
    small = [np.full(3, float(i)) for i in range(10)]  # sizes known to the trace
    for _ in range(3):
        np.testing.assert_array_equal(f(*small), np.full(3, 45.0))
    assert f._fast
    other = [np.full(4, float(i)) for i in range(10)]  # other sizes: a trace without them
    np.testing.assert_array_equal(f(*other), np.full(4, 45.0))
    strided = [np.full(8, float(i))[::2] for i in range(10)]  # not contiguous: Numba's 'A'
    np.testing.assert_array_equal(f(*strided), np.full(4, 45.0))
    assert f(*small[:9], np.full(3, 1, np.int64)).dtype == np.float64
    np.testing.assert_array_equal(f(*small[:9], np.full(3, 1, np.int64)), np.full(3, 37.0))
    with pytest.raises(ValueError, match="broadcast"):
        f(*other[:9], np.ones(5))


def scaled_sum(x, s):
    return (x * s).sum() + s


def test_zero_d_arrays_for_scalar_parameters_are_called_directly():
    f = autostage.convert(scaled_sum)
    x, s = np.arange(3.0), np.array(2.0)  # a 0-d array: staged as a scalar
    for _ in range(3):
        result = f(x, s)
        assert type(result) is np.float64 and result == 8.0
    assert isinstance(f._fast, Plan)  # the compiled entry itself, called from C
    assert "dispatcher" in python_fast(f).__code__.co_names  # (its fallback: the njit function)
    assert f.trace_count == 1
    for _ in range(3):
        assert f(x, np.float64(3.0)) == 12.0  # a NumPy scalar
        assert f(x, np.array(2, np.int64)) == 8.0  # another dtype
    assert f(x, s) == 8.0


def scaled(x, s):
    return x * s


ITEMS = [np.float32(0.1), np.float32(-0.0), np.float32(np.finfo(np.float32).smallest_subnormal),
         np.float32("nan"), np.float32("-inf"), np.float64(0.1), np.float64(-1e-310),
         np.int8(-128), np.int16(-32768), np.int32(2**31 - 1), np.int64(-2**63),
         np.uint8(255), np.uint16(65535), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
         np.bool_(True), np.bool_(False), np.complex64(1 - 2j)]


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: f"{item.dtype}({item})")
def test_a_zero_d_array_is_passed_to_the_entry_as_its_exact_item(item):
    """The C level passes a 0-d array for a scalar parameter as a Python number holding its
    item (a float32 widened to a double; NumPy's scalar where no number holds it: a
    complex): Numba's unboxing gives back the same item, bit for bit."""
    f = autostage.convert(scaled)
    x = np.ones(3, item.dtype)
    want = x * item
    for _ in range(3):
        got = f(x, np.array(item))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert isinstance(f._fast, Plan) and f.trace_count == 1


def test_results_of_constants_are_writable_copies_on_the_fast_path():
    f = autostage.convert(constant_rows)
    x = np.ones(3)
    for _ in range(3):
        row, table = f(x)
        assert row.flags.writeable and table.flags.writeable
        table[0, 0] = 99.0  # the caller's copy: the next call still sees the constant
    np.testing.assert_array_equal(f(x)[1], [[1.0, 2.0], [3.0, 4.0]])


def validate(x):
    if np.any(np.isnan(x)):
        raise ValueError("nan in input")
    return True


def init_state(x):
    s = np.zeros(3)
    s[0] = 1.0
    return s


def bump(x):
    x += 1
    return 3.5


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [validate, init_state, bump])
def test_a_result_made_at_trace_time_is_returned_on_every_call(fn, target):
    # (the fast path returned None from the third call on when no result was staged)
    f = autostage.convert(fn, target=target)
    want_x, got_x = np.ones(4), np.ones(4)
    results = []
    for _ in range(4):
        want = fn(want_x)
        got = f(got_x)
        np.testing.assert_array_equal(got, want, strict=True)
        results.append(got)
    np.testing.assert_array_equal(got_x, want_x, strict=True)
    if isinstance(want, np.ndarray):  # a new array on each call, as Python makes one
        assert len({id(r) for r in results}) == len(results)
    if fn is validate:
        with pytest.raises(ValueError, match="nan in input"):
            f(np.array([np.nan, 1.0, 1.0, 1.0]))


class Scaled:
    def __init__(self):
        self.w = np.array(np.float32(2.0))
        self.b = np.ones(3, np.float32)

    def __call__(self, x):
        return x * self.w + self.b


@pytest.mark.parametrize("target", TARGETS)
def test_weights_read_through_an_object_are_read_at_each_fast_call(target):
    model = Scaled()
    f = autostage.convert(model, target=target)
    x = np.arange(3, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)
    assert f._fast
    if target == "cpu":  # the weights are read in line and go to the njit function
        assert isinstance(f._fast, Plan)  # (read in C; its Python fallback reads them too)
        fast = python_fast(f)
        assert "dispatcher" in fast.__code__.co_names and "v0.w" in fast.source
    model.w = np.array(np.float32(-1.0))  # a new value of the same type: the same trace
    np.testing.assert_array_equal(f(x), -x + 1.0)
    model.b[:] = 5.0  # written in place
    np.testing.assert_array_equal(f(x), -x + 5.0)
    model.b = np.zeros(2, np.float32)  # another shape: the full path, a trace of its own
    with pytest.raises(ValueError, match="broadcast"):
        f(x)
    model.b = np.zeros((2, 3), np.float32)  # another rank
    np.testing.assert_array_equal(f(x), np.broadcast_to(-x, (2, 3)))
    model.w = 0.5  # a Python float: a constant of the trace
    np.testing.assert_array_equal(f(x), np.broadcast_to(x * 0.5, (2, 3)))
    for w in (np.float32(3.0), np.float32(4.0), np.float32(4.0)):  # a NumPy scalar weight
        model.w = w
        np.testing.assert_array_equal(f(x), np.broadcast_to(x * w, (2, 3)))


def test_the_strict_dispatcher_sends_other_dtypes_ranks_layouts_to_their_own_trace():
    """Called directly, the fast path leaves an array's dtype and rank to a copy of Numba's
    dispatcher that never compiles (``strict_dispatch``): each kind of argument it refuses gets
    NumPy's result and dtype, and the copy compiles nothing."""
    f = autostage.convert(ten)
    small = [np.full(3, float(i)) for i in range(10)]
    for _ in range(3):
        f(*small)
    read_only = np.full(3, 9.0)
    read_only.flags.writeable = False
    others = [np.full(3, 9.0, np.float32), np.full((3, 3), 9.0), np.array(9.0), read_only,
              np.full(6, 9.0)[::2], np.full((1, 3), 9, np.int32), np.full(3, 9, np.int64)]
    for _ in range(3):
        for last in others:
            got, want = f(*small[:9], last), ten(*small[:9], last)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(f(*small), np.full(3, 45.0))
    assert f.trace_count == 6
    assert isinstance(f._fast, Plan)  # (which takes contiguous arrays; its fallback, the rest)
    fast = python_fast(f)
    strict = fast.__globals__["dispatcher"]
    assert not strict._can_compile
    strided = [np.full(6, float(i))[::2] for i in range(10)]
    assert fast(strided) is MISS  # a layout the full path compiles for it ...
    f(*strided)
    assert fast(strided) is MISS  # ... is caught up ...
    np.testing.assert_array_equal(fast(strided), np.full(3, 45.0))  # ... and called directly


class Weighted:
    def __init__(self):
        self.w, self.b = np.array(np.float32(2.0)), np.ones(3, np.float32)

    def __call__(self, x):
        return x * self.w + self.b


def test_weights_of_other_dtypes_and_ranks_are_refused_by_the_strict_dispatcher():
    """A model's weights passed to the njit function are checked in line for their type (and
    dtype where passed as scalars); the strict dispatcher refuses the rest."""
    model = Weighted()
    f, x = autostage.convert(model), np.arange(3, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)
    assert ".w" in python_fast(f).source
    for w, b in [(np.array(2.0), np.ones(3, np.float32)),  # a 0-d weight of another dtype
                 (np.full(3, np.float32(2.0)), np.ones(3, np.float32)),  # of another rank
                 (np.array(np.float32(2.0)), np.ones(3)),  # an array weight's dtype
                 (np.array(np.float32(2.0)), np.ones((2, 3), np.float32)),  # its rank
                 (np.array(np.float32(3.0)), np.ones(6, np.float32)[::2])]:  # its layout
        model.w, model.b = w, b
        for _ in range(3):
            got, want = f(x), Weighted.__call__(model, x)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


class ScalarWeights:
    def __init__(self):
        self.w, self.b = np.array(np.float32(2.0)), np.array(np.float32(1.0))

    def __call__(self, x):
        return x * self.w + self.b


class Weight(np.ndarray):
    """A user's ndarray subclass: NumPy's results from it are Weights."""


def test_calls_of_scalars_only_run_the_compiled_entry_and_test_every_type_first():
    """A call whose every value passed is a scalar (a model's 0-d weights) runs Numba's compiled
    entry itself, which unboxes without testing types: the fast path's own tests must send
    every other kind of value (another dtype or rank, a 1-element array, a Python number, an
    object with ``[()]``) to its own trace, with Python's result, or to a clear refusal."""
    model = ScalarWeights()
    f, x = autostage.convert(model), np.float32(3.0)
    for _ in range(3):
        assert f(x) == np.float32(7.0) and type(f(x)) is np.float32
    fast = python_fast(f)
    assert "entry(" in fast.source and "dispatcher" not in fast.__code__.co_names
    swapped = np.array(np.float32(2.0)).astype(">f4")  # its [()] is a native float32
    refused = {id(swapped): "cannot stage arrays of dtype >f4",
               id(subclass := np.array(np.float32(2.0)).view(Weight)): "an ndarray subclass",
               id(table := {(): np.float32(2.0)}): "unsupported operand type(s) for *"}
    for w in [np.array(2.0),  # another dtype
              swapped, subclass, table,
              np.full(1, np.float32(2.0)),  # a 1-element array: a result of shape (1,)
              np.full((1, 1), np.float32(2.0)),
              2.0, np.float64(2.0), np.float32(5.0), np.int64(2), np.array(True)]:
        model.w = w
        for arg in (x, np.array(x), np.full(1, x)):
            if id(w) in refused:  # (the fast path may take the swapped weight: NumPy's value)
                try:
                    assert f(arg) == ScalarWeights.__call__(model, arg) and w is swapped
                except TypeError as e:
                    assert refused[id(w)] in str(e)
                continue
            want = ScalarWeights.__call__(model, arg)
            for _ in range(2):
                got = f(arg)
                assert type(got) is type(want) and np.shape(got) == np.shape(want)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                np.testing.assert_array_equal(got, want)
    model.w = np.array(np.float32(2.0))
    assert f(x) == np.float32(7.0)


def test_the_strict_dispatcher_refuses_an_ambiguous_choice_of_signatures():
    """A Fortran-ordered array fits both a writable and a read-only layout-A signature equally
    well: the strict dispatcher refuses it (the fast path's miss; the full path compiles its
    own), where Numba raised "Ambiguous overloading" from the fast path (found with random
    views of a norm's argument)."""
    import numba
    from autostage.runtime.backends.cpu import strict_dispatch

    dispatcher = numba.njit(lambda x: x.sum())
    a = np.zeros((2, 3, 4))[:, ::2]
    read_only = np.broadcast_to(np.zeros((3, 1)), (3, 4))[None]
    dispatcher(a), dispatcher(read_only)
    strict, _ = strict_dispatch.strict(dispatcher)
    with pytest.raises(strict_dispatch.Refused):
        strict(np.asfortranarray(np.zeros((2, 3, 4))))
    assert strict(a) == 0.0
