"""The random-number overloads (autostage/operators/random_overloads.py): NumPy itself on Python
values; while tracing, every function of NumPy's global state and every Generator / RandomState
method goes to the runtime (so that no draw runs at trace time)."""

import functools
import random

import numpy as np
import pytest

from autostage import ag, calls, runtime
from autostage.operators import BUILTINS, random_overloads


@pytest.fixture
def recorded():
    log = []
    previous = {name: runtime.register_operator_hook(
        name, lambda *args, name=name, **kwargs: log.append((name, args, kwargs)) or "staged")
        for name in ("random_call", "random_method", "stdlib_random_method")}
    yield log
    for name, hook in previous.items():
        runtime.register_operator_hook(name, hook)


def test_every_global_random_function_is_overloaded():
    for name in ("rand", "randn", "normal", "randint", "choice", "shuffle", "lognormal", "seed",
                 "get_state", "sample"):
        function = getattr(np.random, name)
        assert BUILTINS[function] is getattr(ag, f"np_random_{name}")


def test_on_python_values_the_overloads_are_numpy(recorded):
    np.random.seed(3)
    expected = np.random.normal(1.0, 2.0, size=3), np.random.randint(5)
    np.random.seed(3)
    got = ag.np_random_normal(1.0, 2.0, size=3), ag.np_random_randint(5)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1] and type(got[1]) is type(expected[1])
    rng = np.random.default_rng(0)
    assert calls.converted(rng.normal)() == np.random.default_rng(0).normal()
    assert recorded == []


def test_while_tracing_they_go_to_the_runtime(recorded, monkeypatch):
    monkeypatch.setattr(random_overloads, "is_tracing", lambda: True)
    state = np.random.get_state()[1].copy()
    assert ag.np_random_rand(3) == "staged"
    rng = np.random.default_rng(0)
    assert calls.converted(rng.integers)(0, 5, size=2) == "staged"
    legacy = np.random.RandomState(0)
    assert calls.converted(legacy.normal)(size=2) == "staged"
    assert [(name, args[1:], kwargs) for name, args, kwargs in recorded] == [
        ("random_call", (3,), {}), ("random_method", (0, 5), {"size": 2}),
        ("random_method", (), {"size": 2})]
    assert recorded[0][1][0] is np.random.rand
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # nothing was drawn


def test_pythons_random_module_goes_to_the_runtime_while_tracing(recorded, monkeypatch):
    # random.random is a C method of the module's Random instance, random.gauss a Python one.
    random.seed(4)
    expected = [random.random(), random.gauss(0.0, 1.0), random.Random(1).choice([1, 2, 3])]
    random.seed(4)
    assert [calls.converted(random.random)(), calls.converted(random.gauss)(0.0, 1.0),
            calls.converted(random.Random(1).choice)([1, 2, 3])] == expected
    assert recorded == []
    monkeypatch.setattr(random_overloads, "is_tracing", lambda: True)
    state = random.getstate()
    own = random.Random(2)
    assert calls.converted(random.random)() == "staged"
    assert calls.converted(own.uniform)(0.0, 1.0) == "staged"
    assert calls.converted(functools.partial(random.gauss, 0.0))(1.0) == "staged"
    assert [(name, args[0].__name__, args[1:]) for name, args, _ in recorded] == [
        ("stdlib_random_method", "random", ()), ("stdlib_random_method", "uniform", (0.0, 1.0)),
        ("stdlib_random_method", "gauss", (0.0, 1.0))]
    assert random.getstate() == state and own.getstate() == random.Random(2).getstate()
