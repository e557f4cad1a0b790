"""The tiered start (issue 14, item 4): while a cpu trace compiles in a background thread, calls
of a converted function run its Python code with the NumPy values given; compiled code takes
over when ready. Results, printed output and Variable state must be those of compiled-only runs,
also with calls from several threads while compilation runs. The suite turns tiering off
(tests/conftest.py); each test here turns it on. Compilation is held back by a gate, so that
which calls ran as Python is decided by the test, not by the machine's speed."""

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from autostage.runtime import config as runtime_config
from autostage.runtime.backends.cpu import compile as cpu_compile
from forks import assert_child_exits_cleanly

import autostage
from autostage import config


@pytest.fixture(autouse=True)
def no_compilation_outlives_its_test():
    """Joins the background compilations a test started (one that outlives its test would
    compile under the next test's monkeypatches)."""
    yield
    for thread in threading.enumerate():
        if thread.name.startswith("autostage-compile-"):
            thread.join()


@pytest.fixture
def tiered(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_TIERED", "1")


@pytest.fixture
def gate(monkeypatch):
    """An Event that compilation waits for; the settings each compilation saw."""
    opened, seen = threading.Event(), []
    real = cpu_compile.compile_module

    def gated(module):
        seen.append({option.name: option.value() for option in runtime_config.OPTIONS})
        assert opened.wait(60), "the test never opened the compile gate"
        return real(module)

    monkeypatch.setattr(cpu_compile, "compile_module", gated)
    opened.seen = seen
    return opened


class Counting:
    """The converted function, counting the calls the tiered start runs as Python."""

    def __init__(self, staged):
        self.calls, self._fn = 0, staged._traced
        staged._traced = self

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self._fn(*args, **kwargs)


def make_step(counter):
    def step(x, scale):
        y = np.tanh(x) * scale
        total = np.sum(y)
        if total > 0:
            print("positive", total)
        else:
            print("not positive", total)
        counter.assign_add(total)
        return y, total

    return step


def run_calls(tiered_on: bool, gate_after: int | None, capsys, gate=None):
    """Ten calls of a fresh converted ``step``; (results, printed lines, the Variable's value,
    how many calls ran as Python)."""
    counter = autostage.Variable(np.float64(0.0))
    f = autostage.convert(make_step(counter))
    xs = [np.linspace(-1.0, 1.0, 5) + 0.3 * (i - 4) for i in range(10)]
    results, python_calls = [], None
    with config.TIERED.override(tiered_on):
        for i, x in enumerate(xs):
            if i == 1:
                python_calls = Counting(f)
            if gate is not None and i == gate_after:
                gate.set()
                f.compile(x, 2.0)
            results.append(f(x, 2.0))
    return results, capsys.readouterr().out, counter.read(), python_calls.calls


def test_python_runs_until_compiled_with_the_results_of_compiled_code(tiered, gate, capsys):
    gate.set()
    plain, plain_out, plain_counter, _ = run_calls(False, None, capsys)
    assert len(gate.seen) == 1  # compiled-only: the first call waited for the (open) gate
    gate.seen.clear()
    gate.clear()
    got, out, counter, python_calls = run_calls(True, 4, capsys, gate)
    assert python_calls == 3  # calls 1-3 (counted from the second) ran as Python, 4-9 compiled
    assert out == plain_out
    assert out.count("positive") == 10
    np.testing.assert_allclose(counter, plain_counter, rtol=1e-12)
    for (y, total), (y0, total0) in zip(got, plain, strict=True):
        np.testing.assert_allclose(y, y0, rtol=1e-12)  # tanh: the kernels are within 4 ulp
        assert type(total) is type(total0)
        np.testing.assert_allclose(total, total0, rtol=1e-12)


def test_the_first_call_returns_before_compilation_finishes(tiered, gate):
    f = autostage.convert(lambda x: x * 2.0 + 1.0)
    x = np.arange(6.0)
    np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)
    (concrete,) = f.concrete_functions
    assert concrete.prepared_runner() is None  # still held at the gate
    assert any(t.name.startswith("autostage-compile-") for t in threading.enumerate())
    gate.set()
    assert f.compile(x) is concrete and concrete.prepared_runner() is not None
    python_calls = Counting(f)
    np.testing.assert_array_equal(f(x + 1.0), (x + 1.0) * 2.0 + 1.0)
    assert python_calls.calls == 0


def test_compile_waits_for_the_functions_other_background_compilations(tiered, monkeypatch):
    """``f.compile(x)`` returns with no compilation of ``f`` left running: a slower one of
    another trace, started by a tiered call, is waited for too."""
    real = cpu_compile.compile_module

    def slow_for_integers(module):
        if "int64" in str(module.main.param_types):
            time.sleep(1.0)
        return real(module)

    monkeypatch.setattr(cpu_compile, "compile_module", slow_for_integers)
    f = autostage.convert(lambda x: x * 2 + 1)
    np.testing.assert_array_equal(f(np.arange(4)), np.arange(4) * 2 + 1)  # Python, compiling
    f.compile(np.arange(4.0))  # another trace, compiled now (fast)
    assert len(f.concrete_functions) == 2
    assert all(c.prepared_runner() is not None for c in f.concrete_functions)
    assert not any(t.name.startswith("autostage-compile-") for t in threading.enumerate())


def test_calls_from_threads_while_compiling(tiered, gate, capsys):
    f = autostage.convert(make_step(autostage.Variable(np.float64(0.0))))
    start, results = threading.Barrier(6), {}

    def work(t):
        start.wait()
        for i in range(8):
            if t == 0 and i == 3:
                gate.set()  # compilation finishes while the other threads are calling
            x = np.full(3, 0.1 * (t + 1) - 0.05 * i)
            results[t, i] = (x, f(x, 1.5))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert f.trace_count == 1 and len(gate.seen) == 1  # one trace, compiled once
    expected_lines = []
    for x, (y, total) in results.values():
        want = np.tanh(x) * 1.5
        np.testing.assert_allclose(y, want, rtol=1e-12)
        np.testing.assert_allclose(total, np.sum(want), rtol=1e-12)
        expected_lines.append("positive" if np.sum(want) > 0 else "not positive")
    # one line per call (the printed totals may differ in their last digits: tanh's kernel)
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.rpartition(" ")[0] for line in lines) == sorted(expected_lines)


def test_tiered_off_compiles_on_the_first_call(gate):
    gate.set()
    f = autostage.convert(lambda x: x - 1.0)
    with config.TIERED.override(False):
        f(np.ones(3))
    assert f.concrete_functions[0].prepared_runner() is not None


def test_the_callers_settings_reach_the_background_compilation(tiered, gate):
    f = autostage.convert(lambda x: np.exp(x))
    with config.EXACT_MATH.override(True):
        f(np.ones(3))
    gate.set()
    f.compile(np.ones(3))
    assert gate.seen[0]["exact_math"] is True


def test_a_failed_background_compilation_is_raised_by_the_next_call(tiered, monkeypatch):
    released = threading.Event()

    def failing(module):
        released.wait(60)
        raise RuntimeError("the backend failed")

    monkeypatch.setattr(cpu_compile, "compile_module", failing)
    f = autostage.convert(lambda x: x + 1.0)
    np.testing.assert_array_equal(f(np.zeros(2)), np.ones(2))  # Python's result meanwhile
    (concrete,) = f.concrete_functions
    released.set()
    concrete._background.join(60)
    assert isinstance(concrete.background_error, RuntimeError)
    with pytest.raises(RuntimeError, match="the backend failed"):
        f(np.zeros(2))


def test_functions_not_made_by_convert_are_never_tiered(tiered, gate):
    gate.set()
    g = autostage.grad(lambda x: np.sum(x * x))
    np.testing.assert_allclose(g(np.arange(3.0)), 2.0 * np.arange(3.0))
    (concrete,) = g._staged.concrete_functions
    assert concrete.prepared_runner() is not None  # the gradient has no Python run to fall to


def test_a_process_waits_at_exit_for_its_compilation(tmp_path):
    """The script ends before its function compiles; the compiled code still reaches the disk
    cache (Numba's index files), so the next process loads it instead of compiling again."""
    script = tmp_path / "exits.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import autostage

        @autostage.convert
        def f(x):
            return np.tanh(x) @ x

        print("result", f(np.arange(4.0)))
    """))
    env = {"AUTOSTAGE_TIERED": "1", "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=240, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["result", str(np.tanh(np.arange(4.0)) @ np.arange(4.0))]
    assert out.stderr == ""
    assert list((tmp_path / "cache").rglob("*.nbi")), "nothing compiled reached the cache"


def test_a_fork_while_compiling_waits_for_the_compilation(tiered, gate):
    """``os.fork()`` (a fork-started ``multiprocessing`` pool) while a function compiles in the
    background: the child has no compiling thread, so the fork waits for it; the child's call
    used to wait forever for the trace's lock that thread held."""
    import os

    f = autostage.convert(lambda x: np.tanh(x) * 2.0)
    x = np.arange(5.0)
    np.testing.assert_allclose(f(x), np.tanh(x) * 2.0, rtol=1e-12)  # Python; compiling at the gate
    threading.Timer(0.5, gate.set).start()  # (the fork waits until it has compiled)
    pid = os.fork()
    if pid == 0:  # the child
        ok = False  # (an exception still ends the child here, failed)
        try:
            ok = np.allclose(f(x + 1.0), np.tanh(x + 1.0) * 2.0, rtol=1e-12)
        finally:
            os._exit(0 if ok else 3)
    assert_child_exits_cleanly(pid)


@pytest.fixture
def compiling_threads(monkeypatch):
    """The names of the threads in which Numba compiled an entry function, in order."""
    names = []
    real = cpu_compile._compile

    def recording(dispatcher, args, generated, python_module):
        names.append(threading.current_thread().name)
        return real(dispatcher, args, generated, python_module)

    monkeypatch.setattr(cpu_compile, "_compile", recording)
    return names


def test_numba_compiles_in_the_background_too(tiered, compiling_threads):
    """The background thread compiles the entry for the first call's argument types: the first
    compiled call does not compile (Numba's ``Dispatcher.compile`` is called off the caller's
    thread only)."""
    f = autostage.convert(lambda x, n: x * n + 1.0)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x, np.int64(2)), x * 2 + 1.0)
    f.compile(x, np.int64(2))
    np.testing.assert_array_equal(f(x, np.int64(3)), x * 3 + 1.0)
    assert len(compiling_threads) == 1
    assert compiling_threads[0].startswith("autostage-compile-")


def test_compile_compiles_for_the_arguments_given(compiling_threads):
    f = autostage.convert(lambda x: x * 2.0)
    concrete = f.compile(autostage.TensorSpec([None], np.float32))
    assert compiling_threads == [threading.current_thread().name]
    x = np.ones(40, np.float32)  # over 16 elements: no sizes in the key, the spec's trace
    np.testing.assert_array_equal(f(x), np.full(40, 2.0, np.float32))
    assert len(compiling_threads) == 1 and f.concrete_functions == [concrete]


def tape_step(x):
    with autostage.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.tanh(x) ** 2)
    return y, tape.gradient(y, x)


def fresh_variable(x):
    v = autostage.Variable(np.zeros(3))  # made once, by the first trace (Python: every call)
    v.assign_add(x)
    return (v.read(),)


def python_number_on_one_path(x):
    r = x.astype(np.float32).sum()
    if (x < 0).any():
        r = 0.0  # a Python float in Python, which staged code raises for (a float32 here)
    return (r,)


def python_number_before_a_loop(x):
    total = 0  # a Python int in Python when the loop does not run (a clear error staged)
    for i in range(int(x.sum()) - 1):
        total += x[i]
    return (total,)


@pytest.mark.parametrize("fn", [tape_step, fresh_variable, python_number_on_one_path,
                                python_number_before_a_loop])
def test_traces_whose_python_code_cannot_stand_in_are_not_tiered(tiered, gate, fn):
    """A GradientTape records only while tracing, and a Variable made while tracing is made once
    (Python would make one per call); a staged if or loop giving a variable a Python number on
    one path and a NumPy value of another kind on another raises where the Python number is
    (README, "Python numbers in staged code"): such a trace's first calls wait for compiled
    code, which raises the same way on every call."""
    gate.set()  # compilation may run: the first call waits for it instead of running Python
    expected_f = autostage.convert(fn)
    with config.TIERED.override(False):
        expected = [expected_f(np.arange(3.0)) for _ in range(2)]
    f = autostage.convert(fn)
    counted = None
    for i in range(2):
        got = f(np.arange(3.0))
        if i == 0:
            counted = Counting(f)
        for e, g in zip(expected[i], got, strict=True):
            np.testing.assert_array_equal(e, g)
            assert type(e) is type(g)
    assert counted.calls == 0
    assert all(c.staged_only for c in f.concrete_functions)


def test_a_tape_under_the_eager_switch_says_so():
    f = autostage.convert(tape_step)
    with config.EAGER.override(True), pytest.raises(
            autostage.runtime.autodiff.backprop.GradientError, match="run_functions_eagerly"):
        f(np.arange(3.0))
