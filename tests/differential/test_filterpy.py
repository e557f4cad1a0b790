"""filterpy's functions, staged as they are written: ``autostage.convert`` of each on arrays
(row and column vectors, matrices, float32) and NumPy scalars gives filterpy's own results
(values, dtypes, shapes, NumPy or Python types, changes to its arguments), or a documented
refusal naming the package's line (or the user's, for a loop over one of its filter objects).

The code is nobody's here: Kalman predict/smooth steps (``dot`` chains, ``np.isscalar`` of
NumPy scalars), sigma points written row by row into ``np.zeros``, ``sum()`` of arrays, a
``/=`` into the caller's array (``normalize``), ``while`` loops over a cumulative sum with
``np.random.random`` draws (the resamplers), ``math.sqrt(float(...))``, and filter objects a
user makes in the converted function and updates in a staged loop. It found ``np.searchsorted``
on cpu searching an unsorted array otherwise than NumPy (``residual_resample``), a staged message
of a ``raise`` refused beside arrays (the sigma points' size check), objects whose ``__init__``
calls ``reset()`` refused, an array attribute a loop recomputes from constants refused, and
``str(x).split`` of a staged value failing with autostage's AttributeError (``pretty_str``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from autostage.runtime.escapes import TensorEscapeError
from autostage.runtime.tensor import StagingTypeError
from filterpy import common, gh, kalman, leastsq, monte_carlo, stats
from filterpy.discrete_bayes import discrete_bayes
from filterpy.stats import stats as stats_module
from staged_results import assert_refused, assert_same, copied

import autostage

TARGETS = ["interpreter", "cpu"]
RNG = np.random.default_rng(0)
X = np.array([0.0, 1.0])
P = np.array([[10.0, 0.5], [0.5, 4.0]])
F = np.array([[1.0, 1.0], [0.0, 1.0]])
Q = np.eye(2) * 0.01
H = np.array([[1.0, 0.0]])
R = np.array([[5.0]])
K_GAIN = np.array([[0.5], [0.1]])
SIGMAS = RNG.normal(size=(5, 2))
WEIGHTS = np.random.default_rng(2).uniform(size=8)
WEIGHTS /= WEIGHTS.sum()
ZS = np.arange(12.0) + RNG.normal(size=12)
f32, f64 = np.float32, np.float64


def _merwe():
    """Sigma points with NumPy's Cholesky (filterpy's default is SciPy's: refused below)."""
    return kalman.MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0, sqrt_method=np.linalg.cholesky)


# name -> (function, argument tuples called in turn on one staged function, rtol): rtol 0 is
# bit for bit; otherwise the README's bounds for products (BLAS, "Float matrix products") and
# transcendental functions ("within 4 ulp"), relative to the result's largest element.
SAME = {
    "predict": (kalman.predict, [(X, P, F, Q), (X.reshape(2, 1), P, F, Q),
                                 (X.astype(f32), P.astype(f32), F.astype(f32), Q.astype(f32)),
                                 (X, P, F, Q, np.array([1.0]), K_GAIN)], 1e-15),
    "predict of scalars": (kalman.predict, [(f64(1.0), f64(2.0)), (f64(3.0), f64(2.0),
                                                                   f64(1.1), f64(0.5)),
                                            (f32(1.0), f32(2.0), f32(1.5))], 0),
    "predict_steadystate": (kalman.predict_steadystate, [(X, F), (f64(1.0),)], 0),
    "update_steadystate": (kalman.update_steadystate, [(X, np.array([1.2]), K_GAIN, H),
                                                       (X.reshape(2, 1), np.array([[1.2]]),
                                                        K_GAIN, H),
                                                       (f64(1.0), f64(2.0), f64(0.5))], 1e-15),
    "rts_smoother": (kalman.rts_smoother, [(RNG.normal(size=(5, 2)),
                                            np.array([np.eye(2) * (i + 1.0) for i in range(5)]),
                                            np.array([F] * 5), np.array([Q] * 5))], 1e-14),
    "MerweScaledSigmaPoints": (_merwe().sigma_points, [(np.array([1.0, 2.0]), P),
                                                       (np.array([-1.0, 0.5]), f64(2.0))], 0),
    "JulierSigmaPoints": (kalman.JulierSigmaPoints(2, 1.0, sqrt_method=np.linalg.cholesky)
                          .sigma_points, [(np.array([1.0, 2.0]), P)], 0),
    "SimplexSigmaPoints": (kalman.SimplexSigmaPoints(2, sqrt_method=np.linalg.cholesky)
                           .sigma_points, [(np.array([1.0, 2.0]), P)], 1e-15),
    "outer_product_sum": (common.outer_product_sum, [(SIGMAS,), (SIGMAS, SIGMAS * 2),
                                                     (SIGMAS.astype(f32),)], 1e-15),
    "inv_diagonal": (common.inv_diagonal, [(np.diag([2.0, 4.0, 5.0]),), (np.diag([2, 4]),)], 0),
    "reshape_z": (common.reshape_z, [(np.array([1.0, 2.0]), 2, 1), (f64(3.0), 1, 0),
                                     (np.array([[1.0, 2.0]]), 2, 1)], 0),
    "kinematic_state_transition": (common.kinematic_state_transition,
                                   [(2, f64(0.5)), (3, f64(0.5)), (0, f32(0.5))], 0),
    "runge_kutta4": (common.runge_kutta4, [(f64(1.0), f64(0.0), f64(0.1), lambda y, t: -y * t),
                                           (np.array([1.0, 2.0]), 0.0, 0.1,
                                            lambda y, t: -y * t)], 0),
    "gaussian": (stats.gaussian, [(np.linspace(-2, 2, 5), f64(0.5), f64(2.0)),
                                  (f64(1.0), f64(0.5), f64(2.0)),
                                  (np.arange(5, dtype=f32), f32(1.0), f32(2.0))], 5e-7),
    "mul": (stats.mul, [(f64(1.0), f64(2.0), f64(3.0), f64(4.0)),
                        (np.arange(3.0), np.ones(3), np.arange(1.0, 4.0), np.full(3, 2.0))], 0),
    "mul_pdf": (stats.mul_pdf, [(f64(1.0), f64(2.0), f64(3.0), f64(4.0))], 1e-15),
    "add": (stats.add, [(f32(1.0), 2.0, f32(3.0), 4.0)], 0),
    "mahalanobis": (stats.mahalanobis, [(X, np.array([0.5, 0.5]), P),
                                        (f64(1.0), f64(0.0), f64(2.0))], 1e-15),
    "multivariate_multiply": (stats.multivariate_multiply,
                              [(np.array([1.0, 2.0]), np.eye(2), np.array([2.0, 1.0]),
                                np.eye(2) * 2)], 1e-15),
    "discrete_bayes.normalize": (discrete_bayes.normalize,
                                 [(RNG.uniform(size=10),), (np.array([1.0, 2.0], f32),)], 0),
    "discrete_bayes.update": (discrete_bayes.update, [(RNG.uniform(size=10),
                                                       RNG.uniform(size=10))], 0),
    "least_squares_parameters": (gh.least_squares_parameters, [(np.int64(5),), (f64(5.0),)], 0),
    "critical_damping_parameters": (gh.critical_damping_parameters,
                                    [(f64(0.3),), (f64(0.3), 3)], 0),
    "optimal_noise_smoothing": (gh.optimal_noise_smoothing, [(f64(0.4),)], 1e-15),
    "benedict_bornder_constants": (gh.benedict_bornder_constants,
                                   [(f64(0.4),), (f64(0.4), True)], 1e-15),
}

# Random draws (np.random.random) from the global generator, seeded alike: the same indices.
RESAMPLERS = ["systematic_resample", "stratified_resample", "residual_resample",
              "multinomial_resample"]

def _ensemble(x, p):
    """An ensemble Kalman filter's state (its ensemble is drawn as it is made)."""
    return kalman.EnsembleKalmanFilter(x=x, P=p, dim_z=1, dt=1.0, N=20, hx=lambda s: s[:1],
                                       fx=lambda s, dt: s).x


# Refused, with the error and what the message names; the last item: the package's file
# (its line follows) or None where the message names the user's line.
REFUSED = {
    # `try: ... except:` around staged code (README "Exceptions"): the inverse of S.
    "kalman.update": (kalman.update, (X, P, np.array([1.2]), R, H), autostage.StagingError,
                      "catches any exception", "kalman_filter.py:"),
    "unscented_transform": (kalman.unscented_transform, (SIGMAS, np.full(5, 0.2),
                                                         np.full(5, 0.2)),
                            autostage.StagingError, "catches any exception",
                            "unscented_transform.py:"),
    "multivariate_gaussian": (stats.multivariate_gaussian, (X, np.array([0.5, 0.5]), P),
                              autostage.StagingError, "catches any exception", "stats.py:"),
    # SciPy is not staged: scipy.stats, scipy.linalg, scipy.ndimage.
    "logpdf": (stats.logpdf, (X, np.array([0.5, 0.5]), P), StagingTypeError,
               "cannot be used as a NumPy array at trace time", "stats.py:"),
    "NEES": (stats.NEES, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2)),
                          np.array([np.eye(2)] * 3)), StagingTypeError,
             "cannot be used as a NumPy array at trace time", "stats.py:"),
    "covariance_ellipse": (stats.covariance_ellipse, (P,), StagingTypeError,
                           "cannot be used as a NumPy array at trace time", "stats.py:"),
    "norm_cdf": (stats_module.norm_cdf, ((f64(-1.0), f64(1.0)), f64(0.0), f64(2.0)),
                 StagingTypeError, "cannot be used as a NumPy array at trace time",
                 "stats.py:"),
    "Q_discrete_white_noise": (common.Q_discrete_white_noise, (2, f64(0.1), f64(0.5)),
                               StagingTypeError, "cannot be used as a NumPy array at trace time",
                               "discretization.py:"),
    "discrete_bayes.predict": (discrete_bayes.predict, (WEIGHTS, 2, np.array([0.1, 0.8, 0.1])),
                               StagingTypeError, "cannot be used as a NumPy array at trace time",
                               "discrete_bayes.py:"),
    # Random draws autostage does not stage (README "Random numbers"): they would be frozen.
    "rand_student_t": (stats_module.rand_student_t, (f64(3.0),), autostage.StagingError,
                       "random.gauss() in staged code", "stats.py:"),
    "EnsembleKalmanFilter": (_ensemble, (X, P), autostage.StagingError,
                             "np.random.multivariate_normal is not supported",
                             "ensemble_kalman_filter.py:"),
    # pretty_str: `try: len(arr) == 0` around a staged test; the text of a staged value split
    # into lines.
    "pretty_str of an array": (common.pretty_str, ("x", X), autostage.StagingError,
                               "catches TypeError", "helpers.py:"),
    "pretty_str of a NumPy scalar": (common.pretty_str, ("x", f64(2.5)), StagingTypeError,
                                     "str methods such as split()", "helpers.py:"),
    "MerweScaledSigmaPoints with SciPy's Cholesky": (
        kalman.MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0).sigma_points, (X, P), StagingTypeError,
        "cannot be used as a NumPy array at trace time", "sigma_points.py:"),
}


def _plain(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)






@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SAME))
def test_staged_results_are_filterpys(case, target):
    """Each argument tuple in turn on one staged function (the trace cache, and retraces for
    other ranks and dtypes); the arguments afterwards too (``normalize`` divides in place)."""
    fn, calls, rtol = SAME[case]
    staged = autostage.convert(fn, target=target)
    for args in calls:
        plain_args, staged_args = copied(args), copied(args)
        want = _plain(fn, plain_args)
        got = staged(*staged_args)
        assert_same(got, want, rtol)
        assert_same(staged_args, plain_args, 0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", RESAMPLERS)
def test_resampling_draws_filterpys_indices(name, target):
    """``residual_resample`` searches a cumulative sum that is not sorted (filterpy computes
    its residuals from the weights, not from ``N * weights``): NumPy's binary search."""
    fn = getattr(monte_carlo, name)
    staged = autostage.convert(fn, target=target)
    for seed in (1, 2, 3):
        np.random.seed(seed)
        want = fn(WEIGHTS.copy())
        np.random.seed(seed)
        got = staged(WEIGHTS.copy())
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_packages_line(case, target):
    assert_refused(*REFUSED[case], target)


# --- a user's code around filterpy ------------------------------------------------------------


def track(zs, x, p):
    """A constant-velocity tracker: filterpy's predict, the update written out."""
    means = []
    for z in zs:
        x, p = kalman.predict(x, p, F, Q)
        s = H @ p @ H.T + R
        gain = p @ H.T @ np.linalg.inv(s)
        x = x + gain @ (z - H @ x)
        p = (np.eye(2) - gain @ H) @ p
        means.append(x)
    return np.array(means), p


def gate(zs, x, p):
    """How many measurements lie within one standard deviation (filterpy's mahalanobis)."""
    inside = 0
    for z in zs:
        if stats.mahalanobis(z, H @ x, H @ p @ H.T + R) < 1.0:
            inside += 1
    return inside


def gh_track(zs, g, h):
    """A g-h filter made in the function and updated in a staged loop."""
    f = gh.GHFilter(x=0.0, dx=1.0, dt=1.0, g=g, h=h)
    estimates = []
    for z in zs:
        x, _ = f.update(z)
        estimates.append(x)
    return np.array(estimates), f.dx


def ghk_track(zs):
    f = gh.GHKFilter(x=0.0, dx=1.0, ddx=0.0, dt=1.0, g=0.6, h=0.02, k=0.001)
    return np.array([f.update(z)[0] for z in zs])


USER = {
    "track": (track, [(ZS.reshape(-1, 1), X, P), (ZS[:3].reshape(-1, 1) * 2, X * 2, np.eye(2))],
              1e-13),
    "gate": (gate, [(ZS.reshape(-1, 1), np.array([3.0, 1.0]), P)], 0),
    "gh_track": (gh_track, [(ZS, 0.6, 0.02), (ZS[:5], f64(0.6), f64(0.02))], 0),
    "ghk_track": (ghk_track, [(ZS,)], 0),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(USER))
def test_user_loops_around_filterpy(case, target):
    fn, calls, rtol = USER[case]
    staged = autostage.convert(fn, target=target)
    for args in calls:
        assert_same(staged(*args), _plain(fn, args), rtol)


def kalman_filter_loop(zs):
    kf = kalman.KalmanFilter(dim_x=2, dim_z=1)
    kf.x, kf.F, kf.H = np.array([[0.0], [1.0]]), F.copy(), H.copy()
    for z in zs:
        kf.predict()
        kf.update(z)
    return kf.x


def least_squares_loop(zs):
    f = leastsq.LeastSquaresFilter(dt=1.0, order=1)
    return np.array([f.update(z)[0] for z in zs])


def outside_filter_loop(kf, zs):
    for _ in zs:
        kf.predict()
    return kf.x


# Filter objects in staged loops, refused: (function, arguments, error, words, file or None).
USER_REFUSED = {
    # KalmanFilter keeps the measurement as an object array of None until its first update.
    "KalmanFilter made in the function": (kalman_filter_loop, (ZS,), StagingTypeError,
                                          "variable 'kf.z' is a NumPy array of dtype object",
                                          None),
    # update() writes into its own arrays through another name (`x = self.x; x[0] += ...`).
    "LeastSquaresFilter": (least_squares_loop, (ZS,), StagingTypeError,
                           "cannot write a staged value", "least_squares.py:"),
    # Objects from outside keep no staged value (README "State").
    "KalmanFilter passed in": (outside_filter_loop, (kalman.KalmanFilter(2, 1), ZS),
                               TensorEscapeError, "is stored in kf.x", "kalman_filter.py:"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(USER_REFUSED))
def test_filter_objects_refused_in_staged_loops(case, target):
    fn, args, error, words, where = USER_REFUSED[case]
    with pytest.raises(error) as raised:
        autostage.convert(fn, target=target)(*args)
    message = str(raised.value)
    assert words in message and (where or "test_filterpy.py:") in message
