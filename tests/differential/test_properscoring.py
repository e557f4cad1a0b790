"""properscoring's scores (CRPS, Brier), staged as they are written: ``autostage.convert`` of
each on arrays and NumPy scalars gives properscoring's own results (values, dtypes, shapes,
changes to its arguments), or a documented refusal naming the package's line.

The code is nobody's here: ``np.nanmean`` over axis tuples with ``keepdims``, ``np.expand_dims``
pairs broadcast into an ensemble's matrix of differences, ``np.where`` of NaN masks, a
``with`` of its own ``contextlib`` context manager around staged code, validation that raises
``ValueError`` on shapes, and the plain-Python bodies of its Numba gufuncs (loops with ``break``
and ``while`` over sorted forecasts writing into a result array). Its public ``crps_ensemble``
and ``threshold_brier_score`` call those gufuncs (Numba's, refused: staged code calls NumPy's
own ufuncs); without Numba, properscoring falls back to its NumPy implementations, which are
staged here the same way (``monkeypatch``). Not matched, as the README says: the "Mean of empty
slice" RuntimeWarning of an all-NaN ensemble (compiled code warns of no floating-point event).
"""

from __future__ import annotations

import warnings

import numpy as np
import properscoring
import pytest
from autostage.runtime.staging.try_regions import StagingTryError
from autostage.runtime.tensor import StagingTypeError
from properscoring import _brier, _crps, _gufuncs, _utils
from staged_results import assert_refused, assert_same, copied

import autostage

TARGETS = ["interpreter", "cpu"]
RNG = np.random.default_rng(3)
OBS = RNG.normal(size=4)
ENSEMBLE = RNG.normal(size=(4, 6))
WEIGHTS = RNG.uniform(size=(4, 6))
THRESHOLDS = np.array([-1.0, 0.0, 0.5, 2.0])
f32 = np.float32


def _with_nans():
    obs, ensemble, weights = OBS.copy(), ENSEMBLE.copy(), WEIGHTS.copy()
    obs[3], ensemble[1], ensemble[2, 2], weights[0, 1] = np.nan, np.nan, np.nan, np.nan
    return obs, ensemble, weights


def threshold_brier_kernel(observation, forecasts, thresholds):
    """The Python body of properscoring's threshold Brier gufunc, writing into a result."""
    result = np.full(len(thresholds), -1.0)
    _gufuncs._threshold_brier_score_gufunc.gufunc_builder.py_func(
        observation, forecasts, thresholds, result)
    return result


SORTED = np.sort(RNG.normal(size=8))
SORTED_NANS = np.r_[SORTED[:6], np.nan, np.nan]

# name -> (function, argument tuples called in turn on one staged function, rtol): rtol 0 is
# bit for bit; otherwise the README's bound for transcendental functions ("within 4 ulp": exp).
SAME = {
    "_crps_ensemble_vectorized": (_crps._crps_ensemble_vectorized, [
        (OBS, ENSEMBLE, WEIGHTS), (OBS, ENSEMBLE[:, 0]), (np.float64(0.3), ENSEMBLE[0], WEIGHTS[0]),
        (0.3, ENSEMBLE[0], WEIGHTS[0]), (RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3, 5)),
                                         RNG.uniform(size=(2, 3, 5))),
        (OBS.astype(f32), ENSEMBLE.astype(f32), WEIGHTS.astype(f32)),
        (np.arange(4), np.arange(24).reshape(4, 6), np.ones((4, 6), dtype=np.int64)),
        (OBS, ENSEMBLE, np.float64(2.0)), _with_nans(),
        (OBS, ENSEMBLE),  # properscoring's AxisError: weights=1 has no axis -1
        (OBS[:3], ENSEMBLE, WEIGHTS)], 0),  # its assert of the shapes
    "_normpdf": (_crps._normpdf, [(OBS,), (np.float64(0.5),)], 1e-15),
    "crps_gaussian of Python numbers": (properscoring.crps_gaussian, [(0.3, 0.0, 1.0)], 0),
    "threshold Brier gufunc body": (threshold_brier_kernel, [
        (np.array([0.1]), SORTED, THRESHOLDS), (np.array([np.nan]), SORTED, THRESHOLDS),
        (np.array([0.1]), SORTED_NANS, THRESHOLDS), (np.array([0.1]), np.full(3, np.nan),
                                                     THRESHOLDS),
        (np.array([3.0]), SORTED, THRESHOLDS), (np.array([0.1]), SORTED, np.zeros(0)),
        (np.array([0.1], f32), SORTED.astype(f32), THRESHOLDS.astype(f32)),
        (np.array([0.1]), np.zeros(0), THRESHOLDS)], 0),  # IndexError: forecasts[-1] of none
}

# crps_ensemble as properscoring runs it without Numba (its NumPy core): ensembles, sorted or
# not, deterministic forecasts, its shape checks.
WITHOUT_NUMBA = [
    ((OBS, ENSEMBLE), {}), ((OBS, np.sort(ENSEMBLE)), {"issorted": True}),
    ((OBS, ENSEMBLE[:, 1]), {}), ((OBS[:2], ENSEMBLE), {}), ((np.float64(0.2), ENSEMBLE[0]), {}),
    (([0.1, 0.2], [[0.0, 1.0], [1.0, 2.0]]), {}), ((OBS.astype(f32), ENSEMBLE.astype(f32)), {}),
]


def _outcome(fn, args, kwargs=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **(kwargs or {}))
        except (ValueError, AssertionError, IndexError) as e:  # compared by message
            return e






@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SAME))
def test_staged_results_are_properscorings(case, target):
    fn, calls, rtol = SAME[case]
    staged = autostage.convert(fn, target=target)
    for args in calls:
        plain_args, staged_args = copied(args), copied(args)
        assert_same(_outcome(staged, staged_args), _outcome(fn, plain_args), rtol, largest=False)
        assert_same(staged_args, plain_args)


@pytest.mark.parametrize("target", TARGETS)
def test_crps_ensemble_without_numba(target, monkeypatch):
    monkeypatch.setattr(_crps, "_crps_ensemble_core", _crps._crps_ensemble_vectorized)
    staged = autostage.convert(properscoring.crps_ensemble, target=target)
    for args, kwargs in WITHOUT_NUMBA:
        assert_same(_outcome(staged, args, kwargs),
                    _outcome(properscoring.crps_ensemble, args, kwargs))


# Refused: (function, arguments, error, what the message names, the package's file).
REFUSED = {
    # Numba's gufuncs and SciPy's ufuncs are not NumPy's: not staged.
    "crps_ensemble": (properscoring.crps_ensemble, (OBS, ENSEMBLE), StagingTypeError,
                      "'_crps_ensemble_gufunc', which is not NumPy's", "_crps.py:"),
    "threshold_brier_score": (properscoring.threshold_brier_score, (OBS, ENSEMBLE, THRESHOLDS),
                              StagingTypeError,
                              "'_threshold_brier_score_gufunc', which is not NumPy's",
                              "_brier.py:"),
    "crps_gaussian": (properscoring.crps_gaussian, (OBS, np.float64(0.1), np.float64(1.5)),
                      StagingTypeError, "the ufunc 'ndtr', which is not NumPy's", "_crps.py:"),
    # np.rollaxis (weights, or axis != -1) and np.ix_ are not staged.
    "crps_ensemble with weights": (properscoring.crps_ensemble, (OBS, ENSEMBLE, WEIGHTS),
                                   StagingTypeError, "np.rollaxis is not supported",
                                   "_utils.py:"),
    "argsort_indices": (_utils.argsort_indices, (ENSEMBLE,), StagingTypeError,
                        "np.ix_ is not supported", "_utils.py:"),
    # set(np.unique(...)) iterates a staged array at trace time.
    "brier_score": (properscoring.brier_score, (np.array([0.0, 1.0, np.nan]),
                                                np.array([0.2, 0.9, 0.5])),
                    StagingTypeError, "cannot be iterated at trace time", "_brier.py:"),
    # `observations if not np.isnan(observations) else []`: a value or a list by a staged test.
    "brier_score of NumPy scalars": (properscoring.brier_score,
                                     (np.float64(1.0), np.float64(0.3)), StagingTypeError,
                                     "in one branch and Python list", "_brier.py:"),
    # Its suppress_warnings() is a generator context manager, which may swallow what a
    # reshape raises at run time.
    "_threshold_brier_score_vectorized": (_brier._threshold_brier_score_vectorized,
                                          (OBS, ENSEMBLE, THRESHOLDS.reshape(1, -1)),
                                          StagingTryError, "may swallow any exception",
                                          "_brier.py:"),
    # `integral = 0`, then `integral = np.nan` in a staged branch: a Python int or float.
    "CRPS gufunc body": (_gufuncs._crps_ensemble_gufunc.gufunc_builder.py_func,
                         (np.array([0.1]), SORTED, np.ones(8), np.zeros(1)), StagingTypeError,
                         "variable 'integral' is Python float nan in one branch",
                         "_gufuncs.py:"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_packages_line(case, target):
    assert_refused(*REFUSED[case], target)


def test_ensembles_of_varying_sizes_are_refused_where_the_with_may_swallow():
    """Once the ensemble's size has varied (the third size is traced with sizes unknown), the
    products in properscoring's ``with suppress_warnings(...)`` may raise a broadcast error that
    the ``with`` could swallow: refused, naming its line (the first two sizes are staged)."""
    staged = autostage.convert(_crps._crps_ensemble_vectorized)
    for n in (2, 3):
        args = (np.asarray(1.0), np.arange(n, dtype=float), np.ones(n))
        assert_same(staged(*args), _crps._crps_ensemble_vectorized(*args))
    with pytest.raises(StagingTryError, match=r"_crps\.py:\d+ may swallow any exception"):
        staged(np.asarray(1.0), np.arange(4.0), np.ones(4))
