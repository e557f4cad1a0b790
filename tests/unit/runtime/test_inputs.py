"""Tests for runtime/inputs.py (issue 9, items 7 and 8): ndarray subclasses and dtypes of staged
arguments — staged as Python computes with them, or refused naming the argument."""

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def _affine(x, y):
    return x * 2 + y


def _parts(x, y):
    return x, x + y, np.sum(x)


class Plain(np.ndarray):
    pass


@pytest.fixture
def memmap(tmp_path):
    mm = np.memmap(tmp_path / "a.dat", dtype=np.float64, mode="w+", shape=(3,))
    mm[:] = [1.0, 2.0, 3.0]
    return mm


@pytest.mark.parametrize("target", TARGETS)
def test_memmap_is_staged_as_the_ndarray_it_is(target, memmap):
    f = autostage.convert(target=target)(_parts)
    same, total, s = f(memmap, np.float64(1.0))
    p_same, p_total, p_s = _parts(memmap, np.float64(1.0))
    assert same is memmap is p_same  # the argument itself comes back, as in Python
    assert type(total) is type(p_total) is np.ndarray  # NumPy's results from a memmap: ndarray
    assert total.tolist() == p_total.tolist() == [2.0, 3.0, 4.0]
    assert type(s) is type(p_s) is np.float64 and s == p_s == 6.0
    memmap[0] = 10.0  # read at each call, never frozen
    assert f(memmap, np.float64(0.0))[1].tolist() == [10.0, 2.0, 3.0]
    assert f.trace_count == 1


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("make, kind, why", [
    (lambda: np.matrix([[1.0, 2.0]]), "numpy.matrix", "matrix product"),
    (lambda: np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "numpy.ma.MaskedArray", "mask"),
    (lambda: np.arange(2.0).view(Plain), "Plain", "would return Plain instances"),
    (lambda: np.rec.fromarrays([np.arange(2.0)], names="a"), "numpy.rec.recarray",
     "recarray instances"),
])
def test_other_subclasses_are_refused_naming_the_argument(target, make, kind, why):
    f = autostage.convert(target=target)(_affine)
    with pytest.raises(TypeError) as info:
        f(np.ones(2), {"b": [make()]})
    message = str(info.value)
    assert "_affine(): argument 'y'['b'][0] is a " in message
    assert kind in message and why in message and "np.asarray(y['b'][0])" in message


SUBCLASSES = {"matrix": lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]),
              "masked": lambda: np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]],
                                                   mask=[[0, 1], [0, 0]]),
              "user": lambda: np.arange(4.0).reshape(2, 2).view(Plain)}
HELD = None  # a global the functions below read


class Holder:
    def __init__(self, value):
        self.value = value

    def scaled(self, x):
        return x * self.value

    def total(self, x):
        return x + float(self.value.sum())


def _scaled_by_global(x):
    return x * HELD


def _plus_global_total(x):
    return x + float(HELD.sum())


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", SUBCLASSES)
@pytest.mark.parametrize("place", ["global", "attribute"])
def test_subclasses_read_as_constants_are_refused_where_staged_code_uses_them(
        target, kind, place, monkeypatch):
    """Staged as its data, ``x * m`` of a matrix would be element-wise, a masked array's mask
    ignored and a user subclass's results plain arrays: refused, naming the line, wherever
    the subclass is read (with the tiered start off, the compiled trace answers at once)."""
    global HELD
    monkeypatch.setenv("AUTOSTAGE_TIERED", "0")
    HELD = SUBCLASSES[kind]()
    f = autostage.convert(_scaled_by_global if place == "global" else Holder(HELD).scaled,
                          target=target)
    with pytest.raises(TypeError, match=r"an ndarray subclass, where converted code computes "
                                        r"with it(.|\n)*test_inputs.py"):
        f(np.ones((2, 2)))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", SUBCLASSES)
@pytest.mark.parametrize("place", ["global", "attribute"])
def test_what_python_computes_from_a_subclass_at_trace_time_follows_its_changes(
        target, kind, place, monkeypatch):
    """Python work on a subclass alone (``float(m.sum())``) runs at trace time: the trace is
    guarded by the subclass's contents, its mask and attributes, and traced again when they
    change in place."""
    global HELD
    monkeypatch.setenv("AUTOSTAGE_TIERED", "0")
    HELD = value = SUBCLASSES[kind]()
    plain = _plus_global_total if place == "global" else Holder(value).total
    f, x = autostage.convert(plain, target=target), np.ones(2)
    changes = [lambda: value.__setitem__((0, 0), 100.0)]
    if kind == "masked":
        changes.append(lambda: value.mask.__setitem__((0, 1), False))
    if kind == "user":
        changes.append(lambda: setattr(value, "note", 1))  # (sum() ignores it: same answer)
    for change in [lambda: None, *changes]:
        change()
        for _ in range(2):
            np.testing.assert_array_equal(f(x), plain(x))
    assert f(x)[0] == plain(x)[0] == 1.0 + value.sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_refused_subclass_does_not_share_the_ndarray_trace(target):
    f = autostage.convert(target=target)(_affine)
    assert f(np.ones(2), np.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="argument 'x' is a numpy.matrix"):
        f(np.matrix([[1.0, 1.0]]), np.ones(2))
    assert f(np.asarray(np.matrix([[1.0, 1.0]])), np.ones(2)).tolist() == [[3.0, 3.0]]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("value, words", [
    (np.array([1, "a"], dtype=object), "dtype object"),
    (np.array(["a", "b"]), "dtype <U1 (strings)"),
    (np.array([b"a"]), "dtype |S1 (bytes)"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype datetime64[D]"),
    (np.array([1], dtype="timedelta64[s]"), "dtype timedelta64[s]"),
    (np.zeros(2, dtype=[("a", "f8")]), "structured"),
    (np.zeros(2, dtype="V4"), "dtype |V4"),
    (np.datetime64("2020-01-01"), "dtype datetime64[D]"),
    pytest.param(np.zeros(2, dtype=np.longdouble), "extended precision",
                 marks=pytest.mark.skipif(np.dtype(np.longdouble) == np.float64,
                                          reason="longdouble is float64 here")),
])
def test_unstageable_dtypes_name_the_argument(target, value, words):
    f = autostage.convert(target=target)(_affine)
    with pytest.raises(TypeError) as info:
        f(np.ones(2), (np.ones(2), value))
    message = str(info.value)
    assert "_affine(): argument 'y'[1] has " in message and words in message
    assert "cannot stage" in message


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [">f8", ">i4", ">c16", ">u2"])
def test_non_native_byte_order_is_staged_in_native_order(target, dtype):
    wrong = ">" if np.little_endian else "<"
    dtype = np.dtype(wrong + dtype[1:])
    x = np.arange(4).astype(dtype)
    y = np.arange(4).astype(dtype.newbyteorder("="))[::-1].copy()
    f = autostage.convert(target=target)(_parts)
    got, expected = f(x, y), _parts(x, y)
    assert got[0] is x  # the caller's own array, in its byte order, as Python returns it
    for g, e in zip(got[1:], expected[1:], strict=True):
        assert g.dtype == e.dtype and g.dtype.isnative
        assert np.array_equal(g, e)
    native = np.arange(4, dtype=np.float32)
    mixed = f(x, native)  # big-endian with native: NumPy's promotion
    assert mixed[1].dtype == _parts(x, native)[1].dtype
    assert np.array_equal(mixed[1], _parts(x, native)[1])
    assert x.dtype == dtype and x.tolist() == [0, 1, 2, 3]  # the caller's array untouched
