"""Tests for autostage.converters.asserts: generated source, behaviour, and removal under -O.

PYTEST_DONT_REWRITE: the functions converted here must keep Python's own assert statements.
"""

import pathlib
import subprocess
import sys
import textwrap

import pytest
from converter_testing import convert_with, dedent

from autostage.converters import asserts

ROOT = pathlib.Path(__file__).resolve().parents[3]


def checks(x, log):
    assert x > 0, f"x must be positive, got {log.append('message') or x}"
    assert x < 10
    return x


def only_asserts(x):
    if x:
        assert x != 1, "one"
    else:
        assert x is not None
    return x


def test_asserts_become_calls_with_a_lazy_message():
    assert convert_with(checks, asserts).source == dedent("""
        def checks(x, log):
            ag__.assert_stmt(x > 0, lambda: f"x must be positive, got {log.append('message') or x}")
            ag__.assert_stmt(x < 10)
            return x
    """)


@pytest.mark.parametrize("x", [1, 5, 0, -3, 10])
def test_behaves_like_the_assert_statement(x):
    converted = convert_with(checks, asserts).function
    log_py, log_conv = [], []
    try:
        expected = ("value", checks(x, log_py))
    except AssertionError as e:
        expected = ("raised", e.args)
    try:
        actual = ("value", converted(x, log_conv))
    except AssertionError as e:
        actual = ("raised", e.args)
    assert actual == expected
    assert log_conv == log_py  # the message is computed only when the assertion fails


def test_removed_when_optimized(monkeypatch):
    monkeypatch.setattr(asserts, "_optimized", lambda: True)
    converted = convert_with(only_asserts, asserts)
    assert converted.source == dedent("""
        def only_asserts(x):
            if x:
                pass
            else:
                pass
            return x
    """)
    assert converted.function(1) == 1


def test_python_dash_o_removes_asserts(tmp_path):
    program = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from converter_testing import convert_with
        from autostage.converters import asserts

        def f(x):
            assert x, "no"
            return x

        converted = convert_with(f, asserts)
        print(converted.source)
        print(converted.function(0))
    """)
    script = tmp_path / "optimized.py"
    script.write_text(program)
    result = subprocess.run(
        [sys.executable, "-O", str(script), str(pathlib.Path(__file__).parent)],
        capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.splitlines() == ["def f(x):", "    return x", "0"]
