"""A staged `if` whose paths all give Python numbers of one kind returns that Python number
(staging.merge keeps the merged value weak, the return slot included)."""

import numpy as np
import pytest

import autostage

TARGETS = ("interpreter", "cpu")


def returns_bools(a, b):
    if np.all(a == b):
        return True
    return False


def returns_ints(a, b):
    if np.all(a == b):
        return 1
    return a.shape[0]


def nested(a, b):
    if np.all(a == b):
        if a[0] > 0:
            return False
        return True
    return a.shape[0] > 2


def mixes_numpy(a, b):
    if np.all(a == b):
        return 1
    return np.int64(3)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [returns_bools, returns_ints, nested], ids=lambda f: f.__name__)
def test_python_numbers_on_every_path_stay_python(fn, target):
    a = np.arange(3.0)
    staged = autostage.convert(fn, target=target)
    for b in (a, a + 1):
        got, expected = staged(a, b), fn(a, b)
        assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("target", TARGETS)
def test_a_numpy_value_on_one_path_keeps_each_paths_type(target):
    a = np.arange(3.0)
    staged = autostage.convert(mixes_numpy, target=target)
    for b in (a, a + 1):  # a Python int on one path, np.int64 on the other (python_paths)
        got, expected = staged(a, b), mixes_numpy(a, b)
        assert type(got) is type(expected) and got == expected
