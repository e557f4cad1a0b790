"""Cases for the remaining listed calls: np.nan_to_num and array methods that mirror functions."""

import numpy as np
from surface_harness import cases

SPECIAL = np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 2.0])


def nan_to_num(x):
    return np.nan_to_num(x)


def nan_to_num_values(x):
    return np.nan_to_num(x, nan=-1.0, posinf=1e30, neginf=-7)


def nonzero_method(x):
    return x.nonzero()


def searchsorted_method(a, v):
    return a.searchsorted(v, side="right")


def bincount_staged_minlength(x, k):
    return np.bincount(x, minlength=k.shape[0])


def conj_method(z):
    return z.conj(), z.conjugate()


CASES = [
    *cases("np.nan_to_num", nan_to_num, (SPECIAL,), (SPECIAL.astype(np.float32).reshape(2, 3),),
           (np.arange(4),), (np.array([True, False]),), (np.float64(np.nan),)),
    *cases("np.nan_to_num", nan_to_num_values, (SPECIAL,), (SPECIAL.astype(np.float32),)),
    *cases("ndarray.nonzero", nonzero_method, (np.array([[0, 1], [2, 0]]),),
           (np.array([0.0, -0.0, np.nan]),), (np.zeros((0, 3), bool),)),
    *cases("ndarray.searchsorted", searchsorted_method, (np.array([1, 2, 2, 5]), np.array([2, 6])),
           (np.array([0.5, 1.5]), np.float64(1.5))),
    *cases("np.bincount", bincount_staged_minlength, (np.array([0, 2, 2]), np.zeros(6)),
           (np.array([0, 2, 5, 5], np.int32), np.zeros(2)), (np.array([], np.int64), np.zeros(3))),
    *cases("ndarray.conj", conj_method, (np.array([1 + 2j, -3j]),), (np.arange(3.0),),
           (np.array([[1, -2]], np.int32),)),
]
