"""Realistic model programs (``models.py``): plain Python vs ``to_graph`` vs ``convert`` on the
``interpreter`` and ``cpu`` targets. Every scenario's observable results must be the same (floats
within a small relative tolerance on cpu, where BLAS, libm and the vectorised exp/log/tanh may
round the last bits differently, DESIGN "Floating-point accuracy"). Scenarios that fail today are
xfail(strict=True) with the finding they show (notes/issue8-h6-findings.md); they turn into
failures once fixed, so that the mark is removed.
"""

from __future__ import annotations

import functools
import os
import warnings

import harness
import pytest
import realistic_models as models
import realistic_numerics as numerics

import autostage

# AUTOSTAGE_REFERENCE_TARGETS=cuda adds the cuda target (a GPU or the CUDA simulator).
WRAPS = ("to_graph", "interpreter", "cpu") + tuple(
    t for t in os.environ.get("AUTOSTAGE_REFERENCE_TARGETS", "").split(",") if t == "cuda")
RTOL = {"to_graph": 0.0, "interpreter": 0.0, "cpu": 1e-10, "cuda": 1e-6}

# (scenario name, wrap) -> the finding it shows.
KNOWN: dict[tuple[str, str], str] = {}


def _wrap(kind):
    if kind == "to_graph":
        return autostage.to_graph
    return lambda fn: autostage.convert(fn, target=kind)


def _params():
    params = []
    for scenario in models.SCENARIOS + numerics.SCENARIOS:
        for kind in WRAPS:
            why = KNOWN.get((scenario.__name__, kind))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            params.append(pytest.param(scenario, kind, marks=marks,
                                       id=f"{scenario.__name__}-{kind}"))
    return params


@pytest.mark.parametrize("scenario,kind", _params())
def test_realistic_program(scenario, kind):
    expected = harness.run(functools.partial(scenario, lambda f: f), (), {})
    assert expected.exception is None, expected.exception
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        actual = harness.run(functools.partial(scenario, _wrap(kind)), (), {})
    actual.warnings = expected.warnings  # retracing warnings are allowed; values are not

    def compare(e, a, path):
        return harness.compare_staged_values(e, a, path, rtol=RTOL[kind])

    diffs = harness.compare_outcomes(expected, actual, compare)
    assert not diffs, f"{scenario.__name__} under {kind}:\n  " + "\n  ".join(diffs)
