"""Third-party differential test: pure-Python packages, converted, pass their own test suites.

Each suite below is a package from the ``test`` extra that ships its tests inside its wheel. Its
tests run twice in child pytest processes (``suite_runner``): once plain, once with every function
of the package replaced by its ``autostage.to_graph`` version (``package_conversion``). Rule: **no
test lost** — every test that passes plain passes converted. Functions the conversion leaves as
written or refuses are listed (``Report.left``/``refused``) and must match the tables here, each
with its reason, so that nothing is skipped silently.

Chosen packages: ``toolz`` (functional helpers: closures, dict/iterator plumbing, callable
objects, properties, ``curry`` introspection and pickling), ``mpmath`` (arbitrary-precision
arithmetic in plain Python: integer bit manipulation, long loops with early exits, many classes
and class/static methods) and ``numpy-financial`` (NumPy code: broadcasting, ``np.where``
cascades, Newton iteration with early exits, ``np.errstate``). The default run takes toolz and
numpy-financial whole and a bounded part of mpmath (a few seconds each); ``-m slow`` runs the
larger mpmath suites.
"""

from __future__ import annotations

import functools

import pytest
import suite_runner

# suite id -> (package, test files relative to the package, lazy conversion, slow)
SUITES = {
    "toolz": ("toolz", ["tests", "sandbox/tests"], False, False),
    "numpy-financial": ("numpy_financial", ["tests"], False, False),
    "mpmath-core": ("mpmath", [
        "tests/test_bitwise.py", "tests/test_division.py", "tests/test_power.py",
        "tests/test_pickle.py", "tests/test_str.py",
    ], True, False),
    "mpmath-more": ("mpmath", [
        "tests/test_diff.py", "tests/test_linalg.py", "tests/test_matrices.py",
        "tests/test_hp.py", "tests/test_levin.py", "tests/test_basic_ops.py", "tests/test_fp.py",
        "tests/test_gammazeta.py",
        "tests/test_functions.py", "tests/test_calculus.py", "tests/test_eigen.py",
        "tests/test_eigen_symmetric.py", "tests/test_interval.py", "tests/test_trig.py",
        "tests/test_ode.py", "tests/test_identify.py",
        "tests/test_elliptic.py", "tests/test_rootfinding.py", "tests/test_summation.py",
    ], True, True),
}

# Functions left as written on purpose: qualified name -> reason (none so far).
SKIP: dict[str, dict[str, str]] = {"toolz": {}, "mpmath": {}, "numpy_financial": {}}

# Functions ``to_graph`` refuses today: qualified name -> the finding (notes/issue8-h6-findings.md).
# A refusal that is not listed fails the suite test. (mpmath converts lazily, on first call, so
# only the functions its tests reach are converted and can be refused.) A refused function runs
# as written, so its tests still pass: the table is where it shows.
KNOWN_REFUSED: dict[str, dict[str, str]] = {"toolz": {}, "mpmath": {}, "numpy_financial": {}}

# Tests lost under conversion: "suite::node id" -> the finding. Each is checked by
# test_known_loss, an xfail(strict=True): it turns into an unexpected pass when fixed.
KNOWN_LOST: dict[str, str] = {}


# pytest plugins a package's tests need (its conftest.py, which its wheel does not ship)
PLUGINS: dict[str, tuple[str, ...]] = {"mpmath": ("-p", "mpmath_settings")}


@functools.cache
def _runs(suite: str) -> tuple[dict, dict]:
    package, tests, lazy, _ = SUITES[suite]
    plugins = PLUGINS.get(package, ())
    plain = suite_runner.run_suite(package, tests, convert=False, extra_args=plugins)
    converted = suite_runner.run_suite(package, tests, convert=True, skip=SKIP[package],
                                       extra_args=plugins, lazy=lazy)
    return plain, converted


def _lost(suite: str) -> dict[str, str]:
    plain, converted = _runs(suite)
    return {
        test: f"{converted['outcomes'].get(test, 'not run')}:\n{converted['messages'].get(test)}"
        for test, outcome in plain["outcomes"].items()
        if outcome == "passed" and converted["outcomes"].get(test) != "passed"}


def _suite_params():
    return [pytest.param(s, marks=[pytest.mark.slow] if SUITES[s][3] else [], id=s)
            for s in SUITES]


@pytest.mark.parametrize("suite", _suite_params())
def test_no_test_lost(suite):
    plain, converted = _runs(suite)
    passed = [t for t, o in plain["outcomes"].items() if o == "passed"]
    assert len(passed) >= 10, f"{suite}: the plain run passed only {passed}:\n{plain['tail']}"
    failed = [t for t, o in plain["outcomes"].items() if o == "failed"]
    assert not failed, f"{suite}: tests fail plain (a leaking setting?), so they are not " \
        f"compared: {failed}"
    report = converted["report"]
    assert report["converted"], f"{suite}: nothing was converted:\n{converted['tail']}"
    lost = {t: why for t, why in _lost(suite).items() if f"{suite}::{t}" not in KNOWN_LOST}
    assert not lost, f"{suite}: tests that pass plain and fail converted:\n" + "\n\n".join(
        f"{t}: {why}" for t, why in lost.items())


@pytest.mark.parametrize("suite", _suite_params())
def test_refusals_and_exclusions_are_the_documented_ones(suite):
    package = SUITES[suite][0]
    report = _runs(suite)[1]["report"]
    unexpected = {n: e for n, e in report["refused"].items() if n not in KNOWN_REFUSED[package]}
    assert not unexpected, f"{suite}: to_graph refused functions no table lists: {unexpected}"
    for name, why in report["left"].items():
        assert ("generator/coroutine" in why or "type attribute" in why
                or name in SKIP[package]), f"{suite}: {name} left as written without a reason"


def _known_loss_params():
    return [pytest.param(key, marks=[pytest.mark.xfail(strict=True, reason=why)]
                         + ([pytest.mark.slow] if SUITES[key.split("::")[0]][3] else []), id=key)
            for key, why in KNOWN_LOST.items()]


@pytest.mark.parametrize("key", _known_loss_params())
def test_known_loss(key):
    suite, test = key.split("::", 1)
    assert test not in _lost(suite), _lost(suite)[test]
