"""StagedFunction: trace cache keys, input signatures, retrace warnings, threads, environment
arrays read at call time, staged calls, results and tracer leaks."""

import threading
import time
import warnings

import numpy as np
import pytest
from autostage.runtime import tracing
from autostage.runtime.function import RetracingWarning, StagedFunction
from autostage.runtime.tensor_spec import TensorSpec

import autostage


def stage(fn, **options):
    return autostage.convert(fn, target="interpreter", **options)


def add_one(x):
    return x + 1


def scale(x, factor, offset=0.0):
    return x * factor + offset


def identity(x):
    return x


def test_cache_key_is_dtype_and_rank_not_sizes():
    f = stage(add_one)
    assert f(np.zeros(30)).tolist() == [1.0] * 30
    assert f(np.zeros(50)).tolist() == [1.0] * 50
    assert f.trace_count == 1
    f(np.zeros(30, np.float32))
    assert f.trace_count == 2
    f(np.zeros((20, 20)))
    assert f.trace_count == 3
    f(np.float64(1.0))  # a NumPy scalar is a 0-d staged value
    assert f.trace_count == 4
    assert [str(c.function.param_types[0]) for c in f.concrete_functions] == [
        "f64[?]", "f32[?]", "f64[?,?]", "f64[]"]


def test_small_sizes_are_keyed_until_they_vary():
    """Sizes up to config.STATIC_SIZES are part of the key (test_static_sizes.py): a second
    set of small sizes makes one trace without sizes, which then serves every call."""
    f = stage(add_one)
    assert f(np.zeros(3)).tolist() == [1.0] * 3
    assert f(np.zeros(5)).tolist() == [1.0] * 5
    assert f(np.zeros(7)).tolist() == [1.0] * 7
    assert f(np.zeros(3)).tolist() == [1.0] * 3
    assert [str(c.function.param_types[0]) for c in f.concrete_functions] == [
        "f64[3]", "f64[?]"]


def test_python_constants_are_keyed_by_type_and_value():
    f = stage(scale)
    x = np.arange(3.0)
    assert f(x, 2).tolist() == [0.0, 2.0, 4.0]
    assert f(x, 2).tolist() == [0.0, 2.0, 4.0]
    assert f.trace_count == 1
    assert f(x, 3).tolist() == [0.0, 3.0, 6.0]
    assert f.trace_count == 2
    f(x, 3.0)  # 3 == 3.0, but a float constant is a different trace
    f(x, True)
    assert f.trace_count == 4
    assert f(x, 2, offset=1.0).tolist() == [1.0, 3.0, 5.0]  # defaults bound like Python
    assert f(x, factor=2, offset=1.0).tolist() == [1.0, 3.0, 5.0]
    assert f.trace_count == 5


def pick(items, key):
    return items[key]


def test_unhashable_constants_are_keyed_by_identity():
    f = stage(pick)
    table = {0: np.zeros(1)}  # a dict is a structure: its array leaf is staged
    assert f(table, 0).tolist() == [0.0]

    class Box:
        __hash__ = None

        def __getitem__(self, k):
            return k * 10

    box = Box()
    assert f(box, 2) == 20
    assert f(box, 2) == 20
    before = f.trace_count
    f(Box(), 2)
    assert f.trace_count == before + 1


def show(value):
    return repr(value)


def key_reprs(mapping):
    return [repr(k) for k in mapping]


def count(items):
    return len(items)


@pytest.mark.filterwarnings("ignore::autostage.runtime.function.RetracingWarning")
def test_constants_equal_by_value_but_not_alike_have_their_own_traces():
    """``==`` is coarser than what a trace may read: each of these got the first one's trace."""
    from decimal import Decimal

    f = stage(show)
    for value in (Decimal("1.0"), Decimal("1.00"), frozenset({1}), frozenset({True}),
                  (0.0, 1), (-0.0, 1), (1, 2), (True, 2), 0j, complex(-0.0, 0.0)):
        assert f(value) == repr(value)
    keys = stage(key_reprs)
    for mapping in ({1: 0}, {True: 0}, {1.0: 0}, {0.0: 0}, {-0.0: 0}):
        assert keys(mapping) == key_reprs(mapping)


@pytest.mark.filterwarnings("ignore::autostage.runtime.function.RetracingWarning")
def test_a_mutable_container_constant_is_keyed_by_its_contents_too():
    """A set, deque, bytearray or dict subclass is a leaf (not a structure): a trace that read
    it was reused after it changed (a stale length), as was one read through an attribute."""
    import collections
    from types import SimpleNamespace

    f, holder = stage(count), SimpleNamespace(items={1})
    for items, change in [({1, 2}, lambda c: c.add(3)),
                          (collections.deque([1]), lambda c: c.append(2)),
                          (bytearray(b"ab"), lambda c: c.append(99)),
                          (collections.Counter(a=1), lambda c: c.update(b=1)),
                          (holder.items, lambda c: c.add(5))]:
        before = f(items)
        change(items)
        assert (before, f(items)) == (count(items) - 1, count(items))
    through = stage(lambda o: len(o.items))
    assert through(holder) == 2
    holder.items.add(6)
    assert through(holder) == 3


def structured(x, y):
    return {"sum": x + y, "pair": (x, 5), "tag": "ok", "list": [y]}


def test_results_keep_their_structure_and_constants():
    f = stage(structured)
    result = f(np.ones(2), np.float32(2))
    assert set(result) == {"sum", "pair", "tag", "list"}
    assert result["sum"].tolist() == [3.0, 3.0]
    assert result["pair"][1] == 5 and type(result["pair"][1]) is int
    assert result["tag"] == "ok"
    assert isinstance(result["list"], list) and result["list"][0] == np.float32(2)


def test_zero_d_results_are_numpy_scalars_of_the_right_dtype():
    f = stage(add_one)
    result = f(np.float32(1.5))
    assert type(result) is np.float32 and result == 2.5
    result = f(np.array(3, np.int64))
    assert type(result) is np.int64 and result == 4


def make_zeros(n):
    return np.zeros(n)


def test_arrays_built_at_trace_time_are_fresh_on_every_call():
    f = stage(make_zeros)
    first = f(3)
    first[0] = 7.0
    assert f(3).tolist() == [0.0, 0.0, 0.0]


def _filled_grid(w, h):  # (a Mandelbrot escape-count grid of Python-constant size)
    counts = np.zeros((h, w))
    for iy in range(h):
        for ix in range(w):
            counts[iy, ix] = iy + ix
    return counts


def test_an_array_the_trace_wrote_into_is_not_a_stale_guard():
    """Constants made from it while the trace was writing it (a loop first tried staged) were
    guards of a digest it no longer had: every call traced again (0.1-1 s a call)."""
    f = autostage.convert(_filled_grid)
    for _ in range(3):
        assert f(4, 4).tolist() == _filled_grid(4, 4).tolist()
    assert f.trace_count == 1


def test_input_signature_fixes_one_trace():
    f = stage(scale, input_signature=[TensorSpec((None,), np.float32),
                                      TensorSpec((), np.float32)])
    assert f(np.ones(3, np.float32), np.float32(2)).tolist() == [2.0] * 3
    assert f(np.ones(7, np.float32), np.float32(3)).tolist() == [3.0] * 7
    assert f.trace_count == 1
    assert str(f.concrete_functions[0].function.param_types[0]) == "f32[?]"


def test_input_signature_rejects_non_matching_calls_naming_the_argument():
    f = stage(scale, input_signature=[TensorSpec((None, 3), np.float32),
                                      TensorSpec((), np.float32)])
    with pytest.raises(TypeError, match=r"scale\(\) argument 'x' must be f32\[\?,3\] "
                       r"\(TensorSpec\(shape=\(None, 3\), dtype=float32\)\) as its "
                       r"input_signature says; got a float64 array of shape \(2, 3\)"):
        f(np.zeros((2, 3)), np.float32(1))
    with pytest.raises(TypeError, match=r"argument 'x' .* got a float32 array of shape \(2, 4\)"):
        f(np.zeros((2, 4), np.float32), np.float32(1))
    with pytest.raises(TypeError, match=r"argument 'factor' must be f32\[\] .* got a Python int"):
        f(np.zeros((2, 3), np.float32), 2)
    with pytest.raises(TypeError, match="takes the 2 arguments of its input_signature"):
        f(np.zeros((2, 3), np.float32), np.float32(1), 0.0)
    assert f.trace_count == 0


def first_of(pair):
    return pair[0] + pair[1]


def test_input_signature_with_structures():
    f = stage(first_of, input_signature=[(TensorSpec([None]), TensorSpec([None]))])
    assert f((np.ones(2), np.ones(2))).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match=r"argument 'pair' must have the structure \(\*, \*\) "
                       r"of its input_signature, got \[\*, \*\]"):
        f([np.ones(2), np.ones(2)])
    with pytest.raises(TypeError, match=r"argument 'pair'\[1\] must be f64\[\?\]"):
        f((np.ones(2), np.ones(2, np.int32)))


def test_input_signature_must_be_tensor_specs():
    with pytest.raises(TypeError, match="must hold TensorSpecs"):
        stage(add_one, input_signature=[None])
    with pytest.raises(TypeError, match="does not cover parameter 'factor'"):
        stage(scale, input_signature=[TensorSpec([None])])
    # (a spec not in a list was "'TensorSpec' object is not iterable"; a dict was its keys)
    with pytest.raises(TypeError, match=r"must be a list or tuple of TensorSpecs, one per "
                       r"leading parameter, not TensorSpec\(.*\(for one parameter: \[Tensor"):
        stage(add_one, input_signature=TensorSpec([None]))
    with pytest.raises(TypeError, match="must be a list or tuple"):
        stage(add_one, input_signature={"x": TensorSpec([None])})


def test_retracing_warning_names_the_changing_argument():
    f = stage(scale)
    x = np.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(5):
            f(x, n)
        assert not [w for w in caught if issubclass(w.category, RetracingWarning)]
        f(x, 5)
    messages = [str(w.message) for w in caught if issubclass(w.category, RetracingWarning)]
    assert messages == [
        "scale has been traced 6 times (more than 5); tracing is slow, and this trace was "
        "needed because argument 'factor' is a Python int and is traced per value (now 5); "
        "pass np.int64(factor) to stage it"]
    # the warning points at the call (it pointed at contextlib's decorator frame)
    (where,) = [w for w in caught if issubclass(w.category, RetracingWarning)]
    assert where.filename == __file__, where.filename


def test_retracing_warning_for_dtype_changes():
    f = stage(add_one)
    dtypes = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32]
    with pytest.warns(RetracingWarning, match=r"argument 'x' changed from i16\[\?\] to "
                      r"i32\[\?\] \(a trace is per dtype and rank\)"):
        for dtype in dtypes:
            f(np.ones(2, dtype))


def slow_trace(x):
    time.sleep(0.05)  # runs at trace time only: widens the window for racing first calls
    return x * 2


def test_concurrent_first_calls_trace_once():
    f = stage(slow_trace)
    barrier = threading.Barrier(8)
    results = [None] * 8

    def worker(i):
        barrier.wait()
        results[i] = f(np.full(3, float(i)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert f.trace_count == 1
    assert [r.tolist() for r in results] == [[2.0 * i] * 3 for i in range(8)]


WEIGHTS = np.array([1.0, 2.0, 3.0])
OFFSET = 10


def uses_globals(x):
    return x * WEIGHTS + OFFSET


def test_global_arrays_are_read_at_call_time():
    global WEIGHTS, OFFSET
    saved = WEIGHTS, OFFSET
    try:
        f = stage(uses_globals)
        x = np.ones(3)
        assert f(x).tolist() == [11.0, 12.0, 13.0]
        WEIGHTS[0] = 100.0  # mutated in place
        assert f(x).tolist() == [110.0, 12.0, 13.0]
        WEIGHTS = np.array([0.0, 0.0, 1.0])  # rebound, same dtype and shape: no retrace
        assert f(x).tolist() == [10.0, 10.0, 11.0]
        assert f.trace_count == 1
        WEIGHTS = np.array([1.0, 1.0])  # another shape: traced again, never stale
        assert f(np.ones(2)).tolist() == [11.0, 11.0]
        OFFSET = 0  # a Python global is a constant of the trace: a change retraces
        assert f(np.ones(2)).tolist() == [1.0, 1.0]
        assert f.trace_count == 3
        params = f.concrete_functions[0].function.param_types
        assert [str(t) for t in params] == ["f64[3]", "f64[3]"]  # the global is a parameter
    finally:
        WEIGHTS, OFFSET = saved


def make_closure(bias):
    def with_bias(x):
        return x + bias

    return with_bias


def test_closed_over_arrays_are_read_at_call_time():
    bias = np.array([1.0, 2.0])
    f = stage(make_closure(bias))
    assert f(np.zeros(2)).tolist() == [1.0, 2.0]
    bias += 10
    assert f(np.zeros(2)).tolist() == [11.0, 12.0]
    assert f.trace_count == 1


def helper_reads_global(x):
    return x + WEIGHTS


def calls_helper(x):
    return helper_reads_global(x) * 2


def test_arrays_read_by_called_functions_are_read_at_call_time():
    f = stage(calls_helper)
    x = np.zeros(3)
    expected = (WEIGHTS * 2).tolist()
    assert f(x).tolist() == expected
    WEIGHTS[1] += 1
    try:
        assert f(x).tolist() == (WEIGHTS * 2).tolist() != expected
    finally:
        WEIGHTS[1] -= 1
    text = f.ir(x)
    assert "call @helper_reads_global" in text
    assert "func @helper_reads_global(%0:f64[3], %1:f64[3])" in text


def double(x):
    return x * 2


def quadruple(x):
    return double(double(x))


def test_staged_calls_stay_calls_and_are_traced_once_per_signature():
    f = stage(quadruple)
    assert f(np.ones(2)).tolist() == [4.0, 4.0]
    text = f.ir(np.ones(2))
    assert text.count("call @double") == 2
    assert text.count("func @double") == 1


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x - 1, n - 1)


def test_recursion_on_python_constants_traces_one_function_per_depth():
    f = stage(countdown)
    assert f(np.float64(10.0), 3) == 7.0
    assert f.ir(np.float64(10.0), 3).count("func @countdown") == 4


def forever(x):
    return forever(x + 1)


def test_staged_recursion_without_a_base_case_is_a_clear_error():
    f = stage(forever)
    with pytest.raises(tracing.StagingError, match="staged recursion: forever has no path that "
                       r"returns without calling itself at .*test_function.py:\d+"):
        f(np.float64(1.0))


LEAKED = []


def leaky(x):
    if LEAKED:
        return LEAKED[0]
    LEAKED.append(x)
    return x


def test_a_tensor_stored_into_a_global_list_is_a_clear_error_at_once():
    f = stage(leaky)
    with pytest.raises(tracing.TracerLeakError, match=r"test_function.py:\d+: a staged tensor is "
                       r"stored in LEAKED.append\(\) \(reached through global 'LEAKED'\), which "
                       "outlives the trace"):
        f(np.float32(1))
    assert LEAKED == []


class Model:
    def __init__(self, w):
        self.w = w

    @autostage.convert(target="interpreter")
    def apply(self, x):
        return x * self.w


def test_methods_bind_self_as_a_constant():
    model = Model(3.0)
    assert model.apply(np.ones(2)).tolist() == [3.0, 3.0]
    assert Model(4.0).apply(np.ones(2)).tolist() == [4.0, 4.0]


def test_inspection_api():
    f = stage(add_one)
    concrete = f.get_concrete_function(TensorSpec([None], np.float32))
    assert f.trace_count == 1 and f.concrete_functions == [concrete]
    assert f.ir(np.zeros(40, np.float32)).startswith("func @add_one(%0:f32[?]) -> (f32[?]):")
    assert f.trace_count == 1  # the spec and the array (of an unknown size) share the trace
    assert "f64[3]" in f.ir(TensorSpec([3]))  # known sizes: a more specific trace
    assert f.python_function(2) == 3  # the converted function, runnable on Python values
    assert isinstance(f, StagedFunction) and f.__name__ == "add_one"


def test_errors_while_tracing_carry_user_frames():
    def broken(x):
        return x + undefined_name  # noqa: F821

    f = stage(broken)
    with pytest.raises(NameError) as info:
        f(np.ones(1))
    assert any("test_function.py" in note for note in getattr(info.value, "__notes__", []))
    assert f.trace_count == 0


class _Weighted:
    """An object passed as a compile-time constant whose array attribute may change."""

    def __init__(self):
        self.w = np.array([1.0, 2.0])

    def apply(self, x):
        return x @ self.w


def test_arrays_frozen_from_constant_objects_are_checked_at_each_call():
    import autostage

    model = _Weighted()
    staged = autostage.convert(model.apply, target="interpreter")
    x = np.array([1.0, 1.0])
    assert staged(x) == model.apply(x) == 3.0
    assert staged(x) == 3.0 and staged.trace_count == 1  # unchanged: the trace is reused
    model.w[0] = 10.0  # changed in place: read by reference at each call, no retrace
    assert staged(x) == model.apply(x) == 12.0
    assert staged.trace_count == 1


# --- Weak Python scalars across staged calls (issue 8, item 15). ---------------------------

def _divide_by(x, n):
    return x / n


def _plus_one(n):
    return n + 1


def _size_through_a_call(x):
    n = x.shape[0]  # a Python int in Python: weak in the trace
    return _divide_by(x, n)


def _weak_result_of_a_call(x):
    m = _plus_one(x.shape[0])  # int + int: still a Python int, also after the call
    return x * m, _divide_by(x, m)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_weak_python_scalars_stay_weak_through_staged_calls(target):
    f = autostage.convert(_size_through_a_call, target=target)
    x = np.ones(4, np.float32)
    result = f(x)
    assert result.dtype == _size_through_a_call(x).dtype == np.float32
    assert result.tolist() == [0.25] * 4
    assert "call @_divide_by" in f.ir(x)  # still a staged call, not inlined
    g = autostage.convert(_weak_result_of_a_call, target=target)
    product, quotient = g(x)
    assert (product.dtype, quotient.dtype) == (np.float32, np.float32)
    expected = _weak_result_of_a_call(x)
    assert product.tolist() == [5.0] * 4 and np.array_equal(quotient, expected[1])


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_weak_and_a_strong_argument_trace_separate_callees(target):
    def both(x):
        return _divide_by(x, x.shape[0]), _divide_by(x, np.int64(4) + x.shape[0] * 0)

    f = autostage.convert(both, target=target)
    x = np.ones(4, np.float32)
    weak, strong = f(x)
    assert (weak.dtype, strong.dtype) == (np.float32, np.float64)  # as in Python
    assert f.ir(x).count("func @_divide_by") == 2


# --- Methods of objects the traced code makes (found by the fuzzer, notes/issue8-d-findings.md
# D1): they change their own object's attributes at every call, as Python does. ---------------


class _Tally:
    def __init__(self, total):
        self.total = total
        self.hits = 0

    def add(self, v):
        self.total = self.total + v
        self.hits += 1
        return self.total


def tally_twice(a):
    acc = _Tally(0)
    first = acc.add(a)
    acc.add(a * 2)
    return first, acc.total, acc.hits


def tally_in_staged_control(a, x):
    acc = _Tally(0.0)
    for v in x:  # a staged loop
        if v > a:  # a staged branch
            acc.add(v)
    return acc.total, acc.hits


OUTSIDE = _Tally(0)


def tally_outside(a):
    return OUTSIDE.add(a)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_methods_of_objects_made_in_the_trace_change_them_at_every_call(target):
    a = np.int64(3)
    assert autostage.convert(tally_twice, target=target)(a) == tally_twice(a) == (3, 9, 2)
    x = np.array([0.5, 2.0, -1.0, 3.0])
    staged = autostage.convert(tally_in_staged_control, target=target)
    for threshold in (np.float64(1.0), np.float64(5.0)):
        total, hits = staged(threshold, x)
        assert (float(total), int(hits)) == tally_in_staged_control(threshold, x)


class _Resettable:
    """filterpy 2.0.0's LeastSquaresFilter: ``__init__`` sets the attributes in ``reset()``."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.n = 0

    def update(self, z):
        self.n += 1
        return z / self.n


def mean_of_steps(x):
    f = _Resettable()
    total = 0.0
    for z in x:  # a staged loop
        total = total + f.update(z)
    return total, f.n


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_method_init_calls_sets_the_attributes_of_an_object_made_in_the_trace(target):
    """The object was the trace's own only once ``__init__`` returned: ``self.n = 0`` in the
    ``reset()`` it calls was refused as a change of an object that outlives the call."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    total, n = autostage.convert(mean_of_steps, target=target)(x)
    assert (total, n) == mean_of_steps(x) == (4.0, 4) and type(n) is int


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_methods_of_objects_from_outside_still_refuse_storing_a_tensor(target):
    from autostage.runtime.escapes import TensorEscapeError

    with pytest.raises(TensorEscapeError, match=r"test_function.py:\d+: a staged tensor .* is "
                                                r"stored in OUTSIDE.total \(reached through"):
        autostage.convert(tally_outside, target=target)(np.int64(3))
    assert OUTSIDE.total == 0 and OUTSIDE.hits == 0


class _Dense:
    def __init__(self, w):
        self.w = w
        self.calls = 0


class _Affine(_Dense):
    """A layer whose ``__init__`` calls its base's with ``super()``, with staged values."""

    def __init__(self, w, b):
        super().__init__(w)
        self.b = b

    def __call__(self, x):
        self.calls += 1
        return x @ self.w + self.b


def affine_made_inside(x, w, b):
    layer = _Affine(w, b)
    first = layer(x)
    return first, layer(first @ w.T), layer.calls


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_super_init_of_an_object_made_in_the_trace_stores_staged_values(target):
    # The object is the trace's own from the start of its __init__: `super().__init__(w)`
    # stored `w` into it as into an object from outside (TensorEscapeError).
    f = autostage.convert(affine_made_inside, target=target)
    for n in (2, 3):  # the trace, then another shape
        x, w, b = np.arange(n * 3.0).reshape(n, 3), np.ones((3, 3)) / 4, np.arange(3.0)
        got, expected = f(x, w, b), affine_made_inside(x, w, b)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
        assert got[2] == expected[2] == 2 and type(got[2]) is int


# --- Python numbers come back as Python numbers (issue 8, helper c) ----------------------------


def python_numbers_out(x):
    n = x.shape[0]
    return n, {"mean": x.sum() / n, "half": n / 2, "big": n > 2, "z": n * 1j}, [n - 1], x[0]


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_returned_python_numbers_are_python_numbers(target):
    import json

    f = autostage.convert(python_numbers_out, target=target)
    for x in (np.arange(3.0), np.arange(4.0)):  # the trace, then the cache hit
        got, expected = f(x), python_numbers_out(x)
        assert got == expected
        n, stats, (m,), first = got
        assert type(n) is int and type(m) is int
        assert type(stats["half"]) is float and type(stats["big"]) is bool
        assert type(stats["z"]) is complex
        # NumPy values stay NumPy values: an array's sum, an element
        assert type(stats["mean"]) is np.float64 and type(first) is np.float64
    assert json.dumps(f(np.arange(3.0))[0]) == "3"
    with pytest.raises(ZeroDivisionError):
        f(np.arange(3.0))[0] / 0  # a Python int downstream, as in Python


def weak_and_strong(x, k):
    n = x.shape[0]
    return n + 0, k + n, np.int64(n), n * 1.5


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_numpy_typed_results_stay_numpy(target):
    got = autostage.convert(weak_and_strong, target=target)(np.zeros(2), np.int64(5))
    assert got == (2, 7, 2, 3.0)
    assert [type(v) for v in got] == [int, np.int64, np.int64, float]


def count_below(x, t):
    c = 0
    for v in x:
        if v < t:
            c += 1
    return c


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_counter_returned_from_a_staged_loop_is_an_int(target):
    got = autostage.convert(count_below, target=target)(np.arange(5.0), np.float64(2.5))
    assert got == 3 and type(got) is int


# --- Result identity exactly as Python's (issue 8, helper c2) ----------------------------------


def views_of_the_argument(x):
    return x.T, x.reshape(-1), x[...], x[:], x.ravel(), np.transpose(x)


def returns_the_argument(x):
    return x


def one_view_twice(x):
    y = x.T
    return y, y


def two_equal_expressions(x):
    return x + 1, x + 1


def one_array_twice(x):
    y = x * 2
    return y, y


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_views_of_an_argument_are_new_objects_as_in_python(target):
    x = np.arange(3.0)
    for _ in range(2):  # the trace, then a cache hit
        got = autostage.convert(views_of_the_argument, target=target)(x)
        assert [r is x for r in got] == [False] * 6
        assert all(np.shares_memory(r, x) for r in got)
        assert len({id(r) for r in got}) == 6
        assert autostage.convert(returns_the_argument, target=target)(x) is x
        a, b = autostage.convert(one_view_twice, target=target)(x)
        assert a is b and a is not x and np.shares_memory(a, x)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_results_are_one_object_exactly_where_python_returns_one(target):
    x = np.arange(3.0)
    for _ in range(2):
        a, b = autostage.convert(two_equal_expressions, target=target)(x)
        assert a is not b and not np.shares_memory(a, b)  # cpu: CSE merges them; copied
        a[0] = 100.0
        assert b[0] == 1.0
        c, d = autostage.convert(one_array_twice, target=target)(x)
        assert c is d


def recurrence(xs, h):
    for x in xs:
        h = h * 0.5 + x
    return h


def swapped(a, b, n):
    for _ in range(n.shape[0]):
        a, b = b, a
    return a


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_loop_that_runs_zero_times_returns_the_argument_itself(target):
    """Python returns the caller's ``h`` where the loop runs zero times, a new array otherwise
    (the result was a view of ``h`` there: a new object)."""
    f = autostage.convert(recurrence, target=target)
    g = autostage.convert(swapped, target=target)
    h, a, b = np.zeros(4), np.zeros(3), np.ones(3)
    for steps in (0, 3, 0, 20, 0):  # (traces with the sizes, then one without)
        xs = np.ones((steps, 4))
        got = f(xs, h)
        assert (got is h) == (steps == 0)
        np.testing.assert_array_equal(got, recurrence(xs, h))
        assert not np.shares_memory(h, got) or got is h
        n = np.zeros(steps + 1)
        assert g(a, b, n) is swapped(a, b, n)
        assert g(a, b, n[1:]) is swapped(a, b, n[1:])


def broadcasts(x, n):
    y = x * 2.0
    return np.broadcast_to(x, (n, 3)), np.broadcast_to(y, (n, 3)), np.broadcast_to(y[:1], (3,))


def broadcast_of_a_view(x):
    return np.broadcast_to(x[:, :1], (2, 3, 4))


def broadcast_beside_its_memory(x):
    y = x * 2.0
    return np.broadcast_to(y[:1], (3,)), y[1:]  # NumPy: one memory, the second writable


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_broadcast_results_are_read_only_as_numpys_views(target):
    """``np.broadcast_to`` gives a read-only view: of an argument, that argument's memory (a
    later write into it shows); of an array the function made, a read-only array. The cpu
    backend returned a writable copy (writes went through; the argument's later values did
    not show); a broadcast of a view of an argument, which it cannot hand back, is an error."""
    f = autostage.convert(broadcasts, target=target)
    for _ in range(2):
        x = np.arange(3.0)
        a, b, c = f(x, 2)
        want = broadcasts(x, 2)
        for got, expected in zip((a, b, c), want, strict=True):
            np.testing.assert_array_equal(got, expected)
            assert not got.flags.writeable
        assert np.shares_memory(a, x) and not np.shares_memory(b, x)
        x[1] = 50.0
        assert a[1, 1] == 50.0
        with pytest.raises(ValueError, match="read-only"):
            b[0, 0] = 1.0
    with pytest.raises(autostage.StagingError, match="broadcast_to of a view of argument `x`"):
        autostage.convert(broadcast_of_a_view, target=target)(np.zeros((2, 5, 4)))
    with pytest.raises(autostage.StagingError, match="of a view of another returned array"):
        autostage.convert(broadcast_beside_its_memory, target=target)(np.arange(3.0))


def flattened(x):
    return x.flatten()


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_flatten_is_a_copy(target):
    x = np.arange(3.0)
    got = autostage.convert(flattened, target=target)(x)
    assert got is not x and not np.shares_memory(got, x)
    got[0] = 7.0
    assert x[0] == 0.0


# --- tensor lists returned by staged calls ----------------------------------------------------


def _rows_doubled(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2.0)
    return out


def _firsts(x):
    out = []
    for i in range(x.shape[0]):
        out.append(float(x[i, 0]))
    return out


def _stack_of_callee_list(x):
    return np.stack(_rows_doubled(x))


def _loop_over_callee_list(x):
    total = 0.0
    for v in _rows_doubled(x):
        total = total + v.sum()
    return total


def _use_callee_list(x):
    ys = _rows_doubled(x)
    zs = _firsts(x)
    zs.append(1.5)
    return len(ys), ys[-1], zs, zs[0], sum(zs), _firsts(x)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn", [_stack_of_callee_list, _loop_over_callee_list, _use_callee_list])
def test_tensor_list_returned_by_a_staged_call_is_a_list_in_the_caller(target, fn):
    x = np.arange(6.0).reshape(3, 2)
    expected, actual = fn(x), autostage.convert(fn, target=target)(x)
    for e, a in zip(expected if isinstance(expected, tuple) else (expected,),
                    actual if isinstance(actual, tuple) else (actual,), strict=True):
        assert type(a) is type(e)  # len() an int, lists of Python floats stay such
        np.testing.assert_array_equal(a, e)


def _small_helper(x):
    return x * 2.0


def _uses_helper(x, n):
    out = []
    for i in range(n):
        t = _small_helper(x) + i
        out.append(t)
    return np.stack(out)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_ir_is_the_same_before_and_after_a_call(target):
    f = autostage.convert(_uses_helper, target=target)
    args = (np.arange(3.0), np.int64(4))
    before = f.ir(*args)
    np.testing.assert_array_equal(f(*args), _uses_helper(*args))
    assert f.ir(*args) == before
    assert "call @_small_helper" in before and "in_place" not in before


def _negate_column(v):
    v[:, 1] *= -1
    return v.sum()


def _writes_in_a_helper(p):  # (numpy-100 #78; #88's iterate(Z) writes Z[...] likewise)
    v = p.copy()
    total = _negate_column(v)
    return v, total


def _clear(z):
    z[...] = 0
    return z


def _rebinds_in_a_helper(x):
    def inc(t):
        t += 1  # a 0-d scalar: rebinds, as a NumPy scalar does
        return t
    return inc(x.sum()), _plus_one(x)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_staged_callee_writing_into_its_parameter_changes_the_callers_array(target):
    """Once a clear error (the caller's array would not have changed, where Python's does);
    since the twenty-fourth session the helper's writes are written back (staged_calls)."""
    p = np.array([[1.0, 2.0], [3.0, 4.0]])
    for got, expected in ((autostage.convert(_writes_in_a_helper, target=target)(p),
                           _writes_in_a_helper(p)),
                          (autostage.convert(lambda x: _clear(x.copy()), target=target)(p),
                           _clear(p.copy()))):
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,), strict=True):
            assert np.array_equal(g, e), (g, e)
    assert p.tolist() == [[1.0, 2.0], [3.0, 4.0]]  # (each helper wrote into a copy)
    got = autostage.convert(_rebinds_in_a_helper, target=target)(p)
    assert got[0] == 11.0 and np.array_equal(got[1], p + 1)


def _relax(t, n):  # (a heat-equation solver stepping its argument)
    for _ in range(n):
        t[1:-1] = 0.5 * (t[:-2] + t[2:])
    return t


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_loop_writing_its_argument_writes_it_back(target):
    t, expected = np.arange(5.0) ** 2, np.arange(5.0) ** 2
    assert autostage.convert(_relax, target=target)(t, np.int64(3)) is t
    _relax(expected, 3)
    assert t.tolist() == expected.tolist()


def _spread(x):
    return np.broadcast_to(x * 2.0, (2, 3))


def writes_into_a_helpers_broadcast(x):
    b = _spread(x)
    b[0, 0] = 1.0
    return b


def test_a_helpers_broadcast_result_is_not_written_into():
    """In Python the helper's result is a read-only view (the write raises ValueError); staged,
    the call's result was a new array the write went into: refused."""
    with pytest.raises(ValueError, match="read-only"):
        writes_into_a_helpers_broadcast(np.arange(3.0))
    with pytest.raises(autostage.StagingError, match="writes through a view"):
        autostage.convert(writes_into_a_helpers_broadcast, target="cpu")(np.arange(3.0))


class Rebinds:
    def __init__(self):
        self.w = np.ones(2)

    def step(self, g):
        self.w = self.w - g  # a staged tensor stored in an attribute
        return self.w.sum()


class Assigns:
    def __init__(self):
        self.w = autostage.Variable(np.ones(2))

    def step(self, g):
        self.w.assign(self.w - g)  # what the message advises
        return self.w.read().sum()


def test_a_tensor_stored_in_an_attribute_advises_a_variable_which_works():
    with pytest.raises(tracing.TracerLeakError, match=r"stored in self.w(.|\n)*keep state the "
                                                      r"function updates at each call in an "
                                                      r"autostage.Variable"):
        autostage.convert(Rebinds().step)(np.ones(2))
    model = Assigns()
    step = autostage.convert(model.step)
    assert [step(np.ones(2)), step(np.ones(2))] == [0.0, -2.0]


class Announcing:
    def __enter__(self):
        print("enter")
        return self

    def __exit__(self, *exc):
        print("exit")
        return False


def with_announcing_context(x):
    with Announcing():
        print("body")
    return x + 1


def changes_its_argument_then_raises(out):
    out.append(1)
    raise ValueError("bad")


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_trace_that_prints_through_code_not_converted_runs_as_python(target, capsys):
    """The context manager printed when the function was traced, once: the first call printed
    'enter', 'exit', then 'body' (the staged print), the second only 'body'."""
    f = autostage.convert(with_announcing_context, target=target)
    with pytest.warns(RuntimeWarning, match="printed .*'enter'.* while with_announcing_context"
                      " was traced"):
        assert f(np.float64(1.0)) == 2.0
    assert f(np.float64(2.0)) == 3.0
    assert capsys.readouterr().out == "enter\nbody\nexit\n" * 2


def test_an_argument_changed_before_a_raise_is_refused_not_dropped():
    """Python raises with the argument changed; the trace had changed its own copy, so the
    caller's list was left as it was, silently."""
    out = []
    from autostage.runtime.staging import PythonSideEffectError

    with pytest.raises(PythonSideEffectError, match="changes a Python list given to "
                       "it as an argument") as error:
        stage(changes_its_argument_then_raises)(out)
    assert isinstance(error.value.__cause__, ValueError)


def counted_helper(v):
    counted_helper.calls += 1
    return v + counted_helper.calls


def calls_a_counting_helper_twice(x):
    return counted_helper(x), counted_helper(x)


ITEMS = iter(range(100))


def reads_a_global_iterator(x):
    return x + next(ITEMS)


class Meters(float):
    pass


def times(x, s):
    return x * s, s + 1


W = "unset"


def stores_in_a_global_while_looping(x):
    global W
    while (W := x.sum()) > 1:
        x = x / 2
    return x


def prints_redirected(x):
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print("hidden", x.sum())
    return len(buffer.getvalue())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_trace_time_changes_nothing_else_watched_are_refused_or_run_as_python(target, capsys):
    """Each gave a silently different result: a helper's attribute counted traces (1, 1), a
    global iterator gave its first item at every call, a float subclass argument raised
    NumPy's raw TypeError, a refused loop left a staged value in the user's global, a print
    into a redirected stdout went to the real one."""
    from autostage.runtime.staging import PythonSideEffectError

    counted_helper.calls = 0
    with pytest.raises(PythonSideEffectError, match="attributes of the function "
                       "'counted_helper' are changed"):
        autostage.convert(calls_a_counting_helper_twice, target=target)(np.zeros(1))
    assert counted_helper.calls == 0
    position = ITEMS.__reduce__()
    with pytest.raises(PythonSideEffectError, match="iterator 'ITEMS' is advanced while "
                       "reads_a_global_iterator is traced"):
        autostage.convert(reads_a_global_iterator, target=target)(np.zeros(1))
    assert ITEMS.__reduce__() == position  # (put back)
    got = autostage.convert(times, target=target)(np.ones(1), Meters(2.0))
    assert got[0].tolist() == [2.0] and got[1] == 3.0
    with pytest.raises(PythonSideEffectError, match="global variable 'W'"):
        autostage.convert(stores_in_a_global_while_looping, target=target)(np.array([5.0]))
    assert W == "unset"
    assert autostage.convert(prints_redirected, target=target)(np.ones(2)) == 11
    assert capsys.readouterr().out == ""


def _takes_from_an_iterator(x, it):
    k = next(it)
    return x * k


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_iterator_argument_advanced_while_traced_is_refused(target):
    """``next(it)`` of an iterator argument ran once, at trace time; the same iterator given
    again hit the trace and got its first item again (1 where Python gives 2). Refused, and put
    back, as for an iterator in a global."""
    from autostage.runtime.staging import PythonSideEffectError

    it = iter([1, 2])
    with pytest.raises(PythonSideEffectError, match="the iterator 'it' is advanced while "
                       "_takes_from_an_iterator is traced \\(it outlives the call: an argument"):
        autostage.convert(_takes_from_an_iterator, target=target)(np.ones(1), it)
    assert next(it) == 1  # (put back)


def _logs_to_a_file(x, fh):
    fh.write("call\n")
    return x * 2


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_file_argument_written_while_traced_is_refused(target):
    """``fh.write(...)`` of a file given as an argument ran once, at trace time: two calls
    wrote one line. Refused (a file written or read cannot be put back)."""
    import io

    from autostage.runtime.staging import PythonSideEffectError

    with pytest.raises(PythonSideEffectError, match="the file 'fh' is written or read while "
                       "_logs_to_a_file is traced"):
        autostage.convert(_logs_to_a_file, target=target)(np.ones(1), io.StringIO())


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_file_argument_that_cannot_say_where_it_is_is_refused_before_the_trace(target):
    """A pipe or terminal (``sys.stdout`` passed in) has no position, so a write while traced
    could not be seen: it was written once, at trace time. Refused before the function runs."""
    import os

    from autostage.runtime.staging import PythonSideEffectError

    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as pipe_in, os.fdopen(write_end, "w") as pipe_out:
        with pytest.raises(PythonSideEffectError, match="the file 'fh' given as an argument "
                           "cannot say where it is"):
            autostage.convert(_logs_to_a_file, target=target)(np.ones(1), pipe_out)
        pipe_out.close()
        assert pipe_in.read() == ""  # nothing written
