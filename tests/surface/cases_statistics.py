"""Cases for the statistics and data-dependent calls (runtime/numpy_statistics.py)."""

import numpy as np
from surface_harness import cases

_rng = np.random.default_rng(0)
F = _rng.normal(size=(5, 6))
F[1, 2] = np.nan
G = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0], [4.0, 5.5, -1.0]])
I32 = np.array([[3, 1, 2, 3], [7, 5, 9, 5]], np.int32)
TIES = np.array([2.0, 1.0, 2.0, 3.0, 1.0, 2.0])
ROUNDING = (np.linspace(-1000, 1000, 401).round(3)
            + np.tile(np.array([0.0005, 0.0015, 0.0025, -0.0005, 0.125, 2.5]), 401)[:401])


def median(x):
    return np.median(x)


def median_axis(x):
    return np.median(x, axis=0)


def median_keepdims(x):
    return np.median(x, axis=-1, keepdims=True)


def nanmedian(x):
    return np.nanmedian(x, axis=1)


def quantile(x):
    return np.quantile(x, 0.3)


def quantile_array(x):
    return np.quantile(x, np.array([0.0, 0.1, 0.5, 0.75, 1.0]), axis=0)


def percentile(x):
    return np.percentile(x, 37.5, axis=-1)


def percentile_list(x):
    return np.percentile(x, [25, 50, 99.9])


def nanquantile(x):
    return np.nanquantile(x, 0.4, axis=1)


def nanpercentile(x):
    return np.nanpercentile(x, 90)


def searchsorted(a, v):
    return np.searchsorted(a, v)


def searchsorted_right(a, v):
    return np.searchsorted(a, v, side="right")


def searchsorted_sorter(a, v, s):
    return np.searchsorted(a, v, sorter=s)


def bincount(x):
    return np.bincount(x)


def bincount_weights(x, w):
    return np.bincount(x, w, minlength=7)


def nonzero(x):
    return np.nonzero(x)


def argwhere(x):
    return np.argwhere(x)


def flatnonzero(x):
    return np.flatnonzero(x)


def where1(x):
    return np.where(x > 1)


def count_nonzero(x):
    return np.count_nonzero(x)


def count_nonzero_axis(x):
    return np.count_nonzero(x, axis=0)


def unique(x):
    return np.unique(x)


def unique_all(x):
    return np.unique(x, return_index=True, return_inverse=True, return_counts=True)


def nansum(x):
    return np.nansum(x, axis=0)


def nanprod(x):
    return np.nanprod(x)


def nancumsum(x):
    return np.nancumsum(x, axis=1)


def nanmax(x):
    return np.nanmax(x, axis=1)


def nanmin(x):
    return np.nanmin(x)


def nanargmax(x):
    return np.nanargmax(x, axis=0)


def nanargmin(x):
    return np.nanargmin(x)


def nanmean(x):
    return np.nanmean(x, axis=1)


def nanvar(x):
    return np.nanvar(x, axis=0, ddof=1)


def nanstd(x):
    return np.nanstd(x)


def isclose(a, b):
    return np.isclose(a, b)


def isclose_options(a, b):
    return np.isclose(a, b, rtol=0.1, atol=0, equal_nan=True)


def allclose(a, b):
    return np.allclose(a, b)


def round2(x):
    return np.round(x, 2)


def around(x):
    return np.around(x)


def round_method(x):
    return x.round(-1)


def ptp(x):
    return np.ptp(x, axis=0)


def average(x):
    return np.average(x, axis=1, returned=True)


def average_weights(x, w):
    return np.average(x, axis=0, weights=w)


def digitize(x):
    return np.digitize(x, np.array([0.0, 1.0, 2.5]))


def digitize_staged(x, bins):
    return np.digitize(x, bins, right=True)


NAN = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
P = np.array([1.0, np.nan, 1e-9, np.inf, 2.0, -np.inf])
Q = np.array([1.0 + 1e-6, np.nan, 0.0, np.inf, 2.3, np.inf])
B2 = np.array([[0, 1, 0], [2, 0, 3]])

CASES = [
    *cases("np.median", median, (F,), (I32,), (F.astype(np.float32),), (TIES,),
           (np.array([True, False, True]),), (np.zeros(0),), (np.array(3.0),)),
    *cases("np.median", median_axis, (F,), (I32,), (np.zeros((0, 3)),)),
    *cases("np.median", median_keepdims, (G,), (I32,)),
    *cases("np.nanmedian", nanmedian, (G,), (F,), (I32,), (G.astype(np.float32),)),
    *cases("np.quantile", quantile, (F,), (I32,), (F.astype(np.float32),), (TIES,),
           (np.zeros(0),), (np.array([True, False]),)),
    *cases("np.quantile", quantile_array, (F,), (I32,), (G.astype(np.float32),)),
    *cases("np.percentile", percentile, (F,), (I32,), (G,)),
    *cases("np.percentile", percentile_list, (F,), (np.arange(7, dtype=np.int64),)),
    *cases("np.nanquantile", nanquantile, (G,), (F,)),
    *cases("np.nanpercentile", nanpercentile, (G,), (I32,)),
    *cases("np.searchsorted", searchsorted, (NAN, np.array([2.0, np.nan, 0.5, 4.0])),
           (np.array([1, 3, 5], np.int32), 2.5), (np.array([1, 3, 5]), 3),
           (np.zeros(0), np.array([1.0]))),
    *cases("np.searchsorted", searchsorted_right, (NAN, np.array([[2.0, np.nan], [0.5, 4.0]])),
           (np.array([1, 1, 2, 2]), np.array([1, 2, 3]))),
    *cases("np.searchsorted", searchsorted_sorter,
           (np.array([3.0, 1.0, 2.0]), np.array([2.0, 2.5]), np.array([1, 2, 0])),
           (np.array([3.0, 1.0, 2.0]), np.array([2.0]), np.array([1, 5, 0])),
           (np.array([3.0, 1.0, 2.0]), np.array([2.0]), np.array([1, 0]))),
    *cases("np.bincount", bincount, (np.array([0, 1, 1, 5]),), (np.array([1, -1]),),
           (np.array([], np.int64),), (np.array([True, False, True]),), (np.array([1.0]),),
           (np.array([3, 0], np.uint8),)),
    *cases("np.bincount", bincount_weights,
           (np.array([0, 1, 1, 3], np.int32), np.array([0.5, 1.0, 2.0, 3.0])),
           (np.array([0, 1]), np.array([0.5])),
           (np.array([9, 1]), np.array([1, 2], np.int32))),
    *cases("np.nonzero", nonzero, (B2,), (B2 > 1,), (np.array([0.0, -0.0, np.nan]),),
           (np.zeros((0, 2)),), (np.array(3.0),)),
    *cases("np.argwhere", argwhere, (B2,), (np.array(3.0),), (np.array([0, 1j]),),
           (np.zeros(0),)),
    *cases("np.flatnonzero", flatnonzero, (B2,), (np.array(0),), (B2 > 5,)),
    *cases("np.where", where1, (B2,), (np.arange(4.0),)),
    *cases("np.count_nonzero", count_nonzero, (B2,), (np.zeros((0, 3)),), (np.array(2.5),)),
    *cases("np.count_nonzero", count_nonzero_axis, (B2,), (B2 > 1,)),
    *cases("np.unique", unique, (np.array([[3.0, np.nan, 1.0], [1.0, np.nan, 2.0]]),),
           (np.array([5, 3, 5, 1, 3], np.int32),), (np.zeros(0),), (np.array(2),),
           (np.array([True, False, True]),)),
    *cases("np.unique", unique_all, (np.array([[3.0, np.nan, 1.0], [1.0, np.nan, 2.0]]),),
           (np.array([5, 3, 5, 1, 3], np.int32),), (np.zeros(0),)),
    *cases("np.nansum", nansum, (G,), (I32,), (G.astype(np.float32),), (np.zeros((0, 2)),)),
    *cases("np.nanprod", nanprod, (G,), (I32,), (np.zeros(0),)),
    *cases("np.nancumsum", nancumsum, (G,), (I32,)),
    *cases("np.nanmax", nanmax, (G,), (I32,), (np.zeros((2, 0)),), (G.astype(np.float32),)),
    *cases("np.nanmin", nanmin, (G,), (np.zeros(0),), (np.full(2, np.nan),)),
    *cases("np.nanargmax", nanargmax, (G,), (np.array([[np.nan, 1.0], [np.nan, 2.0]]),),
           (I32,)),
    *cases("np.nanargmin", nanargmin, (G,), (np.full(3, np.nan),), (np.zeros(0),)),
    *cases("np.nanmean", nanmean, (G,), (I32,), (G.astype(np.float32),)),
    *cases("np.nanvar", nanvar, (G,), (I32,), (G.astype(np.float32),)),
    *cases("np.nanstd", nanstd, (G,), (I32,), rtol=1e-14),
    *cases("np.isclose", isclose, (P, Q), (np.array([1, 2]), 1), (P[:1], Q[:1]),
           (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0 + 1e-7]))),
    *cases("np.isclose", isclose_options, (P, Q), (np.array([1, 2]), 1.1)),
    *cases("np.allclose", allclose, (P, Q), (np.ones(3), np.ones(3) + 1e-9), (P[:1], Q[:1])),
    *cases("np.round", round2, (ROUNDING,), (ROUNDING.astype(np.float32),), (I32,),
           (np.array(2.675),)),
    *cases("np.around", around, (np.arange(-5, 5) + 0.5,), (I32,)),
    *cases("ndarray.round", round_method, (ROUNDING,), (np.array([150, 250, -150, 1234]),),
           (np.array([15, 25, -15], np.int8),)),
    *cases("np.ptp", ptp, (F,), (I32,), (np.array([True, False]),)),
    *cases("np.average", average, (F,), (I32,)),
    *cases("np.average", average_weights, (I32, np.array([1.0, 3.0])),
           (F, np.ones(6)), (I32, np.zeros(2)), (I32, np.ones(3))),
    *cases("np.digitize", digitize, (np.array([-1.0, 0.0, 1.0, 3.0, np.nan]),),
           (np.array([0, 2], np.int32),)),
    *cases("np.digitize", digitize_staged,
           (np.array([-1.0, 0.5, 3.0]), np.array([0.0, 1.0, 2.5])),
           (np.array([-1.0, 0.5, 3.0]), np.array([2.0, 1.0, 0.0])),
           (np.array([-1.0, 0.5, 3.0]), np.array([2.0, 1.0, 3.0]))),
]
