"""Export round trip of every program the staged reference suite runs (``test_staged.py``).

Each program is converted (interpreter target), called on each of its cases, saved
(``autostage.save``) and loaded again (``autostage.load``); every case through the loaded
function gives the direct run's outcome exactly (value, stdout, exception, arguments after the
call). The archives are written once (``archives``); then

- in this process, each program's archive is loaded and compared (``test_program_round_trip``);
- one subprocess loads all of them at once and runs every case, with no program module
  importable or imported there (``test_all_programs_load_without_their_source``);
- a representative subset also runs compiled (cpu target; its Numba compilation is the cost,
  hence only a subset: ``CPU_PROGRAMS``; every program with ``-m slow``).

Programs that cannot be exported are listed in ``NOT_EXPORTABLE`` with the reason; saving them
must raise ``ExportError`` with that reason, and the list must not be stale.
"""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import harness  # tests/reference is on sys.path (pytest rootdir-relative import)
import pytest
from autostage.runtime.export import NoSavedSignatureError
from test_staged import NOT_STAGEABLE, REFERENCE_NUMPY_CASES, STAGED_CASES

import autostage

_CASES = [c for c in (*STAGED_CASES, *REFERENCE_NUMPY_CASES) if c.id not in NOT_STAGEABLE]
_PROGRAMS: dict[str, list] = {}
for _case in _CASES:
    _PROGRAMS.setdefault(f"{_case.module}::{_case.fn.__name__}", []).append(_case)

# Programs an export refuses: "file::program" -> (what the ExportError says, why).
NOT_EXPORTABLE: dict[str, tuple[str, str]] = {
    "recursion.py::polynomial_at": (
        "argument 'polynomial' is a refstaged_recursion.Polynomial",
        "its argument is an object of a user class, a constant its trace is specialised on: "
        "the class is the user's code, which an export does not carry"),
    **{program: ("which an exported function does not write back yet",
                 "it writes into its array argument (written back when called, not exported)")
       for program in ("arrays.py::in_place_input_update", "for_loops.py::double_in_place",
                       "slices.py::increment_evens_in_place", "slices.py::prefix_sums_in_place",
                       "slices.py::swap_items", "arrays.py::laplace_step",
                       "arrays.py::histogram_into", "arrays.py::insertion_sort_in_place",
                       "arrays.py::normalize_rows_in_place")},
}
# Cases whose direct call raises while tracing (before any op with an effect), so that no trace
# exists for their arguments: the loaded function says it has no saved signature for them.
RAISES_WHILE_TRACING: dict[str, str] = {
    "arrays.py::matrix_trace_checked[1]": "raises ValueError for a rank-1 argument at trace time",
}

# Programs also round-tripped compiled: branches, loops, lists, recursion (staged calls),
# Variables, prints and run-time errors.
CPU_PROGRAMS = (
    "branches.py::huber_loop", "effects.py::accumulate_in_variables",
    "effects.py::print_then_assert", "exits_and_lists.py::first_above_2d", "recursion.py::fib",
    "arrays.py::returns_dict",
)


class _Saved:
    """A program's archive and its direct outcomes (or the ExportError saving raised)."""

    def __init__(self, path: pathlib.Path, outcomes: list | None, error: Exception | None):
        self.path, self.outcomes, self.error = path, outcomes, error


def _save(key: str, directory: pathlib.Path, target: str = "interpreter") -> _Saved:
    cases = _PROGRAMS[key]
    staged = autostage.convert(cases[0].fn, target=target)
    outcomes = [harness.run(staged, case.args, case.kwargs) for case in cases]
    path = directory / (key.replace("::", "__").replace(".py", "") + f".{target}.autostage")
    try:
        autostage.save(staged, path)
    except autostage.ExportError as e:
        return _Saved(path, None, e)
    return _Saved(path, outcomes, None)


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, _Saved]:
    directory = tmp_path_factory.mktemp("exports")
    return {key: _save(key, directory) for key in _PROGRAMS}


def _check_loaded(key: str, saved: _Saved, target: str = "interpreter") -> None:
    if key in NOT_EXPORTABLE:
        assert saved.error is not None, f"{key} is listed in NOT_EXPORTABLE but saves: stale"
        assert NOT_EXPORTABLE[key][0] in str(saved.error), str(saved.error)
        return
    assert saved.error is None, f"{key}: {saved.error}"
    loaded = autostage.load(saved.path, target=target)
    for case, expected in zip(_PROGRAMS[key], saved.outcomes, strict=True):
        _compare(case, expected, harness.run(loaded, case.args, case.kwargs), "loaded")


def _compare(case, expected, actual, how: str) -> None:
    if case.id in RAISES_WHILE_TRACING:
        assert expected.exception is not None, f"{case.id}: RAISES_WHILE_TRACING is stale"
        assert actual.exception is not None, f"{case.id}: the loaded function returned"
        assert actual.exception.type is NoSavedSignatureError, actual.exception
        assert "has no saved signature for the call" in actual.exception.message
        return
    diffs = harness.compare_outcomes(expected, actual)
    assert not diffs, f"{case.id} ({how}): " + "\n  ".join(diffs)


@pytest.mark.parametrize("key", sorted(_PROGRAMS))
def test_program_round_trip(key, archives):
    _check_loaded(key, archives[key])


@pytest.mark.parametrize("key", CPU_PROGRAMS)
def test_program_round_trip_compiled(key, tmp_path):
    _check_loaded(key, _save(key, tmp_path, target="cpu"), target="cpu")


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(set(_PROGRAMS) - set(CPU_PROGRAMS)))
def test_every_program_round_trip_compiled(key, tmp_path):
    """Every other program, compiled too (minutes of Numba compilation: ``-m slow``)."""
    _check_loaded(key, _save(key, tmp_path, target="cpu"), target="cpu")


def test_tables_name_real_programs():
    assert len(_PROGRAMS) >= 100
    stale = sorted(set(NOT_EXPORTABLE) - set(_PROGRAMS))
    assert not stale, f"NOT_EXPORTABLE names programs the staged suite does not run: {stale}"
    assert not sorted(set(CPU_PROGRAMS) - set(_PROGRAMS))
    assert not sorted(set(RAISES_WHILE_TRACING) - {c.id for c in _CASES})
    for key, (message, why) in NOT_EXPORTABLE.items():
        assert message and why, key


# The loading process: no program module is importable (they are loaded from files by the
# harness, under these prefixes), and none may be imported while it runs.
_LOADER = textwrap.dedent("""
    import pickle, sys
    sys.path.insert(0, sys.argv[1])  # tests/reference, for harness.run (not the programs)
    import harness
    import autostage

    class NoPrograms:
        def find_spec(self, name, path=None, target=None):
            if name.startswith(("refstaged_", "refprog_", "staged_programs", "programs")):
                raise ImportError(f"the loading process imported {name}")
            return None

    sys.meta_path.insert(0, NoPrograms())
    with open(sys.argv[2], "rb") as f:
        jobs = pickle.load(f)
    results = {}
    for key, (path, calls) in jobs.items():
        loaded = autostage.load(path)
        results[key] = [harness.run(loaded, args, kwargs) for args, kwargs in calls]
    imported = [m for m in sys.modules if m.startswith(("refstaged_", "refprog_"))]
    assert not imported, imported
    with open(sys.argv[3], "wb") as f:
        pickle.dump(results, f)
""")


def test_all_programs_load_without_their_source(archives, tmp_path):
    jobs = {key: (str(saved.path), [(c.args, c.kwargs) for c in _PROGRAMS[key]])
            for key, saved in archives.items() if saved.error is None}
    (tmp_path / "jobs.pickle").write_bytes(pickle.dumps(jobs))
    reference = pathlib.Path(harness.__file__).parent
    env = dict(os.environ, PYTHONPATH="")
    done = subprocess.run(
        [sys.executable, "-c", _LOADER, str(reference), str(tmp_path / "jobs.pickle"),
         str(tmp_path / "results.pickle")], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    results = pickle.loads((tmp_path / "results.pickle").read_bytes())
    assert sorted(results) == sorted(jobs)
    for key, outcomes in results.items():
        for case, expected, actual in zip(_PROGRAMS[key], archives[key].outcomes, outcomes,
                                          strict=True):
            _compare(case, expected, actual, "loaded in another process")
