"""Staged reference suite: programs run plain and through ``convert(target="interpreter")``.

Two sets of cases:

- ``staged_programs/*.py``: programs whose control flow depends on the *values* of NumPy
  arguments (staged ``cond``/``while``, tensor lists, run-time print/assert);
- every case of ``programs/*.py`` that passes NumPy values (arrays or NumPy scalars, also inside
  tuples/lists/dicts), except the ones listed in ``NOT_STAGEABLE``, which must raise a clear
  autostage error instead.

Each program gets one converted object, shared by its cases (so calls with the same argument
types hit the trace cache), and every case is called twice through it: the second call is a
cache hit and must give the same outcome again.

What is compared (``harness.compare_outcomes`` with ``harness.compare_staged_values``):

- return values: type, dtype, shape and value. Exact (bit for bit) by default: the interpreter runs
  the same NumPy operations in the same order as plain Python, so integer, bool and floating
  results must agree exactly. A program may be listed in ``RTOL`` with a relative tolerance and a
  reason (floats only; dtype and shape stay exact).
- Python scalars: a plain ``int``/``float``/``bool`` may come back as a NumPy scalar (staging
  promotes Python scalars that are branch/loop state, DESIGN "Python scalars mixed with tensors
  in branches/loops are promoted"); the value must be the Python value cast to that dtype, bit
  for bit. Containers keep their Python type.
- stdout, stderr, warnings, exceptions (type and message) and the arguments after the call
  (an in-place update of an input array must be written back or be a clear error, DESIGN
  "Arrays": autostage raises the error, listed in ``NOT_STAGEABLE``).

``AUTOSTAGE_REFERENCE_CONVERTER=identity`` runs the comparisons with ``lambda f: f`` (a check of
the harness and programs alone).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import pathlib
import re
import sys
import types
import warnings

import harness  # tests/reference is on sys.path (pytest rootdir-relative import)
import numpy as np
import pytest

MIN_STAGED_PROGRAMS = 70
STAGED_CATEGORIES = [
    "arrays.py", "branches.py", "effects.py", "exits_and_lists.py", "iterative_numerics.py",
    "models.py", "recursion.py", "scans_and_search.py",
]


def _has_numpy(value) -> bool:
    if isinstance(value, (np.ndarray, np.generic)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_numpy(v) for v in value)
    if isinstance(value, dict):
        return any(_has_numpy(v) for v in value.values())
    return False


STAGED_CASES = harness.collect_staged_cases()
REFERENCE_NUMPY_CASES = tuple(
    c for c in harness.collect_cases() if _has_numpy(c.args) or _has_numpy(c.kwargs))

# Relative tolerances, by "file::program": (rtol, why). Empty on purpose: the interpreter evaluates
# every op with NumPy, in program order, so results are expected to be bit-identical. An entry
# here needs a reason (e.g. a float32 transcendental evaluated by a different NumPy loop: 1e-6).
RTOL: dict[str, tuple[float, str]] = {}
# Per compiled backend, by "file::program": (rtol, why). Compiled code evaluates float
# transcendentals with its own kernels (exp, log, tanh: backends/cpu/vector_math.py) or libm,
# not NumPy's own loops (a few ulp apart).
_LIBM = ("tanh/exp evaluated by autostage's vectorised kernels (libm under "
         "AUTOSTAGE_EXACT_MATH=1) in compiled code, by NumPy's own SIMD loops in the interpreter: "
         "a few ulp apart per call")
_ORDER = ("float64 sums and BLAS products added in a different order than NumPy's pairwise "
          "summation and its BLAS: last-digit differences (printed numbers compared with the "
          "same tolerance)")
BACKEND_RTOL: dict[str, dict[str, tuple[float, str]]] = {"cpu": {
    "models.py::dynamic_rnn": (1e-5, _LIBM + ", accumulated over the float32 sequence"),
    "models.py::rnn_until_saturated": (1e-12, _LIBM + " (float64)"),
    "models.py::masked_rnn": (1e-12, _LIBM + " (float64)"),
    "models.py::logistic_regression": (1e-12, _LIBM + " (float64)"),
    "models.py::linear_regression": (1e-12, _ORDER),
    "models.py::attention_step": (1e-12, _ORDER),
    "numpy_programs.py::gradient_descent": (1e-12, _ORDER),
}}
# Per compiled backend, by case id: why its warnings may differ (values are still compared).
BACKEND_WARNINGS_DIFFER: dict[str, dict[str, str]] = {"cpu": {}}


def _without_fp_warnings(recorded: list) -> list:
    """Staged code (every target) computes with floating-point errors ignored and emits no
    NumPy RuntimeWarning ('overflow encountered in ...', 'divide by zero ...'): fp_state.py."""
    return [(kind, text) for kind, text in recorded
            if not (kind is RuntimeWarning and " encountered in " in text)]

# Cases of programs/*.py with NumPy inputs that cannot be staged (DESIGN: the staged function
# "raises a clear error that names the user's file, line and variable"): case id -> reason. Each
# must raise an autostage error (StagingError or ConversionError) naming the program's file.
_STR_BRANCH = "assigns a Python str in a branch on a staged value (only numbers can be promoted)"
_AMBIGUOUS = ("truth value of a staged array (staged since the fortieth session: its one "
              "element's, NumPy's ValueError for others; the cases here are refused for the rest)")
_OLDER_NAME = ("an argument written in place through another name (`y = x; y += 1`) is then read "
               "as `x`: staged code cannot make that name see the write (a clear error)")
_TRY = ("try/except (or contextlib.suppress) around a staged index that may raise at run time: "
        "staged code has no exception handling, so the handler is refused (StagingTryError)")
NOT_STAGEABLE: dict[str, str] = {
    "if_else.py::truthiness[3]": _STR_BRANCH + "; type(value).__name__ of a tensor",
    "if_else.py::truthiness[4]": _AMBIGUOUS + "; " + _STR_BRANCH,
    "if_else.py::truthiness[5]": _AMBIGUOUS + "; " + _STR_BRANCH,
    "if_else.py::is_positive_array[0]": _STR_BRANCH,
    "if_else.py::is_positive_array[1]": _STR_BRANCH,
    "if_else.py::is_positive_array[2]": _STR_BRANCH,
    "logical.py::any_nan_or_large[0]": _STR_BRANCH,
    "logical.py::any_nan_or_large[1]": _STR_BRANCH,
    "logical.py::any_nan_or_large[2]": _STR_BRANCH,
    "logical.py::any_nan_or_large[3]": _STR_BRANCH,
    "logical.py::numpy_operands[0]": "`a > 0 and b` is a bool or an int32 depending on the data",
    "logical.py::numpy_operands[1]": "`a > 0 and b` is a bool or an int32 depending on the data",
    "logical.py::array_in_boolean_context[0]": "`x and y`: an array or an int depending on "
    "the data",
    "logical.py::array_in_boolean_context[1]": "`x and y`: an array or an int depending on "
    "the data",
    "logical.py::ternary_on_array[0]": _AMBIGUOUS + "; str results",
    "logical.py::ternary_on_array[1]": _AMBIGUOUS + "; str results",
    "numpy_programs.py::matmul_loops[0]": "np.result_type of staged tensors is not supported",
    "numpy_programs.py::matmul_loops[1]": "np.result_type of staged tensors is not supported",
    "misc.py::numpy_augmented[0]": _OLDER_NAME,
    "misc.py::numpy_augmented[1]": _OLDER_NAME,
    # staged_programs/
    "exits_and_lists.py::index_or_default[0]": _TRY,
    "exits_and_lists.py::suppressed_index[0]": _TRY,
}


# ---------------------------------------------------------------------------------------------
# The converter under test


# Every staged case runs on each of these backends, compared with plain Python the same way.
# AUTOSTAGE_REFERENCE_TARGETS=cuda (a GPU, or NUMBA_ENABLE_CUDASIM=1) runs the cuda target too.
TARGETS = tuple(os.environ.get("AUTOSTAGE_REFERENCE_TARGETS", "interpreter,cpu").split(","))
# A target's own tolerance for float results: the cuda target's kernels call libdevice (a few
# ulp from NumPy's functions) and reduce in a tree (another order than NumPy's pairwise sum).
TARGET_RTOL = {"cuda": 1e-6}


@pytest.fixture(scope="module", params=TARGETS)
def stage(request):
    """``stage(fn)`` -> the converted object for ``fn`` on one target (one per program)."""
    target = request.param
    choice = os.environ.get("AUTOSTAGE_REFERENCE_CONVERTER", "to_graph")
    if choice == "identity":
        return harness.identity_converter
    if choice != "to_graph":
        raise ValueError(f"AUTOSTAGE_REFERENCE_CONVERTER={choice!r}: use to_graph or identity")
    import autostage

    converted: dict[types.FunctionType, object] = {}

    def stage(fn):
        if fn not in converted:
            converted[fn] = autostage.convert(fn, target=target)
        return converted[fn]

    stage.target = target
    return stage


def _program_key(case) -> str:
    return f"{case.module}::{case.fn.__name__}"


def _comparison(case, target: str = "interpreter"):
    rtol = max(RTOL.get(_program_key(case), (0.0, ""))[0], TARGET_RTOL.get(target, 0.0))
    if target != "interpreter":
        rtol = max(rtol, BACKEND_RTOL.get(target, {}).get(_program_key(case), (0.0, ""))[0])

    def compare(expected, actual, path):
        return harness.compare_staged_values(expected, actual, path, rtol=rtol)

    return compare


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _same_text_within(expected: str, actual: str, rtol: float) -> bool:
    """Equal text, except numbers that agree within ``rtol`` (for documented float cases)."""
    if _NUMBER.split(expected) != _NUMBER.split(actual):
        return False
    pairs = zip(_NUMBER.findall(expected), _NUMBER.findall(actual), strict=False)
    return all(np.isclose(float(a), float(b), rtol=rtol, atol=0) for a, b in pairs) and len(
        _NUMBER.findall(expected)) == len(_NUMBER.findall(actual))


def _check_staged(case, stage):
    expected = harness.run(case.fn, case.args, case.kwargs)
    converted = stage(case.fn)
    with _traced_texts() as traced:
        _check_calls(case, stage, expected, converted)
    for concrete, text in traced.items():  # compiling works on a copy: the trace is as traced
        assert concrete.text() == text, f"{case.id}: compiling changed the traced IR"
    if getattr(stage, "target", "") == "interpreter":
        _check_text_round_trip(converted)


@contextlib.contextmanager
def _traced_texts():
    """Records the printed IR of each trace when the backend first prepares it."""
    from autostage.runtime.concrete_function import ConcreteFunction

    texts, prepare = {}, ConcreteFunction._prepared

    def recording(self, *args):
        texts.setdefault(self, self.text())
        return prepare(self, *args)

    ConcreteFunction._prepared = recording
    try:
        yield texts
    finally:
        ConcreteFunction._prepared = prepare


# The cuda target does not write into the caller's arrays (README, "Writes into array
# arguments"): a program that does is refused with this clear error there.
_CUDA_ARGUMENT_WRITES = "writes into arguments are written back only in the function called"


def _writes_into_arguments(case, expected) -> bool:
    """Whether plain Python changed one of the program's array arguments."""
    return any(isinstance(before, np.ndarray) and (
        before.shape != after.shape or not np.array_equal(before, after, equal_nan=True))
        for before, after in zip(case.args, expected.args, strict=True))


def _check_calls(case, stage, expected, converted) -> None:
    for call in ("first call", "second call (trace cache hit)"):
        actual = harness.run(converted, case.args, case.kwargs)
        target = getattr(stage, "target", "")
        if target == "cuda" and _writes_into_arguments(case, expected):
            assert actual.exception is not None and _CUDA_ARGUMENT_WRITES in \
                actual.exception.message, f"{case.id} ({call}): {actual.exception}"
            continue
        if case.id in BACKEND_WARNINGS_DIFFER.get(target, {}):
            actual.warnings = expected.warnings
        expected.warnings = _without_fp_warnings(expected.warnings)
        rtol = max(BACKEND_RTOL.get(target, {}).get(_program_key(case), (0.0, ""))[0],
                   TARGET_RTOL.get(target, 0.0))
        if rtol and _same_text_within(expected.stdout, actual.stdout, rtol):
            actual.stdout = expected.stdout
        diffs = harness.compare_outcomes(
            expected, actual, _comparison(case, getattr(stage, "target", "interpreter")))
        if diffs:
            raise AssertionError(f"{case.id} ({call}): staged function differs from plain "
                                 "Python:\n  " + "\n  ".join(diffs))


def _check_text_round_trip(converted) -> None:
    """Every trace of the program, as traced and as the cpu target's passes leave it, has an
    exact text form that parses back to a module with the same text (runtime/ir_text.py)."""
    from autostage.runtime import ir, ir_text
    from autostage.runtime.targets import optimized

    for concrete in converted.concrete_functions:
        for module in (concrete.module, optimized(ir.copy_module(concrete.module))):
            text = ir_text.format_module(module)
            assert ir_text.format_module(ir_text.parse(text)) == text


_STAGEABLE_PROGRAMS = [c for c in STAGED_CASES if c.id not in NOT_STAGEABLE]


@pytest.mark.parametrize("case", _STAGEABLE_PROGRAMS, ids=[c.id for c in _STAGEABLE_PROGRAMS])
def test_staged_program(case, stage):
    _check_staged(case, stage)


@pytest.mark.parametrize("case", _STAGEABLE_PROGRAMS, ids=[c.id for c in _STAGEABLE_PROGRAMS])
def test_staged_program_with_a_tiered_start(case):
    """The first call runs as Python while the trace compiles in the background, the next one
    compiled (``f.compile`` waits between them): both give plain Python's outcome, as the
    compiled-only run above does (cpu target, its tolerances)."""
    import autostage
    from autostage import config

    expected = harness.run(case.fn, case.args, case.kwargs)
    expected.warnings = _without_fp_warnings(expected.warnings)
    stage = types.SimpleNamespace(target="cpu")
    with config.TIERED.override(True):
        converted = autostage.convert(case.fn, target="cpu")
        first = harness.run(converted, case.args, case.kwargs)
        if first.exception is None:
            converted.compile(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            assert all(c.prepared_runner() is not None for c in converted.concrete_functions)
    first.warnings = _without_fp_warnings(first.warnings)
    diffs = harness.compare_outcomes(expected, first, _comparison(case, "cpu"))
    assert not diffs, f"{case.id} (first call, as Python): " + "\n  ".join(diffs)
    _check_calls(case, stage, expected, converted)  # compiled now, twice


_STAGEABLE_REFERENCE = [c for c in REFERENCE_NUMPY_CASES if c.id not in NOT_STAGEABLE]
_UNSTAGEABLE_REFERENCE = [c for c in (*REFERENCE_NUMPY_CASES, *STAGED_CASES)
                          if c.id in NOT_STAGEABLE]
_EAGER_CASES = [*_STAGEABLE_PROGRAMS, *_STAGEABLE_REFERENCE]


@pytest.mark.parametrize("case", _EAGER_CASES, ids=[c.id for c in _EAGER_CASES])
def test_program_run_eagerly(case):
    """``config.EAGER`` (the debugging switch): every call runs the converted Python code, twice,
    nothing is traced, and the outcome (values, stdout, exceptions) is plain Python's exactly."""
    import autostage
    from autostage import config

    expected = harness.run(case.fn, case.args, case.kwargs)
    converted = autostage.convert(case.fn, target="cpu")
    with config.EAGER.override(True):
        for call in ("first call", "second call"):
            actual = harness.run(converted, case.args, case.kwargs)
            diffs = harness.compare_outcomes(expected, actual, _comparison(case, "interpreter"))
            assert not diffs, f"{case.id} ({call}, eagerly): " + "\n  ".join(diffs)
    assert converted.trace_count == 0, f"{case.id}: traced while running eagerly"



@pytest.mark.parametrize("case", _STAGEABLE_REFERENCE, ids=[c.id for c in _STAGEABLE_REFERENCE])
def test_reference_program_staged(case, stage):
    _check_staged(case, stage)


def _autostage_error_types():
    from autostage.runtime import tracing

    import autostage

    return (tracing.StagingError, autostage.ConversionError)


@pytest.mark.parametrize("case", _UNSTAGEABLE_REFERENCE,
                         ids=[c.id for c in _UNSTAGEABLE_REFERENCE])
def test_reference_program_not_stageable(case, stage):
    if stage is harness.identity_converter:
        pytest.skip("needs the real converter")
    converted = stage(case.fn)
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)
    with (contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()),
          warnings.catch_warnings()):
        warnings.simplefilter("ignore")
        with pytest.raises(_autostage_error_types()) as info:
            converted(*args, **kwargs)
    message = str(info.value)
    assert case.module in message, (
        f"{case.id}: the staging error does not name the user's file {case.module}: {message}")


# ---------------------------------------------------------------------------------------------
# The suite itself


def _staged_programs():
    return {
        (file_name, fn.__name__): fn
        for file_name, module in harness.staged_program_modules().items()
        for fn in harness.program_functions(module)
    }


def test_staged_program_count_and_categories():
    programs = _staged_programs()
    assert len(programs) >= MIN_STAGED_PROGRAMS, f"only {len(programs)} staged programs"
    assert sorted(harness.staged_program_modules()) == sorted(STAGED_CATEGORIES)
    for file_name in STAGED_CATEGORIES:
        count = sum(1 for f, _ in programs if f == file_name)
        assert count >= 8, f"{file_name} has only {count} programs"


def test_every_staged_program_has_numpy_cases():
    with_cases = {(c.module, c.fn.__name__) for c in STAGED_CASES}
    without = sorted(set(_staged_programs()) - with_cases)
    assert not without, f"programs without CASES entries: {without}"
    no_numpy = [c.id for c in STAGED_CASES if not (_has_numpy(c.args) or _has_numpy(c.kwargs))]
    assert not no_numpy, f"cases with nothing to stage: {no_numpy}"


def test_staged_programs_are_deterministic_and_cover_both_outcomes():
    raising, printing = [], []
    for case in STAGED_CASES:
        outcome = harness.check_case(case, harness.identity_converter)
        if outcome.exception is not None:
            raising.append(case.id)
        if outcome.stdout:
            printing.append(case.id)
    assert len(raising) >= 8, raising
    assert len(printing) >= 10, printing


def _executable_lines(code: types.CodeType) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line is not None}
    lines.discard(code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines |= _executable_lines(const)
    return lines


def test_staged_cases_execute_every_line():
    modules = harness.staged_program_modules()
    files = {m.__file__: m for m in modules.values()}
    executed: set[tuple[str, int]] = set()

    def tracer(frame, event, arg):
        if frame.f_code.co_filename in files:
            executed.add((frame.f_code.co_filename, frame.f_lineno))
            return tracer
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        for case in STAGED_CASES:
            harness.run(case.fn, case.args, case.kwargs)
    finally:
        sys.settrace(old)
    missing = []
    for filename, module in files.items():
        source_lines = pathlib.Path(filename).read_text().splitlines()
        for obj in vars(module).values():
            if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
                for line in sorted(_executable_lines(obj.__code__)):
                    if (filename, line) not in executed:
                        missing.append(f"{pathlib.Path(filename).name}:{line}: "
                                       f"{source_lines[line - 1].strip()}")
    assert not missing, "lines no case executes:\n" + "\n".join(missing)


def test_tables_name_real_cases():
    ids = {c.id for c in (*REFERENCE_NUMPY_CASES, *STAGED_CASES)}
    stale = sorted(set(NOT_STAGEABLE) - ids)
    assert not stale, f"NOT_STAGEABLE names no reference case with NumPy inputs: {stale}"
    programs = {f"{f}::{name}" for f, name in _staged_programs()}
    programs |= {_program_key(c) for c in REFERENCE_NUMPY_CASES}
    assert not sorted(set(RTOL) - programs), "RTOL names unknown programs"
    for key, (rtol, why) in RTOL.items():
        assert 0 < rtol <= 1e-6 and why, key


# Self-tests of the staged comparison: it must accept promotion and nothing looser.


def test_staged_comparison_accepts_promotion_only():
    cmp = harness.compare_staged_values
    assert cmp(3, np.int64(3)) == []
    assert cmp(0, np.float64(0.0)) == []
    assert cmp(True, np.bool_(True)) == []
    assert cmp(0.5, np.float32(0.5)) == []
    assert cmp(0.1, np.float32(0.1)) == []  # a weak Python float joined with float32
    assert cmp(3, np.int64(4))
    assert cmp(True, np.int64(1))
    assert cmp(1.5, np.int64(1))
    assert cmp(0.1, np.nextafter(np.float64(0.1), 1.0))
    assert cmp(np.int64(3), 3)  # NumPy in plain Python must stay NumPy
    assert cmp(np.float32(1.0), np.float64(1.0))
    assert cmp((1, [2]), (np.int64(1), [np.int64(2)])) == []
    assert cmp((1, 2), [1, 2])
    assert cmp({"a": 1}, {"a": np.int64(1)}) == []


def test_staged_comparison_tolerance_is_for_floats_only():
    cmp = harness.compare_staged_values
    a = np.array([1.0, 2.0], dtype=np.float32)
    b = np.nextafter(a, np.float32(3))
    assert cmp(a, b)
    assert cmp(a, b, rtol=1e-6) == []
    assert cmp(a, b.astype(np.float64), rtol=1e-6)
    assert cmp(a, a * 1.01, rtol=1e-6)
    assert cmp(np.array([1, 2]), np.array([1, 3]), rtol=1e-6)
    assert cmp(np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2)), rtol=1e-6) == []
