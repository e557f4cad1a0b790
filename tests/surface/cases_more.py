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


def asanyarray(x):
    return np.asanyarray(x)


def ascontiguousarray(x):  # (returned itself it is refused: a copy or x.T, known at run time)
    return np.ascontiguousarray(x.T) * 2.0, np.ascontiguousarray(x, dtype=np.float32)


def interp(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_bounds(x, xp, fp):
    return np.interp(x, xp, fp, left=-1.0, right=9.0)


def add_reduce(x):
    return np.add.reduce(x), np.add.reduce(x, axis=None), np.maximum.reduce(x, axis=-1)


def logical_reduce(b):
    return np.logical_and.reduce(b), np.logical_or.reduce(b, axis=1, keepdims=True)


def add_accumulate(x):
    return np.add.accumulate(x), np.multiply.accumulate(x, axis=-1)


def subtract_outer(x, y):
    return np.subtract.outer(x, y), np.multiply.outer(y, 2)


def array_equal(a, b):
    return np.array_equal(a, b), np.array_equal(a, b, equal_nan=True)


def unravel_index(a, k):
    return np.unravel_index(np.argmax(a), a.shape), np.unravel_index(k, (a.shape[0], 3), "F")


XP = np.array([0.0, 1.0, 1.0, 2.5, np.inf])
FP = np.array([1.0, -2.0, np.inf, 3.0, 0.5])

CASES = [
    *cases("np.array_equal", array_equal, (np.arange(3.0), np.arange(3.0)),
           (np.arange(3.0), np.arange(4.0)), (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
           (np.ones((2, 3)), np.ones((3, 2))), (np.ones((2, 3)), np.ones(6)),
           (np.zeros(0), np.zeros(0)), (np.arange(3), np.arange(3.0)),
           (np.array([1, 2]), np.array([1, 3])), (np.array(2.0), np.float64(2.0))),
    *cases("np.unravel_index", unravel_index, (np.arange(6.0).reshape(2, 3), np.int64(4)),
           (np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]), np.array([0, 5, 2]))),
    *cases("np.asanyarray", asanyarray, (np.arange(3.0),), (np.float32(2.5),), (np.array(3),)),
    *cases("np.ascontiguousarray", ascontiguousarray, (np.arange(6).reshape(2, 3),),
           (np.float64(1.5),), (np.array(2, np.int8),)),
    *cases("np.interp", interp, (np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.nan, np.inf]), XP, FP),
           (np.arange(4.0).reshape(2, 2), XP[:3], FP[:3]), (np.float32(0.25), XP[:2], FP[:2]),
           (1.0, XP[:1], FP[:1]), (np.ones(2), XP, FP[:2]), (np.ones(2), XP[:0], FP[:0])),
    *cases("np.interp", interp_bounds, (np.array([-1.0, 0.0, 2.0, 3.0, np.nan]), XP[:4], FP[:4]),
           (np.array([5, -5]), XP[:2], np.array([1, 2], np.int32))),
    *cases("np.add.reduce", add_reduce, (np.arange(6.0).reshape(2, 3),),
           (np.array([[1, 2], [3, 4]], np.int8),), (np.array([[True, False]]),)),
    *cases("np.logical_and.reduce", logical_reduce, (np.array([[True, False], [True, True]]),),
           (np.array([[0, 2], [3, 0]]),)),
    *cases("np.add.accumulate", add_accumulate, (np.arange(6.0).reshape(2, 3),),
           (np.array([[1, 2], [3, 4]], np.int32),)),
    *cases("np.subtract.outer", subtract_outer, (np.arange(3.0), np.array([1, 2])),
           (np.arange(4).reshape(2, 2), np.arange(2.0))),
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
