"""Clocks and OS randomness (operators/nondeterministic.py) in staged code: refused where they are
written (their one trace-time result would be reused by every later call); they run as Python
runs them outside tracing."""

import datetime
import inspect
import logging
import os
import secrets
import time
import uuid
import warnings
from time import perf_counter

import numpy as np
import pytest
from autostage.runtime.staging import PythonSideEffectError
from autostage.runtime.staging.errors import StagingTypeError
from autostage.runtime.staging.nondeterministic_calls import NondeterministicCallError

import autostage

TARGETS = ["interpreter", "cpu"]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def wall_clock(x):
    t = time.time()
    return x + t


def imported_name(x):
    return x * perf_counter()


def looked_up_at_run_time(x):
    clock = time.monotonic_ns
    return x + clock()


def now(x):
    return x + datetime.datetime.now().second


def today(x):
    return x + datetime.date.today().day


def entropy(x):
    return x + len(os.urandom(4))


def token(x):
    return x + secrets.randbelow(10)


def an_id(x):
    return x + uuid.uuid4().int % 7


def an_id_through_a_name(x):
    make = uuid.uuid1
    return x + make().int % 7


def helper_reads_the_clock():
    return time.perf_counter_ns()


def in_a_helper(x):
    return x + helper_reads_the_clock()


CASES = [(wall_clock, "time.time()", "t = time.time()"),
         (imported_name, "time.perf_counter()", "perf_counter()"),
         (looked_up_at_run_time, "time.monotonic_ns()", "clock()"),
         (now, "datetime.datetime.now()", "now()"),
         (today, "datetime.date.today()", "today()"),
         (entropy, "os.urandom()", "urandom"),
         (token, "secrets.randbelow()", "randbelow"),
         (an_id, "uuid.uuid4()", "uuid4"),
         (an_id_through_a_name, "uuid.uuid1()", "make()"),
         (in_a_helper, "time.perf_counter_ns()", "perf_counter_ns")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "spelled", "text"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_nondeterministic_call_is_refused_where_it_is_written(fn, spelled, text, target):
    with pytest.raises(NondeterministicCallError) as info:
        autostage.convert(target=target)(fn)(np.zeros(2))
    message = str(info.value)
    where = fn if fn is not in_a_helper else helper_reads_the_clock
    assert message.startswith(f"{spelled} in staged code at {line_of(where, text)}")
    assert "once, when the function is traced" in message and "pass the value in" in message


@pytest.mark.parametrize(("fn", "spelled", "text"), CASES[:3], ids=["time", "perf", "mono"])
def test_outside_tracing_they_run_as_python_runs_them(fn, spelled, text):
    first = autostage.to_graph(fn)(np.ones(1))
    time.sleep(0.002)
    assert autostage.to_graph(fn)(np.ones(1))[0] > first[0]


def handled(x):
    try:
        t = time.time()
    except RuntimeError:
        t = 0.0
    return x + t


@pytest.mark.parametrize("target", TARGETS)
def test_a_user_handler_does_not_catch_the_refusal(target):
    with pytest.raises(NondeterministicCallError, match="time.time"):
        autostage.convert(target=target)(handled)(np.zeros(2))


def timed(f, x):
    start = time.perf_counter()
    y = f(x)
    return y, time.perf_counter() - start


@pytest.mark.parametrize("target", TARGETS)
def test_timing_a_staged_call_from_outside_works(target):
    f = autostage.convert(target=target)(lambda x: x * 2)
    y, seconds = timed(f, np.ones(3))
    assert y.tolist() == [2.0] * 3 and seconds > 0


# Warnings and logging -------------------------------------------------------------------------

_LOG = logging.getLogger("autostage.tests.effects")


def warns_when_negative(x):  # (nolds' "Data series very short!" pattern)
    s = x.sum()
    if s < 0:
        warnings.warn(f"negative sum {s}", RuntimeWarning)  # noqa: B028 - as nolds writes it
    return s


def warns_for_the_caller(x):
    if x.sum() < 0:
        warnings.warn("negative", stacklevel=2)
    return x


def logs_when_negative(x):  # (emcee's integrated_time)
    s = x.sum()
    if s < 0:
        _LOG.warning("negative sum %s", s)
    return s


def logs_through_the_module(x):
    logging.info("called")
    return x * 2


def _warnings_of(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


@pytest.mark.parametrize("target", TARGETS)
def test_a_warning_is_issued_at_run_time_from_the_users_line(target):
    """Both branches of a staged if are traced: the warning was issued on the first call
    whatever the data, and never again."""
    f = autostage.convert(warns_when_negative, target=target)
    line = line_of(warns_when_negative, "warnings.warn(").rpartition(":")
    for x in (np.ones(3), -np.ones(3), np.ones(2), -np.arange(4.0)):
        got, want = _warnings_of(f, x), _warnings_of(warns_when_negative, x)
        assert got == want
        assert got[1] == ([] if x.sum() >= 0 else [
            (f"negative sum {x.sum()}", RuntimeWarning, line[0], int(line[2]))])


def test_outside_tracing_a_warning_names_the_users_line():
    """Python's own stack level named the generated file (or autostage's overload)."""
    got = _warnings_of(autostage.to_graph(warns_when_negative), -np.ones(2))
    assert got == _warnings_of(warns_when_negative, -np.ones(2))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, message, text", [
    (warns_for_the_caller, "warnings.warn() with stacklevel other than 1", "warnings.warn("),
    (logs_when_negative, "logger.warning() in staged code", "_LOG.warning("),
    (logs_through_the_module, "logging.info() in staged code", "logging.info(")])
def test_a_log_call_or_a_warning_for_the_caller_is_refused(fn, message, text, target):
    """A log record would be made once, at trace time; the caller's line is outside the
    staged code."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((PythonSideEffectError, StagingTypeError)) as e:
            autostage.convert(fn, target=target)(-np.ones(3))
    assert caught == []
    assert str(e.value).startswith(f"{message}") and line_of(fn, text) in str(e.value)


def test_outside_tracing_log_calls_are_pythons(caplog):
    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        assert autostage.to_graph(logs_when_negative)(-np.ones(2)) == -2.0
    assert caplog.messages == ["negative sum -2.0"]


@pytest.mark.parametrize("target", TARGETS)
def test_a_warning_filtered_as_an_error_raises_it(target):
    f = autostage.convert(warns_when_negative, target=target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(np.ones(2)) == 2.0
        with pytest.raises(RuntimeWarning, match="negative sum -2.0"):
            f(-np.ones(2))


def appends_a_log_line(x, path):
    with open(path, "a") as fh:
        fh.write("call\n")
    return x.sum()


def writes_a_path(x, path):
    import pathlib

    pathlib.Path(path).write_text("done")
    return x


def reads_a_file(x, path):
    with open(path) as fh:
        n = len(fh.read())
    return x * n


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "spelled", "text"), [
    (appends_a_log_line, "open", 'open(path, "a")'),
    (writes_a_path, "Path.write_text", "write_text")])
def test_a_file_written_in_staged_code_is_refused(fn, spelled, text, target, tmp_path):
    """A file opened to write (``open(path, "a")``) was written once, when the function was
    traced: three calls appended one line. Refused where it is written; outside tracing it is
    Python's; a file opened to read is opened (what is read is frozen, as any traced value)."""
    path = tmp_path / "log.txt"
    with pytest.raises(PythonSideEffectError, match=rf"{spelled}\(\) writing a file in staged "
                                                    rf"code at {line_of(fn, text)}"):
        autostage.convert(fn, target=target)(np.ones(2), str(path))
    assert not path.exists()
    for _ in range(2):
        appends_a_log_line(np.ones(2), str(path))
    assert path.read_text() == "call\ncall\n"
    np.testing.assert_array_equal(
        autostage.convert(reads_a_file, target=target)(np.ones(2), str(path)), [10.0, 10.0])
