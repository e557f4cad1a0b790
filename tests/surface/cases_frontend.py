"""Cases for the frontend calls of issue 10 (helper f): ``math.*`` of staged scalars, ``.item()``,
``float()/int()/complex()/bool()`` of 0-d values, ``np.stack``/``np.concatenate``/``np.vstack``/
``np.hstack``/``np.column_stack`` of a tensor list, nested ``np.array`` literals mixing staged
values and Python numbers."""

import math

import numpy as np
from surface_harness import cases

F64, F32, I64, I32 = np.float64, np.float32, np.int64, np.int32
NAN, INF = np.float64(np.nan), np.float64(np.inf)


def _math1(name):
    def call(x):
        return getattr(math, name)(x)
    call.__name__ = f"math_{name}"
    return call


def _math2(name):
    def call(x, y):
        return getattr(math, name)(x, y)
    call.__name__ = f"math_{name}"
    return call


# name -> argument sets (the first two run on cpu by default: the informative ones)
ONE = {
    "exp": [(F64(1.5),), (F64(1000.0),), (F32(-2.0),), (I64(3),), (NAN,), (-INF,)],
    "expm1": [(F64(1e-10),), (F64(800.0),), (F32(0.5),)],
    "log": [(F64(2.5),), (F64(0.0),), (F64(-1.0),), (I32(8),), (INF,), (NAN,)],
    "log2": [(F64(8.0),), (F64(-2.0),), (F32(0.25),)],
    "log10": [(F64(1000.0),), (F64(0.0),), (I64(100),)],
    "log1p": [(F64(1e-12),), (F64(-1.0),), (F64(-2.0),)],
    "sqrt": [(F64(2.0),), (F64(-1.0),), (F32(9.0),), (INF,), (NAN,), (np.bool_(True),)],
    "sin": [(F64(0.5),), (INF,), (F32(1.0),)],
    "cos": [(F64(0.5),), (-INF,), (I32(2),)],
    "tan": [(F64(0.5),), (INF,)],
    "asin": [(F64(0.5),), (F64(1.5),)],
    "acos": [(F64(-0.5),), (F64(-1.5),)],
    "atan": [(F64(10.0),), (INF,)],
    "sinh": [(F64(1.0),), (F64(1000.0),)],
    "cosh": [(F64(-1.0),), (F64(-1000.0),)],
    "tanh": [(F64(0.3),), (F64(-1000.0),)],
    "erf": [(F64(0.3),), (F32(-2.0),)],
    "erfc": [(F64(3.0),), (-INF,)],
    "gamma": [(F64(4.5),), (F64(-2.0),), (F64(200.0),), (F64(0.0),), (-INF,), (F64(-2.5),)],
    "lgamma": [(F64(10.5),), (F64(0.0),), (F64(-3.0),), (-INF,), (F64(1e306),)],
    "degrees": [(F64(math.pi),), (F32(1.0),)],
    "radians": [(F64(180.0),), (I64(90),)],
    "fabs": [(F64(-2.5),), (I32(-3),)],
    "floor": [(F64(-2.5),), (NAN,), (INF,), (F32(2.5),), (I64(7),)],
    "ceil": [(F64(-2.5),), (F32(2.25),), (I32(-4),), (-INF,)],
    "trunc": [(F64(-2.5),), (F32(2.5),), (I64(3),)],
    "isnan": [(NAN,), (F32(1.0),), (I64(3),)],
    "isinf": [(-INF,), (F64(1.0),)],
    "isfinite": [(F64(1.0),), (NAN,)],
}
TWO = {
    "atan2": [(F64(1.0), F64(-1.0)), (F32(0.0), F64(0.0))],
    "pow": [(F64(2.0), F64(0.5)), (F64(-8.0), F64(1.0 / 3.0)), (F64(0.0), F64(-1.0)),
            (F64(10.0), F64(400.0)), (F64(-2.0), I64(3)), (NAN, F64(0.0)), (F64(1.0), NAN),
            (-INF, F64(3.0))],
    "copysign": [(F64(2.0), F64(-0.0)), (F32(-1.5), I64(1))],
    "fmod": [(F64(7.5), F64(-2.0)), (F64(1.0), F64(0.0)), (INF, F64(1.0)), (F64(3.0), INF)],
    "hypot": [(F64(3.0), F64(4.0)), (F64(1e308), F64(1e308))],
    "log": [(F64(8.0), F64(2.0)), (F64(8.0), F64(1.0)), (F64(8.0), F64(-2.0))],
}

# cpu: Numba's gamma/lgamma are not CPython's algorithms (within a few ulp, DESIGN)
RTOL = {"gamma": 1e-14, "lgamma": 1e-14}
CASES = []
for _name, _args in ONE.items():
    CASES += cases(f"math.{_name}", _math1(_name), *_args, rtol=RTOL.get(_name, 0.0))
for _name, _args in TWO.items():
    CASES += cases(f"math.{_name}", _math2(_name), *_args)


def math_of_python_mix(x, n):
    return math.exp(x) * n + math.sqrt(n) + math.floor(x) // 2


def math_of_array(x):
    return math.exp(x)


def math_weak_result(x):
    # a Python float times a float32 array stays float32
    return np.ones(2, np.float32) * math.sqrt(x[0])


CASES += cases("math.exp", math_of_python_mix, (F64(1.5), 4), (F32(-0.5), 2.0))
CASES += cases("math.exp", math_of_array, (np.ones(1),), (np.ones((2, 2), F32),))
CASES += cases("math.sqrt", math_weak_result, (np.array([4.0, 1.0]),), (np.ones(3, F32),))


def item(x):
    return x.item()


def item_times(x):
    return x.item() * np.ones(2, np.float32)


def builtin_float(x):
    return float(x)


def builtin_int(x):
    return int(x)


def builtin_bool(x):
    return bool(x)


def builtin_complex(x):
    return complex(x)


def tolist(x):
    return x.tolist()


CASES += cases("ndarray.item", item, (F32(1.5),), (np.array([7], I32),), (np.zeros((2, 2)),),
               (np.bool_(True),), (np.complex64(1 + 2j),), (np.array(np.nan),),
               (np.uint8(200),), (np.ones((1, 1), F32),), (np.zeros(0),))
CASES += cases("ndarray.item", item_times, (F64(2.0),), (np.array(3, I64),))
CASES += cases("ndarray.tolist", tolist, (F32(2.5),), (np.array(3, I32),))
CASES += cases("float", builtin_float, (np.array(2.5, F32),), (np.ones(2),), (I64(3),),
               (np.bool_(True),))
CASES += cases("int", builtin_int, (F64(-2.7),), (np.ones(1),), (NAN,), (INF,), (np.uint8(9),))
CASES += cases("bool", builtin_bool, (F64(0.0),), (I32(-3),), (np.bool_(True),))
CASES += cases("complex", builtin_complex, (F64(2.0),), (np.complex64(1 - 1j),), (I32(3),),
               (np.ones(2),))




def stack_axis1(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.stack(rows, axis=1)


def stack_axis_last(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.stack(rows, axis=-1)


def stack_comprehension(x):
    return np.stack([x[i] + 1 for i in range(x.shape[0])])


def concatenate_rows(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.concatenate(rows)


def concatenate_axis1(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.concatenate(rows, axis=1)


def vstack_rows(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.vstack(rows)


def hstack_rows(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.hstack(rows)


def column_stack_rows(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.column_stack(rows)


def mean_of_list(x):
    rows = []  # a tensor list: appended in a staged loop
    for i in range(x.shape[0]):
        rows.append(x[i] * 2)
    return np.mean(rows, axis=0)


M23, I234, V4 = np.arange(6.0).reshape(2, 3), np.arange(24, dtype=I32).reshape(2, 3, 4), \
    np.arange(4.0, dtype=F32)
CASES += cases("np.stack", stack_axis1, (M23,), (I234,), (V4,))
CASES += cases("np.stack", stack_axis_last, (I234,), (M23,))
CASES += cases("np.stack", stack_comprehension, (M23,), (V4,))
CASES += cases("np.concatenate", concatenate_rows, (I234,), (M23,), (V4,))
CASES += cases("np.concatenate", concatenate_axis1, (I234,), (M23,))
CASES += cases("np.vstack", vstack_rows, (M23,), (I234,), (V4,))
CASES += cases("np.hstack", hstack_rows, (I234,), (V4,), (M23,))
CASES += cases("np.column_stack", column_stack_rows, (M23,), (V4,), (I234,))
CASES += cases("np.mean", mean_of_list, (M23,), (I234,))


def nested_array(a, b):
    return np.array([[a, b], [b, 1.0]])


def nested_int(a, b):
    return np.array([[a, 0], [0, b]])


def nested_tuple_bool(a, b):
    return np.array([(a, b, True), (b, a, False)])


def nested_dtype(a, b):
    return np.array([[a], [b]], dtype=np.float32)


CASES += cases("np.array", nested_array, (F32(1.5), F32(2.0)), (I32(3), F64(2.5)),
               (np.bool_(True), np.bool_(False)))
CASES += cases("np.array", nested_int, (I32(3), I32(4)), (np.int8(1), np.int8(2)))
CASES += cases("np.array", nested_tuple_bool, (I64(3), I64(4)), (F32(1.0), F32(0.0)))
CASES += cases("np.array", nested_dtype, (F64(1.0), I64(2)), (F32(1.0), F32(3.0)))
