"""A gradient prints what the function prints, once: replays in the backward pass are quiet.

The backward pass recomputes forward values by replaying branches, loop bodies, callees and
recursive calls; a print anywhere in them (nested, or in a function they call) must not run
again. The user's ``grad_fn`` of a custom gradient runs in the backward pass only: it prints.
"""

from __future__ import annotations

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def inner(x):
    print("inner", x)
    return x * 3.0


def in_branch(x):
    if x > 0:
        y = inner(x)
    else:
        y = x
    return y * x


def nested_branches(x):
    if x > 0:
        if x > 1:
            y = inner(x) + inner(x * 2.0)
        else:
            y = x
    else:
        y = x
    return y


def in_while(x, n):
    i = 0
    while i < n:
        x = inner(x)
        i += 1
    return x


def in_for(x, n):
    s = x
    for i in range(n):
        print("step", i)
        s = s * x
    return s


def recursive(x, n):
    if n <= 0:
        print("leaf", n)
        return x * 2.0
    y = recursive(x * 1.5, n - 1)
    return y + x


CASES = [
    (in_branch, (np.float64(1.0),), 6.0),
    (nested_branches, (np.float64(2.0),), 9.0),
    (in_while, (np.float64(1.0), np.int64(2)), 9.0),
    (in_for, (np.float64(1.0), np.int64(2)), 3.0),
    (recursive, (np.float64(1.0), np.int64(2)), 1 + 1.5 + 2 * 1.5 ** 2),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "args", "expected"), CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_prints_once(fn, args, expected, target, capsys):
    fn(*args)
    printed = capsys.readouterr().out
    assert printed  # each case prints in the forward pass
    gradient = autostage.grad(autostage.convert(fn, target=target))(*args)
    assert gradient == pytest.approx(expected)
    assert capsys.readouterr().out == printed


@autostage.custom_gradient
def _square(x):
    def grad_fn(dy):
        print("grad_fn")
        return dy * 2.0 * x
    return x * x, grad_fn


def _squares(x):
    i = 0
    while i < 2:
        x = _square(x)
        i += 1
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_custom_grad_fn_prints_in_the_backward_pass(target, capsys):
    gradient = autostage.grad(autostage.convert(_squares, target=target))(np.float64(1.5))
    assert gradient == pytest.approx(4 * 1.5 ** 3)
    assert capsys.readouterr().out == "grad_fn\ngrad_fn\n"
