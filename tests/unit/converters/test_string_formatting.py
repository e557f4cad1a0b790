"""Tests for autostage.converters.string_formatting: a string literal's ``%`` becomes
``ag__.percent_format``, which is ``%`` on Python values and a clear StagingTypeError on staged
ones (found by the fuzzer, notes/issue8-d-findings.md D2)."""

# ruff: noqa: UP031 - printf-style formatting is what is tested here

import re

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
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
@pytest.mark.parametrize("fn, literal", [(int_format, "'%d|%s'"), (hex_format, "'%x'"),
                                         (dict_format, "'%(v)i'")])
def test_a_staged_value_is_a_clear_error_naming_the_line(target, fn, literal):
    # Python's %d/%x/%i would replace the reason with "a real number is required, not Tensor".
    line = fn.__code__.co_firstlineno + 1
    where = rf"test_string_formatting.py:{line}: %-formatting \({re.escape(literal)} % \.\.\.\)"
    with pytest.raises(StagingTypeError, match=where + " of a staged tensor"):
        autostage.convert(fn, target=target)(np.int64(3))
