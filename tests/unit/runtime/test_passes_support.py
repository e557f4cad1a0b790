"""Helpers for the pass tests: stage a small function, run passes with checks on, and compare
the interpreter's results and stdout before and after (no tests of its own)."""

import contextlib
import io
import re

import numpy as np
from autostage.runtime import interpreter, ir, printer
from autostage.runtime.passes import optimize

import autostage
from autostage import config

_LOCATION = re.compile(r" +# [^ ]+:\d+$", re.MULTILINE)


def staged(fn, *args) -> ir.Module:
    """The IR module of ``fn`` traced for the dtypes and ranks of ``args``, every size unknown
    (the code the passes must get right for any size; tests run it with other shapes)."""
    with config.STATIC_SIZES.override(0):
        return autostage.convert(fn, target="interpreter").get_concrete_function(*args).module


def text(module: ir.Module) -> str:
    """The printed IR without location comments (goldens must not depend on line numbers)."""
    return _LOCATION.sub("", printer.format_module(module))


def run(module: ir.Module, args) -> tuple[tuple, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = interpreter.run(module, list(args))
    return results, out.getvalue()


def assert_same(before, after) -> None:
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def optimized(module: ir.Module, passes, *arg_sets) -> str:
    """Runs ``passes`` (verifier on) and checks identical results and stdout on each argument
    tuple; returns the printed IR after."""
    before = [run(module, args) for args in arg_sets]
    optimize(module, passes, verify=True)
    for args, (results, out) in zip(arg_sets, before, strict=True):
        results_after, out_after = run(module, args)
        assert_same(results, results_after)
        assert out_after == out
    return text(module)
