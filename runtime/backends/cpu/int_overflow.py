"""Overflow tests of int64 arithmetic for compiled code, on LLVM's overflow intrinsics.

Generated modules import this module (``cpu_ovf``) for the ``int_overflows`` op: ``add``,
``subtract`` and ``multiply`` are ``llvm.s{add,sub,mul}.with.overflow.i64`` (one instruction and
a flag on x86-64, which LLVM merges with the arithmetic it checks); ``left_shift`` and ``power``
are small loops-free / square-and-multiply functions built on them. Each answers whether
Python's exact result leaves the int64 range (``runtime/ops/checks.py``, the reference).
"""

from __future__ import annotations

import sys

import numba
from autostage.runtime.backends.cpu import numba_cache
from llvmlite import ir as llvm_ir
from numba import types
from numba.extending import intrinsic

_I64 = llvm_ir.IntType(64)
_PAIR = llvm_ir.LiteralStructType([_I64, llvm_ir.IntType(1)])


def _with_overflow(kind: str):
    name = f"llvm.{kind}.with.overflow.i64"

    @intrinsic
    def overflows(typingctx, a, b):
        if a != types.int64 or b != types.int64:
            return None

        def codegen(context, builder, signature, args):
            module = builder.module
            fn = module.globals.get(name) or llvm_ir.Function(
                module, llvm_ir.FunctionType(_PAIR, [_I64, _I64]), name)
            return builder.extract_value(builder.call(fn, args), 1)

        return types.boolean(types.int64, types.int64), codegen

    return overflows


add = _with_overflow("sadd")
subtract = _with_overflow("ssub")
multiply = _with_overflow("smul")

_MIN = -(2**63)


@numba.njit(cache=True)
def negative(a):
    return a == _MIN


@numba.njit(cache=True)
def absolute(a):
    return a == _MIN


@numba.njit(cache=True)
def left_shift(a, b):
    if a == 0 or b < 0:
        return False
    if b >= 64:
        return True
    return (a << b) >> b != a


@numba.njit(cache=True)
def power(a, b):
    if b < 0 or a == 0 or a == 1:
        return False
    if a == -1:
        return False
    if b >= 64:
        return True
    result = numba.int64(1)
    base = numba.int64(a)
    e = b
    while True:
        if e & 1:
            if multiply(result, base):
                return True
            result = result * base
        e >>= 1
        if e == 0:
            return False
        if multiply(base, base):
            return True
        base = base * base


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
