"""A realistic program with random draws: particles diffusing between absorbing walls.

The step comes from a "library" function (marked ``do_not_convert``, as an installed package's
function would be called as it is). Called with the simulation's Generator, its draw is staged
(the Generator stands in for the user's one while tracing), so the staged program gives exactly
plain Python's numbers, every call, on both targets. Called without one, the library draws from
its own module-level Generator at trace time: staging refuses that clearly (the numbers would be
frozen into the trace) instead of returning the same trajectory at every call; the same for a
library that draws from Python's ``random`` module.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from autostage.runtime.staging.random_draws import RandomStagingError

import autostage

TARGETS = ["interpreter", "cpu"]
_LIBRARY_RNG = np.random.default_rng(2024)


@autostage.do_not_convert  # stands for a function of an installed package
def _library_brownian_step(shape, scale, rng=None):
    rng = _LIBRARY_RNG if rng is None else rng
    return rng.normal(0.0, scale, size=shape)


@autostage.do_not_convert
def _library_pick(n):
    return random.randrange(n)


def diffuse(n, wall, max_steps, rng):
    """Steps ``n`` particles from 0 until all are absorbed (|x| >= wall) or max_steps; returns
    their final positions, the step at which each was absorbed (-1: never) and the number of
    steps run."""
    pos = np.zeros(n)
    absorbed_at = np.full(pos.shape, -1)
    step = 0
    while step < max_steps and np.any(absorbed_at < 0):
        moving = absorbed_at < 0
        pos = np.where(moving, pos + _library_brownian_step(n, 0.5, rng), pos)
        newly = moving & (np.abs(pos) >= wall)
        absorbed_at = np.where(newly, step, absorbed_at)
        step += 1
    return pos, absorbed_at, step


def diffuse_with_library_rng(n, wall, max_steps):
    pos = np.zeros(n)
    absorbed_at = np.full(pos.shape, -1)
    step = 0
    while step < max_steps and np.any(absorbed_at < 0):
        moving = absorbed_at < 0
        pos = np.where(moving, pos + _library_brownian_step(n, 0.5), pos)
        absorbed_at = np.where(moving & (np.abs(pos) >= wall), step, absorbed_at)
        step += 1
    return pos, absorbed_at, step


def kick_one_particle(pos, n):
    i = _library_pick(n)
    return pos + np.where(np.arange(n) == i, 1.0, 0.0)


@pytest.mark.parametrize("target", TARGETS)
def test_the_staged_simulation_gives_pythons_numbers_at_every_call(target):
    staged = autostage.convert(target=target)(diffuse)
    rng, plain_rng = np.random.default_rng(7), np.random.default_rng(7)
    results = []
    for wall, max_steps in [(1.5, 200), (1.5, 200), (3.0, 5), (0.2, 1000)]:
        got = staged(6, np.float64(wall), np.int64(max_steps), rng)
        expected = diffuse(6, np.float64(wall), np.int64(max_steps), plain_rng)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)
            assert np.asarray(g).dtype == np.asarray(e).dtype
        assert rng.bit_generator.state == plain_rng.bit_generator.state
        results.append(got)
    assert not np.array_equal(results[0][0], results[1][0])  # fresh draws, not frozen
    assert staged.trace_count == 1


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args, words", [
    (diffuse_with_library_rng, (4, np.float64(1.5), np.int64(50)),
     ["while diffuse_with_library_rng was traced", "Generator",
      "_LIBRARY_RNG", "passed in"]),
    (kick_one_particle, (np.zeros(4), 4),
     ["while kick_one_particle was traced", "Python's random module", "not staged"]),
])
@pytest.mark.sees_old_objects  # the library's generator is made at import (tests/conftest.py)
def test_a_library_drawing_from_its_own_generator_is_refused(target, fn, args, words):
    first, second = fn(*args), fn(*args)  # plain Python runs, drawing new numbers each call
    if fn is diffuse_with_library_rng:
        assert not np.array_equal(first[0], second[0])
    state = _LIBRARY_RNG.bit_generator.state
    with pytest.raises(RandomStagingError) as info:
        autostage.convert(target=target)(fn)(*args)
    for word in words:
        assert word in str(info.value)
    if fn is diffuse_with_library_rng:
        assert _LIBRARY_RNG.bit_generator.state != state  # it drew at trace time: refused
