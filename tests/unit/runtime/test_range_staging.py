"""A long ``for`` over a Python ``range`` inside a trace is staged as one loop, not unrolled.

The loop becomes a staged ``while`` when the range is longer than ``config.UNROLL_LIMIT`` and
the loop carries a staged value or its body uses one from outside it; else the first iteration
runs as Python (it may make the state staged), and the rest is staged after it or unrolled.
Each program below is compared with plain Python (values, dtypes, Python result types,
stdout); the IR says whether the loop was staged or unrolled.
"""

from __future__ import annotations

import numpy as np
import pytest
from autostage.runtime.staging.errors import PythonSideEffectError
from test_staging_support import assert_same_outcome

import autostage
from autostage import config

TARGETS = ["interpreter", "cpu"]


def weak_index(x, n):
    for i in range(n):
        x = x * i + 1
    return x


def printing(x, n):
    for i in range(n):
        print(f"step {i}", x.sum())
        x = x + 1
    return x


def breaking(x, n):
    for i in range(n):
        if x.sum() > 20:
            break
        x = x + i
    return x, i


def returning(x, n):
    for i in range(n):
        if x.sum() > 20:
            return x * 0, i
        x = x + i
    return x, -1


def python_list_read(x, n):
    words = ["a", "bb", "ccc", "dddd", "e", "ff", "ggg", "hhhh", "i", "jj", "k", "l"]
    for i in range(n):
        x = x + len(words[i])
    return x


def type_from_first_iteration(x, n):
    y = None
    for i in range(n):
        y = x * i
    return y


def python_string(x, n):
    s = ""
    for i in range(n):
        s = s + str(i)
        x = x + 1
    return x, s


def nested(x, n):
    for i in range(n):
        for j in range(i):
            x = x + j
    return x


def float32_weak(x, n):
    for i in range(n):
        x = x + 0.5 * i
    return x


def dict_state(x, n):
    d = {"a": x}
    for i in range(n):
        d["a"] = d["a"] + i
    return d["a"]


def list_of_steps(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return np.stack(out)


def stepped(x, n):
    total = 0
    for i in range(2, n, 3):
        total += i
        x = x - i
    return x, total


def backwards(x, n):
    for i in range(n, 0, -2):
        x = x * 2 + i
    return x


def softmax_steps(w, x, y, n):
    for _ in range(n):
        z = x @ w
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p = p / p.sum(axis=1, keepdims=True)
        p[np.arange(y.shape[0]), y] -= 1.0
        w = w - 0.1 * (x.T @ p) / x.shape[0]
    return w


def fill_from_argument(x, n):
    out = np.zeros(n)  # Python sizes: a NumPy array, no staged value in the state yet
    for i in range(n):
        out[i] = x[i % 3] * i
    return out


def python_state_printing(x, n):
    total = 0.0
    for i in range(n):
        print("step", i)
        total = total + x[i % 3]
    return total


def returning_from_python_state(x, n):
    """``y`` first bound in the loop, which may return: its first iteration runs as Python."""
    for i in range(n):
        if x[i % 3] * i > 5:
            return i, x[i % 3]
        y = x[i % 3] * 2
    return -1, y


def fill_rows_from_argument(x, n):
    out = np.zeros((n, 3))
    for i in range(n):
        for j in range(3):
            out[i, j] = x[(i + j) % 3] * i - j
    return out


class _Total:
    def __init__(self):
        self.total = 0.0


def attribute_from_python_state(x, n):
    acc = _Total()
    for i in range(n):
        acc.total = acc.total + x[i % 3]
    return acc.total


def python_int_from_comparisons(x, n):
    k = 0
    for i in range(n):
        k = k * 3 + int(x[i % 3] * i > 2)
    return k


def python_table(x, n):
    table = np.zeros(n)
    for i in range(n):
        table[i] = i * i
    return x + table.sum()


PROGRAMS = [weak_index, printing, breaking, returning, python_list_read,
            type_from_first_iteration, python_string, nested, float32_weak, dict_state,
            list_of_steps, stepped, backwards, fill_from_argument, python_state_printing,
            returning_from_python_state, fill_rows_from_argument, attribute_from_python_state,
            python_int_from_comparisons, python_table]



@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_same_as_python(fn, target, capsys):
    x = np.ones(3, np.float32)
    for n in (3, 12):
        want = fn(x, n)
        printed = capsys.readouterr().out
        assert_same_outcome(want, autostage.convert(fn, target=target)(x, n), 1e-6)
        assert capsys.readouterr().out == printed


def _loops(fn, *args) -> int:
    return autostage.convert(fn).ir(*args).count(" = while ")


def test_long_range_is_one_staged_loop():
    x = np.ones(3, np.float32)
    limit = config.UNROLL_LIMIT.value()
    assert _loops(float32_weak, x, limit) == 0  # unrolled: no loop in the IR
    assert _loops(float32_weak, x, limit + 1) == 1
    with config.UNROLL_LIMIT.override(0):
        assert _loops(float32_weak, x, 3) == 1
    with config.UNROLL_LIMIT.override(100):
        assert _loops(float32_weak, x, 50) == 0


def test_a_loop_that_uses_staged_values_is_staged_whole_from_a_python_state():
    """The first iteration run as Python would make the state staged (the array filled from an
    argument), and the rest staged after it: a second copy of the body. The whole loop is
    staged instead; a loop of Python values only (a table of squares) still unrolls."""
    x = np.ones(3, np.float32)
    ir = autostage.convert(fill_from_argument).ir(x, 12)
    assert ir.count(" = while ") == 1
    assert ir.count(" = multiply") == 1  # one body
    assert " = full" in ir  # np.zeros made at run time, not a constant copied
    assert _loops(python_state_printing, x, 12) == 1
    assert _loops(python_table, x, 12) == 0


def test_loops_that_need_python_values_unroll():
    x = np.ones(3, np.float32)
    with config.UNROLL_LIMIT.override(0):
        assert _loops(python_string, x, 12) == 0  # a Python str carried
        assert _loops(nested, x, 12) == 2  # staged, and the inner range(i) inside it


def test_a_training_loop_of_a_hundred_steps_stays_small():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 4)), rng.integers(0, 3, 16)
    w = np.zeros((4, 3))
    staged = autostage.convert(softmax_steps)
    np.testing.assert_allclose(staged(w, x, y, 100), softmax_steps(w, x, y, 100), rtol=1e-10)
    assert staged.ir(w, x, y, 100).count("matmul") == 2  # one step, in the loop


def test_python_int_carried_past_int64_is_a_clear_error():
    def powers(x, n):
        c = 1
        for _ in range(n):
            c = c * 10
            x = x + 1
        return x, c

    x = np.ones(2)
    assert autostage.convert(powers)(x, 12)[1] == 10 ** 12
    with pytest.raises(OverflowError, match=r"does not fit in int64 .*test_range_staging.py"):
        autostage.convert(powers)(x, 25)


def test_argument_lists_and_dicts_are_not_changed_silently():
    def logs(x, log):
        log.append(1)
        return x + 1

    def sets(x, d):
        d["k"] = x
        return x + 1

    def reads(x, d):
        return x + d["a"]

    log: list = []
    defined = f"defined at .*test_range_staging.py:{logs.__code__.co_firstlineno}"
    with pytest.raises(PythonSideEffectError, match=rf"logs \({defined}\) changes a Python list "
                                                    "given to it"):
        autostage.convert(logs)(np.ones(2), log)
    assert log == []
    with pytest.raises(PythonSideEffectError, match="changes a Python dict given to it"):
        autostage.convert(sets)(np.ones(2), {})
    np.testing.assert_array_equal(autostage.convert(reads)(np.ones(2), {"a": np.ones(2)}), 2.0)


def _row_sums(a, n):  # (numba-examples k-means: np.array([... for i in range(N)]))
    return np.array([a[i, :].sum() for i in range(n)])


def _squares(n):
    return [i * i for i in range(n)]


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_long_comprehension_over_a_python_range_is_one_staged_loop(target):
    """Unrolled, its program was N elements long: Numba's compile of k-means' comprehension
    took 6 s at N=100 and 11 GB at its real size. Elements of Python values still unroll."""
    a = np.random.default_rng(0).random((40, 3))
    f = autostage.convert(_row_sums, target=target)
    np.testing.assert_array_equal(f(a, 40), _row_sums(a, 40))
    assert f.ir(a, 40).count(" = sum ") == 1  # (unrolled: 40)
    g = autostage.convert(_squares, target=target)
    assert g(12) == _squares(12) and type(g(12)[0]) is int


def _with_ranges(w, n):
    return ((w[:n] + range(n)) / n, w[:3] * range(1, 4), range(3) - w[:3], range(3) @ w[:3],
            range(n) == w[:n], range(n) < w[:n], w[:n] >= range(n), w[:3] ** range(3))


def _caught(w):  # (filterpy's stratified_resample: `(random(N) + range(N)) / N`)
    try:
        y = w + range(3)
    except TypeError:
        y = w * 0
    return y


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_range_operand_is_the_array_of_its_items(target):
    """As NumPy reads it, a Python range or a staged one (``range(n)``, ``n`` staged); it was a
    TypeError naming internal classes, which a user's ``except TypeError`` caught."""
    w = np.array([0.2, 0.4, 1.4, 2.0])
    got = autostage.convert(_with_ranges, target=target)(w, np.int64(3))
    for g, want in zip(got, _with_ranges(w, 3), strict=True):
        np.testing.assert_array_equal(g, want)
        assert np.asarray(g).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(autostage.convert(_caught, target=target)(w[:3]),
                                  _caught(w[:3]))
    assert _caught(w[:3]).tolist() == [0.2, 1.4, 3.4]
