"""CPU lowerings of ``print``, ``warn``, ``assert`` and ``raise``, and the Python side they call
back.

Numba's own ``print`` cannot reproduce ``str()`` of NumPy scalars and arrays, so printing (and
formatting an assertion message) calls back into Python through ``numba.objmode`` and renders
with the interpreter's own ``render``: the text is identical by construction. Values cross the
boundary boxed as Python scalars, so the generated callback re-wraps each 0-d value in its dtype
first (``np.float32(a)``; ``str`` of a Python float differs). A ``raise`` of a builtin exception
with literal arguments is raised natively; any other exception object is kept in ``OBJECTS``
under a key derived from its type and arguments (the same in every process, so the generated
file and Numba's cache stay valid) and raised from Python.
"""

from __future__ import annotations

import builtins
import hashlib
import sys

from autostage.runtime import ir
from autostage.runtime.backends.cpu.codegen import Emitter, is_scalar, lowering, np_dtype
from autostage.runtime.ops import exceptions
from autostage.runtime.ops.io import (  # noqa: F401 - issue_warning: called by generated code
    is_text,
    issue_warning,
    render,
)

# key -> exception raised by a generated module (a raise op, for a message made when raised)
OBJECTS: dict[str, BaseException | ir.Op] = {}
_IMPORT = "import autostage.runtime.backends.cpu.lower_io as cpu_io"


def emit_print(parts: tuple, values: tuple, stream: str, flush: bool) -> None:
    """Prints like the interpreter's ``print`` op (the stream is looked up when it runs)."""
    out = getattr(sys, stream)
    out.write(render(parts, values))
    if flush:
        out.flush()


def fail_assert(parts: tuple, values: tuple) -> None:
    """Raises the AssertionError the interpreter raises for this failing assert."""
    if is_text(parts):
        raise AssertionError(render(parts, values))
    raise AssertionError(values[parts[0]])


def raise_object(key: str) -> None:
    exc = OBJECTS[key]
    raise exceptions.fresh(exc, exc.args)


def raise_formatted(key: str, values: tuple) -> None:
    """Raises the exception of a ``raise`` op whose message is made from staged values."""
    op = OBJECTS[key]
    raise exceptions.fresh(op.attrs["exception"], exceptions.arguments(op, values))


def _callback(em: Emitter, op: ir.Op, call: str) -> None:
    """Emits a Python function taking the op's operands (re-typed), an njit wrapper calling it
    in objmode, and a call of the wrapper. The wrapper keeps objmode blocks out of loops and
    branches of the caller, where Numba 0.68 can emit invalid LLVM ("Instruction does not
    dominate all uses")."""
    em.module_line("cpu_io", _IMPORT)
    params = [f"a{i}" for i in range(len(op.operands))]
    typed = [_retyped(p, v.type) for p, v in zip(params, op.operands, strict=True)]
    values = "(" + "".join(f"{t}, " for t in typed) + ")"
    key = hashlib.sha256(f"{call}|{values}".encode()).hexdigest()[:12]
    args = ", ".join(params)
    # (the helper's source is formatted with its name: the braces of literal text printed,
    # ``print('{0}')`` or a dict's repr, are escaped)
    body = call.replace("VALUES", values).replace("{", "{{").replace("}", "}}")
    python = em.helper(f"{op.name}_{key}_py", f"def {{name}}({args}):\n    {body}\n")
    native = em.helper(f"{op.name}_{key}", f"@numba.njit(**JIT_IO)\ndef {{name}}({args}):\n"
                       f"    with numba.objmode():\n        {python}({args})\n")
    em.line(f"{native}({', '.join(em.name(v) for v in op.operands)})")


def _retyped(param: str, type_: object) -> str:
    if is_scalar(type_):
        return f"np.bool_({param})" if type_.dtype.kind == "b" else \
            f"{np_dtype(type_.dtype)}({param})"
    return param


@lowering("print")
def _print(op: ir.Op, em: Emitter) -> None:
    parts = tuple(op.attrs["parts"])
    stream, flush = op.attrs.get("stream", "stdout"), bool(op.attrs.get("flush"))
    _callback(em, op, f"cpu_io.emit_print({parts!r}, VALUES, {stream!r}, {flush})")


@lowering("warn")
def _warn(op: ir.Op, em: Emitter) -> None:
    attrs = op.attrs
    where = f"{attrs['category']!r}, {attrs['filename']!r}, {attrs['lineno']}, {attrs['module']!r}"
    _callback(em, op, f"cpu_io.issue_warning({tuple(attrs['parts'])!r}, VALUES, {where})")


@lowering("assert")
def _assert(op: ir.Op, em: Emitter) -> None:
    test = em.name(op.operands[0])
    parts = op.attrs.get("parts")
    em.line(f"if not {test}:")
    with em.block():
        if parts is None:
            em.line("raise AssertionError")
            return
        # Only the message values cross into Python; the test stays native.
        message = ir.Op("assert", op.operands[1:], (), {}, loc=op.loc)
        _callback(em, message, f"cpu_io.fail_assert({tuple(parts)!r}, VALUES)")


@lowering("raise")
def _raise(op: ir.Op, em: Emitter) -> None:
    exc = op.attrs["exception"]
    kind = type(exc)
    formats = op.attrs.get("formats")
    plain = exceptions.made_by_its_arguments(exc)
    if not formats and plain and getattr(builtins, kind.__name__, None) is kind and all(
            type(a) in (str, int, bool) for a in exc.args):
        em.line(f"raise {kind.__name__}({', '.join(repr(a) for a in exc.args)})")
        return
    identity = f"{kind.__module__}.{kind.__qualname__}{exc.args!r}" + ("" if plain else repr(
        (sorted(exceptions.attributes(exc).items()), exc.__cause__, exc.__suppress_context__))) + (
        repr(formats) if formats else "")
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    if formats:  # a message made from staged values: rendered in Python from them
        OBJECTS.setdefault(key, op)
        _callback(em, op, f"cpu_io.raise_formatted({key!r}, VALUES)")
    else:  # (through a Python function of the generated file: its line names the op)
        OBJECTS.setdefault(key, exc)
        _callback(em, op, f"cpu_io.raise_object({key!r})")
    em.line(f"raise AssertionError('unreachable: {kind.__name__} was raised')")
