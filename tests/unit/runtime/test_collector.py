"""The garbage collector's thresholds while autostage compiles (runtime/collector.py)."""

import gc
import threading

import numpy as np
import pytest
from autostage.runtime import collector

import autostage


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_raised_while_compiling_and_restored(thresholds):
    with collector.deferred():
        assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, 10, 10)
        with collector.deferred():  # nested: one raise
            assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_error(thresholds):
    with pytest.raises(ZeroDivisionError), collector.deferred():
        1 / 0  # noqa: B018
    assert gc.get_threshold() == (700, 10, 10)


def test_users_settings_kept(thresholds):
    gc.set_threshold(0, 10, 10)  # collection off: left off
    with collector.deferred():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)
    gc.set_threshold(700, 10, 10)
    with collector.deferred():
        gc.set_threshold(500, 5, 5)  # changed meanwhile: not overwritten at the end
    assert gc.get_threshold() == (500, 5, 5)


def test_threads_share_one_raise(thresholds):
    inside, leave = threading.Event(), threading.Event()

    def compile_elsewhere():
        with collector.deferred():
            inside.set()
            leave.wait()

    thread = threading.Thread(target=compile_elsewhere)
    thread.start()
    inside.wait()
    with collector.deferred():
        pass
    assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, 10, 10)  # the thread's compile
    leave.set()
    thread.join()
    assert gc.get_threshold() == (700, 10, 10)


def test_a_first_call_compiles_with_the_raise_and_restores(thresholds, monkeypatch):
    from autostage.runtime.backends.cpu import compile as cpu_compile

    seen = []
    numba_compile = cpu_compile._compile

    def spy(*args):
        seen.append(gc.get_threshold())
        return numba_compile(*args)

    monkeypatch.setattr(cpu_compile, "_compile", spy)

    @autostage.convert
    def f(x):
        total = np.zeros_like(x)
        for i in range(x.shape[0]):
            total = total + np.tanh(x) * i
        return total

    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(f(x), sum(np.tanh(x) * i for i in range(5)), rtol=1e-12)
    assert seen == [(collector.YOUNG_THRESHOLD, 10, 10)]  # raised while Numba compiled
    assert gc.get_threshold() == (700, 10, 10)
