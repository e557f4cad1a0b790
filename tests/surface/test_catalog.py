"""The list docs/numpy_surface.csv against the cases, the refusals and README's table.

Every ``staged`` row has cases in ``cases_*.py`` and every case's name is a row; every refused
row that is not pending raises a clear error naming the call and the user's line; the staged
share is at least ``REQUIRED_SHARE`` (issue 10); README's generated block is the table that
tools/numpy_surface_table.py writes.
"""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
import surface_harness

import autostage

ROOT = pathlib.Path(__file__).resolve().parents[2]
REQUIRED_SHARE = 0.95
KINDS = ("creation", "elementwise", "reduction", "shape", "linalg", "sorting", "attribute",
         "method", "math", "builtin", "dtype")


def _table_tool():
    spec = importlib.util.spec_from_file_location(
        "numpy_surface_table", ROOT / "tools" / "numpy_surface_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = _table_tool()
ROWS = TABLE.read_rows()
BY_NAME = {row["name"]: row for row in ROWS}


def test_rows_are_well_formed():
    assert [*ROWS[0]] == ["name", "kind", "uses", "share_per_mille", "status", "note", "listed"]
    assert len(BY_NAME) == len(ROWS), "a name is listed twice"
    assert sum(row["listed"] == "survey" for row in ROWS) >= 150
    for row in ROWS:
        assert row["kind"] in KINDS, row
        assert row["listed"] in ("survey", "extra"), row  # extra: staged beyond the survey's list
        assert row["listed"] == "survey" or row["status"] == "staged", row
        assert row["status"] in ("staged", "refused"), row
        assert int(row["uses"]) >= 0 and float(row["share_per_mille"]) >= 0, row
        assert (row["status"] == "refused") == bool(row["note"]), (
            f"{row['name']}: a refused row needs a note (the alternative, or 'pending'), "
            "a staged row none")


def test_every_staged_row_has_a_case():
    named = {case.name for case in surface_harness.load_cases()}
    missing = [row["name"] for row in ROWS
               if row["status"] == "staged" and row["name"] not in named]
    assert not missing, f"staged rows without a case in tests/surface/cases_*.py: {missing}"


def test_every_case_is_a_row():
    unknown = sorted({case.name for case in surface_harness.load_cases()} - set(BY_NAME))
    assert not unknown, f"cases for calls that are not rows of docs/numpy_surface.csv: {unknown}"


def test_staged_share_is_reported():
    listed = [row for row in ROWS if row["listed"] == "survey"]
    share = sum(row["status"] == "staged" for row in listed) / len(listed)
    print(f"\nstaged: {share:.1%} of {len(listed)} listed calls")
    assert 0 < share <= 1


def test_staged_share_is_at_least_required():
    listed = [row for row in ROWS if row["listed"] == "survey"]
    share = sum(row["status"] == "staged" for row in listed) / len(listed)
    assert share >= REQUIRED_SHARE, f"{share:.1%} of {len(ROWS)} calls stage"


# ---- refused rows: a clear error naming the call and the user's line ---------------------------
def real_part(z):
    return np.real(z)


def imag_part(z):
    return np.imag(z)


def real_attribute(z):
    return z.real


def imag_attribute(z):
    return z.imag


def sort_in_place(x):
    x.sort()
    return x


def fill_in_place(x):
    x.fill(0.0)
    return x


def to_list(x):
    return x.tolist()


Z = np.array([1 + 2j, 3 - 1j])
X = np.array([3.0, 1.0, 2.0])
# name -> (function, arguments, words the message must hold)
REFUSALS = {
    "np.real": (real_part, (Z,), ["np.real", "not supported"]),
    "np.imag": (imag_part, (Z,), ["np.imag", "not supported"]),
    "ndarray.real": (real_attribute, (Z,), ["'real'", "not supported"]),
    "ndarray.imag": (imag_attribute, (Z,), ["'imag'", "not supported"]),
    "ndarray.sort": (sort_in_place, (X,), ["x.sort()", "np.sort(x)"]),
    "ndarray.fill": (fill_in_place, (X,), ["'fill'", "np.full_like"]),
    "ndarray.tolist": (to_list, (X,), [".tolist()", "keep it a tensor"]),
}


def test_every_refused_row_has_a_refusal_test():
    refused = {row["name"] for row in ROWS
               if row["status"] == "refused" and not TABLE.is_pending(row)}
    assert refused == set(REFUSALS)


@pytest.mark.parametrize("target", surface_harness.TARGETS)
@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refused_call_raises_a_clear_error(name, target):
    fn, args, words = REFUSALS[name]
    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as raised:  # StagingTypeError (a TypeError) and its subclasses
        autostage.convert(fn, target=target)(*args)
    message = str(raised.value)
    for word in [*words, f"test_catalog.py:{line}"]:
        assert word in message, f"{name}: {word!r} not in {message!r}"


# ---- README --------------------------------------------------------------------------------
def test_readme_table_is_generated_from_the_list():
    block = TABLE.readme_block((ROOT / "README.md").read_text())
    if block is None:
        pytest.skip("README.md has no <!-- numpy-surface:begin/end --> markers yet (the lead "
                    "adds them when merging issue 10)")
    assert block == TABLE.generate(ROWS), (
        "README's NumPy surface table is stale: run python tools/numpy_surface_table.py --write")
