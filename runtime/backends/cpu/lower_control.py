"""CPU lowerings of structured control flow and calls: ``cond``, ``while``, ``undef``, ``call``.

Regions are inlined: ``cond`` becomes a native ``if``/``else`` assigning its results in both
branches, ``while`` a ``while True`` loop over variables holding the carried values (the
condition region runs at the top of each iteration, as in the interpreter), ``call`` a direct
call of the callee's njit function (so recursion stays native). Array constants are read-only
globals in Numba, whose type does not unify with writable arrays, so a constant flowing into a
carried variable or a branch result is copied there.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_linalg, typed_lists
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    hashed_import,
    is_scalar,
    lowering,
    np_dtype,
)
from autostage.runtime.ops import call as call_ops
from autostage.runtime.types import ListType, TensorType

_LISTS_IMPORT = hashed_import(typed_lists, "cpu_list")


def owned(em: Emitter, value: ir.Value, expr: str | None = None, reuse: bool = False) -> str:
    """``value``'s expression, copied if it is a (read-only) array constant or a tensor list
    that is read elsewhere too (lists are updated in place by their only reader), unless
    ``reuse``: this is the list's last use (passes/inplace.py)."""
    expr = em.name(value) if expr is None else expr
    if isinstance(value.type, ListType):
        if em.uses(value) == 1 or reuse:
            return expr
        if value in em.list_buffers:  # (buffer, count, mismatch): a copy of the buffer
            return f"({s.copy(em, expr + '[0]')}, {expr}[1], {expr}[2])"
        return list_call(em, "copy", expr)
    producer = value.producer
    if (isinstance(producer, ir.Op) and producer.name == "constant"
            and not is_scalar(value.type)):
        return s.copy(em, expr)
    return expr


def placeholder(em: Emitter, type_: object) -> str:
    """A value of ``type_`` that is never read (the ``undef`` op; cf. its NumPy reference)."""
    if isinstance(type_, ListType):
        return list_call(em, "new", list_item_type(em, type_.element))
    if is_scalar(type_):
        return "False" if type_.dtype.kind == "b" else f"{np_dtype(type_.dtype)}(0)"
    return s.zeros(em, [str(d or 0) for d in type_.shape], type_.dtype)


def list_call(em: Emitter, operation: str, *args: str) -> str:
    """The call of a typed-list operation (``typed_lists``, compiled once per item type)."""
    em.module_line("cpu_list", _LISTS_IMPORT)
    return f"cpu_list.{operation}({', '.join(args)})"


def list_item_type(em: Emitter, element: TensorType) -> str:
    """A module global holding the Numba type of a tensor list's items (layout 'A', so views
    and contiguous arrays both fit)."""
    dtype = "boolean" if element.dtype.kind == "b" else element.dtype.name
    if is_scalar(element):
        return f"numba.types.{dtype}"
    return em.global_value(f"{dtype}_{element.ndim}d",
                           f"numba.types.Array(numba.types.{dtype}, {element.ndim}, 'A')")


@lowering("undef")
def _undef(op: ir.Op, em: Emitter) -> None:
    em.line(f"{em.name(op.results[0])} = {placeholder(em, op.attrs['type'])}")


@lowering("cond")
def _cond(op: ir.Op, em: Emitter) -> None:
    if op.attrs.get("batched_row") and lower_linalg.batched_row(op, em):
        return
    then, orelse = op.regions
    outs = [em.name(v) for v in op.results]
    reuse = op.attrs.get("reuse_yields", ((False,) * len(outs),) * 2)
    em.line(f"if {em.name(op.operands[0])}:")
    for i, region in enumerate((then, orelse)):
        if i:
            em.line("else:")
        with em.block():
            results = em.region(region, [])
            for out, value, expr, last in zip(outs, region.results, results, reuse[i],
                                              strict=True):
                em.line(f"{out} = {owned(em, value, expr, last)}")


@lowering("while")
def _while(op: ir.Op, em: Emitter) -> None:
    cond, body = op.regions
    carried = [em.name(v) for v in op.results]  # the loop variables end as the results
    inits = op.attrs.get("reuse_inits", (False,) * len(carried))
    (yields,) = op.attrs.get("reuse_yields", ((False,) * len(carried),))
    reserved = em.list_reservations.get(op, {})
    for k, (var, init, last) in enumerate(zip(carried, op.operands, inits, strict=True)):
        if k in reserved:  # a new list with room for a row per iteration (list_buffers.py)
            bound, start = reserved[k]
            element = init.type.element
            left = em.name(bound) if str(start) == "0" else f"{em.name(bound)} - {start}"
            rows = s.int_max(left, "0")
            empty = s.empty(em, [rows] + ["0"] * element.ndim, element.dtype)
            em.line(f"{var} = ({empty}, np.int64(0), np.bool_(False))")
            continue
        em.line(f"{var} = {owned(em, init, None, last)}")
    flags = []
    for k in op.attrs.get("fresh_after_first", ()):  # (passes/loop_buffers.py)
        flag = em.after_first[body.args[k]] = em.fresh("later")
        em.line(f"{flag} = False  # {carried[k]} is still the loop's initial value")
        flags.append(flag)
    em.line("while True:")
    with em.block():
        (go,) = em.region(cond, carried)
        em.line(f"if not {go}:")
        with em.block():
            em.line("break")
        new = em.region(body, carried)
        changed = [(var, owned(em, value, expr, last)) for var, value, expr, last
                   in zip(carried, body.results, new, yields, strict=True) if var != expr]
        if changed:
            targets = ", ".join(var for var, _ in changed)
            values = ", ".join(expr for _, expr in changed)
            em.line(f"{targets} = {values}")
        for flag in flags:
            em.line(f"{flag} = True")
    for k in em.copied_after_loop.get(op, ()):
        if em.uses(op.results[k]):  # a row of a list's buffer (lower_lists.place_row)
            em.line(f"{carried[k]} = {s.copy(em, carried[k])}")


@lowering("call")
def _call(op: ir.Op, em: Emitter) -> None:
    # a callee may update a list argument in place (its only reader): hand it a copy unless
    # this call is the list's only use or the callee only reads it (list_params.py)
    # and a copy of an array argument it writes into, unless the caller hands over its buffer
    # (passes/inplace.py)
    reads = em.read_only_lists.get(op.attrs["callee"], frozenset())
    copied = call_ops.copied(op)
    call = em.call(op.attrs["callee"], [
        owned(em, v) if isinstance(v.type, ListType) and k not in reads else
        s.copy(em, em.name(v)) if k in copied else em.name(v)
        for k, v in enumerate(op.operands)])
    outs = [em.name(v) for v in op.results]
    em.line(f"{''.join(f'{o}, ' for o in outs)}= {call}" if outs else call)
