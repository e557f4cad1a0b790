"""End-to-end reference suite: every program gives identical results plain and converted.

The converter under test is ``autostage.to_graph``. ``AUTOSTAGE_REFERENCE_CONVERTER=identity``
runs the suite with ``lambda f: f`` instead (a check of the harness and programs alone).
"""

from __future__ import annotations

import os
import pathlib
import sys
import types

import harness  # tests/reference is on sys.path (pytest rootdir-relative import)
import numpy as np
import pytest

CASES = harness.collect_cases()

MIN_PROGRAMS = 170
CATEGORIES = [
    "asserts.py", "branch_definitions.py", "calls.py", "comprehensions.py", "early_returns.py",
    "for_loops.py", "generators_and_exceptions.py", "if_else.py", "iteration.py", "lists.py",
    "logical.py", "misc.py", "nested_control_flow.py", "numpy_programs.py", "printing.py",
    "python_semantics.py", "scopes.py", "slices.py", "while_loops.py",
]


@pytest.fixture(scope="module")
def converter():
    choice = os.environ.get("AUTOSTAGE_REFERENCE_CONVERTER", "to_graph")
    if choice == "identity":
        return harness.identity_converter
    if choice != "to_graph":
        raise ValueError(f"AUTOSTAGE_REFERENCE_CONVERTER={choice!r}: use to_graph or identity")
    import autostage

    to_graph = getattr(autostage, "to_graph", None)
    if to_graph is None:
        pytest.skip("autostage.to_graph is not implemented yet")
    return to_graph


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference(case, converter):
    harness.check_case(case, converter)


# ---------------------------------------------------------------------------------------------
# The suite itself: size, coverage of the programs, determinism, and the harness's comparisons.


def _all_programs():
    return {
        (file_name, fn.__name__): fn
        for file_name, module in harness.program_modules().items()
        for fn in harness.program_functions(module)
    }


def test_program_count_and_categories():
    programs = _all_programs()
    assert len(programs) >= MIN_PROGRAMS, f"only {len(programs)} programs"
    assert len(CASES) >= len(programs)
    assert sorted(harness.program_modules()) == sorted(CATEGORIES)
    for file_name in CATEGORIES:
        count = sum(1 for f, _ in programs if f == file_name)
        assert count >= 8, f"{file_name} has only {count} programs"


def test_every_program_has_a_case():
    with_cases = {(c.module, c.fn.__name__) for c in CASES}
    without = sorted(set(_all_programs()) - with_cases)
    assert not without, f"programs without CASES entries: {without}"
    helpers_in_cases = sorted(with_cases - set(_all_programs()))
    assert not helpers_in_cases, f"CASES name non-program functions: {helpers_in_cases}"


def test_programs_are_deterministic_and_observable():
    """Each case, run plain twice, gives the same outcome; each program does something visible
    (a value other than None, output, or an exception) in at least one of its cases."""
    observable = set()
    for case in CASES:
        outcome = harness.check_case(case, harness.identity_converter)
        if (outcome.value is not None or outcome.exception is not None or outcome.stdout
                or outcome.stderr):
            observable.add((case.module, case.fn.__name__))
    silent = sorted(set(_all_programs()) - observable)
    assert not silent, f"programs with no visible behaviour: {silent}"


def test_cases_raise_and_return():
    """The suite covers both outcomes, for every category."""
    for file_name in CATEGORIES:
        outcomes = [harness.run(c.fn, c.args, c.kwargs) for c in CASES if c.module == file_name]
        assert any(o.exception is None for o in outcomes), file_name
    raising = [c for c in CASES if harness.run(c.fn, c.args, c.kwargs).exception is not None]
    assert len(raising) >= 40, f"only {len(raising)} raising cases"
    kinds = {harness.run(c.fn, c.args, c.kwargs).exception.type for c in raising}
    assert {UnboundLocalError, NameError, AssertionError, ValueError} <= kinds


def _executable_lines(code: types.CodeType) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line is not None}
    lines.discard(code.co_firstlineno)  # the `def` line of a nested code object
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines |= _executable_lines(const)
    return lines


def _module_code_objects(module):
    for obj in vars(module).values():
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
            yield obj.__code__
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            for attr in vars(obj).values():
                func = getattr(attr, "__func__", attr)
                if isinstance(func, types.FunctionType):
                    yield func.__code__
                elif isinstance(attr, property):
                    for f in (attr.fget, attr.fset, attr.fdel):
                        if f is not None:
                            yield f.__code__


def test_cases_execute_every_line_of_every_program():
    """The argument sets exercise every branch: each line of program code runs in some case."""
    modules = harness.program_modules()
    files = {m.__file__: m for m in modules.values()}
    executed: set[tuple[str, int]] = set()

    def tracer(frame, event, arg):
        filename = frame.f_code.co_filename
        if filename in files:
            executed.add((filename, frame.f_lineno))
            return tracer
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        for case in CASES:
            harness.run(case.fn, case.args, case.kwargs)
    finally:
        sys.settrace(old)

    missing = []
    for filename, module in files.items():
        source_lines = pathlib.Path(filename).read_text().splitlines()
        for code in _module_code_objects(module):
            for line in sorted(_executable_lines(code)):
                if (filename, line) in executed:
                    continue
                if "pragma: no cover" in source_lines[line - 1]:
                    continue
                missing.append(f"{pathlib.Path(filename).name}:{line}: "
                               f"{source_lines[line - 1].strip()}")
    assert not missing, "lines no case executes:\n" + "\n".join(missing)


# Harness self-tests: a converter that changes any observable behaviour must be caught.


def _perturbed(fn, change):
    def wrapper(*args, **kwargs):
        return change(fn, *args, **kwargs)

    return wrapper


def _case(fn, *args, **kwargs):
    return harness.Case("selftest.py", fn, args, kwargs, 0)


def _expect_difference(case, converter, fragment):
    with pytest.raises(AssertionError, match=fragment):
        harness.check_case(case, converter)


def _neg_zero(x):
    return x * 0.0


def _to_array(n, dtype):
    return np.arange(n, dtype=dtype)


def _append(values):
    values.append(1)
    return len(values)


def _shout(x):
    print(x)
    return x


def _unbound(flag):
    if flag:
        y = 1
    return y


def test_harness_detects_float_sign_and_type_differences():
    case = _case(_neg_zero, -1.0)
    _expect_difference(case, lambda f: _perturbed(f, lambda f, x: abs(f(x))), "bit-exact")
    _expect_difference(case, lambda f: _perturbed(f, lambda f, x: int(f(x))), "type float != int")
    case = _case(_neg_zero, np.float32(-1.0))
    _expect_difference(case, lambda f: _perturbed(f, lambda f, x: np.float64(f(x))), "type")


def test_harness_detects_array_dtype_and_value_differences():
    case = _case(_to_array, 3, np.int32)
    _expect_difference(case, lambda f: _perturbed(f, lambda f, n, d: f(n, np.int64)), "type|dtype")
    _expect_difference(case, lambda f: _perturbed(f, lambda f, n, d: f(n, d) * 2), "arrays differ")


def test_harness_detects_mutation_stdout_and_exception_differences():
    case = _case(_append, [0])
    _expect_difference(
        case, lambda f: _perturbed(f, lambda f, v: f(list(v)) + 1), "arguments after the call"
    )
    case = _case(_shout, "hi")
    _expect_difference(case, lambda f: _perturbed(f, lambda f, x: x), "stdout differs")
    case = _case(_unbound, False)
    outcome = harness.run(case.fn, case.args, case.kwargs)
    assert outcome.exception.type is UnboundLocalError and outcome.exception.name == "y"

    def wrong_name(f, flag):
        raise UnboundLocalError("cannot access local variable 'z' where it is not associated")

    _expect_difference(case, lambda f: _perturbed(f, wrong_name), "exception")
    _expect_difference(case, lambda f: _perturbed(f, lambda f, flag: None), "returned None")
    harness.check_case(case, harness.identity_converter)
