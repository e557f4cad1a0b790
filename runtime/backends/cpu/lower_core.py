"""CPU lowerings of the core ops: constants, casts, element-wise ufuncs, where/clip, dim/size.

Exact NumPy 2 dtypes are the point of most of this code. Numba does not follow NumPy's
promotion for scalars (``int32 + int32`` is int64 in njit, a Python float promotes float32), so
every operand is first cast to the dtypes of the ufunc loop NumPy itself picks
(``ufunc.resolve_dtypes``), and every 0-d result is wrapped in its dtype's constructor
(``np.int32(a + b)``): identical inputs make Numba pick the same loop as NumPy, and the wrapper
is free after LLVM. 0-d tensors are native scalars: Python operators where their njit semantics
equal the ufunc's, else the ufunc called on scalars. Real ``exp``, ``log`` and ``tanh`` call the
vectorisable kernels of ``vector_math`` (libm under ``AUTOSTAGE_EXACT_MATH=1``).
"""

from __future__ import annotations

import functools

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import (
    complex_abs,
    complex_math,
    complex_products,
    fusible,
    run_errors,
    vector_math,
)
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    hashed_import,
    is_scalar,
    lowering,
    np_dtype,
)
from autostage.runtime.ops.elementwise import UFUNCS
from autostage.runtime.passes import analysis
from autostage.runtime.types import TensorType

# Ops whose Python operator in njit computes exactly the ufunc once operands share the loop dtype.
_OPERATORS = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "true_divide": "{0} / {1}", "negative": "-{0}", "positive": "{0}",
    "equal": "{0} == {1}", "not_equal": "{0} != {1}", "less": "{0} < {1}",
    "less_equal": "{0} <= {1}", "greater": "{0} > {1}", "greater_equal": "{0} >= {1}",
    "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}",
    "logical_and": "{0} and {1}", "logical_or": "{0} or {1}", "logical_not": "not {0}",
    "logical_xor": "{0} != {1}",
}
# Operators whose Numba type is the operands' float dtype (float32 * float32 is float32).
_CLOSED_FLOAT_OPERATORS = frozenset({"add", "subtract", "multiply", "true_divide", "negative",
                                     "positive"})
# Likewise int64 (Numba widens smaller integers to int64; int64 wraps as NumPy's does).
_CLOSED_INT_OPERATORS = frozenset({"add", "subtract", "multiply", "negative", "positive"})
# NumPy's integer semantics: a zero divisor gives 0, and x // -1 wraps (MIN // -1 is MIN) where
# the machine division would trap (SIGFPE); constant divisors fold the checks away. Unsigned
# operands have no -1 test: a conditional mixing int64 and uint64 branches is float64 in Numba.
_INTEGER_OPERATORS = {
    "remainder": "(0 if {1} == 0 or {1} == -1 else {0} % {1})",
    "floor_divide": "(0 if {1} == 0 else -{0} if {1} == -1 else {0} // {1})",
    # C's remainder (the dividend's sign) from the floor one; Numba's np.fmod on integers was
    # wrong for negative operands (fmod(-127, 3) gave 0).
    "fmod": "(0 if {1} == 0 or {1} == -1 else {0} % {1} - ({1} if {0} % {1} != 0 and "
            "({0} < 0) != ({1} < 0) else 0))",
}
_OPERATORS_BY_POSITIVE = {"remainder": "{0} % {1}", "floor_divide": "{0} // {1}"}
_UNSIGNED_OPERATORS = {
    "remainder": "({0} % {1} if {1} != 0 else {1})",
    "floor_divide": "({0} // {1} if {1} != 0 else {1})",
    "fmod": "({0} % {1} if {1} != 0 else {1})",
}
# NumPy shifts by a count outside [0, bits) give 0 (right shift of a negative value: -1), where
# the machine shift (and Numba's) is undefined: 5 << 64 was 5, 5 << -1 was MIN.
_SHIFTS = {
    "left_shift": ("({0} << {1} if 0 <= {1} < {w} else {z})",
                   "np.where(({1} >= 0) & ({1} < {w}), np.left_shift({0}, {1}), {z})"),
    "right_shift": ("({0} >> {1} if 0 <= {1} < {w} else ({z} - {one} if {0} < 0 else {z}))",
                    "np.where(({1} >= 0) & ({1} < {w}), np.right_shift({0}, {1}), "
                    "np.where({0} < 0, {z} - {one}, {z}))"),
}
_BOOL_OPERANDS = {"logical_and", "logical_or", "logical_not", "logical_xor"}
# NumPy's bool loops of + and * are logical or / and; Python's (and Numba's) operators on bools
# give ints (True + True is 2).
_BOOL_ARITHMETIC = {"add": "{0} | {1}", "multiply": "{0} & {1}"}
# NumPy's integer power: square-and-multiply in the loop dtype, wrapping on overflow (Numba's
# array power goes through floats: 3 ** 50 lost its low bits), and a negative exponent raises
# (Numba gave 0).
_INTEGER_POWER = """@numba.njit(**JIT)
def {name}(a, b):
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    r = DTYPE(1)
    while b > 0:
        if b & 1:
            r = DTYPE(r * a)
        a = DTYPE(a * a)
        b >>= 1
    return r
"""
# NumPy's float floor division and remainder (npy_divmod, in the loop dtype): the quotient of
# the fmod-corrected difference, snapped to an integer, with NumPy's signs of zero; Numba's
# differed on inf operands ([-5.0, inf] // [inf, 2.0] gave [-0., inf], NumPy [-1., nan]).
_FLOAT_DIVMOD = """@numba.njit(**JIT)
def {name}(a, b):
    mod = DTYPE(np.fmod(a, b))
    if b == 0:
        return DTYPE(a / b), mod
    div = DTYPE((a - mod) / b)
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = DTYPE(mod + b)
            div = DTYPE(div - DTYPE(1))
    else:
        mod = DTYPE(np.copysign(DTYPE(0), b))
    if div != 0:
        floordiv = DTYPE(np.floor(div))
        if div - floordiv > DTYPE(0.5):
            floordiv = DTYPE(floordiv + DTYPE(1))
    else:
        floordiv = DTYPE(np.copysign(DTYPE(0), DTYPE(a / b)))
    return floordiv, mod
"""
# NumPy's lcm: of the magnitudes in the unsigned type of the loop dtype, wrapping (lcm(MIN, 2)
# is MIN); Numba's went through floats for uint64 and took |MIN| as positive.
_LCM = """@numba.njit(**JIT)
def {name}(a, b):
    x = UTYPE(a) if a >= 0 else UTYPE(-a)
    y = UTYPE(b) if b >= 0 else UTYPE(-b)
    u, v = x, y
    while v != 0:
        u, v = v, UTYPE(u % v)
    if u == 0:
        return DTYPE(0)
    return DTYPE(UTYPE(UTYPE(x // u) * y))
"""
# NumPy's maximum/minimum propagate a NaN, fmax/fmin ignore one. Of equal values (0.0 and -0.0)
# its SIMD array loops give the second operand (maximum(0.0, -0.0) is -0.0; Numba's gave the
# first); its loop on 0-d operands (NumPy scalars: np.fmax(x[i], y[i])) gives whichever the
# installed NumPy gives (``_tie_takes_first``: the first for float64 fmax/fmin on x86-64).
# (NumPy's arrays shorter than a SIMD vector, or their tails, mix both: not matched.)
_FLOAT_OPERATORS = {
    "maximum": "({0} if {0} > {1} or {0} != {0} else {1})",
    "minimum": "({0} if {0} < {1} or {0} != {0} else {1})",
    "fmax": "({0} if {0} > {1} or {1} != {1} else {1})",
    "fmin": "({0} if {0} < {1} or {1} != {1} else {1})",
}
_FLOAT_OPERATORS_FIRST = {name: form.replace("> {1}", ">= {1}").replace("< {1}", "<= {1}")
                          for name, form in _FLOAT_OPERATORS.items()}
# NumPy's complex division (Smith's method; a zero divisor divides the parts by +0, so
# 1j / -0j is nan+infj). Numba's divided by the signed zero and raised ZeroDivisionError for
# 0-d. (Complex power is NumPy's own: ``complex_math``.)
_COMPLEX_DIVIDE = """@numba.njit(**JIT)
def {name}(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abs_br, abs_bi = abs(br), abs(bi)
    if abs_br >= abs_bi:
        if abs_br == 0 and abs_bi == 0:
            return CTYPE(complex(ar / abs_br, ai / abs_br))
        rat = bi / br
        scl = FTYPE(1) / (br + bi * rat)
        return CTYPE(complex((ar + ai * rat) * scl, (ai - ar * rat) * scl))
    rat = br / bi
    scl = FTYPE(1) / (bi + br * rat)
    return CTYPE(complex((ar * rat + ai) * scl, (ai * rat - ar) * scl))
"""
# Scalar forms where Numba's scalar ufunc differs from NumPy's loop: unsigned sign went through
# a signed type (sign(255) was 255); rad2deg/deg2rad multiply by the constant rounded to the loop
# dtype, as NumPy's float32 loop does (Numba multiplied in float64: 2 ulp off).
_SCALAR_FORMS = {
    ("sign", "u"): "({0} != 0)",
    # NumPy's integer reciprocal is 1.0 / x cast back: 0 for unsigned 0 (Numba's gave MAX).
    ("reciprocal", "u"): "({0} == 1)",
    # Signed: 1, -1, and for 0 whatever the installed NumPy gives ({z}: its loop converts 1.0 / 0
    # to the integer type, which is 0 for int8/int16 and MIN for int32/int64 in NumPy 2.4).
    ("reciprocal", "i"): "({z} if {0} == 0 else {0} if {0} == 1 or {0} == -1 else {t}(0))",
    ("sign", "f"): "({t}(1) if {0} > 0 else {t}(-1) if {0} < 0 else {0} if {0} != {0} else {t}(0))",
    ("rad2deg", "f"): "({0} * ({t}(180.0) / {t}(np.pi)))",
    ("deg2rad", "f"): "({0} * ({t}(np.pi) / {t}(180.0)))",
}
# NumPy's scalar math (the ``scalar_math`` attr: Python's operator on complex NumPy scalars):
# ordering compares the parts lexicographically, NaNs included (the loop's rule, Numba's, is
# False where a part is NaN); abs is libm's hypot (hypotf for complex64).
_COMPLEX_SCALAR_MATH = {
    "less": "({0}.real < {1}.real or {0}.real == {1}.real and {0}.imag < {1}.imag)",
    "less_equal": "({0}.real < {1}.real or {0}.real == {1}.real and {0}.imag <= {1}.imag)",
    "greater": "({0}.real > {1}.real or {0}.real == {1}.real and {0}.imag > {1}.imag)",
    "greater_equal": "({0}.real > {1}.real or {0}.real == {1}.real and {0}.imag >= {1}.imag)",
    "absolute": "np.hypot({0}.real, {0}.imag)",
    "square": "({0} * {0})",
}
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
# NumPy 2 compares int64 with uint64 exactly (its qQ and Qq loops, which every mixed signed and
# unsigned pair resolves to); Numba's operators and array ufuncs go through float64, where
# 2**63 == 2**63 - 1. A negative signed operand is below every unsigned one; otherwise both
# compare as uint64. Per op: its value when the signed operand is negative and comes first,
# and when it comes second. (The cuda backend's rule: the same loops stay host ops there.)
_MIXED_SIGN = {"equal": (False, False), "not_equal": (True, True), "less": (True, False),
               "less_equal": (True, False), "greater": (False, True),
               "greater_equal": (False, True)}
# Element-wise ops whose Numba array implementation differs from NumPy for these loop dtype
# kinds: arrays are computed by a loop of their scalar rule (``lower_fused.elementwise_loop``).
LOOPED = {"floor_divide": "iuf", "remainder": "iuf", "fmod": "iu", "lcm": "iu", "sign": "ufc",
          "maximum": "f", "minimum": "f", "fmax": "f", "fmin": "f", "true_divide": "c",
          "power": "iu", "reciprocal": "iuc", "rad2deg": "f", "deg2rad": "f",
          "absolute": "c"}
# NumPy's complex sign (z / |z|, with |z| libm's hypot; an infinite part gives its sign, a zero
# gives +0) and reciprocal (Smith's method; 1 / (1+0j) is 1-0j). Numba's kept signed zeros of
# the input (sign(-2.5-0j) was -1+0j) and rounded the reciprocal differently.
_COMPLEX_SIGN = """@numba.njit(**JIT)
def {name}(a):
    re, im = a.real, a.imag
    m = abs(a)
    if m != m:
        return CTYPE(complex(np.nan, np.nan))
    if m == np.inf:
        if abs(re) == np.inf:
            if abs(im) == np.inf:
                return CTYPE(complex(np.nan, np.nan))
            return CTYPE(complex(1.0 if re > 0 else -1.0, 0.0))
        return CTYPE(complex(0.0, 1.0 if im > 0 else -1.0))
    if m == 0:
        return CTYPE(0)
    return CTYPE(complex(re / m, im / m))
"""
_COMPLEX_RECIPROCAL = """@numba.njit(**JIT)
def {name}(a):
    re, im = a.real, a.imag
    if abs(im) <= abs(re):
        r = im / re
        d = re + im * r
        return CTYPE(complex(FTYPE(1) / d, -r / d))
    r = re / im
    d = re * r + im
    return CTYPE(complex(r / d, FTYPE(-1) / d))
"""
# Real exp/log/tanh: the branch-free kernels of ``vector_math``, which LLVM vectorises in a loop
# (Numba's calls to libm it cannot: a 128x256 tanh was 13x slower than NumPy's); arrays are a loop
# of the scalar rule. The import names the kernels' source hash (``hashed_import``): Numba's cache
# holds them inlined. Emitter.exact_math keeps libm.
_VECTOR_MATH = frozenset({"exp", "log", "tanh"})
_VECTOR_MATH_IMPORT = hashed_import(vector_math, "cpu_vmath")
_COMPLEX_PRODUCTS_IMPORT = hashed_import(complex_products, "cpu_cprod")
_COMPLEX_ABS_IMPORT = hashed_import(complex_abs, "cpu_cabs")
# Ufuncs Numba lacks (or types differently), as expressions on operands of the loop dtype.
_SUBSTITUTES = {
    "positive": "{0}.copy()",
    "float_power": "np.power({0}, {1})",  # its loops are float64/complex128 only: casts done
    "heaviside": "np.where({0} < 0, {z}, np.where({0} > 0, {one}, np.where({0} == 0, {1}, {0})))",
    "conjugate": "np.conjugate({0})",
}


@functools.cache
def _tie_takes_first(name: str, dtype: np.dtype) -> bool:
    """Whether NumPy's ``name`` (maximum, minimum, fmax, fmin) of two 0-d operands of ``dtype``
    that compare equal gives the first (both zeros' orders give it), as the installed NumPy
    does."""
    zero, negative = np.dtype(dtype).type(0.0), np.dtype(dtype).type(-0.0)
    ufunc = UFUNCS[name]
    return bool(not np.signbit(ufunc(zero, negative)) and np.signbit(ufunc(negative, zero)))


def _reciprocal_of_zero(dtype: np.dtype) -> str:
    """NumPy's ``reciprocal`` of an integer 0 of ``dtype``, as a constant of that dtype."""
    with np.errstate(all="ignore"):
        value = np.reciprocal(np.zeros(1, dtype))[0]
    return f"{np_dtype(dtype)}({int(value)})"


def cast_expr(em: Emitter, expr: str, source: TensorType, dtype: np.dtype) -> str:
    """``expr`` (of type ``source``) converted to ``dtype`` with NumPy's ``astype`` semantics."""
    dtype = np.dtype(dtype)
    if source.dtype == dtype:
        return expr
    if not is_scalar(source):
        if source.dtype.kind == "c" and dtype.kind != "c":  # Numba cannot astype complex->real
            return f"({expr} != 0)" if dtype == np.bool_ else s.astype(em, f"{expr}.real", dtype)
        return s.astype(em, expr, dtype)
    if dtype == np.bool_:
        return f"({expr} != 0)"
    if source.dtype.kind == "c" and dtype.kind != "c":
        expr = f"{expr}.real"  # NumPy drops the imaginary part (with a ComplexWarning)
    return f"{np_dtype(dtype)}({expr})"


def wrap_scalar(expr: str, dtype: np.dtype) -> str:
    """A 0-d result of exactly ``dtype`` (Numba may have widened small ints or floats)."""
    return f"bool({expr})" if np.dtype(dtype) == np.bool_ else f"{np_dtype(dtype)}({expr})"


@lowering("constant")
def _constant(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = {em.literal(op.attrs['value'])}")


@lowering("cast")
def _cast(op: ir.Op, em: Emitter) -> None:
    (x,), (out,) = op.operands, op.results
    expr = cast_expr(em, em.name(x), x.type, out.type.dtype)
    if expr == em.name(x) and not is_scalar(x.type):
        expr = s.copy(em, expr)  # astype copies even to the same dtype
    em.line(f"{em.name(out)} = {expr}")


def _loop_dtypes(op: ir.Op) -> tuple[np.dtype, ...]:
    """The input dtypes of the loop NumPy runs for this op (NEP 50: all operands typed)."""
    ufunc = UFUNCS[op.name]
    dtypes = tuple(v.type.dtype for v in op.operands)
    try:
        return tuple(ufunc.resolve_dtypes(dtypes + (None,) * ufunc.nout)[:ufunc.nin])
    except Exception:  # noqa: BLE001 - no loop: Numba will report it, translated  # pragma: no cover
        return dtypes


def _ufunc(op: ir.Op, em: Emitter) -> None:
    out = op.results[0]
    loop = _loop_dtypes(op)
    looped = op.name not in _SHIFTS and not complex_math.applies(op, loop) and not is_scalar(
        out.type) and (loop[0].kind in LOOPED.get(op.name, "") or _vector_math(op, loop, em)
                       or fusible.fuses(op) or _fused_complex_product(op, loop))
    if not looped:  # (a loop checks the shapes it computes)
        run_errors.check_broadcast(em, op, op.operands)
    args = [cast_expr(em, em.name(v), v.type, dt)
            for v, dt in zip(op.operands, loop, strict=True)]
    if op.name in _SHIFTS:
        dtype = np_dtype(out.type.dtype)
        template = _SHIFTS[op.name][0 if is_scalar(out.type) else 1]
        expr = template.format(*args, w=loop[0].itemsize * 8, z=f"{dtype}(0)", one=f"{dtype}(1)")
        expr = wrap_scalar(expr, out.type.dtype) if is_scalar(out.type) else (
            s.astype(em, f"({expr})", out.type.dtype))
    elif complex_math.applies(op, loop):
        expr = complex_math.expr(em, op, loop, args)
        if is_scalar(out.type):
            expr = wrap_scalar(expr, out.type.dtype)
    elif looped:
        # A loop of the scalar rule, as fusion's: Numba's array ufuncs took 0.2-0.3 s each to
        # compile (a broadcasting kernel per call site), and some differ from NumPy (LOOPED).
        _array_loop(op, em)
        return
    elif _vector_math(op, loop, em):
        em.module_line("cpu_vmath", _VECTOR_MATH_IMPORT)
        kernel = op.name if loop[0] == np.float64 else f"{op.name}_f32"
        expr = f"cpu_vmath.{kernel}({args[0]})"  # of the loop's dtype
        if out.type.dtype != loop[0]:
            expr = wrap_scalar(expr, out.type.dtype)
    elif op.name == "power" and loop[0].kind in "iu":
        dtype = np_dtype(loop[0])
        helper = em.helper(f"power_{loop[0].name}", _INTEGER_POWER.replace("DTYPE", dtype))
        expr = wrap_scalar(f"{helper}({', '.join(args)})", out.type.dtype)
    elif op.name in ("floor_divide", "remainder") and loop[0].kind == "f":
        dtype = np_dtype(loop[0])
        helper = em.helper(f"divmod_{loop[0].name}", _FLOAT_DIVMOD.replace("DTYPE", dtype))
        index = 0 if op.name == "floor_divide" else 1
        expr = wrap_scalar(f"{helper}({', '.join(args)})[{index}]", out.type.dtype)
    elif op.name == "lcm" and loop[0].kind in "iu":
        utype = np_dtype(np.dtype(f"u{loop[0].itemsize}"))
        source = _LCM.replace("UTYPE", utype).replace("DTYPE", np_dtype(loop[0]))
        helper = em.helper(f"lcm_{loop[0].name}", source)
        expr = wrap_scalar(f"{helper}({', '.join(args)})", out.type.dtype)
    elif op.name in ("sign", "reciprocal") and loop[0].kind == "c":
        types = _complex_types(loop[0])
        source = _COMPLEX_SIGN if op.name == "sign" else _COMPLEX_RECIPROCAL
        helper = em.helper(f"{op.name}_{loop[0].name}", _fill(source, types))
        expr = wrap_scalar(f"{helper}({args[0]})", out.type.dtype)
    elif (em.array_elements or not op.attrs.get("scalar_math")) and _fused_complex_product(
            op, loop):
        em.module_line("cpu_cprod", _COMPLEX_PRODUCTS_IMPORT)
        factors = args if op.name == "multiply" else [args[0], args[0]]  # (square: z * z)
        expr = wrap_scalar(f"cpu_cprod.multiply({', '.join(factors)})", out.type.dtype)
    elif op.name == "true_divide" and loop[0].kind == "c":
        expr = wrap_scalar(f"{_complex_helper(em, op.name, loop[0])}({', '.join(args)})",
                           out.type.dtype)
    elif op.attrs.get("scalar_math") and loop[0].kind == "c" and (
            op.name in _COMPLEX_SCALAR_MATH):
        expr = _COMPLEX_SCALAR_MATH[op.name].format(*args)
        expr = expr if op.name not in ("absolute", "square") else wrap_scalar(
            expr, out.type.dtype)
    elif op.name == "absolute" and loop[0].kind == "c":
        expr = _COMPLEX_SCALAR_MATH[op.name].format(*args)  # NumPy's loop: hypot, or
        if complex_abs.numpy_loop_form(loop[0]):  # its SIMD form
            em.module_line("cpu_cabs", _COMPLEX_ABS_IMPORT)
            expr = f"cpu_cabs.absolute({args[0]})"
        expr = wrap_scalar(expr, out.type.dtype)
    elif op.name in _FLOAT_OPERATORS and loop[0].kind == "f":
        table = _FLOAT_OPERATORS_FIRST if is_scalar(out.type) and not em.array_elements and (
            _tie_takes_first(op.name, loop[0])) else _FLOAT_OPERATORS
        expr = wrap_scalar(table[op.name].format(*args), out.type.dtype)
    elif is_scalar(out.type) and _mixed_sign(op, loop):
        expr = _mixed_sign_expr(op.name, args, signed_first=loop[0].kind == "i")
    elif is_scalar(out.type) and (op.name, loop[0].kind) in _SCALAR_FORMS:
        form = _SCALAR_FORMS[op.name, loop[0].kind]
        zero = _reciprocal_of_zero(loop[0]) if "{z}" in form else ""
        expr = wrap_scalar(form.format(*args, t=np_dtype(loop[0]), z=zero), out.type.dtype)
    elif is_scalar(out.type):
        if op.name in _INTEGER_OPERATORS and loop[0].kind in "iu":
            # Scalar ufunc calls go through Numba's ufunc machinery (3x slower in Collatz, and
            # np.floor_divide(MIN, -1) traps); `%` and `//` have NumPy's floor semantics.
            table = _INTEGER_OPERATORS if loop[0].kind == "i" else _UNSIGNED_OPERATORS
            if op.name != "fmod" and _positive_constant(op.operands[1], loop[0]):
                table = _OPERATORS_BY_POSITIVE  # (n // 2: no zero or -1 to test, ~2 ms less)
            expr = table[op.name].format(*args)
        elif op.name in _BOOL_ARITHMETIC and loop[0] == np.bool_:
            expr = _BOOL_ARITHMETIC[op.name].format(*args)
        elif op.name in _OPERATORS and not (op.name in _BOOL_OPERANDS and loop[0] != np.bool_
                                            or op.name in _COMPARISONS and loop[0].kind == "c"):
            expr = _OPERATORS[op.name].format(*args)
            if op.name == "positive":
                expr = f"({expr})"
        else:
            expr = _call_expr(op.name, args, out.type.dtype)
        if not (op.name in _OPERATORS and out.type.dtype == np.bool_ or _closed(op, loop)):
            expr = wrap_scalar(expr, out.type.dtype)  # operators on bools give bools
    else:
        expr = _call_expr(op.name, args, out.type.dtype)
    em.line(f"{em.name(out)} = {expr}")


def _fused_complex_product(op: ir.Op, loop: tuple[np.dtype, ...]) -> bool:
    """Whether ``op`` is a complex product NumPy's array loop rounds once per part
    (``complex_products``), and its square (NumPy's square loop is that product): on arrays,
    elements of array loops and 0-d operands (np.multiply of NumPy scalars runs the loop too);
    Python's ``*`` and np.square of NumPy scalars are NumPy's scalar math (``scalar_math``
    attr: Numba's ``a * b``)."""
    return op.name in ("multiply", "square") and loop[0].kind == "c" and (
        complex_products.numpy_fuses(loop[0]))


def _mixed_sign(op: ir.Op, loop: tuple[np.dtype, ...]) -> bool:
    """Whether ``op`` compares a signed integer with an unsigned one (int64 with uint64)."""
    return op.name in _MIXED_SIGN and {d.kind for d in loop} == {"i", "u"}


def _mixed_sign_expr(name: str, args: list[str], *, signed_first: bool) -> str:
    """NumPy's exact comparison ``name`` of int64 and uint64 operands ``args``: the signed one
    decides alone when negative, else it is compared as uint64."""
    side = 0 if signed_first else 1
    signed = args[side]
    operands = [f"np.uint64({a})" if k == side else a for k, a in enumerate(args)]
    compare = _OPERATORS[name].format(*operands)
    if _MIXED_SIGN[name][side]:
        return f"({signed} < 0 or {compare})"
    return f"({signed} >= 0 and {compare})"


def _positive_constant(value: ir.Value, dtype: np.dtype) -> bool:
    """Whether ``value`` is a constant > 0 that the integer ``dtype`` holds."""
    constant = analysis.int_constant(value)
    return constant is not None and 0 < constant <= np.iinfo(dtype).max


def _closed(op: ir.Op, loop: tuple[np.dtype, ...]) -> bool:
    """Whether Numba's type of the operator expression is already the result's: float32 or
    float64 arithmetic on operands of that dtype, and int64 arithmetic that cannot trap (no
    cast to emit: each costs Numba ~1 ms of compile, and reads as noise)."""
    dtype = op.results[0].type.dtype
    names = _CLOSED_FLOAT_OPERATORS if dtype in (np.float32, np.float64) else (
        _CLOSED_INT_OPERATORS if dtype == np.int64 else ())
    by_positive = op.name in _OPERATORS_BY_POSITIVE and dtype == np.int64 and (
        _positive_constant(op.operands[1], dtype))
    return (op.name in names or by_positive) and all(d == dtype for d in loop)


def _vector_math(op: ir.Op, loop: tuple[np.dtype, ...], em: Emitter) -> bool:
    """Whether ``op`` is computed by a kernel of ``vector_math`` (not libm)."""
    return op.name in _VECTOR_MATH and loop[0] in (np.float32, np.float64) and not em.exact_math


def _complex_types(dtype: np.dtype) -> dict[str, str]:
    return {"CTYPE": np_dtype(dtype), "FTYPE": np_dtype(np.dtype(f"f{dtype.itemsize // 2}"))}


def _complex_helper(em: Emitter, name: str, dtype: np.dtype) -> str:
    """The helper computing complex ``true_divide`` of ``dtype`` as NumPy does."""
    return em.helper(f"divide_{dtype.name}", _fill(_COMPLEX_DIVIDE, _complex_types(dtype)))


def _fill(source: str, names: dict[str, str]) -> str:
    for key, value in names.items():
        source = source.replace(key, value)
    return source


def _call_expr(name: str, args: list[str], dtype: np.dtype) -> str:
    template = _SUBSTITUTES.get(name)
    if template is None:
        return f"np.{UFUNCS[name].__name__}({', '.join(args)})"
    return template.format(*args, z=np_dtype(dtype) + "(0)", one=np_dtype(dtype) + "(1)")


for _name in UFUNCS:
    lowering(_name)(_ufunc)


@lowering("where")
def _where(op: ir.Op, em: Emitter) -> None:
    (c, x, y), (out,) = op.operands, op.results
    if not is_scalar(out.type):
        _array_loop(op, em)
        return
    dtype = out.type.dtype
    xs, ys = (cast_expr(em, em.name(v), v.type, dtype) for v in (x, y))
    em.line(f"{em.name(out)} = {xs} if {em.name(c)} else {ys}")


@lowering("clip")
def _clip(op: ir.Op, em: Emitter) -> None:
    # np.clip is minimum(maximum(x, lo), hi) in NumPy 2, NaNs propagating.
    out = op.results[0]
    if not is_scalar(out.type):
        _array_loop(op, em)
        return
    x, lo, hi = (cast_expr(em, em.name(v), v.type, out.type.dtype) for v in op.operands)
    clipped = f"np.minimum(np.maximum({x}, {lo}), {hi})"
    em.line(f"{em.name(out)} = {wrap_scalar(clipped, out.type.dtype)}")


def _array_loop(op: ir.Op, em: Emitter) -> None:
    """An element-wise op on arrays as a loop of its scalar rule (``lower_fused``), as
    ``_ufunc``'s: Numba's array ``np.where`` / ``np.minimum`` took 0.1-0.3 s each to compile."""
    from autostage.runtime.backends.cpu import lower_fused  # it imports this module

    lower_fused.elementwise_loop(op, em)


@lowering("dim")
def _dim(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = {em.name(op.operands[0])}.shape[{op.attrs['axis']}]")


@lowering("size")
def _size(op: ir.Op, em: Emitter) -> None:
    (x,) = op.operands
    size = "np.int64(1)" if is_scalar(x.type) else f"{em.name(x)}.size"  # (intp: int64)
    em.line(f"{em.name(op.results[0])} = {size}")
