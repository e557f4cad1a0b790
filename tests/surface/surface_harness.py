"""Harness for the NumPy surface tests: each listed call staged on every target, against NumPy.

A case file ``cases_<area>.py`` in this folder defines ``CASES``, a list made with ``cases()``::

    def split3(x):                       # a module-level def: converted as a user's function
        return np.split(x, 3)

    CASES = cases("np.split", split3, (np.arange(6.0),), (np.ones((3, 4), np.float32),))

Each argument tuple is one call: NumPy arrays and NumPy scalars are staged, Python values are
constants of the trace. The plain call is the reference; the staged call on each target must give
a result of the same Python type (tuple, list, namedtuple, ndarray, NumPy scalar, Python
scalar), the same dtype and shape, and the same values (NaN where NumPy has NaN), or raise the same
exception type with the same message. ``rtol``/``atol`` allow rounding differences on the cpu
target only (LAPACK, libm), never on the interpreter, and never for integer or bool data.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import autostage

HERE = pathlib.Path(__file__).resolve().parent
TARGETS = ("interpreter", "cpu")


@dataclasses.dataclass(frozen=True)
class Case:
    name: str              # the listed call: "np.split", "ndarray.reshape", "math.exp", "float"
    fn: Callable           # module-level function making the call
    args: tuple            # one call's arguments
    index: int             # position among the cases of ``name``
    rtol: float = 0.0      # cpu only: relative tolerance for floating results
    atol: float = 0.0      # cpu only: absolute tolerance for floating results
    xfail: str = ""        # a known difference (the reason); the test is xfail(strict=True)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.index}]"


def cases(name: str, fn: Callable, *arg_sets: tuple, rtol: float = 0.0, atol: float = 0.0,
          xfail: str = "") -> list[Case]:
    """One ``Case`` per argument tuple; numbering continues across calls for the same name.

    ``xfail`` (a reason) marks cases showing a known wrong result: they must fail (strict).
    """
    start = _counts.get(name, 0)
    _counts[name] = start + len(arg_sets)
    return [Case(name, fn, tuple(args), start + i, rtol, atol, xfail)
            for i, args in enumerate(arg_sets)]


_counts: dict[str, int] = {}


def load_cases() -> list[Case]:
    """Every case of every ``cases_*.py`` module in this folder."""
    found: list[Case] = []
    for path in sorted(HERE.glob("cases_*.py")):
        name = f"surface_{path.stem}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        found += module.CASES
    return found


def _call(fn: Callable, args: tuple) -> tuple[str, Any]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return "value", fn(*args)
        except Exception as error:  # noqa: BLE001 - the reference may raise; compared below
            return "raised", error


def _compare(expected: Any, actual: Any, path: str, rtol: float, atol: float) -> list[str]:
    if type(expected) is not type(actual):
        return [f"{path}: type {type(actual).__name__} != NumPy's {type(expected).__name__}"]
    if isinstance(expected, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{path}: length {len(actual)} != NumPy's {len(expected)}"]
        diffs: list[str] = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            diffs += _compare(e, a, f"{path}[{i}]", rtol, atol)
        return diffs
    if isinstance(expected, (np.ndarray, np.generic)):
        if expected.dtype != actual.dtype:
            return [f"{path}: dtype {actual.dtype} != NumPy's {expected.dtype}"]
        if np.shape(expected) != np.shape(actual):
            return [f"{path}: shape {np.shape(actual)} != NumPy's {np.shape(expected)}"]
        if expected.dtype.kind in "fc" and (rtol or atol):
            ok = np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(actual, expected, equal_nan=expected.dtype.kind in "fc")
        return [] if ok else [f"{path}: values differ\n  got      {actual!r}\n"
                              f"  expected {expected!r}"]
    if isinstance(expected, float) and (expected != expected):
        return [] if actual != actual else [f"{path}: {actual!r} != NumPy's nan"]
    if isinstance(expected, float) and (rtol or atol):
        return [] if np.isclose(actual, expected, rtol=rtol, atol=atol) else [
            f"{path}: {actual!r} != NumPy's {expected!r}"]
    return [] if expected == actual else [f"{path}: {actual!r} != NumPy's {expected!r}"]


def check(case: Case, target: str) -> None:
    """Runs ``case`` plain and staged on ``target``; fails with every difference found."""
    kind, expected = _call(case.fn, case.args)
    staged = autostage.convert(case.fn, target=target)
    got_kind, actual = _call(staged, case.args)
    if kind == "raised":
        assert got_kind == "raised", f"NumPy raised {expected!r}; staged returned {actual!r}"
        assert type(actual) is type(expected) and str(actual) == str(expected), (
            f"NumPy raised {expected!r}; staged raised {actual!r}")
        return
    if got_kind == "raised":
        raise AssertionError(f"{case.id} on {target} raised {type(actual).__name__}: "
                             f"{actual}") from actual
    tolerant = target != "interpreter"
    diffs = _compare(expected, actual, "result", case.rtol if tolerant else 0.0,
                     case.atol if tolerant else 0.0)
    assert not diffs, f"{case.id} on {target}:\n  " + "\n  ".join(diffs)
