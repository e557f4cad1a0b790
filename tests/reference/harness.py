"""Harness for the end-to-end reference programs in ``tests/reference/programs/``.

Each program module is plain Python. It declares its cases in a module-level list::

    CASES = [
        (fn, (arg0, arg1)),               # positional arguments
        (fn, (arg0,), {"key": value}),    # plus keyword arguments
    ]

Public top-level functions are programs and must have at least one case; helpers (functions,
classes) have names that start with an underscore or are classes.

A case is run twice: once plain and once through a *converter* (``autostage.to_graph`` in the
real suite, ``lambda f: f`` to check the harness itself). Each run gets its own deep copy of the
arguments, and records the return value, stdout, stderr, warnings (category and message), the
exception raised (type, message, variable name for ``NameError``/``UnboundLocalError``, explicit
``__cause__``) and the final state of the arguments. The two outcomes must be identical: values
are compared by type and value, floats and NumPy data bit for bit, NumPy arrays also by dtype and
shape.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib.util
import io
import os
import pathlib
import re
import signal
import struct
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

PROGRAMS_DIR = pathlib.Path(__file__).resolve().parent / "programs"
# Program modules are registered under this prefix in sys.modules (no package, no __init__.py).
# Deliberately not under "autostage", so that the converter treats them as user code.
MODULE_PREFIX = "refprog_"
# The staged suite (test_staged.py): programs whose control flow depends on NumPy argument values,
# run plain and through ``autostage.convert(target="interpreter")``. Same CASES convention.
STAGED_PROGRAMS_DIR = pathlib.Path(__file__).resolve().parent / "staged_programs"
STAGED_MODULE_PREFIX = "refstaged_"


# ---------------------------------------------------------------------------------------------
# Discovery


@dataclasses.dataclass(frozen=True)
class Case:
    module: str  # file name, e.g. "if_else.py"
    fn: Callable
    args: tuple
    kwargs: dict
    index: int  # position among the cases of this function

    @property
    def id(self) -> str:
        return f"{self.module}::{self.fn.__name__}[{self.index}]"


def _load_module(path: pathlib.Path, prefix: str = MODULE_PREFIX) -> types.ModuleType:
    name = prefix + path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect.getsource / getmodule need it registered
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@functools.cache
def program_modules() -> dict[str, types.ModuleType]:
    """File name -> loaded module, for every ``programs/*.py``."""
    return {p.name: _load_module(p) for p in sorted(PROGRAMS_DIR.glob("*.py"))}


def program_functions(module: types.ModuleType) -> list[Callable]:
    """The public top-level functions defined in ``module`` (the programs)."""
    return [
        obj
        for name, obj in vars(module).items()
        if isinstance(obj, types.FunctionType)
        and not name.startswith("_")
        and obj.__module__ == module.__name__
    ]


@functools.cache
def staged_program_modules() -> dict[str, types.ModuleType]:
    """File name -> loaded module, for every ``staged_programs/*.py``."""
    return {p.name: _load_module(p, STAGED_MODULE_PREFIX)
            for p in sorted(STAGED_PROGRAMS_DIR.glob("*.py"))}


@functools.cache
def collect_cases() -> tuple[Case, ...]:
    return _cases_of(program_modules())


@functools.cache
def collect_staged_cases() -> tuple[Case, ...]:
    return _cases_of(staged_program_modules())


def _cases_of(modules: dict[str, types.ModuleType]) -> tuple[Case, ...]:
    cases = []
    for file_name, module in modules.items():
        counts: dict[str, int] = {}
        raw = getattr(module, "CASES", None)
        if not isinstance(raw, list) or not raw:
            raise TypeError(f"{file_name}: needs a non-empty module-level list CASES")
        for entry in raw:
            if not isinstance(entry, tuple) or len(entry) not in (2, 3):
                raise TypeError(f"{file_name}: bad CASES entry {entry!r}")
            fn, args = entry[0], entry[1]
            kwargs = entry[2] if len(entry) == 3 else {}
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                raise TypeError(f"{file_name}: args must be a tuple, kwargs a dict: {entry!r}")
            if getattr(fn, "__module__", None) != module.__name__:
                raise TypeError(f"{file_name}: {fn!r} is not defined in this module")
            index = counts.get(fn.__name__, 0)
            counts[fn.__name__] = index + 1
            cases.append(Case(file_name, fn, args, kwargs, index))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate case ids (two programs with one name in one module?)")
    return tuple(cases)


# ---------------------------------------------------------------------------------------------
# Running


@dataclasses.dataclass(frozen=True)
class ExceptionInfo:
    type: type
    message: str
    name: str | None  # the variable, for NameError and UnboundLocalError
    cause: ExceptionInfo | None  # explicit ``raise ... from cause``

    def __str__(self) -> str:
        text = f"{self.type.__qualname__}({self.message!r})"
        if self.name is not None:
            text += f" [name={self.name!r}]"
        if self.cause is not None:
            text += f" from {self.cause}"
        return text


_VARIABLE_IN_MESSAGE = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)'")


def describe_exception(exc: BaseException | None) -> ExceptionInfo | None:
    if exc is None:
        return None
    name = None
    if isinstance(exc, NameError):
        # CPython sets .name for NameError, not (3.11) for UnboundLocalError: read the message.
        name = getattr(exc, "name", None)
        if name is None:
            match = _VARIABLE_IN_MESSAGE.search(str(exc))
            name = match.group(1) if match else None
    return ExceptionInfo(type(exc), str(exc), name, describe_exception(exc.__cause__))


@dataclasses.dataclass
class Outcome:
    value: Any
    stdout: str
    stderr: str
    exception: ExceptionInfo | None
    warnings: list[tuple[type, str]]  # (category, message); locations are not compared
    args: tuple  # final state of the (copied) arguments
    kwargs: dict


# Every program runs in milliseconds; a run that takes this long is a converted loop that does not
# terminate. The limit includes the first call's Numba compilation, which takes seconds on a loaded
# 2-core machine, hence the margin. Enforced with SIGALRM where available (main thread, Unix).
RUN_TIME_LIMIT_S = 60.0 * float(os.environ.get("AUTOSTAGE_REFERENCE_TIME_SCALE", "1"))


class RunTimeout(BaseException):
    """Raised into a run that exceeds RUN_TIME_LIMIT_S (a BaseException, so that a program's own
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise RunTimeout(f"run exceeded {seconds} s (a loop that does not terminate?)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(fn: Callable, args: tuple, kwargs: dict) -> Outcome:
    """Calls ``fn`` on fresh deep copies of the arguments and records everything observable."""
    args = copy.deepcopy(args)
    kwargs = copy.deepcopy(kwargs)
    out, err = io.StringIO(), io.StringIO()
    value = exception = None
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(record=True) as caught,
        _time_limit(RUN_TIME_LIMIT_S),
    ):
        warnings.simplefilter("always")  # not once per location: both runs must see them
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # the exception is the observed behaviour
            exception = describe_exception(exc)
    recorded = [(w.category, str(w.message)) for w in caught]
    return Outcome(value, out.getvalue(), err.getvalue(), exception, recorded, args, kwargs)


# ---------------------------------------------------------------------------------------------
# Comparing


def _float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


def compare_values(expected: Any, actual: Any, path: str = "value") -> list[str]:
    """Differences between two values; empty when identical (type, value, bits)."""
    if type(expected) is not type(actual):
        return [
            f"{path}: type {type(expected).__name__} != {type(actual).__name__} "
            f"({expected!r} vs {actual!r})"
        ]
    if isinstance(expected, np.ndarray):
        if expected.dtype != actual.dtype:
            return [f"{path}: dtype {expected.dtype} != {actual.dtype}"]
        if expected.shape != actual.shape:
            return [f"{path}: shape {expected.shape} != {actual.shape}"]
        if expected.dtype == object:
            diffs = []
            for idx in np.ndindex(expected.shape):
                diffs += compare_values(expected[idx], actual[idx], f"{path}[{idx}]")
            return diffs
        if not np.array_equal(expected, actual, equal_nan=expected.dtype.kind in "fc") or (
            np.ascontiguousarray(expected).tobytes() != np.ascontiguousarray(actual).tobytes()
        ):
            return [f"{path}: arrays differ\n  expected {expected!r}\n  actual   {actual!r}"]
        return []
    if isinstance(expected, np.generic):
        if expected.tobytes() != actual.tobytes():
            return [f"{path}: {expected!r} != {actual!r}"]
        return []
    if isinstance(expected, float):
        if _float_bits(expected) != _float_bits(actual):
            return [f"{path}: {expected!r} != {actual!r} (bit-exact float comparison)"]
        return []
    if isinstance(expected, complex):
        return compare_values(expected.real, actual.real, f"{path}.real") + compare_values(
            expected.imag, actual.imag, f"{path}.imag"
        )
    if isinstance(expected, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{path}: length {len(expected)} != {len(actual)}: {expected!r} vs {actual!r}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            diffs += compare_values(e, a, f"{path}[{i}]")
        return diffs
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return [f"{path}: keys (in order) {list(expected)!r} != {list(actual)!r}"]
        diffs = []
        for key in expected:
            diffs += compare_values(expected[key], actual[key], f"{path}[{key!r}]")
        return diffs
    if isinstance(expected, (str, bytes, int, bool, type(None), set, frozenset, range)):
        return [] if expected == actual else [f"{path}: {expected!r} != {actual!r}"]
    if isinstance(expected, (types.FunctionType, types.BuiltinFunctionType, type)):
        return [] if expected is actual else [f"{path}: {expected!r} is not {actual!r}"]
    if type(expected).__eq__ is object.__eq__ and hasattr(expected, "__dict__"):
        # Instances of user classes without __eq__: compare their attributes.
        return compare_values(vars(expected), vars(actual), f"{path}.__dict__")
    try:
        equal = expected == actual
        if not isinstance(equal, bool):
            equal = bool(equal)
    except Exception as exc:
        return [f"{path}: cannot compare {expected!r} and {actual!r}: {exc}"]
    return [] if equal else [f"{path}: {expected!r} != {actual!r}"]


def compare_outcomes(expected: Outcome, actual: Outcome,
                     compare: Callable[..., list[str]] = compare_values) -> list[str]:
    """Differences between two outcomes; ``compare(expected, actual, path)`` compares the return
    values (``compare_values``, bit for bit, unless a caller passes a looser comparison)."""
    diffs = []
    if expected.exception is None and actual.exception is not None:
        diffs.append(f"raised {actual.exception}, plain Python returned {expected.value!r}")
    elif expected.exception is not None and actual.exception is None:
        diffs.append(f"returned {actual.value!r}, plain Python raised {expected.exception}")
    elif expected.exception is not None:
        if expected.exception != actual.exception:
            diffs.append(
                f"exception: plain {expected.exception}\n             got {actual.exception}"
            )
    else:
        diffs += compare(expected.value, actual.value, "return value")
    if expected.stdout != actual.stdout:
        diffs.append(f"stdout differs:\n  plain {expected.stdout!r}\n  got   {actual.stdout!r}")
    if expected.stderr != actual.stderr:
        diffs.append(f"stderr differs:\n  plain {expected.stderr!r}\n  got   {actual.stderr!r}")
    if expected.warnings != actual.warnings:
        diffs.append(f"warnings differ:\n  plain {expected.warnings}\n  got   {actual.warnings}")
    diffs += compare(expected.args, actual.args, "arguments after the call")
    diffs += compare(expected.kwargs, actual.kwargs, "keyword arguments after the call")
    return diffs


def check_case(case: Case, converter: Callable[[Callable], Callable],
               compare: Callable[..., list[str]] = compare_values) -> Outcome:
    """Runs ``case`` plain and converted; raises AssertionError listing every difference."""
    expected = run(case.fn, case.args, case.kwargs)
    converted = converter(case.fn)
    actual = run(converted, case.args, case.kwargs)
    diffs = compare_outcomes(expected, actual, compare)
    if diffs:
        raise AssertionError(f"{case.id}: converted function differs from plain Python:\n  "
                             + "\n  ".join(diffs))
    return expected


def identity_converter(fn: Callable) -> Callable:
    """Stand-in converter: checks the harness and the determinism of the programs."""
    return fn


# ---------------------------------------------------------------------------------------------
# Comparing staged results (test_staged.py)

# Python scalar types and the NumPy scalar kinds a staged function may return in their place.
# Staging promotes a Python scalar that is branch or loop state to a tensor (DESIGN: "Python
# scalars mixed with tensors in branches/loops are promoted"), and results come back as NumPy
# values: plain ``count = 0; ... count += 1`` returns an int, the staged function an np.int64.
_PROMOTED_KINDS = {bool: "b", int: "iuf", float: "f"}


def _promoted_python_scalar(expected: Any, actual: Any, path: str) -> list[str] | None:
    """None when this rule does not apply; else the differences (empty: an accepted promotion).

    Accepted: ``actual`` is a NumPy scalar of a kind the Python value promotes to, and equals the
    Python value cast to ``actual``'s dtype bit for bit (a weak Python float joined with a float32
    tensor becomes float32, as NumPy 2 does it)."""
    kinds = _PROMOTED_KINDS.get(type(expected))
    if kinds is None or not isinstance(actual, np.generic):
        return None
    if actual.dtype.kind not in kinds:
        return [f"{path}: plain Python returned {type(expected).__name__} {expected!r}, staged "
                f"returned {actual!r} (not a promotion of a Python {type(expected).__name__})"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cast = actual.dtype.type(expected)
    except OverflowError:
        cast = None
    if cast is None or cast.tobytes() != actual.tobytes() or (
            actual.dtype.kind in "iu" and int(actual) != expected):
        return [f"{path}: {expected!r} != {actual!r} (Python scalar promoted by staging)"]
    return []


def _close(expected: np.ndarray | np.generic, actual: np.ndarray | np.generic,
           rtol: float) -> bool:
    return bool(np.all(np.isclose(actual, expected, rtol=rtol, atol=0.0, equal_nan=True)))


def compare_staged_values(expected: Any, actual: Any, path: str = "value", *,
                          rtol: float = 0.0) -> list[str]:
    """``compare_values`` for staged results: the same, plus

    - Python bool/int/float in the plain result may come back as a NumPy scalar (promotion, see
      ``_promoted_python_scalar``); lists, tuples and dicts must keep their Python type;
    - with ``rtol > 0``, floating arrays and NumPy floating scalars of the same dtype and shape
      may differ by ``rtol`` (relative, no absolute slack); dtype and shape stay exact and
      integer/bool data stays exact. So may Python floats (``float(x @ y)``, ``loss.item()``:
      a Python float computed by BLAS or a NumPy reduction, which cpu may round differently).
    """
    promoted = _promoted_python_scalar(expected, actual, path)
    if promoted is not None:
        return promoted
    if isinstance(expected, (list, tuple)) and type(expected) is type(actual):
        if len(expected) != len(actual):
            return [f"{path}: length {len(expected)} != {len(actual)}: {expected!r} vs {actual!r}"]
        diffs = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            diffs += compare_staged_values(e, a, f"{path}[{i}]", rtol=rtol)
        return diffs
    if isinstance(expected, dict) and type(expected) is type(actual):
        if list(expected) != list(actual):
            return [f"{path}: keys (in order) {list(expected)!r} != {list(actual)!r}"]
        diffs = []
        for key in expected:
            diffs += compare_staged_values(expected[key], actual[key], f"{path}[{key!r}]",
                                           rtol=rtol)
        return diffs
    diffs = compare_values(expected, actual, path)
    if (diffs and rtol > 0 and type(expected) is type(actual)
            and isinstance(expected, (np.ndarray, np.generic))
            and expected.dtype == actual.dtype and expected.dtype.kind in "fc"
            and np.shape(expected) == np.shape(actual) and _close(expected, actual, rtol)):
        return []
    if (diffs and rtol > 0 and type(expected) is float and type(actual) is float
            and _close(np.float64(expected), np.float64(actual), rtol)):
        return []
    return diffs
