"""CPU lowerings of tensor lists: ``numba.typed.List`` values updated in place when safe, and
lists of arrays or scalars that are only appended, measured and stacked kept as one growing buffer
(``list_buffers.py``).

In the IR a list op returns a new list; copying on every append would make a loop quadratic.
A list value read by exactly one op (or yield) is dead after it, so that op may update the
object in place and hand it on (``Emitter.uses``); so may the op that passes/inplace.py marks
``in_place`` (its last use, e.g. an append in one branch of an ``if`` whose other branch yields
the list); otherwise it works on a copy. Aliases made
by branches, loops and calls copy a list that is read elsewhere too (``lower_control.owned``),
so every list object has one live owner. Typed-list operations are calls of ``typed_lists``
(compiled once per item type, not into each program; reading an item and the length its test
needs are intrinsics of it, written in line); all raise Python's errors
(``IndexError('list index out of range')``, ``('pop from empty list')``, ...).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu.codegen import Emitter, is_scalar, lowering, np_dtype
from autostage.runtime.backends.cpu.lower_control import list_call, list_item_type
from autostage.runtime.backends.cpu.lower_support import fresh_indices, loops
from autostage.runtime.ops.lists import RAGGED

# np.stack of a typed list along a new axis 0; ``empty`` is the result for an empty list, or
# None for NumPy's error (the list_stack op's ``empty_ok``). The items are copied as flat
# elements: ``out[i] = item`` compiled Numba's broadcasting assignment and its shape-mismatch
# message (its string formatting): 2.0-2.6 s, against 0.6-0.75 s for this helper. Lengths and
# items through ``typed_lists``' intrinsics, the result through ``new_arrays`` (Numba's own
# ``len``, ``[]``, ``np.empty`` and ``reshape`` are compiled again per process).
_STACK = '''
@numba.njit(**JIT)
def {name}(items, empty):
    n = cpu_list.size(items)
    if n == 0:
        if empty is None:
            raise ValueError("need at least one array to stack")
        return empty
    first = cpu_list.item(items, 0)
    out = cpu_new.empty((n,) + first.shape, first.dtype)
    flat = cpu_new.flat_view(out)
    size = first.size
    for i in range(n):
        item = cpu_list.item(items, i)
        if item.shape != first.shape:
            if empty is None:
                raise ValueError("all input arrays must have the same shape")
            raise ValueError(RAGGED)
        values = cpu_new.flat_view(cpu_new.contiguous(item))
        for j in range(size):
            flat[i * size + j] = values[j]
    return out
'''
_STACK_SCALARS = '''
@numba.njit(**JIT)
def {name}(items, empty):
    n = cpu_list.size(items)
    if n == 0 and empty is None:
        raise ValueError("need at least one array to stack")
    out = cpu_new.empty((n,), {dtype})
    for i in range(n):
        out[i] = cpu_list.item(items, i)
    return out
'''


# A list of arrays kept as one buffer (list_buffers.py): ``(buffer, count, mismatch)``.
# Room for an item of ``shape`` after ``n`` rows of ``buf``: twice the rows (at least 4; for the
# first item, at least the rows an empty buffer reserved, ``lower_control._while``). The
# rows are copied as flat elements with one memcpy (``new_arrays.copy_leading``: both buffers
# are C arrays, and rows are kept only while they have ``shape``): ``grown[:n] = buf[:n]`` took
# Numba 1.8 s to compile (broadcasting code), an element loop ~270 LLVM instructions.
# (No builtin ``max`` and ``np.empty`` through ``new_arrays``: each cost a compile of Numba's
# implementation per process.)
_BUFFER_GROW = '''
@numba.njit(**JIT)
def {name}(buf, n, shape):
    rows = 2 * n if n > 2 else np.int64(4)
    if buf.shape[0] > rows:
        rows = buf.shape[0]
    grown = cpu_new.empty((rows,) + shape, buf.dtype)
    if n > 0:
        cpu_new.copy_leading(grown, buf, n * (buf.size // buf.shape[0]))
    return grown
'''
_BUFFER_STACK = '''
@numba.njit(**JIT)
def {name}(lst, empty, last):
    buf, n, mismatch = lst
    if mismatch:
        if empty is None:
            raise ValueError("all input arrays must have the same shape")
        raise ValueError(RAGGED)
    if n == 0:
        if empty is None:
            raise ValueError("need at least one array to stack")
        return empty
    return buf[:n] if last else cpu_new.copy(buf[:n])
'''


def _reuses(em: Emitter, op: ir.Op) -> bool:
    """Whether ``op`` is the last use of its list operand (it may update the object)."""
    return em.uses(op.operands[0]) == 1 or bool(op.attrs.get("in_place"))


def _target(em: Emitter, op: ir.Op) -> str:
    """The variable of the list result: the operand's own object when it is read only here."""
    source, result = op.operands[0], op.results[0]
    if _reuses(em, op):  # its last use (passes/inplace.py)
        em.bind(result, em.name(source))
    else:
        em.line(f"{em.name(result)} = {list_call(em, 'copy', em.name(source))}")
    return em.name(result)


@lowering("list_new")
def _new(op: ir.Op, em: Emitter) -> None:
    element = op.attrs["element"]
    if op.results[0] in em.list_buffers:
        if em.uses(op.results[0]) == 1 and any(
                loop.operands[k] is op.results[0]
                for loop, lists in em.list_reservations.items() for k in lists):
            return  # the loop it starts makes its own, with a row per step (lower_control)
        empty = s.empty(em, ["0"] * (element.ndim + 1), element.dtype)
        em.line(f"{em.name(op.results[0])} = ({empty}, np.int64(0), np.bool_(False))")
        return
    item = list_item_type(em, element)
    em.line(f"{em.name(op.results[0])} = {list_call(em, 'new', item)}")


@lowering("list_append")
def _append(op: ir.Op, em: Emitter) -> None:
    if op.results[0] in em.list_buffers:
        _buffer_append(op, em)
        return
    target = _target(em, op)
    em.line(list_call(em, "append", target, em.name(op.operands[1])))


def place_row(em: Emitter, item: ir.Value, out: str, sizes: list[str], dtype: object) -> bool:
    """For an item ``em.rows_in_place`` names, whose append is its list's last use: emits
    ``out = buf[n]``, the next row of the list's buffer (grown if full), when the item's shape
    ``sizes`` fits the rows, else a new array; True when it did (the caller computes the item
    into ``out``, and the append only counts it). False: nothing emitted."""
    append = em.rows_in_place.get(item)
    if append is None or not _reuses(em, append):
        return False
    buf, n, placed = em.fresh("buf"), em.fresh("count"), em.fresh("placed")
    shape = s.int64_shape(sizes)
    em.line(f"{buf}, {n}, {placed} = {em.name(append.operands[0])}")
    em.line(f"{placed} = not {placed} and ({n} == 0 or {buf}.shape[1:] == {shape})")
    em.line(f"if {placed}:")
    with em.block():
        em.line(f"if {n} == {buf}.shape[0] or {buf}.shape[1:] != {shape}:")
        with em.block():
            em.line(f"{buf} = {em.helper('buffer_grow', _BUFFER_GROW)}({buf}, {n}, {shape})")
        em.line(f"{out} = {buf}[{n}]")
    em.line("else:  # the list already mismatched, or will: a new array")
    with em.block():
        em.line(f"{out} = {s.empty(em, sizes, dtype)}")
    em.placed_rows[item] = (buf, n, placed)
    return True


def _buffer_append(op: ir.Op, em: Emitter) -> None:
    """Appends to a list kept as ``(buffer, count, mismatch)``: the item is copied into the
    next row (the buffer grows by doubling); an item of another shape than the first is not
    stored but marks the list, so that ``np.stack`` raises NumPy's error as Python would. An
    item its loop wrote into the row already (``place_row``) is only counted; one it could not
    place marks the list."""
    placed = em.placed_rows.get(op.operands[1])
    if placed is not None:
        buf, n, flag = placed
        em.line(f"{em.name(op.results[0])} = ({buf}, {n} + 1, not {flag})")
        return
    source, item = (em.name(v) for v in op.operands)
    buf, n, mismatch = em.fresh("buf"), em.fresh("count"), em.fresh("mismatch")
    em.line(f"{buf}, {n}, {mismatch} = {source}")
    if not _reuses(em, op):
        em.line(f"{buf} = {s.copy(em, buf)}")
    grow = em.helper("buffer_grow", _BUFFER_GROW)
    if is_scalar(op.operands[1].type):  # a 1-d buffer of scalars: no shape to compare
        em.line(f"if {n} == {buf}.shape[0]:")
        with em.block():
            em.line(f"{buf} = {grow}({buf}, {n}, ())")
        em.line(f"{buf}[{n}] = {item}")
    else:
        em.line(f"if not {mismatch}:")
        with em.block():
            em.line(f"if {n} > 0 and {buf}.shape[1:] != {item}.shape:")
            with em.block():
                em.line(f"{mismatch} = True")
            em.line("else:")
            with em.block():
                em.line(f"if {n} == {buf}.shape[0] or {buf}.shape[1:] != {item}.shape:")
                with em.block():
                    em.line(f"{buf} = {grow}({buf}, {n}, {item}.shape)")
                _write_row(em, buf, n, item, op.operands[1].type.ndim)
    em.line(f"{em.name(op.results[0])} = ({buf}, {n} + 1, {mismatch})")


def _write_row(em: Emitter, buf: str, n: str, item: str, rank: int) -> None:
    """``buf[n] = item`` for an item of the row's shape, as loops in line: no broadcasting and
    no overlap to care for (a view of the list, ``ys[i]`` or a stacked ``buf[:n]``, sees only
    rows before ``n``), and no helper call per append (a general array write cost the RK45
    trajectory a third of its time)."""
    indices = fresh_indices(em, rank, "j")
    with loops(em, indices, [f"{item}.shape[{axis}]" for axis in range(rank)]):
        at = ", ".join(indices)
        em.line(f"{buf}[{n}, {at}] = {item}[{at}]")


@lowering("list_pop")
def _pop(op: ir.Op, em: Emitter) -> None:
    target = _target(em, op)
    popped = (list_call(em, "pop", target, em.name(op.operands[1])) if len(op.operands) > 1
              else list_call(em, "pop_last", target))
    em.line(f"{em.name(op.results[1])} = {popped}")


@lowering("list_get")
def _get(op: ir.Op, em: Emitter) -> None:
    """Inline, not a ``typed_lists`` function: LLVM did not inline that call, and a loop reading
    items ran 20-25% slower. The read and the length are ``typed_lists`` intrinsics (Numba's
    own compiled again in each process: 0.1-0.25 s per item type)."""
    lst, index = (em.name(v) for v in op.operands)
    facts = em.int_facts
    if facts is None or not facts.within_list(op.operands[1], op.operands[0]):
        # (no test where passes/int_facts proves it in range: ``for i in range(len(items))``)
        size = list_call(em, "size", lst)
        low = "" if facts is not None and facts.nonnegative(op.operands[1]) else f"-{size} <= "
        em.line(f"if not {low}{index} < {size}:")
        with em.block():
            em.line('raise IndexError("list index out of range")')
    em.line(f"{em.name(op.results[0])} = {list_call(em, 'item', lst, index)}")


@lowering("list_set")
def _set(op: ir.Op, em: Emitter) -> None:
    index, item = em.name(op.operands[1]), em.name(op.operands[2])
    em.line(list_call(em, "put", _target(em, op), index, item))


@lowering("list_length")
def _length(op: ir.Op, em: Emitter) -> None:
    lst = em.name(op.operands[0])
    size = f"np.int64({lst}[1])" if op.operands[0] in em.list_buffers else list_call(
        em, "size", lst)
    em.line(f"{em.name(op.results[0])} = {size}")


@lowering("list_stack")
def _stack(op: ir.Op, em: Emitter) -> None:
    element = op.operands[0].type.element
    if op.operands[0] in em.list_buffers:
        helper = em.helper("buffer_stack", _BUFFER_STACK.replace("RAGGED", repr(RAGGED)))
    elif is_scalar(element):
        helper = em.helper(f"stack_{element.dtype.name}",
                           _STACK_SCALARS.replace("{dtype}", np_dtype(element.dtype)))
    else:
        helper = em.helper("stack", _STACK.replace("RAGGED", repr(RAGGED)))
    empty = "None"
    if op.attrs.get("empty_ok"):
        empty = s.empty(em, ["0", *(str(d or 0) for d in element.shape)], element.dtype)
    # The list's last use: its buffer is the stacked array (no copy; nothing writes it again).
    # (A run-time bool: a literal compiled the helper once for each value.)
    last = ""
    if op.operands[0] in em.list_buffers:
        last = f", np.bool_({em.uses(op.operands[0]) == 1})"
    em.line(f"{em.name(op.results[0])} = {helper}({em.name(op.operands[0])}, {empty}{last})")
