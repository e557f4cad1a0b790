"""Shared pieces of the CPU array-op lowerings (C2): dtype expressions, run-time shapes, loop
nests and casts.

Array ops are lowered to explicit, rank-specialized loops wherever Numba lacks the NumPy feature
(axis reductions, keepdims, integer matmul, n-d masks, einsum) or where loops compile faster
than array expressions (shared/TOOLCHAIN.md). Ranks are static in the IR, so every loop nest is
written out for its rank; sizes are static when the IR type knows them (so LLVM can unroll tiny
loops) and ``x.shape[i]`` otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import new_arrays, run_errors, spare_buffers
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    LoweringError,
    hashed_import,
    np_dtype,
    where,
)
from autostage.runtime.types import TensorType

_SPARES_IMPORT = hashed_import(spare_buffers, "cpu_spares")
_NEW_IMPORT = hashed_import(new_arrays, "cpu_new")


def ttype(value: ir.Value) -> TensorType:
    """The tensor type of a value (array ops never see lists or tuples)."""
    return value.type


def dims(em: Emitter, value: ir.Value) -> list[str]:
    """The size expressions of ``value``'s axes: the static size, else ``name.shape[i]``."""
    name = em.name(value)
    return [str(d) if d is not None else f"{name}.shape[{i}]"
            for i, d in enumerate(ttype(value).shape)]


def scalar_constant(value: ir.Value) -> object | None:
    """The Python number a 0-d ``constant`` op gives ``value``, or None: a test the number
    decides (a step of zero, an empty axis) is then decided when the code is generated."""
    op = value.producer
    if not (isinstance(op, ir.Op) and op.name == "constant"):
        return None
    array = np.asarray(op.attrs["value"])
    return array.item() if array.ndim == 0 else None


def same_size(em: Emitter, a: ir.Value, a_axis: int, b: ir.Value, b_axis: int) -> bool:
    """Whether axis ``a_axis`` of ``a`` and ``b_axis`` of ``b`` have one size in every run:
    equal static sizes, or one symbol of the function's ``shape_facts`` (none in a helper)."""
    static_a, static_b = ttype(a).shape[a_axis], ttype(b).shape[b_axis]
    if static_a is not None and static_a == static_b:
        return True
    facts = em.shape_facts
    return facts is not None and facts.dims(a)[a_axis] == facts.dims(b)[b_axis]


def shape_tuple(sizes: Sequence[str]) -> str:
    """A Python tuple expression of ``sizes`` (``(n,)`` for one)."""
    return "(" + "".join(f"{s}, " for s in sizes).rstrip(" ") + ")" if sizes else "()"


def index_expr(name: str, indices: Sequence[str]) -> str:
    """``name[i, j]`` (or ``name`` itself for a 0-d value, which is a native scalar)."""
    return f"{name}[{', '.join(indices)}]" if indices else name


def cast(expr: str, dtype: np.dtype) -> str:
    """``expr`` converted to a scalar of ``dtype`` (bool: a truth test, as NumPy casts)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return f"({expr} != 0)"
    return f"{np_dtype(dtype)}({expr})"


def accumulate(acc: str, combine: str, value: str, dtype: np.dtype) -> str:
    """The line ``acc <combine>= value`` of an accumulator of ``dtype``: Numba adds and
    multiplies integers narrower than 64 bits in (u)int64, so such an accumulator is cast back
    at each step and wraps as NumPy's does (``x.sum(dtype=np.int32)``, an int32 dot product:
    it once held 3 * 2**30 where NumPy's sum is -2**30)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and dtype.itemsize < 8:
        return f"{acc} = {cast(f'{acc} {combine} {value}', dtype)}"
    return f"{acc} {combine}= {value}"


def cast_array(em: Emitter, expr: str, have: np.dtype, want: np.dtype) -> str:
    """An array expression converted to ``want`` (no copy when the dtype already matches)."""
    return expr if np.dtype(have) == np.dtype(want) else astype(em, expr, want)


def astype(em: Emitter, expr: str, dtype: np.dtype) -> str:
    """``expr.astype(dtype)`` of an array expression, written in line (``new_arrays.astype``:
    Numba's method compiled its allocation in every program using it)."""
    new_arrays_import(em)
    return f"cpu_new.astype({expr}, {np_dtype(dtype)})"


def zero(dtype: np.dtype) -> str:
    return "False" if np.dtype(dtype) == np.bool_ else f"{np_dtype(dtype)}(0)"


def one(dtype: np.dtype) -> str:
    return "True" if np.dtype(dtype) == np.bool_ else f"{np_dtype(dtype)}(1)"


def empty(em: Emitter, sizes: Sequence[str], dtype: np.dtype) -> str:
    """A new array of ``sizes`` (not filled), through ``new_arrays`` (compiled once)."""
    return _new(em, "empty", sizes, dtype)


def zeros(em: Emitter, sizes: Sequence[str], dtype: np.dtype) -> str:
    """A new array of ``sizes`` filled with zeros, through ``new_arrays``."""
    return _new(em, "zeros", sizes, dtype)


def contiguous(em: Emitter, name: str, rare: bool = False) -> str:
    """``name`` as a C-contiguous array (itself when it is one; ``np.ascontiguousarray``;
    ``rare``: copied in small scalar loops, ``new_arrays.rare_contiguous``)."""
    new_arrays_import(em)
    return f"cpu_new.{'rare_contiguous' if rare else 'contiguous'}({name})"


def reshaped(em: Emitter, name: str, sizes: Sequence[str], rare: bool = False) -> str:
    """``name.reshape(sizes)`` (a view of its C-contiguous copy, if it is not one; written in
    line: ``new_arrays.reshaped``; ``rare``: see ``contiguous``)."""
    return f"cpu_new.reshaped({contiguous(em, name, rare)}, {shape_tuple(sizes)})"


def flat(em: Emitter, name: str) -> str:
    """``name.ravel()``: a 1-d view of its C-contiguous copy, if it is not one."""
    return f"cpu_new.flat_view({contiguous(em, name)})"


def raveled(em: Emitter, x: ir.Value) -> str:
    """A 1-d C-order copy (or view) of ``x``'s elements: ``x`` itself when 1-d, a 1-element
    array for a 0-d ``x``."""
    name = em.name(x)
    if x.type.ndim == 0:
        return full(em, ["1"], name)
    return name if x.type.ndim == 1 else flat(em, name)


def first(name: str, ndim: int) -> str:
    """The first element of the array ``name`` of rank ``ndim`` (``name.ravel()[0]``)."""
    return index_expr(name, ["0"] * ndim)


def copy(em: Emitter, name: str) -> str:
    """A new C-contiguous copy of the array ``name`` (``x.copy()``, written in line)."""
    new_arrays_import(em)
    return f"cpu_new.copy({name})"


def new_arrays_import(em: Emitter) -> None:
    """The generated module imports ``new_arrays`` as ``cpu_new``."""
    em.module_line("cpu_new", _NEW_IMPORT)


def full(em: Emitter, sizes: Sequence[str], value: str) -> str:
    """A new array of ``sizes`` filled with the scalar ``value`` (of its dtype)."""
    new_arrays_import(em)
    return f"cpu_new.full({int64_shape(sizes)}, {value})"


def int64_shape(sizes: Sequence[str]) -> str:
    """``shape_tuple`` with constant sizes as ``np.int64(n)``: a literal in a shape passed to a
    compiled function would compile it once per value."""
    return shape_tuple([f"np.int64({size})" if size.isdigit() else size for size in sizes])


def _new(em: Emitter, kind: str, sizes: Sequence[str], dtype: np.dtype) -> str:
    new_arrays_import(em)
    return f"cpu_new.{kind}({int64_shape(sizes)}, {np_dtype(dtype)})"


def allocate(em: Emitter, op: ir.Op, out: str, sizes: Sequence[str], dtype: np.dtype) -> None:
    """Emits ``out = np.empty(sizes, dtype)``; for an op marked ``reuse_buffer`` (a temporary
    of a loop iteration, passes/loop_buffers.py) ``out`` itself is the buffer: made empty at the
    function's start and allocated again only when the shape changes (no other variable refers
    to it, so no reference counting either); for an op marked ``recycle_buffer`` (a result that
    outlives its iteration) ``out`` is the op's spare buffer, the dead operand's next time."""
    recycled = op.attrs.get("recycle_buffer")
    if recycled and sizes:
        _recycle(em, out, op.operands[recycled[0]], sizes, dtype)
        return
    if not op.attrs.get("reuse_buffer") or not sizes:
        em.line(f"{out} = {empty(em, sizes, dtype)}")
        return
    em.prologue(f"{out} = {empty(em, ['0'] * len(sizes), dtype)}")
    _made_again_if_changed(em, out, sizes, dtype)


def _recycle(em: Emitter, out: str, operand: ir.Value, sizes: Sequence[str],
             dtype: np.dtype) -> None:
    """``out`` is the op's spare buffer (made empty at the function's start, again when the shape
    changes); the operand, dead once the op has run (``recycle_buffer``, passes/loop_buffers.py),
    becomes the spare for the next iteration. Only the spare refers to it until then."""
    spare = em.fresh("spare")
    em.prologue(f"{spare} = {empty(em, ['0'] * len(sizes), dtype)}")
    later = em.after_first.get(operand)
    if later is not None:
        _recycle_after_first(em, out, spare, em.name(operand), later, sizes, dtype)
        return
    _made_again_if_changed(em, spare, sizes, dtype)
    em.line(f"{out} = {spare}")
    em.line(f"{spare} = {em.name(operand)}")


def _recycle_after_first(em: Emitter, out: str, spare: str, operand: str, later: str,
                         sizes: Sequence[str], dtype: np.dtype) -> None:
    """The operand is the loop's initial value (a parameter: never written) until the flag
    ``later`` is set, then the op's result of the iteration before: the first iteration
    allocates, later ones give the operand back as the spare (``spare_buffers``: its variable's
    type is the parameter's too)."""
    em.module_line("cpu_spares", _SPARES_IMPORT)
    em.line(f"if {later}:")
    with em.block():
        _made_again_if_changed(em, spare, sizes, dtype)
        em.line(f"{out} = {spare}")
        em.line(f"{spare} = cpu_spares.given_back({operand}, {spare})")
    em.line("else:")
    with em.block():
        em.line(f"{out} = {empty(em, sizes, dtype)}")


def _made_again_if_changed(em: Emitter, buffer: str, sizes: Sequence[str],
                           dtype: np.dtype) -> None:
    """``buffer = np.empty(sizes, dtype)`` unless it has these sizes already."""
    changed = " or ".join(f"{buffer}.shape[{i}] != {size}" for i, size in enumerate(sizes))
    em.line(f"if {changed}:")
    with em.block():
        em.line(f"{buffer} = {empty(em, sizes, dtype)}")




def fresh_indices(em: Emitter, count: int, hint: str = "i") -> list[str]:
    return [em.fresh(hint) for _ in range(count)]


@contextlib.contextmanager
def loops(em: Emitter, indices: Sequence[str], extents: Sequence[str]) -> Iterator[None]:
    """Emits ``for i in range(n):`` per (index, extent), outermost first; the body goes inside."""
    with contextlib.ExitStack() as stack:
        for index, extent in zip(indices, extents, strict=True):
            em.line(f"for {index} in range({extent}):")
            stack.enter_context(em.block())
        yield


def unsupported(em: Emitter, op: ir.Op, why: str) -> LoweringError:
    """The error for an op (with these attrs/dtypes) that this backend does not lower."""
    return LoweringError(f"autostage: the CPU backend cannot compile `{op.name}` at {where(op)}: "
                         f"{why}; use target='interpreter' for this function")


def is_complex(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def int_max(a: str, b: str) -> str:
    """``max(a, b)`` of two integer expressions (evaluated twice: names and small sums) as a
    conditional: Numba compiles its ``max``/``min`` of ints again in every process that compiles
    a new function (~15 ms)."""
    return f"({a} if {a} > {b} else {b})"


def int_min(a: str, b: str) -> str:
    """``min(a, b)`` of two integer expressions, as ``int_max``."""
    return f"({a} if {a} < {b} else {b})"


def broadcast_index(index: str, size: int | None, extent: str) -> str:
    """The index into an axis of ``size`` (``extent`` at run time) broadcast against a loop
    index: 0 for a static size 1, the index itself for a size that cannot be 1 here."""
    if size == 1:
        return "0"
    if size is not None:
        return index
    return int_min(index, f"{extent} - 1")


class HelperWriter:
    """The part of the Emitter API the array lowerings use, writing the body of a module-level
    helper function instead of inline code. Ops that a traced loop may repeat many times
    (matmul in an unrolled ``for``) become one helper called from each site: Numba compiles
    the helper once, where 100 inlined copies took ~50 s to compile."""

    def __init__(self, names: dict[ir.Value, str], op: ir.Op, emitter: Emitter | None = None):
        self.emitter = emitter  # the module's emitter (module-level helpers)
        self.lines: list[str] = []
        self.depth = 1
        self.names = names
        self.op = op
        self.counter = 0
        self.shape_facts = None  # a helper is shared by call sites: no facts of one site
        self.int_facts = None

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        self.depth += 1
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self.line("pass")
            self.depth -= 1

    def name(self, value: ir.Value) -> str:
        return self.names[value]

    def fresh(self, hint: str) -> str:
        self.counter += 1
        return f"{hint}{self.counter}"

    def module_line(self, key: str, text: str) -> None:
        """An import the helper's body needs, added to the module."""
        self.emitter.module_line(key, text)


def call_helper(em: Emitter, op: ir.Op, key: str, body, into: bool = False,
                argument: Callable[[ir.Value, str], str] | None = None) -> None:
    """Emits ``result = h(operands...)`` where helper ``h`` (one per ``key``, which must name
    everything the body depends on: op kind, attrs, operand types) runs ``body(writer)``;
    ``into``: ``h(operands..., result)``, the body writing into the result's buffer, made
    before the call; ``argument(operand, name)``: the expression passed for an operand (its
    name)."""
    params = [f"p{i}" for i in range(len(op.operands))]
    names = dict(zip(op.operands, params, strict=True))
    # The body refers to operands by value: an operand passed twice (`a @ a`) gets one name, so
    # such a helper is only right for call sites that repeat operands the same way.
    aliasing = tuple(op.operands.index(v) for v in op.operands)
    if aliasing != tuple(range(len(aliasing))):
        key = f"{key}_alias{''.join(map(str, aliasing))}"
    names[op.results[0]] = "out"
    writer = HelperWriter(names, op, em)
    body(writer)
    text = "\n".join(writer.lines).replace("{", "{{").replace("}", "}}")
    if into:
        params.append("out")
    source = (f"@numba.njit(**JIT)\ndef {{name}}({', '.join(params)}):\n{text}\n"
              "    return out\n")
    helper = em.helper(key, source)
    args = [em.name(v) if argument is None else argument(v, em.name(v)) for v in op.operands]
    if into:
        em.line(f"{helper}({', '.join(args)}, {em.name(op.results[0])})")
    else:
        em.line(f"{em.name(op.results[0])} = {helper}({', '.join(args)})")


def type_key(*values: ir.Value) -> str:
    """A readable helper-key part naming the types of ``values`` (dtype and static shape)."""
    return "_".join(str(v.type).replace("?", "n").replace("[", "").replace("]", "")
                    .replace(",", "x") for v in values)


def raise_out_of_bounds(em: Emitter, index: str, axis: int | str, extent: str) -> None:
    """``raise IndexError`` with NumPy's text ("index 5 is out of bounds for axis 0 with size
    3"), formatted in Python from the run-time index and size (``run_errors``), with the note
    naming the op and the user's line."""
    run_errors.raise_now(em, em.op, IndexError,
                         f"index {{0}} is out of bounds for axis {axis} with size {{1}}",
                         [index, extent])
