"""CPU lowering of ``random_draw``: NumPy's own numbers, drawn when the compiled code runs.

A Generator is a parameter of the njit function (Numba unboxes it with its BitGenerator's
state pointer, so draws advance the user's generator). The common Generator methods with
scalar arguments (``NATIVE``) run natively: Numba ports NumPy's algorithms for them and the
values are bit-identical to NumPy's (tests/unit/runtime/test_cpu_random_draws.py checks each);
generated code calls them through ``random_draws`` (compiled once per machine).
Everything else (NumPy's global functions, whose state Numba does not share, and the other
methods or array arguments) calls NumPy itself through ``numba.objmode``, so values are
NumPy's by construction; the call is kept in ``CALLS`` under a key derived from the op's
attributes (the same in every process, so the generated file and Numba's cache stay valid).
The objmode helper's text reads only this module (``cpu_random``), so it is bound from a module
shared by every program: Numba's pipeline compiles its objmode block once per machine and draw
(~0.12 s), not in each program making that draw.
"""

from __future__ import annotations

import hashlib

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import random_draws
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    hashed_import,
    is_scalar,
    lowering,
    np_dtype,
    objmode_type,
)
from autostage.runtime.ops import random as random_op
from autostage.runtime.ops.random import GENERATOR, Operand

CALLS: dict[str, tuple] = {}  # key -> (source, method, args, kwargs)
_IMPORT = "import autostage.runtime.backends.cpu.lower_random as cpu_random"
_DRAWS_IMPORT = hashed_import(random_draws, "cpu_draw")
NATIVE = frozenset({"random", "standard_normal", "normal", "uniform", "integers",
                    "exponential", "standard_exponential"})


def call(key: str, generator: object, operands: tuple) -> object:
    """Runs a draw from compiled code (in objmode): NumPy's function, contiguous results."""
    source, method, args, kwargs, dtype = CALLS[key]
    result = random_op.draw(generator, source, method, args, kwargs, operands)
    if dtype is None:
        return None
    result = np.asarray(result)
    if result.dtype != dtype:  # pragma: no cover - the type rule and NumPy disagree
        raise TypeError(f"np.random {method} returned {result.dtype}, expected {dtype}")
    return np.ascontiguousarray(result) if result.ndim else result[()]


def _key(op: ir.Op) -> str:
    text = repr((op.attrs["source"], op.attrs["method"], _describe(op.attrs["args"]),
                 _describe(op.attrs["kwargs"]), [str(v.type) for v in op.operands],
                 [str(v.type) for v in op.results]))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _describe(value: object) -> object:
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, tuple | list):
        return (type(value).__name__, *[_describe(v) for v in value])
    return (type(value).__name__, repr(value))


def _native_arg(value: object, em: Emitter, operands: tuple) -> str | None:
    """Source text of a static or scalar staged argument for a native call, or None."""
    if type(value) is Operand:
        operand = operands[value.index]
        if not is_scalar(operand.type):
            return None
        return em.name(operand)
    if type(value) is tuple:
        items = [_native_arg(v, em, operands) for v in value]
        if None in items:
            return None
        items = [f"np.int64({i})" for i in items]  # a homogeneous tuple for Numba
        return "(" + "".join(f"{i}, " for i in items) + ")"
    if value is None or type(value) in (bool, int, float):
        return repr(value)
    if isinstance(value, np.generic) and value.dtype.kind in "iuf":
        return repr(value.item())
    if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
        return np_dtype(np.dtype(value))
    if value is int:
        return "np.int64"
    if value is float:
        return "np.float64"
    return None


def _native(op: ir.Op, em: Emitter) -> bool:
    """Emits the draw as a native Numba Generator call when it can; returns whether it did."""
    if op.attrs["source"] != GENERATOR or op.attrs["method"] not in NATIVE:
        return False
    generator, operands = op.operands[0], op.operands[1:]
    meth = random_op.method(GENERATOR, op.attrs["method"])
    bound = meth.signature.bind(*op.attrs["args"], **dict(op.attrs["kwargs"])).arguments
    if op.attrs["method"] == "integers" and bound.get("high") is None:
        bound = {"low": 0, "high": bound["low"]} | {  # integers(n): NumPy's integers(0, n)
            k: v for k, v in bound.items() if k not in ("low", "high")}
    kwargs = []
    for name, value in bound.items():
        text = _native_arg(value, em, operands)
        if text is None or (name == "size" and type(value) not in (tuple, int, Operand)
                            and value is not None):
            return False
        if name == "endpoint" and value:  # Numba: only the default
            return False
        kwargs.append(f"{name}={text}")
    result = op.results[0]
    em.module_line("cpu_draw", _DRAWS_IMPORT)
    draw = f"cpu_draw.{op.attrs['method']}({', '.join([em.name(generator), *kwargs])})"
    if is_scalar(result.type):
        draw = f"{np_dtype(result.type.dtype)}({draw})"
    em.line(f"{em.name(result)} = {draw}")
    return True


@lowering("random_draw")
def _random_draw(op: ir.Op, em: Emitter) -> None:
    if _native(op, em):
        return
    key = _key(op)
    dtype = op.results[0].type.dtype if op.results else None
    CALLS.setdefault(key, (op.attrs["source"], op.attrs["method"], op.attrs["args"],
                           op.attrs["kwargs"], dtype))
    em.module_line("cpu_random", _IMPORT)
    has_generator = op.attrs["source"] == GENERATOR
    values = op.operands[1:] if has_generator else op.operands
    params = [f"a{i}" for i in range(len(values))]
    generator = "g" if has_generator else "None"
    signature = ", ".join((["g"] if has_generator else []) + params)
    operands = "(" + "".join(f"{p}, " for p in params) + ")"
    python = f"cpu_random.call({key!r}, {generator}, {operands})"
    if op.results:
        out = objmode_type(op.results[0].type)
        body = f"    with numba.objmode(out={out}):\n        out = {python}\n    return out\n"
    else:
        body = f"    with numba.objmode():\n        {python}\n"
    native = em.helper(f"random_{key}", f"@numba.njit(**JIT_IO)\ndef {{name}}({signature}):\n"
                       + body)
    em.use_objmode()
    args = ", ".join(em.name(v) for v in op.operands)
    call_text = f"{native}({args})"
    em.line(f"{em.name(op.results[0])} = {call_text}" if op.results else call_text)
