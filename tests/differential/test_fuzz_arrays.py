"""Random array programs (``fuzz_arrays``): NumPy eager vs ``autostage.convert`` on each target.

Each program runs on two argument sets of the same types, twice each (the second call takes the
cached trace, the second set the same trace with other values). The staged function must return
what NumPy returns: the same Python types, dtypes and shapes, and the same data bit for bit (NaNs
where NumPy's are, signed zeros alike), except the values the generator marks inexact
(transcendental functions, sums of non-integral floats), compared with a tolerance; or raise
what NumPy raises (type and message); or refuse with a clear error naming the program's line.
Never an internal exception, never a different value.

Programs of ``fuzz_arrays.generate_writes`` write into their argument arrays: after every call
(returned or raised) the arrays passed to NumPy and those passed to the staged function (each call
its own copies) must hold the same dtype, shape and data, and a result that is one of NumPy's
argument objects must be the staged call's same argument object (and only then).

The default run checks a few seeds per target; ``-m slow`` runs hundreds.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import warnings

import error_kinds
import fuzz_arrays
import harness
import numpy as np
import pytest

import autostage

SEEDS = range(8)
SLOW_SEEDS = range(8, 300)
WRITE_SEEDS = range(8)
SLOW_WRITE_SEEDS = range(8, 300)
TARGETS = ("interpreter", "cpu")
RTOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4, np.dtype(np.float16): 1e-2}
ATOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-6, np.dtype(np.float16): 1e-3}

# "target:seed" ("writes:target:seed" for generate_writes) -> the finding it shows (none known
# today).
KNOWN: dict[str, str] = {}


def _load(tmp_path, seed: int, writes: bool = False):
    program = (fuzz_arrays.generate_writes if writes else fuzz_arrays.generate)(seed)
    name = f"fuzzwrite_{seed}" if writes else f"fuzzarr_{seed}"
    path = tmp_path / f"{name}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.prog, program, path


def _run(fn, args) -> tuple[object, BaseException | None, list]:
    """The result, the exception, and the arguments (copies of ``args``) after the call."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None, args
        except Exception as e:  # noqa: BLE001 - the exception is the observed behaviour
            return None, e, args


def _same_data(expected: np.ndarray, actual: np.ndarray, inexact: bool,
               loosest: np.dtype | None = None) -> bool:
    """Equal (inexact: within the tolerance of the value's float dtype, or of ``loosest``, the
    narrowest float dtype of the arguments, whose rounding a wider result may carry: a float32
    ``np.sin`` 1 ulp from NumPy's, then subtracted from int64 values in float64)."""
    if expected.dtype.kind not in "fc":
        return bool(np.array_equal(expected, actual))
    if inexact:
        dtype = expected.dtype
        if loosest is not None and RTOL.get(loosest, 0) > RTOL.get(dtype, 0):
            dtype = loosest
        return bool(np.allclose(actual, expected, rtol=RTOL[dtype], atol=ATOL[dtype],
                                equal_nan=True))
    nan = np.isnan(expected)
    return bool(np.array_equal(nan, np.isnan(actual)) and np.array_equal(
        np.signbit(expected[~nan]), np.signbit(actual[~nan])) and np.array_equal(
        expected[~nan], actual[~nan]))


def _differences(expected: tuple, actual: object, inexact: frozenset[int],
                 loosest: np.dtype | None = None) -> list[str]:
    if type(actual) is not tuple or len(actual) != len(expected):
        return [f"returned {actual!r}, NumPy {expected!r}"]
    diffs = []
    for k, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if not isinstance(e, np.ndarray | np.generic):
            diffs += harness.compare_staged_values(e, a, f"value[{k}]")
        elif type(e) is not type(a) or e.dtype != a.dtype or np.shape(e) != np.shape(a):
            diffs.append(f"value[{k}]: NumPy {type(e).__name__} {e.dtype} {np.shape(e)}, staged "
                         f"{type(a).__name__} {getattr(a, 'dtype', None)} {np.shape(a)}")
        elif not _same_data(np.asarray(e), np.asarray(a), k in inexact, loosest):
            diffs.append(f"value[{k}]: NumPy {e!r}, staged {a!r}")
    return diffs


def _argument_differences(expected: list, actual: list, inexact: frozenset[str],
                          loosest: np.dtype | None = None) -> list[str]:
    """The argument arrays after NumPy's call vs after the staged one."""
    diffs = []
    for name, e, a in zip("abc", expected, actual, strict=False):
        if e.dtype != a.dtype or e.shape != a.shape:
            diffs.append(f"argument {name}: NumPy {e.dtype} {e.shape}, staged {a.dtype} {a.shape}")
        elif not _same_data(e, a, name in inexact, loosest):
            diffs.append(f"argument {name} after the call: NumPy {e!r}, staged {a!r}")
    return diffs


def _identity_differences(expected: tuple, numpy_args: list, actual: object,
                          staged_args: list) -> list[str]:
    """A result that is NumPy's argument object must be the staged call's same argument."""
    if type(actual) is not tuple or len(actual) != len(expected):
        return []
    diffs = []
    for k, (e, a) in enumerate(zip(expected, actual, strict=True)):
        for name, e_arg, a_arg in zip("abc", numpy_args, staged_args, strict=False):
            if (e is e_arg) != (a is a_arg):
                diffs.append(f"value[{k}]: NumPy's {'is' if e is e_arg else 'is not'} the "
                             f"argument {name}, staged {'is' if a is a_arg else 'is not'}")
    return diffs


def check(tmp_path, seed: int, target: str, writes: bool = False) -> str:
    """'same', 'raised' (as NumPy) or 'refused: <first line>'; AssertionError otherwise."""
    prog, program, path = _load(tmp_path, seed, writes)
    staged = autostage.convert(prog, target=target)
    verdict = "same"
    for args in program.arguments:
        floats = [a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        loosest = min(floats, key=lambda d: d.itemsize, default=None)
        expected, error, numpy_args = _run(prog, args)
        for _ in range(2):
            actual, staged_error, staged_args = _run(staged, args)
            where = f"{path} ({target}) on {args!r}:\n{program.source}"
            if staged_error is not None:
                kind = error_kinds.assert_no_leak(staged_error, str(path), where)
                if kind == "refused":
                    message = str(staged_error)
                    assert re.search(rf"{re.escape(path.name)}\D{{0,3}}\d+", message), where
                    return f"refused: {message.splitlines()[0]}"
                assert error is not None, f"{where}\nraised {staged_error!r}, NumPy returned"
                assert (type(staged_error), str(staged_error).splitlines()[0]) == (
                    type(error), str(error).splitlines()[0]), (
                    f"{where}\nraised {staged_error!r}, NumPy {error!r}")
                diffs = _argument_differences(numpy_args[:3], staged_args[:3],
                                              program.inexact_arguments, loosest)
                assert not diffs, where + "\n" + "\n".join(diffs)
                verdict = "raised"
                continue
            assert error is None, f"{where}\nreturned {actual!r}, NumPy raised {error!r}"
            diffs = _differences(expected, actual, program.inexact, loosest)
            diffs += _argument_differences(numpy_args[:3], staged_args[:3],
                                           program.inexact_arguments, loosest)
            diffs += _identity_differences(expected, numpy_args[:3], actual, staged_args[:3])
            assert not diffs, where + "\n" + "\n".join(diffs)
    return verdict


def _params(seeds, slow=False, prefix=""):
    params = []
    for target in TARGETS:
        for seed in seeds:
            key = f"{prefix}{target}:{seed}"
            marks = [pytest.mark.slow] if slow else []
            if key in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[key]))
            params.append(pytest.param(seed, target, marks=marks, id=key))
    return params


@pytest.fixture(autouse=True)
def _compiled_at_once(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_TIERED", "0")  # the compiled code answers the first call


@pytest.mark.parametrize("seed,target", _params(SEEDS))
def test_array_program(tmp_path, seed, target):
    check(tmp_path, seed, target)


@pytest.mark.parametrize("seed,target", _params(SLOW_SEEDS, slow=True))
def test_array_program_many(tmp_path, seed, target):
    check(tmp_path, seed, target)


@pytest.mark.parametrize("seed,target", _params(WRITE_SEEDS, prefix="writes:"))
def test_write_program(tmp_path, seed, target):
    check(tmp_path, seed, target, writes=True)


@pytest.mark.parametrize("seed,target", _params(SLOW_WRITE_SEEDS, slow=True, prefix="writes:"))
def test_write_program_many(tmp_path, seed, target):
    check(tmp_path, seed, target, writes=True)


def test_write_generator_is_deterministic_and_covers_the_forms():
    programs = [fuzz_arrays.generate_writes(s) for s in range(60)]
    text = "".join(p.source for p in programs)
    assert fuzz_arrays.generate_writes(7).source == programs[7].source
    for form in ("a[", "b[", "c[", "] = ", "] += ", " *= ", "[(", "[i", "if ", "for i in range(n):",
                 "while ", "return (a", ", b,", "[1:3]", "[...]", "def _w0(", "    _w1("):
        assert form in text, form
    # the generator's own writes never reach the argument sets (generate's are drawn alike)
    for seed in range(60):
        plain = fuzz_arrays.generate(seed).arguments
        for args, plain_args in zip(programs[seed].arguments, plain, strict=True):
            for x, y in zip(args[:3], plain_args[:3], strict=True):
                assert x.dtype == y.dtype and np.array_equal(x, y)


def test_generator_is_deterministic_and_covers_the_forms():
    programs = [fuzz_arrays.generate(s) for s in range(60)]
    text = "".join(p.source for p in programs)
    assert fuzz_arrays.generate(7).source == programs[7].source
    for form in ("np.where(", "np.sum(", "for i in range(n):", "while ", "if ", ".copy()",
                 ".append(", ".astype(", " @ ", " // ", " % ", "np.argsort(", "[None]",
                 "np.concatenate(", "np.tanh(", " += "):
        assert form in text, form
    assert any(p.inexact for p in programs) and any(not p.inexact for p in programs)
    kinds = {a.dtype.kind for p in programs for a in p.arguments[0][:3]}
    assert kinds == set("biuf")
