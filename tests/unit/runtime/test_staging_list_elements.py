"""Element types of lists built in staged code (runtime/staging/list_elements.py): a list of
Python numbers (range indices, ``int(t)``, ``x.shape[0]``) comes back as a list of Python
numbers, one of NumPy values as NumPy values, whatever structure returns it; its elements read
in staged code are Python numbers too; a list holding both is a clear error."""

import inspect
import json

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ["interpreter", "cpu"]
X = np.array([[0.0, 5.0], [3.0, 1.0], [2.0, 2.0]])


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def indices(x):
    out = []
    for i in range(x.shape[0]):
        out.append(i)
    return out


def argmaxes(x):
    out = []
    for row in x:
        out.append(int(np.argmax(row)))
    return out


def shapes_in_structures(x):
    out = []
    for _ in x:
        out.append(x.shape[1])
    return (out, 1), {"k": out}


def comprehension(x):
    return [float(r[0]) for r in x]


def flags(x):
    out = []
    for i in range(x.shape[0]):
        out.append(i > 0 and x.shape[1] > 1)
    return out


def branches_of_one_kind(x):
    out = [7]
    for i in range(x.shape[0]):
        if x[i, 0] > 1:
            out.append(i)
        else:
            out.append(x.shape[1])
    return out


def numpy_elements(x):
    out = []
    for i in range(x.shape[0]):
        out.append(np.int64(i))
    rows = []
    for row in x:
        rows.append(row[0])
    return out, rows


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [indices, argmaxes, shapes_in_structures, comprehension, flags,
                                branches_of_one_kind])
def test_lists_of_python_numbers_come_back_as_python_numbers(target, fn):
    f = autostage.convert(fn, target=target)
    for x in (X, X[:2]):  # the trace, then a cache hit
        got, expected = f(x), fn(x)
        assert got == expected
        assert json.dumps(got) == json.dumps(expected)
        assert repr(got) == repr(expected)  # types too: 1 vs np.int64(1)


@pytest.mark.parametrize("target", TARGETS)
def test_lists_of_numpy_values_stay_numpy_values(target):
    got = autostage.convert(numpy_elements, target=target)(X)
    assert got == numpy_elements(X)
    assert {type(v) for v in got[0]} == {np.int64} and {type(v) for v in got[1]} == {np.float64}


def read_back(x):
    out = []
    for i in range(x.shape[0]):
        out.append(i)
    last = out.pop()
    s = 0
    for v in out:
        s = s + v
    return out[0] / 2, last, s, out[1] * np.float32(2), out[1:]


@pytest.mark.parametrize("target", TARGETS)
def test_elements_read_from_a_list_of_python_numbers_are_python_numbers(target):
    got = autostage.convert(read_back, target=target)(X)
    expected = read_back(X)
    assert repr(got) == repr(expected)  # (0.0, 2, 1, np.float32(2.0), [1])


def mixed_in_branches(x):
    out = []
    for i in range(x.shape[0]):
        if x[i, 0] > 1:
            out.append(i)
        else:
            out.append(np.argmax(x[i]))
    return out


def mixed_after_loop(x):
    out = []
    for row in x:
        out.append(row[0])
    out.append(1.5)
    return {"values": out}


def int_in_a_float_list(x):
    out = [0]
    for row in x:
        out.append(int(row[0]))
    out[0] = x[0, 0].astype(np.int64)
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_a_returned_list_of_python_numbers_and_numpy_values_is_a_clear_error(target):
    f = autostage.convert(mixed_in_branches, target=target)
    with pytest.raises(StagingTypeError) as e:
        f(X)
    message = str(e.value)
    assert "the list 'out' returned by mixed_in_branches() holds" in message
    assert "Python ints (put in at " + line_of(mixed_in_branches, "append(i)") in message
    assert "NumPy values (put in at " + line_of(mixed_in_branches, "np.argmax") in message
    assert "int(v) or np.int64(v)" in message

    with pytest.raises(StagingTypeError, match=r"holds Python floats .* and NumPy values"):
        autostage.convert(mixed_after_loop, target=target)(X)
    with pytest.raises(StagingTypeError, match=r"holds Python ints .* and NumPy values \(put "
                                               r"in at .*test_staging_list_elements.py:\d+\)"):
        autostage.convert(int_in_a_float_list, target=target)(X)


def test_in_of_a_staged_list_is_refused_clearly():
    def has_one(w):
        return 1 in [v for v in w]

    with pytest.raises(StagingTypeError, match=r"`in` of a list built in staged code at .*"
                                               r"np\.stack\(lst\) == v"):
        autostage.convert(has_one)(np.array([1.0, 2.0]))


def functions_in_a_list_in_a_staged_loop(a, x):
    z = 0.0
    for _ in x:
        with np.errstate(divide="ignore"):
            fs = []
            for i in range(3):
                fs.append(lambda v, i=i: v + i)
            z = fs[0](x[1]) + fs[-1](a)
    return z


@pytest.mark.parametrize("target", TARGETS)
def test_a_list_of_functions_made_in_a_staged_loop_body(target):
    # (its element kinds were read as those of numbers: an internal AttributeError ('NoneType'
    # object has no attribute 'element') was staged as the loop's exception)
    x = np.array([0.9, 0.7, 1.5])
    staged = autostage.convert(functions_in_a_list_in_a_staged_loop, target=target)
    assert staged(np.int32(5), x) == functions_in_a_list_in_a_staged_loop(np.int32(5), x)
