"""Cases for the shape, rearranging and creation functions (runtime/numpy_shapes.py and
runtime/numpy_grids.py): each call on varied shapes (empty included), dtypes and axes."""

import numpy as np
from surface_harness import cases

A6 = np.arange(6.0)
M34 = np.arange(12, dtype=np.int32).reshape(3, 4)
F23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
B5 = np.array([True, False, True, True, False])
C4 = np.arange(4) + 1j * np.arange(4)[::-1]
E0 = np.zeros(0)
E03 = np.zeros((0, 3), np.int64)
T234 = np.arange(24.0).reshape(2, 3, 4)


def split3(x):
    return np.split(x, 3)


def split_points(x):
    return np.split(x, [1, 3, -1], axis=-1)


def split_staged(x, i):
    return np.split(x, [i, x.shape[0] - 1])


def array_split4(x):
    return np.array_split(x, 4)


def array_split_axis1(x):
    return np.array_split(x, 3, axis=1)


def repeat2(x):
    return np.repeat(x, 2)


def repeat_axis(x):
    return np.repeat(x, 3, axis=-1)


def repeat_counts(x, r):
    return np.repeat(x, r, axis=0)


def repeat_staged_count(x, r):
    return x.repeat(r)


def repeat_list(x):
    return np.repeat(x, [2, 0, 1])


def tile23(x):
    return np.tile(x, (2, 3))


def tile2(x):
    return np.tile(x, 2)


def tile_staged(x, n):
    return np.tile(x, (n, 1))


def vstack2(x, y):
    return np.vstack([x, y])


def hstack2(x, y):
    return np.hstack((x, y))


def column_stack2(x, y):
    return np.column_stack([x, y])


def dstack2(x, y):
    return np.dstack([x, y])


def atleast_1d(x):
    return np.atleast_1d(x)


def atleast_2d(x):
    return np.atleast_2d(x)


def atleast_3d(x):
    return np.atleast_3d(x)


def atleast_2d_many(x, y):
    return np.atleast_2d(x, y)


def flip_none(x):
    return np.flip(x)


def flip_axis(x):
    return np.flip(x, -1)


def flip_axes(x):
    return np.flip(x, (0, 2))


def fliplr(x):
    return np.fliplr(x)


def flipud(x):
    return np.flipud(x)


def roll2(x):
    return np.roll(x, 2)


def roll_axis(x):
    return np.roll(x, -5, axis=1)


def roll_tuple(x):
    return np.roll(x, (1, -2), axis=(0, 1))


def roll_staged(x, s):
    return np.roll(x, s, axis=0)


def diff1(x):
    return np.diff(x)


def diff2_axis0(x):
    return np.diff(x, n=2, axis=0)


def diff_prepend(x):
    return np.diff(x, prepend=0, append=x[-1:])


def pad_constant(x):
    return np.pad(x, 2, constant_values=7)


def pad_pairs(x):
    return np.pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4)))


def pad_edge(x):
    return np.pad(x, (2, 3), mode="edge")


def pad_reflect(x):
    return np.pad(x, 7, mode="reflect")


def pad_symmetric(x):
    return np.pad(x, (3, 8), mode="symmetric")


def pad_wrap(x):
    return np.pad(x, ((1, 2), (4, 0)), mode="wrap")


def take_none(x):
    return np.take(x, [0, -1, 2])


def take_axis(x, i):
    return np.take(x, i, axis=1)


def take_wrap(x):
    return np.take(x, [7, -8, 1], mode="wrap")


def take_clip(x):
    return x.take([7, -8, 1], axis=0, mode="clip")


def take_scalar(x):
    return np.take(x, 2)


def trace0(x):
    return np.trace(x)


def trace_offset(x):
    return x.trace(offset=1)


def trace_axes(x):
    return np.trace(x, -1, axis1=2, axis2=0)


def diagonal0(x):
    return np.diagonal(x)


def diagonal_offset(x):
    return x.diagonal(-1)


def diagonal_axes(x):
    return np.diagonal(x, 1, 2, 1)


def linspace5(a, b):
    return np.linspace(a, b, 5)


def linspace_step(a):
    return np.linspace(a, 10, 4, endpoint=False, retstep=True)


def linspace_int(a, b):
    return np.linspace(a, b, 7, dtype=np.int32)


def linspace_staged(x):
    return np.linspace(0, x.shape[0], 3)


def linspace_one(a):
    return np.linspace(a, 2.0, 1, retstep=True)


def meshgrid_xy(x, y):
    return np.meshgrid(x, y)


def meshgrid_ij(x, y):
    return np.meshgrid(x, y, indexing="ij")


def meshgrid_sparse(x, y):
    return np.meshgrid(x, y, x, sparse=True)


def cross3(a, b):
    return np.cross(a, b)


def cross2(a, b):
    return np.cross(np.stack([a[:, 0], a[:, 1]], -1), np.stack([b[:, 0], b[:, 1]], -1))


def cross_mixed(a, b):
    return np.cross(np.stack([a[0], a[1]]), b)


def cross_axis(a, b):
    return np.cross(a, b, axisa=0, axisb=0)


def kron(a, b):
    return np.kron(a, b)


def swapaxes(x):
    return np.swapaxes(x, 0, -1)


def swapaxes_method(x):
    return x.swapaxes(1, 0)


def moveaxis(x):
    return np.moveaxis(x, 0, -1)


def moveaxis_many(x):
    return np.moveaxis(x, (0, 1), (2, 0))


def rot90(x):
    return np.rot90(x)


def rot90_k(x):
    return np.rot90(x, -1, axes=(1, 0))


def rot90_2(x):
    return np.rot90(x, 2)


def append_flat(x, y):
    return np.append(x, y)


def append_axis(x, y):
    return np.append(x, y, axis=0)


def append_scalar(x):
    return np.append(x, 1.5)


def identity(x):
    return np.identity(x.shape[0])


def identity_int(x):
    return np.identity(x.shape[0], dtype=np.int32)


def tri(x):
    return np.tri(x.shape[0])


def tri_k(x):
    return np.tri(x.shape[0], 4, -1, dtype=np.int8)


def broadcast_arrays(x, y):
    return np.broadcast_arrays(x, y)


def zeros_staged(x):
    return np.zeros((x.shape[0], 2, x.shape[1]), np.int32)


def full_staged(x):
    return np.full((x.shape[0], 2), 1.5)


def ones_staged(x):
    return np.ones((2, x.shape[0]), bool)


CASES = [
    *cases("np.split", split3, (A6,), (M34.T.copy(),), (E0,), (np.arange(7),), (B5[:3],)),
    *cases("np.split", split_points, (M34,), (np.arange(5, dtype=np.int8),)),
    *cases("np.split", split_staged, (A6, np.int64(2)), (M34, np.int64(-1))),
    *cases("np.array_split", array_split4, (np.arange(10),), (E0,), (F23,), (C4[:3],)),
    *cases("np.array_split", array_split_axis1, (M34,), (E03,)),
    *cases("np.repeat", repeat2, (M34,), (np.float32(2.5),), (E0,), (B5,), (C4,)),
    *cases("np.repeat", repeat_axis, (F23,), (E03,)),
    *cases("np.repeat", repeat_counts, (M34, np.array([1, 0, 3])), (A6, np.array([2])),
           (A6, np.array([1, 2])), (A6, np.array([1, 1, 1, 1, 1, -1])),
           (B5, np.array([1, 2, 3, 0, 1], np.int32)), (E03, np.zeros(0, np.int64))),
    *cases("ndarray.repeat", repeat_staged_count, (F23, np.int64(3)), (A6, np.int64(-1)),
           (A6, np.int32(0))),
    *cases("np.repeat", repeat_list, (np.array([1.5, 2.5, 3.5]),)),
    *cases("np.tile", tile23, (A6[:3],), (M34,), (np.float64(1.5),), (E0,), (T234,)),
    *cases("np.tile", tile2, (F23,), (B5,)),
    *cases("np.tile", tile_staged, (M34, np.int64(2)), (A6, np.int64(0))),
    *cases("np.vstack", vstack2, (A6, A6 * 2), (M34, np.ones((1, 4), np.float32)),
           (E03, np.ones((2, 3), np.int64)), (np.float64(1), np.float64(2)), (M34, A6[:4])),
    *cases("np.hstack", hstack2, (A6, M34[0]), (M34, M34.astype(np.int8)), (E0, E0),
           (np.float64(1), A6), (M34, A6)),
    *cases("np.column_stack", column_stack2, (A6, A6 + 1), (M34, M34[:, 0]), (E0, E0),
           (B5, B5)),
    *cases("np.dstack", dstack2, (M34, M34), (A6, A6), (F23, F23.astype(np.float64))),
    *cases("np.atleast_1d", atleast_1d, (np.float64(2),), (M34,), (E0,)),
    *cases("np.atleast_2d", atleast_2d, (A6,), (np.int32(2),), (M34,)),
    *cases("np.atleast_2d", atleast_2d_many, (A6, np.float64(1)),),
    *cases("np.atleast_3d", atleast_3d, (M34,), (A6,), (np.float64(2),), (T234,)),
    *cases("np.flip", flip_none, (M34,), (A6,), (E0,), (np.float64(3),)),
    *cases("np.flip", flip_axis, (T234,), (B5,)),
    *cases("np.flip", flip_axes, (T234,), (T234.astype(np.complex64),)),
    *cases("np.fliplr", fliplr, (M34,), (A6,), (T234,)),
    *cases("np.flipud", flipud, (M34,), (np.float64(1),), (B5,)),
    *cases("np.roll", roll2, (M34,), (A6,), (E0,), (C4,)),
    *cases("np.roll", roll_axis, (M34,), (E03,), (T234,)),
    *cases("np.roll", roll_tuple, (M34,), (F23,)),
    *cases("np.roll", roll_staged, (A6, np.int64(-7)), (M34, np.int32(4)), (E0, np.int64(3))),
    *cases("np.diff", diff1, (np.array([1, 4, 9, 16], np.uint8),), (B5,), (E0,), (M34,),
           (np.float64(1),), (C4,)),
    *cases("np.diff", diff2_axis0, (F23,), (M34,), (T234,)),
    *cases("np.diff", diff_prepend, (A6,), (M34.astype(np.int16),)),
    *cases("np.pad", pad_constant, (A6,), (M34.astype(np.int8),), (E0,), (B5,)),
    *cases("np.pad", pad_pairs, (F23,), (E03,)),
    *cases("np.pad", pad_edge, (A6,), (E0,), (M34,)),
    *cases("np.pad", pad_reflect, (A6,), (A6[:1],), (M34,)),
    *cases("np.pad", pad_symmetric, (A6,), (A6[:1],)),
    *cases("np.pad", pad_wrap, (M34,), (np.zeros((2, 0)),)),
    *cases("np.take", take_none, (M34,), (A6,), (A6[:2],)),
    *cases("np.take", take_axis, (M34, np.array([[0, 3], [-1, 1]])), (M34, np.array([5])),
           (F23, np.array([True, False]))),
    *cases("np.take", take_wrap, (A6,), (M34,), (E0,)),
    *cases("np.take", take_scalar, (M34,), (A6,)),
    *cases("ndarray.take", take_clip, (M34,), (A6,), (E0,)),
    *cases("np.trace", trace0, (M34,), (np.eye(3, dtype=bool),), (E03,), (F23,)),
    *cases("ndarray.trace", trace_offset, (M34,), (C4.reshape(2, 2),)),
    *cases("np.trace", trace_axes, (T234,),),
    *cases("np.diagonal", diagonal0, (M34,), (T234,), (E03,), (A6,)),
    *cases("ndarray.diagonal", diagonal_offset, (M34,), (F23,)),
    *cases("np.diagonal", diagonal_axes, (T234,),),
    *cases("np.linspace", linspace5, (np.float64(1), np.float64(2)), (np.int64(1), np.int64(9)),
           (np.float32(0), np.float32(1)), (np.float64(3), np.float64(3)),
           (np.array([0.0, 1.0]), np.array([1.0, 3.0])), (np.complex128(1j), np.complex128(2))),
    *cases("np.linspace", linspace_step, (np.float64(0.5),), (np.float32(2),), (np.int32(-3),)),
    *cases("np.linspace", linspace_int, (np.float64(-2.5), np.float64(3)),
           (np.int64(0), np.int64(5))),
    *cases("np.linspace", linspace_staged, (A6,), (E0,)),
    *cases("np.linspace", linspace_one, (np.float64(1),)),
    *cases("np.meshgrid", meshgrid_xy, (A6[:3], M34[0]), (E0, A6)),
    *cases("np.meshgrid", meshgrid_ij, (A6[:3], F23[0]), (M34, A6)),
    *cases("np.meshgrid", meshgrid_sparse, (A6[:3], A6[:2]),),
    *cases("np.cross", cross3, (np.arange(12.0).reshape(4, 3), np.ones((4, 3)) * 2 - 7),
           (np.array([1, 2, 3], np.int32), np.array([4, 5, 7], np.int8)),
           (np.ones((2, 3), np.float32), np.arange(3.0)), (np.ones((2, 4)), np.ones((2, 4)))),
    *cases("np.cross", cross2, (np.arange(8.0).reshape(4, 2), np.ones((4, 2))),
           (np.arange(6).reshape(3, 2), np.arange(6)[::-1].reshape(3, 2))),
    *cases("np.cross", cross_mixed, (np.array([1.0, 2.0]), np.array([4.0, 5.0, 6.0])),),
    *cases("np.cross", cross_axis, (np.arange(6.0).reshape(3, 2), np.arange(6.0).reshape(3, 2)),),
    *cases("np.kron", kron, (M34[:2, :2], np.eye(2)), (A6[:3], M34), (np.float64(2), A6),
           (E0, A6), (T234[:1], np.ones((2, 2), np.int8))),
    *cases("np.swapaxes", swapaxes, (T234,), (M34,), (np.float64(1),)),
    *cases("ndarray.swapaxes", swapaxes_method, (M34,),),
    *cases("np.moveaxis", moveaxis, (T234,), (A6,)),
    *cases("np.moveaxis", moveaxis_many, (T234,), (M34,)),
    *cases("np.rot90", rot90, (M34,), (T234,), (A6,)),
    *cases("np.rot90", rot90_k, (M34,), (F23,)),
    *cases("np.rot90", rot90_2, (M34,),),
    *cases("np.append", append_flat, (M34, A6), (A6, np.array([1, 2], np.int32)), (E0, E0)),
    *cases("np.append", append_axis, (M34, M34[:1]), (E03, E03), (M34, A6)),
    *cases("np.append", append_scalar, (M34,), (A6,)),
    *cases("np.identity", identity, (A6,), (E0,)),
    *cases("np.identity", identity_int, (M34,),),
    *cases("np.tri", tri, (A6,), (E0,)),
    *cases("np.tri", tri_k, (A6,),),
    *cases("np.broadcast_arrays", broadcast_arrays, (M34, M34[:1]), (A6[:, None], A6[:4]),
           (np.float64(1), A6)),
    *cases("np.zeros", zeros_staged, (M34,), (E03,)),
    *cases("np.full", full_staged, (M34,),),
    *cases("np.ones", ones_staged, (A6,),),
]
