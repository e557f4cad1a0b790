"""Strings made from staged values (``runtime/staging/text.py``): f-strings, ``str``, ``repr``,
``format`` and ``+`` of them, printed, raised, asserted with and returned with Python's text."""

# ruff: noqa: UP031, UP032, F507, F523, F524, F525 - %-formatting and str.format (their errors
# too) are what is tested

import collections
import contextlib
import dataclasses
import inspect
import io
import sys

import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]


def _outcome(f, args, whole=False):
    """What ``f(*args)`` returns (its repr) or raises (the type and the message's first line,
    or all of it), and what it prints."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return repr(f(*args)), out.getvalue()
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return f"{type(e).__name__}: {e if whole else str(e).splitlines()[0]}", out.getvalue()


def train(x, steps):
    loss = 0.0
    for ep in range(steps):
        loss = float(np.sum(x * x)) / (ep + 1)
        print(f"epoch {ep}: loss {loss:.4f}, n={x.shape[0]!r} total={x.sum()!r} "
              f"{x.sum():>10.3e} {x.sum()!s:^9}|")
    return loss


def check_rows(x, n):
    if x.shape[0] != n:
        raise ValueError(f"expected {n} rows, got {x.shape[0]} (sum {x.sum():.2f})")
    return x.sum()


def always_refuses(x):
    """Raises on every call, with nothing staged before: the message's text was a Text object at
    trace time (``str(e)`` failed) until the forty-fifth session."""
    n = x.shape[0]
    raise ValueError(f"{n} rows: not supported (sum {x.sum():.1f})")


def check_positive(x):
    assert x.sum() > 0, f"sum must be positive, got {x.sum()}"
    return x * 2


def pieces(x):
    message = "total: " + str(x.sum()) + " / " + repr(x.shape[0]) + " " + format(x.max(), ".1f")
    print(message, f"{x} {x[0]!s} {np.float32(x[0])} {x.shape} {(x.sum(), [x[0], 1.5])!r}")
    print(str(3), repr("a"), format(2.5, ".2f"), f"{'lit'!r:>6}", f"{x.size > 1}")
    return f"mean={x.mean():.3f}", (str(x.shape[0]) + "!", 7)


def _summary(row):
    return f"<{row.sum():g}>"


def rows(x):
    out = ""
    for i in range(x.shape[0]):
        print(_summary(x[i]), end=" ")
    return out + _summary(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (train, (np.array([1.0, 2.0]), np.int64(3))),
    (train, (np.array([1.0, 2.0], np.float32), np.int64(2))),
    (check_rows, (np.ones((3, 2)), 3)),
    (check_rows, (np.ones((2, 2)), 3)),
    (always_refuses, (np.ones((3, 2)),)),
    (check_positive, (np.ones(2),)),
    (check_positive, (-np.ones(2),)),
    (pieces, (np.arange(3.0),)),
    (pieces, (np.arange(4, dtype=np.int32),)),
    (rows, (np.arange(6.0).reshape(3, 2),)),
], ids=lambda v: getattr(v, "__name__", "-"))
def test_strings_of_staged_values_are_pythons(target, fn, args):
    """Printed (in staged loops), raised (only on the path that raises), asserted with and
    returned: the text of each field is Python's (a size is a Python int, ``x.sum()`` an
    ``np.float64``, whose ``!r`` says so), with its format spec."""
    assert _outcome(autostage.convert(fn, target=target), args) == _outcome(fn, args)


def length(x):
    return len(f"{x.sum()}")


def compare(x):
    return f"{x.sum()}" == "3.0"


def key(x):
    return {f"{x.sum()}": 1}


def split_lines(x):
    """filterpy 2.0.0's pretty_str: ``str(arr).split("\\n")`` (was autostage's AttributeError
    "'Text' object has no attribute 'split'", naming no line)."""
    return str(x.sum()).split("\n")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [length, compare, key, split_lines], ids=lambda f: f.__name__)
def test_other_uses_of_such_a_string_are_refused_naming_the_line(target, fn):
    with pytest.raises(autostage.StagingTypeError, match=r"test_staging_text.py:\d+"):
        autostage.convert(fn, target=target)(np.ones(3))


def raise_value(x):
    if x.sum() > 0:
        raise ValueError(x.shape[0])
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_an_exception_holding_a_staged_value_itself_is_refused(target):
    with pytest.raises(autostage.StagingTypeError, match=r"holds a staged value itself .*"
                                                         r"`raise ValueError\(f'\{n\}'\)`"):
        autostage.convert(raise_value, target=target)(np.ones(3))


def text_in_a_branch(x):
    if x.sum() > 0:
        message = f"positive {x.sum()}"
    else:
        message = "negative"
    print(message)


def text_grown_in_a_loop(x):
    message = ""
    for v in x:
        message = message + f"{v},"
    print(message)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [text_in_a_branch, text_grown_in_a_loop],
                         ids=lambda f: f.__name__)
def test_such_a_string_is_not_carried_by_a_staged_if_or_loop(target, fn):
    with pytest.raises(autostage.StagingTypeError,
                       match=r"a string made from staged values \(print it where it is made\)"):
        autostage.convert(fn, target=target)(np.ones(2))


def layouts(x):
    s = x.sum()
    print("%d items, %.3f total, 100%%" % (x.shape[0], s), "%s|%r|%5.1f" % (s / 2, s, x[0]))
    print("%(a)s and %(b)08.3f" % {"a": s, "b": s}, "%*d|%-6x|" % (5, s, x.shape[0] + 10))
    print("{} items, {:.3f} total {!r} {n:>8}|{n!r:>12}|{:{w}}".format(
        x.shape[0], s, s, s, n=s, w=6), "{0.shape} {0[1]}".format(x))
    print("%s" % f"<{s}>", "x={}".format(x) + "!")
    return "total {}".format(s), "%s/%d" % (s, x.shape[0])


Pair = collections.namedtuple("Pair", "n total")


def named_tuple(x):  # (Python takes a named tuple's items as the arguments)
    return "%d|%s" % Pair(x.shape[0], x.sum())


def too_few(x):
    return "%d and %d" % (x.sum(),)


def bad_index(x):
    return "{1}".format(x.sum())


def mixed_numbering(x):
    return "{} {0}".format(x.sum())


def containers(x):
    s = x.sum()
    return "%s %r" % ([s, 1], (s,)), "{} {!r}".format([s], (s, x.shape[0])), "%s" % [s]


def nan_as_int(x):
    return "%d" % x.sum()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (layouts, (np.array([1.5, 2.0, 3.0]),)),
    (layouts, (np.arange(4, dtype=np.int32),)),
    (too_few, (np.ones(2),)),
    (bad_index, (np.ones(2),)),
    (mixed_numbering, (np.ones(2),)),
    (nan_as_int, (np.array([np.nan]),)),
    (nan_as_int, (np.array([2.5]),)),
    (containers, (np.arange(3.0),)),
    (named_tuple, (np.arange(3.0),)),
], ids=lambda v: getattr(v, "__name__", "-"))
def test_percent_and_str_format_of_staged_values_are_pythons(target, fn, args):
    """``%`` and ``str.format`` lay out the same text as Python (fields, nested specs,
    ``*`` widths, mapping keys, attributes and items of a field); a layout's own error is
    Python's, a value's (``%d`` of NaN) raised when the formatting runs."""
    assert _outcome(autostage.convert(fn, target=target), args, whole=True) == _outcome(fn, args,
                                                                                      whole=True)


def star_width(x):
    return "%*d" % (x.shape[0] * 0 + x.sum(), 1)


def in_a_dict(x):
    return "%s" % {"total": x.sum()}


def dict_str(x):
    return str({"total": x.sum()})


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, message", [
    (star_width, "a '\\*' width or precision taken from a staged value at .*test_staging_text"),
    (in_a_dict, "formatting a dict holding staged values at .*test_staging_text"),
    (dict_str, "formatting a dict holding staged values at .*test_staging_text"),
])
def test_layouts_that_cannot_be_staged_name_the_line(target, fn, message):
    with pytest.raises(autostage.StagingTypeError, match=message):
        autostage.convert(fn, target=target)(np.arange(3))


@dataclasses.dataclass
class _State:
    pos: np.ndarray
    t: float = 0.0


def _print_a_dataclass(x):
    s = _State(x * 2, 1.5)
    print(s)
    return s.pos


def _fstring_of_a_dataclass(x):
    s = _State(x * 2)
    print(f"state: {s}")


def _repr_of_a_dataclass(x):
    return repr(_State(x * 2))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "where"), [
    (_print_a_dataclass, "print(s)"), (_fstring_of_a_dataclass, 'print(f"state: {s}")'),
    (_repr_of_a_dataclass, None)])
def test_text_of_an_object_made_by_code_not_converted_is_refused(target, fn, where):
    """A dataclass's ``__repr__`` (made by ``exec``: not converted) formats its staged field
    with the stand-in's debugging text: ``State(pos=<staged Tensor f64[2] ...>, t=1.5)`` was
    printed, or returned, where Python prints the array. A clear error instead."""
    with pytest.raises(autostage.StagingTypeError, match="holds a staged value, formatted by "
                                                         "code autostage does not convert") as e:
        autostage.convert(fn, target=target)(np.array([1.5, -2.0]))
    lines, first = inspect.getsourcelines(fn)
    if where is None:
        assert f"returned by {fn.__name__}" in str(e.value)
    else:
        line = first + next(i for i, text in enumerate(lines) if where in text)
        assert f"{inspect.getsourcefile(fn)}:{line}" in str(e.value)


def _write_in_a_loop(x):
    for v in x:
        sys.stdout.write(f"{v:.1f} ")
    return x.sum()


def _write_once(x):
    sys.stdout.write(f"total {x.sum():.2f}\n")
    return x.sum()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "where"), [
    (_write_in_a_loop, 'sys.stdout.write(f"{v:.1f} ")'),
    (_write_once, 'sys.stdout.write(f"total')])
def test_a_staged_string_written_by_code_not_converted_is_refused(target, fn, where):
    """``sys.stdout.write(f"{v:.1f} ")`` handed our ``Text`` to a stream: the stream autostage
    holds while tracing kept it and then failed to join it ("sequence item 0: expected str
    instance, Text found", hiding the error), and in a staged loop the TypeError was staged, to
    be raised at every call. A clear error naming the line now."""
    with pytest.raises(autostage.StagingTypeError, match="a string made from a staged value "
                                                         "was given to code autostage does "
                                                         "not convert") as e:
        autostage.convert(fn, target=target)(np.array([1.5, -2.0]))
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, text in enumerate(lines) if where in text)
    assert f"{inspect.getsourcefile(fn)}:{line}" in str(e.value)


def rows_plus_vector(x, n):
    rows = []
    for i in range(n):
        rows.append(x * i)
    stacked = np.array(rows)  # (n, 3), n known only at run time
    if x.sum() > 0:
        return stacked - np.ones(2)
    return stacked + np.ones(4)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x, n", [(np.ones(3), 2), (-np.ones(3), 5), (np.ones(3), 1)])
def test_a_broadcast_error_names_the_shapes_as_they_are_at_run_time(target, x, n):
    """NumPy's message names (2,3), not the trace's (?,3) (a fuzzer's finding)."""
    want = _outcome(rows_plus_vector, (x, np.int64(n)), whole=True)
    assert "(?" not in want[0] and want[0].startswith("ValueError: operands could not")
    assert _outcome(autostage.convert(rows_plus_vector, target=target), (x, np.int64(n)),
                    whole=True) == want
