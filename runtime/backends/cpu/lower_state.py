"""CPU lowerings of Variable ops: ``var_read``, ``var_assign``, ``var_assign_add``,
``var_assign_sub``.

The storage array of each entry of the module's state table (``var`` is an index into it) is passed
to every generated function as a trailing parameter (``Emitter.variable``), and compiled code reads
and writes through it in program order, so the Python side sees the new value after the call (the
runner passes the current storage at each call, since Python-side assignments replace it). Values
are cast to the Variable's dtype as ``Variable.assign`` does; a shape that differs at run time is
the interpreter's ValueError.
"""

from __future__ import annotations

from autostage.runtime import ir, state  # noqa: F401 - registers the Variable ops
from autostage.runtime.backends.cpu import array_writes
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, is_scalar, lowering
from autostage.runtime.backends.cpu.lower_core import cast_expr, wrap_scalar


@lowering("var_read")
def _read(op: ir.Op, em: Emitter) -> None:
    storage = em.variable(op.attrs["var"])
    out = op.results[0]
    em.line(f"{em.name(out)} = {storage}[()]" if is_scalar(out.type) else
            f"{em.name(out)} = {s.copy(em, storage)}")


def _update(op: ir.Op, em: Emitter, operator: str | None) -> None:
    """``storage = value``, or ``storage = storage <operator> value`` (``+``, ``-``)."""
    index, var_type = op.attrs["var"], op.attrs["type"]
    storage = em.variable(index)
    (value,) = op.operands
    expr = cast_expr(em, em.name(value), value.type, var_type.dtype)
    if is_scalar(value.type) and var_type.ndim == 0:
        new = expr if operator is None else wrap_scalar(f"{storage}[()] {operator} {expr}",
                                                        var_type.dtype)
        em.line(f"{storage}[()] = {new}")
        return
    em.line(f"if {em.name(value)}.shape != {storage}.shape:")
    with em.block():
        em.line(f"raise ValueError('cannot assign a value of a different shape to Variable "
                f"{em.module.state[index].name} of shape {var_type.shape}')")
    # (``a[...] += v`` is a getitem with an Ellipsis, which Numba does not lower)
    new = expr if operator is None else f"{storage} {operator} {expr}"
    if value.type.ndim == 0:
        em.line(f"{storage}[...] = {new}")
    else:
        array_writes.assign(em, storage, var_type.ndim, new, value.type.ndim)


@lowering("var_assign")
def _assign(op: ir.Op, em: Emitter) -> None:
    _update(op, em, None)


@lowering("var_assign_add")
def _assign_add(op: ir.Op, em: Emitter) -> None:
    _update(op, em, "+")


@lowering("var_assign_sub")
def _assign_sub(op: ir.Op, em: Emitter) -> None:
    _update(op, em, "-")
