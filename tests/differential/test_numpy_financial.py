"""numpy-financial's functions, staged as they are written: ``autostage.convert`` of each on
arrays and NumPy scalars gives numpy-financial's own results (values, dtypes, shapes, NumPy or
Python types), or a documented refusal naming the package's line.

The code is nobody's here: ``map(np.asarray, [...])`` at the top of most functions, ``np.where``
cascades, broadcasting of mixed shapes, Newton iteration with an early exit (``rate``), a
staged ``if`` returning ``np.nan`` (``mirr``). It found ``np.broadcast_arrays`` of 0-d values
giving NumPy scalars (``ipmt``), ``map`` of ``np.asarray`` refused, a tiered start whose
first calls' types differed from compiled ones (``mirr``) and ``np.roots`` failing with
NumPy's internal message (``irr``).
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy_financial as npf
import pytest

import autostage

TARGETS = ["interpreter", "cpu"]
RNG = np.random.default_rng(0)
RATE = RNG.uniform(0.01, 0.1, 4)
NPER = RNG.integers(5, 30, 4).astype(np.float64)
PMT = -RNG.uniform(50.0, 500.0, 4)
PV = RNG.uniform(-1000.0, 1000.0, 4)
FLOWS = np.array([-100.0, 39.0, 59.0, 55.0, 20.0])

SAME = {
    "fv": (npf.fv, (RATE, NPER, PMT, PV)),
    "fv of scalars": (npf.fv, (np.float64(0.05), np.float64(10.0), np.float64(-100.0),
                               np.float64(-100.0))),
    "pv": (npf.pv, (RATE, NPER, PMT, PV)),
    "pmt": (npf.pmt, (RATE, NPER, PV)),
    "ipmt": (npf.ipmt, (RATE, np.float64(2.0), NPER, PV)),
    "ipmt of scalars": (npf.ipmt, (np.float64(0.05), np.float64(2.0), np.float64(12.0),
                                   np.float64(1000.0))),
    "ppmt": (npf.ppmt, (RATE, np.float64(2.0), NPER, PV)),
    "rate": (npf.rate, (NPER, PMT, np.full(4, 1000.0), np.zeros(4))),
    "npv": (npf.npv, (np.float64(0.05), FLOWS)),
    "mirr": (npf.mirr, (FLOWS, np.float64(0.1), np.float64(0.12))),
}

# Refused, with what the message names.
REFUSED = {
    # np.errstate(divide="raise") around a staged division: staged code does not check
    # floating-point errors (README "Floating-point errors").
    "nper": (npf.nper, (RATE, PMT, PV), "divide='raise'"),
    # np.roots is not staged.
    "irr": (npf.irr, (FLOWS,), "np.roots is not supported on staged tensors at "),
}


def _plain(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SAME))
def test_staged_results_are_numpy_financials(case, target):
    fn, args = SAME[case]
    expected = _plain(fn, args)
    got = autostage.convert(fn, target=target)(*args)
    assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    # ``(1 + rate) ** nper`` and the like: within the README's bound for power and log
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_packages_line(case, target):
    fn, args, words = REFUSED[case]
    with pytest.raises(autostage.StagingError if case == "nper" else TypeError) as raised:
        autostage.convert(fn, target=target)(*args)
    message = str(raised.value)
    assert words in message
    assert case != "irr" or "_financial.py:" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_nan_on_one_path_is_pythons_type_on_every_call(target):
    """``mirr`` returns ``np.nan`` (a Python float) where the flows have one sign and a NumPy
    value otherwise: staged, each path gives Python's type (README "Python numbers in staged
    code"), from the first call on."""
    flows = np.array([100.0, 39.0, 59.0])
    staged = autostage.convert(npf.mirr, target=target)
    for _ in range(3):
        got = staged(flows, np.float64(0.1), np.float64(0.12))
        assert type(got) is float and np.isnan(got)
    mixed = np.array([-100.0, 39.0, 59.0])
    want = npf.mirr(mixed, 0.1, 0.12)
    got = staged(mixed, np.float64(0.1), np.float64(0.12))
    assert type(got) is type(want) is np.float64 and got == pytest.approx(want, rel=1e-12)
