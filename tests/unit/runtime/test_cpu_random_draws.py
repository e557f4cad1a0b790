"""Native Generator draws of generated code (``lower_random.NATIVE``), called through
``runtime/backends/cpu/random_draws.py`` (compiled once per machine): bit-identical to NumPy's
own draws from a Generator seeded alike, and the generator advanced as NumPy advances it."""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.backends.cpu import compile as cpu_compile

import autostage
from autostage import config

DRAWS = {
    "random": lambda g, n: g.random(n),
    "random_float32": lambda g, n: g.random(n, dtype=np.float32),
    "standard_normal": lambda g, n: g.standard_normal(n),
    "normal": lambda g, n: g.normal(1.5, 2.0, size=n),
    "normal_scalar": lambda g, n: g.normal(0.5),
    "uniform": lambda g, n: g.uniform(-1.0, 3.0, n),
    "integers": lambda g, n: g.integers(3, 17, size=n),
    "integers_high_only": lambda g, n: g.integers(9),
    "exponential": lambda g, n: g.exponential(2.5, size=n),
    "standard_exponential": lambda g, n: g.standard_exponential(n),
}


def _program(draw):
    def program(g, n):
        first = draw(g, n)
        return first, draw(g, n)  # (the generator advanced between the two)
    return program


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_native_draws_are_numpys(name):
    program = _program(DRAWS[name])
    staged = autostage.convert(program, target="cpu")
    got = staged(np.random.default_rng(7), np.int64(5))
    want = program(np.random.default_rng(7), 5)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    with config.STATIC_SIZES.override(0):
        concrete = autostage.convert(program, target="interpreter").get_concrete_function(
            np.random.default_rng(7), np.int64(5))
    source = cpu_compile.generate(concrete.module).source
    method = name.split("_float32")[0].split("_scalar")[0].split("_high_only")[0]
    assert f"cpu_draw.{method}(" in source and "objmode" not in source


def _weighted_choice(g, w):
    return g.choice(w.shape[0], size=w.shape[0], p=w)


def test_a_draw_through_numpy_is_a_helper_shared_by_every_program():
    """A draw Numba has no native form of calls NumPy in an objmode block: a helper whose text
    reads only ``cpu_random``, bound from a shared module (its objmode block compiled by Numba's
    pipeline once per machine, not once per program), with NumPy's values."""
    w = np.array([0.1, 0.2, 0.3, 0.4])
    staged = autostage.convert(_weighted_choice, target="cpu")
    np.testing.assert_array_equal(staged(np.random.default_rng(3), w),
                                  _weighted_choice(np.random.default_rng(3), w))
    with config.STATIC_SIZES.override(0):
        concrete = autostage.convert(_weighted_choice, target="interpreter").get_concrete_function(
            np.random.default_rng(3), w)
    source = cpu_compile.generate(concrete.module).source
    assert "cpu_shared.helpers(('h_random_" in source and "cpu_random.call(" in source
    assert "_py" not in source
