"""Tests for runtime/escapes.py (issue 8, item 18b): a staged tensor stored where it outlives the
trace is a clear error naming where, at trace time; local containers stay fine."""

import numpy as np
import pytest
from autostage.runtime.escapes import TensorEscapeError

import autostage

TARGETS = ["interpreter", "cpu"]
G = []
HOLDER = type("Holder", (), {})()
RESULT = None


def appends_to_a_global(x):
    G.append(x + 1)
    return x


def sets_an_attribute(x):
    HOLDER.v = x + 1
    return x


def assigns_a_global(x):
    global RESULT
    RESULT = x + 1
    return x


def make_nonlocal_writer():
    last = None

    def writes(x):
        nonlocal last
        last = x * 2
        return x

    return writes


def local_lists_are_fine(x):
    parts = [x, x + 1]
    table = {"a": x}
    return parts[1] + table["a"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, where", [
    (appends_to_a_global, r"test_escapes.py:\d+: a staged tensor \(created at .*\) is stored in "
                          r"G.append\(\)"),
    (sets_an_attribute, r"test_escapes.py:\d+: a staged tensor \(created at .*\) is stored in "
                        r"HOLDER.v"),
    (assigns_a_global, r"a staged tensor \(created at .*test_escapes.py:\d+\) is stored in "
                       r"global variable 'RESULT'"),
    (make_nonlocal_writer(), r"a staged tensor \(created at .*test_escapes.py:\d+\) is stored "
                             r"in nonlocal variable 'last'"),
])
def test_a_tensor_escaping_the_trace_is_a_clear_error(target, fn, where):
    f = autostage.convert(fn, target=target)
    with pytest.raises(TensorEscapeError, match=where):
        f(np.zeros(2))
    assert G == [] and not hasattr(HOLDER, "v")


@pytest.mark.parametrize("target", TARGETS)
def test_tensors_in_local_containers_are_fine(target):
    f = autostage.convert(local_lists_are_fine, target=target)
    assert f(np.ones(2)).tolist() == [3.0, 3.0]


class Scaled(autostage.Module):
    def __init__(self):
        super().__init__()
        self.w = autostage.Variable(np.ones(2))

    def step(self, g):
        self.w -= 0.5 * g  # rebinds self.w to an array in Python too: the Variable is lost
        return self.w * 1


@pytest.mark.parametrize("target", TARGETS)
def test_an_in_place_operator_replacing_a_variable_says_to_update_it(target):
    # said "keep state ... in an autostage.Variable", which self.w already was
    model = Scaled()
    with pytest.raises(TensorEscapeError, match=r"test_escapes.py:\d+: self.w \(reached through "
                       r"'self'\) holds an autostage.Variable, which this assignment replaces "
                       r".*`self.w.assign_sub\(d\)`"):
        autostage.convert(model.step, target=target)(np.ones(2))
    assert isinstance(model.w, autostage.Variable) and model.w.read().tolist() == [1.0, 1.0]
