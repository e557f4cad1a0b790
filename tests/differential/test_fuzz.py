"""Random-program differential fuzzer: plain Python vs ``to_graph`` vs ``convert``.

``fuzz_programs.generate(seed)`` writes a small random function (see its docstring for the forms);
each is written to a real file (conversion reads source), imported, and run:

- plain mode: plain Python vs ``autostage.to_graph``, on fresh copies of the same arguments:
  return value, stdout, exception type and message, and the arguments afterwards (lists, dicts,
  object attributes) must be identical (``harness.compare_outcomes``);
- staged mode: NumPy scalar/array inputs, plain Python vs ``autostage.convert`` on the
  ``interpreter`` and ``cpu`` targets: the same outcome (``harness.compare_staged_values``), or a
  clear autostage error (a StagingError or ConversionError whose message names the program's file
  and a line). Never a different value, never another exception.

Extended programs (``generate(seed, staged, extended=True)``: loops with ``else``, ``try``/
``finally``, ``with``, closures over loop variables, comprehensions with data conditions, slice
updates, builtins on arrays, NumPy integer corners, mixed argument types per call) are compared
the same way, and a Python number plain Python returns must come back as a Python number of that
type (README "Results: Python numbers come back as Python numbers").

The default run checks a small fixed seed range; ``-m slow`` runs hundreds. Seeds that expose a
finding not yet fixed are listed in ``KNOWN`` with the finding (notes/issue8-h6-findings.md,
notes/issue8-d-findings.md) and
run as xfail(strict=True): they fail loudly once fixed, so that the entry is removed.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import re
import sys
import warnings

import error_kinds
import fuzz_programs
import harness
import numpy as np
import pytest

PLAIN_SEEDS = range(40)
STAGED_SEEDS = range(15)
SLOW_PLAIN_SEEDS = range(40, 400)
SLOW_STAGED_SEEDS = range(15, 150)
# generate(extended=True): the forms of _Writer.extended_stmt too, staged with mixed argument types
EXT_PLAIN_SEEDS = range(40)
EXT_STAGED_SEEDS = range(10)
SLOW_EXT_PLAIN_SEEDS = range(40, 1000)
SLOW_EXT_STAGED_SEEDS = range(10, 300)
TARGETS = ("interpreter", "cpu")

# "mode:seed" or "mode:target:seed" -> the finding it shows (none known today).
KNOWN: dict[str, str] = {}


def _load(tmp_path, seed: int, staged: bool, extended: bool = False):
    mode = ("ext" if extended else "") + ("staged" if staged else "plain")
    name = f"fuzzprog_{mode}_{seed}"
    path = tmp_path / f"{name}.py"
    path.write_text(fuzz_programs.generate(seed, staged, extended))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def _params(seeds, mode, targets=(None,), slow=False):
    params = []
    for target in targets:
        for seed in seeds:
            key = ":".join(str(p) for p in (mode, target, seed) if p is not None)
            marks = [pytest.mark.slow] if slow else []
            if key in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[key]))
            params.append(pytest.param(seed, target, marks=marks, id=key))
    return params


def check_plain(tmp_path, seed: int, extended: bool = False) -> None:
    module, path = _load(tmp_path, seed, staged=False, extended=extended)
    import autostage

    converted = autostage.to_graph(module.prog)
    for args in fuzz_programs.plain_arguments(seed):
        expected = harness.run(module.prog, args, {})
        actual = harness.run(converted, args, {})
        diffs = harness.compare_outcomes(expected, actual)
        assert not diffs, f"{path} {args!r}:\n" + path.read_text() + "\n".join(diffs)


_CPU_RTOL = 1e-12  # compiled float code may round differently in the last bits (DESIGN)


def _without_float_error_warnings(outcome: harness.Outcome) -> harness.Outcome:
    """Staged code emits no NumPy floating-point RuntimeWarnings ("divide by zero encountered
    in ...": warnings are not values, README "Floating-point errors"); drop them from the plain
    run's record, and from the staged run's: NumPy scalar code on constants that runs while
    tracing (``abs(np.int8(-128))``) warns on the traced calls only. Any other warning must
    still be the same."""
    outcome.warnings = [(category, message) for category, message in outcome.warnings
                        if not (category is RuntimeWarning and " encountered in " in message)]
    return outcome


def check_staged(tmp_path, seed: int, target: str, extended: bool = False) -> str:
    """'same', or 'refused: <the error's first line>'; raises AssertionError on anything else."""
    module, path = _load(tmp_path, seed, staged=True, extended=extended)
    import autostage

    staged = autostage.convert(module.prog, target=target)
    rtol = _CPU_RTOL if target == "cpu" else 0.0
    verdict = "same"
    for args in fuzz_programs.staged_arguments(seed, extended):
        expected = _without_float_error_warnings(harness.run(module.prog, args, {}))
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                staged(*copy.deepcopy(args))  # (a program may write into x)
        except Exception as exc:
            # A leak (internal type, raw Numba error, internal file in the message) fails here;
            # Python's own exceptions are compared below with plain Python's.
            kind = error_kinds.assert_no_leak(exc, str(path), f"{path} ({target})")
            refusal = f"{type(exc).__name__}: {exc}" if kind == "refused" else None
        else:
            refusal = None
        if refusal is not None:
            message = refusal
            assert path.name in message and re.search(rf"{re.escape(path.name)}\D{{0,3}}\d+",
                                                      message), (
                f"{path}: a staging error that names no user line:\n{message}\n"
                + path.read_text())
            verdict = f"refused: {message.splitlines()[0]}"
            continue
        actual = _without_float_error_warnings(harness.run(staged, args, {}))

        def compare(e, a, p):
            diffs = harness.compare_staged_values(e, a, p, rtol=rtol)
            return diffs + (_python_number_types(e, a, p) if extended else [])

        diffs = harness.compare_outcomes(expected, actual, compare)
        assert not diffs, (f"{path} ({target}) {args!r}:\n" + path.read_text() + "\n"
                           + "\n".join(diffs))
    return verdict


def _python_number_types(expected, actual, path: str) -> list[str]:
    """A Python number plain Python returns comes back as a Python number of its type (README
    "Results: Python numbers come back as Python numbers"), which ``compare_staged_values``
    leaves to a NumPy scalar of its kind."""
    if isinstance(expected, tuple | list) and type(expected) is type(actual) and len(
            expected) == len(actual):
        return [d for k, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in _python_number_types(e, a, f"{path}[{k}]")]
    if type(expected) in (bool, int, float) and type(actual) is not type(expected):
        return [f"{path}: plain Python returned {type(expected).__name__} {expected!r}, staged "
                f"{type(actual).__name__} {actual!r}"]
    return []


@pytest.mark.parametrize("seed,target", _params(PLAIN_SEEDS, "plain"))
def test_plain_program(tmp_path, seed, target):
    check_plain(tmp_path, seed)


@pytest.mark.parametrize("seed,target", _params(STAGED_SEEDS, "staged", TARGETS))
def test_staged_program(tmp_path, seed, target):
    check_staged(tmp_path, seed, target)


@pytest.mark.parametrize("seed,target", _params(SLOW_PLAIN_SEEDS, "plain", slow=True))
def test_plain_program_many(tmp_path, seed, target):
    check_plain(tmp_path, seed)


@pytest.mark.parametrize("seed,target", _params(SLOW_STAGED_SEEDS, "staged", TARGETS, True))
def test_staged_program_many(tmp_path, seed, target):
    check_staged(tmp_path, seed, target)


@pytest.mark.parametrize("seed,target", _params(EXT_PLAIN_SEEDS, "extplain"))
def test_extended_plain_program(tmp_path, seed, target):
    check_plain(tmp_path, seed, extended=True)


@pytest.mark.parametrize("seed,target", _params(EXT_STAGED_SEEDS, "extstaged", TARGETS))
def test_extended_staged_program(tmp_path, seed, target):
    check_staged(tmp_path, seed, target, extended=True)


@pytest.mark.parametrize("seed,target", _params(SLOW_EXT_PLAIN_SEEDS, "extplain", slow=True))
def test_extended_plain_program_many(tmp_path, seed, target):
    check_plain(tmp_path, seed, extended=True)


@pytest.mark.parametrize("seed,target", _params(SLOW_EXT_STAGED_SEEDS, "extstaged", TARGETS,
                                                True))
def test_extended_staged_program_many(tmp_path, seed, target):
    check_staged(tmp_path, seed, target, extended=True)


def test_generator_is_deterministic_and_covers_the_forms():
    text = "".join(fuzz_programs.generate(s) for s in range(40))
    assert fuzz_programs.generate(7) == fuzz_programs.generate(7)
    for form in ("elif", "while", "break", "continue", "nonlocal", "_note(log", " and ", " or ",
                 "not (", " if ", "xs.pop()", "d[", "obj.n", "print(", "except", "< _note",
                 "divmod(", " ** ", " << ", "~", "round(", " / ", "h1(", "h2(", "acc2.add(",
                 "peek(", "inner(", " for i in range(", "contextlib.suppress(", "assert ",
                 "is None", "t, u = ", "print(f", "' % (", "except KeyError"):
        assert form in text, form
    staged = "".join(fuzz_programs.generate(s, staged=True) for s in range(40))
    for form in ("acc.append", "for v", "while", "x[", "_note(log", "np.where(", "np.sum(",
                 "np.maximum(", "[x[i", "y[y > 0]", "int(x[", "np.float64(", "n % 4"):
        assert form in staged, form
    assert isinstance(fuzz_programs.staged_arguments(0)[0][0], np.int64)


def test_extended_generator_is_deterministic_and_covers_the_forms():
    for staged in (False, True):
        text = "".join(fuzz_programs.generate(s, staged, extended=True) for s in range(60))
        assert fuzz_programs.generate(7, staged, True) == fuzz_programs.generate(7, staged, True)
        for form in ("else:\n", "finally:", "raise ValueError(", "with _Ctx(", "lambda v",
                     "def tick(", "nonlocal z", "for i, v in enumerate(", "*rest", "np.int8(",
                     "np.uint8(", "np.float32(", "=}", "print(f", " if v > ", "round(",
                     "return ("):
            assert form in text, (staged, form)
    staged = "".join(fuzz_programs.generate(s, True, True) for s in range(60))
    for form in ("y[1:3] += c", "sum(x)", "any(x > c)", "[v for v in x if v > c]"):
        assert form in staged, form
    kinds = {type(v) for s in range(30) for args in fuzz_programs.staged_arguments(s, True)
             for v in args[:3]}
    assert {int, float, np.int8, np.uint8, np.float32, np.int64} <= kinds
