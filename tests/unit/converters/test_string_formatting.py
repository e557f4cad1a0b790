"""Tests for autostage.converters.string_formatting: a string literal's ``%`` becomes
``ag__.percent_format``, which is ``%`` on Python values and a template of staged ones
(``runtime/staging/text_layouts.py``; CPython's ``%d`` of one would fail with "a real number is
required, not Tensor": notes/issue8-d-findings.md D2)."""

# ruff: noqa: UP031 - printf-style formatting is what is tested here

import numpy as np
import pytest
from converter_testing import convert_with, dedent

import autostage
from autostage.converters import string_formatting


def formats(a, b, fmt):
    pair = "%d|%s" % (a, b)
    return pair, "%(k)03d" % {"k": a}, fmt % a, a % 3


def test_only_a_string_literal_on_the_left_is_rewritten():
    assert convert_with(formats, string_formatting).source == dedent("""
        def formats(a, b, fmt):
            pair = ag__.percent_format('%d|%s', (a, b))
            return (pair, ag__.percent_format('%(k)03d', {'k': a}), fmt % a, a % 3)
    """)


@pytest.mark.parametrize("args", [(7, "q", "<%x>"), (66, 1.5, "%c")])
def test_python_values_format_as_python_does(args):
    assert autostage.to_graph(formats)(*args) == formats(*args)


def int_format(a):
    return "%d|%s" % (a, 1)


def hex_format(a):
    s = "%x" % a
    return s


def dict_format(a):
    return "%(v)i" % {"v": a}


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn", [int_format, hex_format, dict_format])
def test_a_staged_value_formats_when_the_function_runs(target, fn):
    # Python's %d/%x/%i of a Tensor would say "a real number is required, not Tensor".
    assert autostage.convert(fn, target=target)(np.int64(30)) == fn(np.int64(30))
