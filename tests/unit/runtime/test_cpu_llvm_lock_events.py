"""Numba's "numba:llvm_lock" events are left out of autostage's compiles only
(``llvm_lock_events``): a user's own Numba code, and other threads, still broadcast them."""

import contextlib
import threading

import numba
import numpy as np
from autostage.runtime.backends.cpu import llvm_lock_events
from llvmlite import binding as ll
from numba.core import event

import autostage

LLVM_LOCK = "numba:llvm_lock"


class Counter(event.Listener):
    def __init__(self):
        self.starts = self.ends = 0
        self.threads = set()

    def on_start(self, e):
        self.starts += 1
        self.threads.add(threading.get_ident())

    def on_end(self, e):
        self.ends += 1


def _llvm_call():
    return ll.parse_assembly("define i32 @f() {\n  ret i32 0\n}").name  # (a few LLVM calls)


def test_a_quiet_thread_broadcasts_no_llvm_lock_events_and_others_still_do():
    llvm_lock_events.install()
    llvm_lock_events.install()  # (idempotent: one wrapper, not two)
    counter = Counter()
    with event.install_listener(LLVM_LOCK, counter):
        with llvm_lock_events.quiet():
            _llvm_call()
            assert counter.starts == 0
            other = threading.Thread(target=_llvm_call)
            other.start()
            other.join()
            assert counter.starts > 0 and counter.threads == {other.ident}
        quiet_and_other = counter.starts
        _llvm_call()
        assert counter.starts > quiet_and_other  # this thread again, outside the scope
    assert counter.starts == counter.ends  # paired, on every thread


SCALE = [1.0]


def _scaled(x):
    return np.tanh(x) * SCALE[0]  # (a constant of the trace: a new value, a new compile)


def _events_of_a_fresh_compile():
    SCALE[0] = float(np.random.default_rng().integers(1, 2**40))
    counter = Counter()
    with event.install_listener(LLVM_LOCK, counter):
        staged = autostage.convert(_scaled, target="cpu")
        x = np.linspace(-1.0, 1.0, 7)
        staged.compile(x)
        np.testing.assert_allclose(staged(x), np.tanh(x) * SCALE[0], rtol=1e-15)
    assert counter.starts == counter.ends
    return counter.starts


def test_autostage_compiles_without_the_events_and_a_users_numba_compile_with_them(
        monkeypatch):
    _events_of_a_fresh_compile()  # (the process's first compile starts Numba's CPU target)
    quiet = _events_of_a_fresh_compile()
    monkeypatch.setattr(llvm_lock_events, "quiet", contextlib.nullcontext)
    loud = _events_of_a_fresh_compile()
    assert loud > 200 and quiet < loud / 10  # (a few LLVM calls happen outside the compile)
    counter = Counter()
    with event.install_listener(LLVM_LOCK, counter):
        numba.njit(lambda v: v + 1.0)(1.0)
    assert counter.starts > 0  # a user's compile: Numba's events as ever
