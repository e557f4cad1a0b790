"""Tracebacks of errors leaving autostage show the user's frames and lines, not autostage's,
Numba's or generated code's (``autostage/tracebacks.py``); ``AUTOSTAGE_TRACEBACK=full`` keeps
every frame. The exception's type, message, notes and causes are never changed."""

from __future__ import annotations

import os
import traceback

import autostage.runtime.tracing as runtime_tracing
import numpy as np
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]
PACKAGE_DIRS = [os.path.dirname(autostage.__file__) + os.sep,
                os.path.dirname(runtime_tracing.__file__) + os.sep]


def _formatted(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(exc.__traceback__)


def _assert_user_only(exc: BaseException, *user_lines: str) -> None:
    text = _formatted(exc)
    for frame in _frames(exc):
        assert not frame.filename.startswith(tuple(PACKAGE_DIRS)), text
        assert "numba" not in frame.filename and "stage_" not in frame.filename, text
        assert frame.filename == __file__, text
    for line in user_lines:
        assert line in text, (line, text)


def shape_mismatch(a, b):
    c = a * 2.0
    return c @ b


def mixed_branches(a):
    return a.astype(np.int32) if a.sum() > 0 else a


def raises_in_loop(a, n):
    total = 0
    for i in range(n):
        if i == 2:
            raise KeyError("step two")
        total += i
    return a * total


def raises_with_cause(a):
    try:
        {}["missing"]
    except KeyError as e:
        raise ValueError("wrapped") from e
    return a


@pytest.mark.parametrize("target", TARGETS)
def test_staged_shape_mismatch_shows_user_lines_only(target):
    f = autostage.convert(shape_mismatch, target=target)
    with pytest.raises(ValueError, match="size 4 is different from 3") as info:
        f(np.ones((2, 3)), np.ones((4, 5)))
    _assert_user_only(info.value, "return c @ b", "f(np.ones((2, 3)), np.ones((4, 5)))")
    assert _frames(info.value)[-1].line == "return c @ b"


@pytest.mark.parametrize("target", TARGETS)
def test_staging_type_error_shows_user_lines_only(target):
    f = autostage.convert(mixed_branches, target=target)
    with pytest.raises(TypeError, match="same dtype") as info:
        f(np.ones(3))
    assert type(info.value).__name__ == "StagingTypeError"
    _assert_user_only(info.value, "return a.astype(np.int32) if a.sum() > 0 else a")


@pytest.mark.parametrize("method", ["compile", "get_concrete_function", "ir", "backend_source"])
def test_errors_tracing_outside_a_call_show_user_lines_only(method):
    f = autostage.convert(shape_mismatch, target="interpreter")
    with pytest.raises(ValueError, match="size 4 is different from 3") as info:
        getattr(f, method)(np.ones((2, 3)), np.ones((4, 5)))
    _assert_user_only(info.value, "return c @ b", "getattr(f, method)(np.ones((2, 3)), ")
    assert _frames(info.value)[-1].line == "return c @ b"


def test_user_exception_in_converted_code_shows_user_lines_only():
    g = autostage.to_graph(raises_in_loop)
    with pytest.raises(KeyError, match="step two") as info:
        g(np.ones(2), 5)
    _assert_user_only(info.value, 'raise KeyError("step two")')
    frames = _frames(info.value)
    assert frames[-1].name == "raises_in_loop" and frames[-1].lineno == \
        raises_in_loop.__code__.co_firstlineno + 4


@pytest.mark.parametrize("target", TARGETS)
def test_user_exception_in_staged_code(target):
    f = autostage.convert(raises_in_loop, target=target)
    with pytest.raises(KeyError, match="step two") as info:
        f(np.ones(2), np.int64(5))
    _assert_user_only(info.value, 'raise KeyError("step two")')


def test_type_and_cause_are_kept():
    g = autostage.to_graph(raises_with_cause)
    with pytest.raises(ValueError, match="wrapped") as info:
        g(np.ones(2))
    assert type(info.value) is ValueError
    assert type(info.value.__cause__) is KeyError
    text = _formatted(info.value)
    assert "direct cause" in text and "'missing'" in text
    _assert_user_only(info.value, 'raise ValueError("wrapped") from e')


def test_full_traceback_on_request(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_TRACEBACK", "full")
    f = autostage.convert(shape_mismatch, target="interpreter")
    with pytest.raises(ValueError) as info:
        f(np.ones((2, 3)), np.ones((4, 5)))
    files = [frame.filename for frame in _frames(info.value)]
    assert any(name.startswith(tuple(PACKAGE_DIRS)) for name in files), files
    assert any(name.endswith("function.py") for name in files), files
