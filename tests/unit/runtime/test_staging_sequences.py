"""``==``, ``!=``, ``in`` of tuples and lists holding staged sizes (``runtime/staging/
sequences.py``): Python's answers, as staged bools where a size is known only at run time
(properscoring validates its inputs with ``obs.shape != forecasts.shape[:-1]``)."""

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def validate(obs, forecasts):
    if obs.shape != forecasts.shape[:-1]:
        raise ValueError("obs and forecasts must have matching shapes")
    k = obs.shape
    return (k == (5,), (5,) != obs.shape, forecasts.shape[:-1] in [(5,), (6,)],
            obs.shape[0] in (1, 5), obs.shape not in [(2,)], obs.shape == forecasts.shape,
            (obs.shape, 1) == ((5,), 1), [1] == [1.0], (1, 2) == [1, 2], k in [k])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shapes", [((5,), (5, 3)), ((4,), (5, 3)), ((6,), (6, 2)), ((1,), (1, 1))])
def test_comparisons_of_shapes_are_pythons(target, shapes):
    args = [np.zeros(s) for s in shapes]

    def outcome(f):
        try:
            return f(*args)
        except ValueError as e:
            return str(e)

    expected, got = outcome(validate), outcome(autostage.convert(validate, target=target))
    assert got == expected
    if isinstance(expected, tuple):
        assert [type(g) for g in got] == [type(e) for e in expected]  # Python bools
