"""Writes of arrays into arrays on the cpu target (``backends/cpu/array_writes.py``): loops in a
shared helper instead of Numba's slice assignment, whose shape message made Numba compile its
string machinery (2-3 s) in each process compiling such a program. Values, broadcasting,
overlap and NumPy's messages must be NumPy's; the subprocess test checks the compile itself."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from compile_events import RECORDER

import autostage


def write_rows(x, v, i):
    y = x.copy()
    y[i:i + 2] = v
    return y


def shift(x):
    y = x.copy()
    y[1:] = y[:-1]  # overlapping: NumPy reads the source whole first
    return y


def stack_rows(x, n):
    rows = []
    for i in range(n):
        rows.append(x * i)
    return np.stack(rows)


@pytest.mark.parametrize("shape, value_shape", [((50,), (2,)), ((50,), (1,)), ((30, 40), (40,)),
                                                ((30, 40), (2, 40)), ((30, 40), (1, 2, 1))])
def test_indexed_writes_broadcast_as_numpy(shape, value_shape):
    f = autostage.convert(write_rows)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    v = np.arange(1, 1 + np.prod(value_shape), dtype=np.float64).reshape(value_shape)
    np.testing.assert_array_equal(f(x, v, np.int64(3)), write_rows(x, v, 3))
    assert "h_assign_" in f.backend_source(x, v, np.int64(3))


# (sizes known at run time only: checked by the compiled code)
@pytest.mark.parametrize("value_shape", [(40,), (2, 30), (20, 20, 40)])
def test_indexed_writes_that_do_not_broadcast_raise_numpys_error(value_shape):
    f = autostage.convert(write_rows)
    x, v = np.zeros((30, 40)), np.ones(value_shape)
    if value_shape == (40,):
        x = np.zeros(50)
    with pytest.raises(ValueError) as expected:
        write_rows(x, v, 3)
    with pytest.raises(ValueError, match="could not broadcast input array") as got:
        f(x, v, np.int64(3))
    assert str(got.value) == str(expected.value)


def test_an_overlapping_source_is_read_before_it_is_written():
    f = autostage.convert(shift)
    x = np.arange(60.0).reshape(20, 3)
    np.testing.assert_array_equal(f(x), shift(x))
    x = np.arange(40.0)
    np.testing.assert_array_equal(f(x), shift(x))


def test_list_rows_variables_and_broadcasts_write_through_the_helper():
    f = autostage.convert(stack_rows)
    x = np.arange(40.0).reshape(20, 2)
    np.testing.assert_array_equal(f(x, np.int64(5)), stack_rows(x, 5))
    v = autostage.Variable(np.zeros((20, 2)))

    @autostage.convert
    def accumulate(x):
        v.assign_add(x * 2.0)
        return np.broadcast_to(x[0], x.shape) + 0.0

    np.testing.assert_array_equal(accumulate(x), np.broadcast_to(x[0], x.shape))
    accumulate(x)
    np.testing.assert_array_equal(v.read(), 4.0 * x)


def test_compiling_array_writes_compiles_no_string_formatting(tmp_path):
    """In a fresh process and cache: no Numba overload that formats shapes into a message
    (array writes, reshapes, stacking a typed list)."""
    script = tmp_path / "writes.py"
    script.write_text(textwrap.dedent("""
        import json, numpy as np
        from numba.core import event
        import autostage
    """) + RECORDER + textwrap.dedent("""
        v = autostage.Variable(np.zeros(40))

        @autostage.convert
        def program(x, w, n):
            y = x.copy()
            y[1:3] = w
            rows = []
            states = [w[0]]  # a typed list (its first item is not a row of the loop's)
            for i in range(n):
                rows.append(y[i] * 2.0)
                states.append(states[-1] + y[i])
            v.assign(y[0] + 1.0)
            # reshapes to sizes known at run time: NumPy's message when they do not fit
            return (np.stack(rows), np.broadcast_to(w[0], (5, 40)) + 1.0,
                    x.reshape(n * 3, -1), x.reshape(n, 300), np.stack(states[1:]))

        with event.install_listener("numba:compile", Recorder()):
            program(np.zeros((30, 40)), np.ones((2, 40)), np.int64(4))
        print(json.dumps(names))
    """))
    env = {"AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"), "AUTOSTAGE_TIERED": "0",
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    names = json.loads(out.stdout.strip().splitlines()[-1])
    assert any(name.startswith("h_assign_") for name in names)
    assert not [name for name in names if "shape_context" in name or "unicode" in name
                or "str_generic" in name or "integer_str" in name], names


def stack_two(a, b):
    return np.stack([a, b])


def concatenate_rows(a, b):
    return np.concatenate([a, b], axis=0)


@pytest.mark.parametrize("b_shape", [(1,), (40,)])  # (1,): the slot's write must not broadcast
def test_stacking_parts_of_other_shapes_raises_numpys_error(b_shape):
    f = autostage.convert(stack_two)
    a, b = np.ones(30), np.ones(b_shape)
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        f(a, b)
    np.testing.assert_array_equal(f(a, a * 2.0), stack_two(a, a * 2.0))


def test_concatenated_parts_are_written_in_their_slots():
    f = autostage.convert(concatenate_rows)
    a, b = np.arange(60.0).reshape(20, 3), -np.arange(30.0).reshape(10, 3)
    np.testing.assert_array_equal(f(a, b), concatenate_rows(a, b))


def rows_of_tuples(x, steps):
    s, i = 100, 1
    hist = np.zeros((steps, 2), dtype=np.int64)
    rates = np.zeros((steps, 2), dtype=np.float32)
    for d in range(steps):
        s -= x[d]
        i += x[d]
        hist[d] = (s, i)
        rates[d] = [s / 100, 0.5]
    return hist, rates


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_row_written_from_a_tuple_of_staged_values(target):
    # (refused with a message about NumPy functions and random draws until the twenty-ninth
    # session)
    x = np.array([1, 2, 3, 4, 5, 6])
    for got, want in zip(autostage.convert(rows_of_tuples, target=target)(x, 6),
                         rows_of_tuples(x, 6), strict=True):
        np.testing.assert_array_equal(got, want, strict=True)
