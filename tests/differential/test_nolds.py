"""nolds' functions (nonlinear measures of time series), staged as they are written:
``autostage.convert`` of each on arrays and NumPy scalars gives nolds' own results (values,
dtypes, shapes, NumPy or Python types, lists), or a documented refusal naming the package's line.

The code is nobody's here: delay embeddings by fancy indexing with ``np.repeat`` of a list,
rescaled ranges (``reshape`` to a staged row count, ``cumsum``/``std(ddof=...)`` along axes, a
staged ``if`` returning Python's ``np.nan`` or a NumPy mean), Lyapunov exponents from a staged
loop over orbit vectors (``argsort`` of distances, ``np.where`` index sets, ``np.array`` of a
comprehension over them, ``lstsq``, ``qr``, writes through index tuples), regressions written
out with ``np.sum``, generator-based maps, and the Python 2 compatibility imports of ``future``
(``from builtins import range, int, list, ...``). It found that converting a function of a file
whose docstrings hold invalid escapes (``"\\|"``) warned again at every conversion and, under
``simplefilter("error")``, was reported as "changed since the module was imported"
(``tests/unit/pyct/test_source_check.py``), and ``np.std`` with a staged ``ddof`` (``1 if
unbiased else 0`` of a NumPy bool) compiled into invalid generated code. Fitting a line
(``np.polyfit``, which every estimator but ``lyap_e`` ends with), ``np.fft`` and sample
entropy's list of counts (a Python ``0`` and NumPy counts) are refused.
"""

from __future__ import annotations

import importlib
import importlib.resources
import sys
import warnings

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from staged_results import assert_refused, assert_same

import autostage


def _import_nolds():
    """nolds 0.6.3 loads its data sets at import with ``importlib.resources.files`` of a module
    (``nolds.datasets``), which Python accepts from 3.12 on; on 3.11 the anchor must be a
    package: its parent (the same directory) stands in while nolds imports."""
    if "nolds" in sys.modules:
        return sys.modules["nolds"]
    files = importlib.resources.files

    def package_files(anchor):
        try:
            return files(anchor)
        except TypeError:
            return files(anchor.rpartition(".")[0])

    importlib.resources.files = package_files
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its docstrings' invalid escapes
            return importlib.import_module("nolds")
    finally:
        importlib.resources.files = files


nolds = _import_nolds()
measures, datasets = nolds.measures, nolds.datasets

TARGETS = ["interpreter", "cpu"]
RNG = np.random.default_rng(0)
X = RNG.normal(size=60)
WALK = np.cumsum(RNG.normal(size=101))
INTS = RNG.integers(-5, 5, size=40)
f32, f64, i64 = np.float32, np.float64, np.int64


def _kw(*args, **kwargs):
    return args, kwargs


# name -> (function, calls in turn on one staged function (an argument tuple, or _kw(...)),
# rtol): rtol 0 is bit for bit; otherwise the README's bounds ("Float matrix products",
# transcendental functions "within 4 ulp": `** q` of floats is `pow`).
SAME = {
    "rowwise_chebyshev": (measures.rowwise_chebyshev,
                          [(RNG.normal(size=(5, 3)), RNG.normal(size=3)),
                           (INTS.reshape(-1, 2), INTS[:2]), (np.ones((1, 3)), np.zeros(3))], 0),
    "rowwise_euclidean": (measures.rowwise_euclidean,
                          [(RNG.normal(size=(5, 3)), RNG.normal(size=3)),
                           (X.astype(f32).reshape(-1, 1), f32(0.5)),
                           (np.ones((0, 3)), np.zeros(3))], 0),
    "delay_embedding": (measures.delay_embedding,
                        [(X[:20], 3), (X.astype(f32)[:20], 4, 3), (INTS, 4, 3), (X, 5, 2),
                         (X[:3], 5)], 0),  # the last: nolds' ValueError, its message formatted
    "rs": (measures.rs, [(X, 10), (X, i64(7)), _kw(X, i64(7), unbiased=False),
                         (np.ones(40), i64(10)),  # every range 0: Python's nan
                         (INTS, i64(10)), (X.astype(f32), i64(10)), (WALK, i64(50))], 0),
    "expected_rs": (measures.expected_rs, [(i64(50),), (f64(50.0),), (i64(3),), (340,),
                                           (i64(1),)], 0),
    "logmid_n": (measures.logmid_n, [(i64(300),), _kw(i64(1000), ratio=f64(0.5), nsteps=20),
                                     (f64(10.0),)], 0),
    "binary_n": (measures.binary_n, [(i64(1000),), _kw(i64(1000), min_n=i64(100)),
                                     (f64(1000.0),), (1000,)], 0),
    "logarithmic_r": (measures.logarithmic_r, [(f64(4.0), f64(100.0), f64(1.2)),
                                               (i64(4), i64(100), f64(1.5)),
                                               (4, f64(100.0), 1.5)], 0),
    "logarithmic_n of Python numbers": (measures.logarithmic_n, [(4, 100, 1.2)], 0),
    "_aste_line_fit": (measures._aste_line_fit, [(np.arange(10.0), X[:10]),
                                                 (np.arange(10), X[:10].astype(f32)),
                                                 ([1, 2, 3], [2.0, 4.5, 6.0])], 0),
    "lyap_r_len": (measures.lyap_r_len, [_kw(emb_dim=i64(10), lag=i64(2), trajectory_len=20,
                                             min_tsep=i64(3))], 0),
    "lyap_e_len": (measures.lyap_e_len, [_kw(emb_dim=i64(10), matrix_dim=i64(4),
                                             min_tsep=i64(3), min_nb=i64(8)),
                                         _kw(emb_dim=i64(10), matrix_dim=i64(4))], 0),
    "lorenz_euler": (datasets.lorenz_euler, [(50, 10.0, 28.0, 8 / 3),
                                             (i64(30), f32(10.0), f32(28.0), f32(8 / 3)),
                                             _kw(20, f64(10.0), f64(28.0), f64(8 / 3),
                                                 start=np.array([0.5, 1.0, 2.0]))], 0),
    "lorenz_lyap": (datasets.lorenz_lyap, [(f64(10.0), f64(28.0), f64(8 / 3)),
                                           (i64(10), i64(28), i64(3))], 0),
    "barabasi1991_fractal of Python numbers": (datasets.barabasi1991_fractal, [(64, 3)], 0),
}

# Slow (a few seconds of compiling each): the staged loop of lyap_e, the nested loops of
# _genhurst.
SLOW = {
    "lyap_e": (measures.lyap_e, [_kw(X, emb_dim=4, matrix_dim=2),
                                 _kw(RNG.normal(size=90), emb_dim=5, matrix_dim=3,
                                     min_nb=i64(6), min_tsep=i64(2)),
                                 _kw(X.astype(f32), emb_dim=4, matrix_dim=2, debug_data=True),
                                 _kw(X[:20], emb_dim=4, matrix_dim=2)], 1e-12),  # too short
    "_genhurst": (measures._genhurst, [(WALK, f64(1.0)), (WALK, 2), (WALK, 0.5)], 1e-13),
}


def _split(call):
    return call if len(call) == 2 and isinstance(call[1], dict) else (call, {})


def _outcome(fn, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except (ValueError, KeyError) as e:  # nolds' own errors: compared by message
            return e




def _check(fn, calls, rtol, target):
    staged = autostage.convert(fn, target=target)
    for call in calls:
        args, kwargs = _split(call)
        assert_same(_outcome(staged, args, kwargs), _outcome(fn, args, kwargs), rtol)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SAME))
def test_staged_results_are_nolds(case, target):
    _check(*SAME[case], target)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(SLOW))
def test_staged_lyapunov_and_generalized_hurst_are_nolds(case, target):
    _check(*SLOW[case], target)


# Refused: (function, call, error, what the message names, the package's file; its line follows).
REFUSED = {
    # A list holding Python 0 and NumPy counts (`counts.append(0)`, `counts[-1] += np.sum(...)`).
    "sampen": (measures.sampen, (X,), StagingTypeError,
               "holds Python numbers and NumPy values", "measures.py:"),
    "logarithmic_n": (measures.logarithmic_n, (i64(4), i64(100), f64(1.2)), StagingTypeError,
                      "holds Python numbers and NumPy values", "measures.py:"),
    # np.polyfit, np.fft are not staged.
    "corr_dim": (measures.corr_dim, (X, 4), StagingTypeError,
                 "np.polyfit is not supported", "measures.py:"),
    "mfhurst_dm": (measures.mfhurst_dm, (X,), StagingTypeError,
                   "np.polyfit is not supported", "measures.py:"),
    "lyap_r": (measures.lyap_r, _kw(X, emb_dim=4, fit="poly", min_tsep=10, trajectory_len=10),
               StagingTypeError, "np.fft.rfft is not supported", "measures.py:"),
    # np.log of a list comprehension over a staged array (a list built in staged code).
    "hurst_rs": (measures.hurst_rs, _kw(X, nvals=[4, 6, 8], fit="poly"), StagingTypeError,
                 "of a tensor list", "measures.py:"),
    # A staged step: range(0, len(walk) - n, n // 2) with n from logarithmic_n.
    "dfa": (measures.dfa, (WALK,), StagingTypeError, "range() with a staged step",
            "measures.py:"),
    # max(0, ...) of a Python int and a Python float that Python would pick by value.
    "mfhurst_b": (measures.mfhurst_b, (X,), StagingTypeError, "max() of a Python int and a "
                  "Python float", "measures.py:"),
    # np.repeat of a list holding a staged array (an emb_dim given as a NumPy integer).
    "delay_embedding of a staged emb_dim": (measures.delay_embedding, (X, i64(3)),
                                            StagingTypeError, "cannot be used as a NumPy array",
                                            "measures.py:"),
    # np.std(..., ddof=1 if unbiased else 0) of a NumPy bool: a staged ddof (the cpu target
    # wrote the Tensor's text into its generated code: a SyntaxError).
    "rs with a NumPy bool": (measures.rs, _kw(X, i64(6), unbiased=np.bool_(False)),
                             StagingTypeError, "a staged ddof is not supported", "measures.py:"),
    # lyap_e(debug_data=np.bool_(...)): an array or a tuple by a staged test.
    "lyap_e with a NumPy bool": (measures.lyap_e, _kw(X, emb_dim=4, matrix_dim=2,
                                                      debug_data=np.bool_(False)),
                                 StagingTypeError, "in one branch and Python tuple",
                                 "measures.py:"),
    # A generator: `x = mu * x if x < 0.5 else ...` runs unconverted.
    "tent_map": (lambda x: np.array(list(datasets.tent_map(x, 10))), (f64(0.3),),
                 StagingTypeError, "was used as a Python bool", "datasets.py:"),
    # A staged write into an array made from Python numbers that a closure returns.
    "barabasi1991_fractal": (datasets.barabasi1991_fractal,
                             _kw(64, 3, b1=f64(0.7), b2=f64(0.4)), StagingTypeError,
                             "cannot write a staged value", "datasets.py:"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_name_the_packages_line(case, target):
    fn, call, error, words, where = REFUSED[case]
    args, kwargs = _split(call)
    assert_refused(fn, args, error, words, where, target, kwargs)


# --- a user's code around nolds ---------------------------------------------------------------


def close_pairs(x, tol):
    """Sample entropy's count, written with a NumPy count from the start."""
    emb = measures.delay_embedding(x, 3)
    count = 0
    for i in range(len(emb) - 1):
        count += np.sum(measures.rowwise_chebyshev(emb[i + 1:], emb[i]) <= tol)
    return count


def sample_entropy(x, tol):
    vectors = measures.delay_embedding(x, 3)
    counts = []
    for m in (2, 3):
        count = 0
        rows = vectors[:len(x) - m + 1, :m]
        for i in range(len(rows) - 1):
            count += np.sum(measures.rowwise_chebyshev(rows[i + 1:], rows[i]) <= tol)
        counts.append(count)
    if counts[0] > 0 and counts[1] > 0:
        return -np.log(1.0 * counts[1] / counts[0])
    return np.nan


def hurst_line(x):
    """hurst_rs with nolds' own regression of the logs instead of np.polyfit."""
    ns = np.array([4.0, 6.0, 8.0, 10.0, 12.0])
    rsvals = np.stack([measures.rs(x, int(n)) for n in ns])
    return measures._aste_line_fit(np.log(ns), np.log(rsvals))


USER = {
    "close_pairs": (close_pairs, [(X, f64(0.5)), (X, 0.5), (X[:3], f64(0.5)), (X, f64(0.0))]),
    "sample_entropy": (sample_entropy, [(X, f64(0.5)), (X[:30], f64(0.2)), (X[:4], f64(0.5))]),
    "hurst_line": (hurst_line, [(WALK,), (X,)]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(USER))
def test_user_loops_around_nolds(case, target):
    fn, calls = USER[case]
    _check(fn, calls, 0, target)
