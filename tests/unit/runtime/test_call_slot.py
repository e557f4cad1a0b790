"""The C level of a staged call (``runtime/call_slot.py``, ``runtime/_fastcall.c``): a Plan tests
each argument and calls the compiled entry itself, which unboxes without testing anything. So
every argument unlike the trace's (another dtype, rank, size, layout, alignment, writability,
type) must reach code compiled for it, with NumPy's result; errors, NumPy's error state and the
eager switch must act as on the full path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from autostage.runtime import call_slot
from autostage.runtime.call_slot import MISS, Plan
from autostage.runtime.function import StagedFunction

import autostage
from autostage import config


def add_one(x):
    return x + 1


def tail(x):
    return x[1:]


def twenty(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9):
    return (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9
            + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8 + b9)


def scaled(x, s):
    return x * s


def test_the_c_level_is_built():
    """``pip install -e .`` builds it (``setup.py``; optional for machines without a C
    compiler, where calls go through Python): here it must be there."""
    assert Plan is not None, "runtime/_fastcall.c is not built: pip install -e . with a C compiler"
    assert call_slot.Base.__module__ == "autostage.runtime._fastcall"


def _misaligned(n: int) -> np.ndarray:
    raw = np.zeros(8 * n + 1, np.uint8)
    array = raw[1:].view(np.float64)  # writable, not aligned
    array[:] = np.arange(n)
    assert not array.flags.aligned
    return array


def test_arguments_unlike_the_plans_reach_their_own_code():
    f = autostage.convert(add_one)
    x = np.arange(4.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x + 1)
    assert isinstance(f._fast, Plan)
    read_only = np.arange(4.0)
    read_only.flags.writeable = False
    others = [np.arange(4, dtype=np.float32), np.arange(4), np.arange(8.0)[::2],
              np.arange(8.0).reshape(2, 4), np.asfortranarray(np.arange(8.0).reshape(2, 4)),
              read_only, _misaligned(4), np.arange(4.0).astype(">f8"), np.float64(2.5),
              np.float32(2.5), np.array(3.0), np.arange(5.0), np.arange(4.0).view(np.matrix)]
    for _ in range(3):
        for arg in others:
            if type(arg) is np.matrix:
                with pytest.raises(TypeError, match="matrix"):
                    f(arg)
                continue
            want = add_one(arg)
            got = f(arg)
            assert type(got) is type(want) and got.dtype == want.dtype, arg
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(f(x), x + 1)


def test_a_view_of_a_read_only_argument_is_read_only_as_in_numpy():
    f = autostage.convert(tail)
    x = np.arange(4.0)
    for _ in range(3):
        assert f(x).flags.writeable
    read_only = np.arange(4.0)
    read_only.flags.writeable = False
    for _ in range(2):
        got, want = f(read_only), tail(read_only)
        np.testing.assert_array_equal(got, want)
        assert got.flags.writeable == want.flags.writeable


def test_zero_d_arrays_and_numpy_scalars_for_a_scalar_parameter():
    f = autostage.convert(scaled)
    x = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, np.array(2.0)), x * 2.0)
    assert isinstance(f._fast, Plan)
    for s in [np.array(3.0), np.float64(4.0), np.array(2, np.int64), np.array([2.0]), 2.0]:
        got, want = f(x, s), scaled(x, s)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_many_arguments():
    """More than the 16 the C level keeps on its stack."""
    f = autostage.convert(twenty)
    xs = [np.full(3, float(i)) for i in range(20)]
    for _ in range(3):
        np.testing.assert_array_equal(f(*xs), np.full(3, 190.0))
    assert isinstance(f._fast, Plan)
    np.testing.assert_array_equal(f(*xs[:19], np.full(3, 1, np.int32)), np.full(3, 172.0))
    with pytest.raises(TypeError, match=r"^twenty\(\) missing 1 required positional argument"):
        f(*xs[:19])


def index(x, i):
    return x[i]


def _index_error_through_a_plan(f):
    x = np.arange(3.0)
    for _ in range(3):
        assert f(x, np.int64(1)) == 1.0
    assert isinstance(f._fast, Plan)
    with pytest.raises(IndexError) as info:
        f(x, np.int64(7))
    return info.value


def test_errors_in_compiled_code_are_the_full_paths():
    error = _index_error_through_a_plan(autostage.convert(index))
    assert any("test_call_slot.py" in note for note in getattr(error, "__notes__", []))


def test_errors_leaving_a_plan_go_to_the_error_hook():
    seen = []
    f = StagedFunction(autostage.to_graph(index), target="cpu", error_hook=seen.append)
    assert seen == [_index_error_through_a_plan(f)]


def test_numpys_error_state_is_tested():
    f = autostage.convert(add_one)
    x = np.arange(3.0)
    for _ in range(3):
        f(x)
    with np.errstate(over="raise"), pytest.raises(Exception, match="floating-point"):
        f(x)
    np.testing.assert_array_equal(f(x), x + 1)


def _planned(fn, *args):
    """``fn`` converted and called until it has a Plan; the Plan."""
    f = autostage.convert(fn)
    for _ in range(3):
        f(*args)
    assert isinstance(f._fast, Plan)
    return f, f._fast


def test_the_eager_switch_reaches_calls_that_have_a_plan():
    x = np.arange(3.0)
    f, plan = _planned(add_one, x)
    python_runs = []
    traced = f._traced  # what runs as Python

    def counted(*args):
        python_runs.append(args)
        return traced(*args)

    f._traced = counted
    with config.EAGER.override(True):
        np.testing.assert_array_equal(f(x), x + 1)
        assert len(python_runs) == 1
    np.testing.assert_array_equal(f(x), x + 1)  # (compiled again: the plan, from the full path)
    assert len(python_runs) == 1 and f._fast is plan


def test_calls_from_threads():
    f = autostage.convert(add_one)
    arrays = [np.arange(float(k), float(k) + 5) for k in range(4)]
    f(arrays[0])
    f(arrays[0])
    failures = []

    def work(k):
        for _ in range(2000):
            if not np.array_equal(f(arrays[k]), arrays[k] + 1):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_a_plan_called_as_a_python_fast_path():
    x = np.arange(3.0)
    _, plan = _planned(add_one, x)
    np.testing.assert_array_equal(plan((x,)), x + 1)
    np.testing.assert_array_equal(plan([x]), x + 1)
    assert plan((x, x)) is MISS  # (the fallback's answer for two arguments)
    with pytest.raises(TypeError):
        plan(x, x)


def test_without_the_c_level_calls_go_through_python(tmp_path):
    """Built without a C compiler, ``call_slot`` gives a Python ``Base`` and no Plan."""
    script = tmp_path / "without_c.py"
    script.write_text(textwrap.dedent("""
        import sys
        sys.modules["autostage.runtime._fastcall"] = None  # as if it were not built
        import numpy as np
        import autostage
        from autostage.runtime import call_slot
        assert call_slot.Plan is None and call_slot.Base.__module__.endswith("call_slot")
        @autostage.convert
        def f(x):
            return x + 1

        x = np.arange(3.0)
        for _ in range(3):
            assert np.array_equal(f(x), x + 1)
        assert callable(f._fast) and hasattr(f._fast, "source")
        assert np.array_equal(f(np.arange(3)), np.arange(3) + 1)

        @autostage.convert
        def pick(x, i):
            return x[i]

        for _ in range(3):
            assert pick(x, np.int64(1)) == 1.0
        try:
            pick(x, np.int64(7))
        except IndexError as e:  # (noted by the error hook, as on the full path)
            assert any("without_c.py" in note for note in e.__notes__), e.__notes__
        print("ok")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "AUTOSTAGE_TIERED": "0"})
    assert done.stdout.strip() == "ok", done.stderr


class Affine:
    """A model whose weights (0-d and 1-d arrays) and a Python float are read at each call."""

    def __init__(self):
        self.w, self.b, self.scale = np.array(2.0), np.arange(3.0), 0.5

    def __call__(self, x):
        return (x * self.w + self.b) * self.scale


def test_weights_read_through_the_model_are_read_and_tested_by_the_plan():
    model, x = Affine(), np.ones(3)
    f = autostage.convert(model)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), Affine.__call__(model, x))
    plan = f._fast
    assert isinstance(plan, Plan)
    assert {read[2] for read in plan.specs[1]} >= {("w",), ("b",), ("scale",)}
    read_only = np.arange(3.0)
    read_only.flags.writeable = False
    changes = [lambda: setattr(model, "w", np.array(3.0)),  # another value: the same plan
               lambda: model.b.__iadd__(1.0),  # in place
               lambda: setattr(model, "scale", 2.0),  # a guarded Python value: another trace
               lambda: setattr(model, "b", np.arange(6.0)[::2]),  # another layout
               lambda: setattr(model, "b", read_only),
               lambda: setattr(model, "w", np.array(3, np.int64)),  # another dtype
               lambda: setattr(model, "b", np.arange(4.0)),  # another size: broadcast error
               lambda: setattr(model, "b", np.float32(1.0)),
               lambda: setattr(model, "scale", 0.5)]
    for change in changes:
        change()
        try:
            want = Affine.__call__(model, x)
        except ValueError:
            with pytest.raises(ValueError, match="broadcast"):
                f(x)
            continue
        for _ in range(2):
            got = f(x)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    del model.b
    with pytest.raises(AttributeError, match="'b'"):
        f(x)


def scale_into(x, out, s):
    for i in range(x.shape[0]):
        out[i] = x[i] * s + out[0]


def test_writes_into_an_argument_test_its_memory_against_the_others():
    """The Plan of a kernel writing into ``out`` sends a call whose ``out`` may share memory
    with another array argument (np.may_share_memory's bounds test: the same array, views of
    one buffer overlapping, reversed, or a 0-d scalar viewing it) to the full path, which runs
    it as Python; views of one buffer that do not overlap run compiled."""
    f = autostage.convert(scale_into)
    for _ in range(3):
        out = np.zeros(4)
        f(np.arange(4.0), out, np.array(2.0))
        np.testing.assert_array_equal(out, np.arange(4.0) * 2.0)
    assert isinstance(f._fast, Plan) and f._fast.specs[2] == (1,)

    def cases():
        buffer = np.arange(12.0)
        yield buffer[:4], buffer[4:8], np.array(2.0)  # disjoint views of one buffer
        buffer = np.arange(12.0)
        yield buffer[2:6], buffer[:4], np.array(2.0)  # overlapping
        buffer = np.arange(12.0)
        yield buffer[3::-1], buffer[:4], np.array(2.0)  # reversed, overlapping
        buffer = np.arange(4.0)
        yield buffer, buffer, np.array(2.0)  # the same array
        out = np.ones(4)
        yield np.arange(4.0), out, out[1:2].reshape(())  # the scalar is a view of out

    for plain, staged in zip(cases(), cases(), strict=True):
        scale_into(*plain)
        f(*staged)
        for p, s in zip(plain, staged, strict=True):
            np.testing.assert_array_equal(s, p)


class WithMethod:
    def __init__(self):
        self.w = np.ones(3)

    def act(self, x):
        return x * 2.0

    def __call__(self, x):
        return self.act(x) + self.w


def test_a_model_calling_its_methods_has_a_plan_that_guards_them():
    """The guards of a method the trace ran (still the class's, not shadowed by an attribute of
    the object) are tested in C too."""
    model, x = WithMethod(), np.arange(3.0)
    f = autostage.convert(model)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), model(x))
    assert isinstance(f._fast, Plan)
    original = WithMethod.act
    try:
        WithMethod.act = lambda self, v: v * 10.0
        np.testing.assert_array_equal(f(x), model(x))
        model.act = lambda v: v * 100.0
        np.testing.assert_array_equal(f(x), model(x))
        del model.act
        np.testing.assert_array_equal(f(x), model(x))
    finally:
        WithMethod.act = original
    np.testing.assert_array_equal(f(x), model(x))
