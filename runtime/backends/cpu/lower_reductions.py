"""CPU lowerings of the reductions (sum, prod, mean, max, min, argmax, argmin, any, all, std,
var) as explicit loop nests.

Numba only accepts ``axis=`` for sum/argmax/argmin and never ``keepdims``, and its first axis sum
costs ~2 s of compile time (shared/TOOLCHAIN.md), so every reduction is one loop nest: the kept
axes outside, the reduced axes inside, an accumulator of NumPy's accumulation dtype. NumPy's
semantics are kept: max/min/argmax/argmin propagate NaN (argmax gives the first NaN; complex
values are ordered lexicographically, a NaN in either part counting as NaN), empty
max/min/argmax raise ValueError, mean/var divide in float64 and cast back (as ``np.mean`` does),
var subtracts the mean in a second pass. Float sums and means over the trailing axes of a
C-contiguous array add pairwise exactly as NumPy does (``_PAIRWISE``: eight running sums per block
of 128, blocks combined in halves), so they give NumPy's bits, and eight independent sums run
several times faster than one chain of additions. Sums of computed values (``PairwiseSum``: a
variance's squared deviations, complex parts, and fused reductions in ``lower_fused``) add
pairwise as NumPy adds the array they would form. Other float sums add in order: results agree
to a few ulps of the sum (exact for ints, bools, max/min/arg*, and for sums along a leading axis,
which NumPy also adds in order). A sum over leading axes (a bias gradient, column sums) runs with
the kept axes innermost: one running sum per result element, filled along memory, where a loop
per element would stride across rows (11x slower at 128x256: 85 vs 7.8 us).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import lower_support as s
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import Emitter, lowering, np_dtype
from autostage.runtime.backends.cpu.lower_shapes import staged_shape


def accumulation_dtype(x: np.dtype, requested: np.dtype | None) -> np.dtype:
    """The dtype np.mean / np.var add in: the requested one, float64 for ints and bools,
    float32 for float16, else the input's."""
    if requested is not None:
        return np.dtype(requested)
    if x.kind in "biu":
        return np.dtype(np.float64)
    return np.dtype(np.float32) if x == np.float16 else x


def _wide(dtype: np.dtype) -> np.dtype:
    """The dtype NumPy divides a sum by its (intp) count in: float64 or complex128."""
    return np.dtype(np.complex128 if dtype.kind == "c" else np.float64)


# NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, ``pairwise_sum``) of
# ``n`` elements of the 1-d ``flat`` from ``start``, in its dtype: blocks of up to 128 elements
# add into eight running sums; a longer range is the sum of its two halves (the first a
# multiple of 8 long). The halves are walked with an explicit stack: Numba's recursive
# functions, compiled for two array layouts, crashed.
_PAIRWISE = '''
@numba.njit(**JIT)
def {name}_block(flat, start, n):
    # (positions read as uint64: Numba tests a signed index for wrap-around at each read, and
    # LLVM cannot drop the test for positions counted from an argument: 1/3 of this code)
    if n < 8:
        res = flat.dtype.type(0)
        for i in range(start, start + n):
            res += flat[np.uint64(i)]
        return res
    r0, r1 = flat[np.uint64(start)], flat[np.uint64(start + 1)]
    r2, r3 = flat[np.uint64(start + 2)], flat[np.uint64(start + 3)]
    r4, r5 = flat[np.uint64(start + 4)], flat[np.uint64(start + 5)]
    r6, r7 = flat[np.uint64(start + 6)], flat[np.uint64(start + 7)]
    i = start + 8
    end = start + n - n % 8
    while i < end:
        r0 += flat[np.uint64(i)]
        r1 += flat[np.uint64(i + 1)]
        r2 += flat[np.uint64(i + 2)]
        r3 += flat[np.uint64(i + 3)]
        r4 += flat[np.uint64(i + 4)]
        r5 += flat[np.uint64(i + 5)]
        r6 += flat[np.uint64(i + 6)]
        r7 += flat[np.uint64(i + 7)]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        res += flat[np.uint64(i)]
        i += 1
    return res


@numba.njit(**JIT)
def {name}_tree(flat, start, n, limit, tiled):
    """The halves of n's pairwise tree split until they hold at most limit values, summed
    as the tree adds them: each such part by ``_block`` from flat[start:], or (``tiled``) the
    next of the part sums in ``flat`` (``_tiles``' order)."""
    # frames[0]: a part's start, [1]: its size, [2]: whether its left half is summed and
    # the right one pending (one allocation for the three: each cost a call of the allocator)
    frames = cpu_new.empty((np.int64(3), np.int64(64)), np.int64)
    lefts = cpu_new.empty((np.int64(64),), flat.dtype)
    top = 0
    k = 0
    frames[0, 0], frames[1, 0], frames[2, 0] = start, n, 0
    while True:
        if frames[1, top] > limit:  # split: the left half first
            half = frames[1, top] // 2
            half -= half % 8
            frames[0, top + 1], frames[1, top + 1], frames[2, top + 1] = frames[0, top], half, 0
            top += 1
            continue
        if tiled:
            value = flat[k]
            k += 1
        else:
            value = {name}_block(flat, frames[0, top], frames[1, top])
        while True:  # hand the sum up until a frame still needs its right half
            if top == 0:
                return value
            top -= 1
            if frames[2, top]:
                value = lefts[top] + value
                continue
            lefts[top], frames[2, top] = value, 1
            half = frames[1, top] // 2
            half -= half % 8
            frames[0, top + 1] = frames[0, top] + half
            frames[1, top + 1] = frames[1, top] - half
            frames[2, top + 1] = 0
            top += 1
            break


@numba.njit(**JIT)
def {name}_run(flat, start, n):
    if n <= 128:
        return {name}_block(flat, start, n)
    return {name}_tree(flat, start, n, np.int64(128), np.bool_(False))


@numba.njit(**JIT)
def {name}(x, start, n):
    return {name}_run(cpu_new.flat_view(cpu_new.contiguous(x)), start, n)


@numba.njit(**JIT)
def {name}_tiles(n, limit):
    """The sizes, in order, of the nodes of n's pairwise tree that hold at most limit elements
    and whose parents hold more: they tile the n elements."""
    out = cpu_new.empty((n // (limit // 4) + 2,), np.int64)
    count = 0
    stack = cpu_new.empty((np.int64(64),), np.int64)
    stack[0] = n
    top = 1 if n > 0 else 0
    while top > 0:
        top -= 1
        size = stack[top]
        if size > limit:
            half = size // 2
            half -= half % 8
            stack[top], stack[top + 1] = size - half, half  # the left half on top: first
            top += 2
        else:
            out[count] = size
            count += 1
    return out[:count]


@numba.njit(**JIT)
def {name}_join(sums, n, limit):
    """The pairwise sum of n elements from the sums of its tiles (``_tiles``), added as the
    tree adds them."""
    if n <= limit:
        return sums[0] if n > 0 else sums.dtype.type(0)
    return {name}_tree(sums, np.int64(0), n, limit, np.bool_(True))
'''
TILE = 1024  # the most values a PairwiseSum buffers (8 KiB of float64)
BLOCK = 128  # NumPy's pairwise block: up to this many values add in eight running sums


def _block_or_tree(helper: str, flat: str, start: str, count: str) -> str:
    """The pairwise sum of ``count`` values of ``flat`` from ``start`` (``_run``'s test written
    in the caller: a program compiles ``_run`` only if it calls it, one code library less)."""
    return (f"{helper}_block({flat}, {start}, {count}) if {count} <= {BLOCK} else "
            f"{helper}_tree({flat}, {start}, {count}, np.int64({BLOCK}), np.bool_(False))")


class PairwiseSum:
    """A float sum of values computed one at a time, in the order of a C-contiguous block,
    added as NumPy adds such a block (``_PAIRWISE``) without storing the block: each value goes
    into a buffer holding one tile of the pairwise tree (a subtree of at most ``TILE`` values);
    a full tile is summed by the pairwise helper, and the tile sums combined as the tree
    combines them. Fused reductions and variances sum values no array holds; added in order
    instead, 4e6 float32 values of 0.2 summed to 769,050 instead of NumPy's 800,000. A complex
    sum adds its real and imaginary parts so, each in a buffer of its own (NumPy pairs complex
    values in other blocks: within a few ulps)."""

    def __init__(self, em: Emitter, dtype: np.dtype, count: str, known: int | None = None):
        """Emits the tiles and buffers of a block of ``count`` values (outside the loops).
        A count ``known`` to the trace that fits one block of NumPy's (<= 128 values, a
        softmax's row of classes) needs one buffer of its size and one block sum, no tiles."""
        self.em, self.count, self.dtype = em, count, np.dtype(dtype)
        self.block = known if known is not None and known <= BLOCK else None
        self.helper = em.helper("pairwise_sum", _PAIRWISE)
        self.tiles, self.tile, self.filled = em.fresh("tiles"), em.fresh("tile"), em.fresh("filled")
        if self.block is None:
            em.line(f"{self.tiles} = {self.helper}_tiles(np.int64({count}), np.int64({TILE}))")
        part = np.empty(0, dtype).real.dtype
        self.parts = []  # (buffer, sums) of each real part
        for _ in range(1 + (self.dtype.kind == "c")):
            buffer, sums = em.fresh("buf"), em.fresh("sums")
            em.line(f"{buffer} = {s.empty(em, [str(self.block or TILE)], part)}")
            if self.block is None:  # (a slot more than tiles: never empty)
                em.line(f"{sums} = {s.empty(em, [f'len({self.tiles}) + 1'], part)}")
            self.parts.append((buffer, sums))

    def start(self) -> None:
        """Before the values of one block added one by one (``add``)."""
        if self.block is None:
            self.em.line(f"{self.tile} = 0")
        self.em.line(f"{self.filled} = 0")

    @contextlib.contextmanager
    def over(self, index: str) -> Iterator[Callable[[str], None]]:
        """The loop over one block along one axis (``index`` from 0 to ``count``), tile by tile:
        the body stores the value at ``index`` with the function this yields. No test per value
        (``add``'s), so LLVM can vectorise the loop computing a tile's values."""
        em, first = self.em, self.filled  # ``filled``: the index where the tile starts
        if self.block is not None:
            em.line(f"for {index} in range({self.block}):")
            with em.block():
                yield lambda value: self._store(value, index)
            return
        em.line(f"{first} = 0")
        em.line(f"for {self.tile} in range(len({self.tiles})):")
        with em.block():
            size = em.fresh("size")
            em.line(f"{size} = {self.tiles}[{self.tile}]")
            em.line(f"for {index} in range({first}, {first} + {size}):")
            with em.block():
                yield lambda value: self._store(value, f"{index} - {first}")
            self._sum_tile(size)
            em.line(f"{first} += {size}")

    def add(self, value: str) -> None:
        em, filled = self.em, self.filled
        self._store(value, filled)
        em.line(f"{filled} += 1")
        if self.block is not None:
            return
        em.line(f"if {filled} == {self.tiles}[{self.tile}]:")
        with em.block():
            self._sum_tile(filled)
            em.line(f"{self.tile} += 1")
            em.line(f"{filled} = 0")

    def _store(self, value: str, position: str) -> None:
        em = self.em
        if len(self.parts) == 2:
            v = em.fresh("v")
            em.line(f"{v} = {value}")
            values = [f"{v}.real", f"{v}.imag"]
        else:
            values = [value]
        for (buffer, _), part in zip(self.parts, values, strict=True):
            em.line(f"{buffer}[{position}] = {part}")

    def _sum_tile(self, size: str) -> None:
        """The sum of the tile's ``size`` buffered values, as NumPy adds them (one call per
        tile of up to ``TILE`` values: the statement is what costs, in Numba's compile)."""
        for buffer, sums in self.parts:
            self.em.line(f"{sums}[{self.tile}] = "
                         f"{_block_or_tree(self.helper, buffer, 'np.int64(0)', size)}")

    def total(self) -> str:
        """The block's sum, after its values."""
        if self.block is not None:
            totals = [f"{self.helper}_block({buffer}, np.int64(0), np.int64({self.block}))"
                      for buffer, _ in self.parts]
        else:
            totals = [f"{self.helper}_join({sums}, np.int64({self.count}), np.int64({TILE}))"
                      for _, sums in self.parts]
        if len(totals) == 1:
            return totals[0]
        return f"{np_dtype(self.dtype)}(complex({totals[0]}, {totals[1]}))"


def _accumulate(em: Emitter, inner: ReducedLoops, element: str, acc: str, dtype: np.dtype,
                combine: str) -> None:
    """``acc = <identity>; for ...: acc = acc <combine> element`` in ``dtype``; a float sum
    over the trailing axes adds pairwise where NumPy does: over the whole block of a
    C-contiguous array (of an F-contiguous one when every axis is reduced: NumPy follows the
    memory), else along the last axis, the rows in order."""
    if combine == "+" and dtype.kind == "c" and "complex" in inner.pairwise:
        sum_ = inner.pairwise["complex"]
        sum_.start()
        with inner():
            sum_.add(s.cast(element, dtype))
        em.line(f"{acc} = {sum_.total()}")
        return
    start = inner.pairwise_start(dtype) if combine == "+" and inner.flat else ""
    if not start:
        _accumulate_in_order(em, inner, element, acc, dtype, combine)
        return
    helper = em.helper("pairwise_sum", _PAIRWISE)
    x, ndim = inner.x, len(inner.sizes)
    # A block (or a row) of up to 128 elements: the block helper itself (LLVM inlines it).
    pairwise = _block_or_tree(helper, inner.flat, start, inner.count)
    if inner.rows():  # (the flat view is of C-ordered elements: emit_reduction)
        em.line(f"{acc} = {pairwise}")
        return
    em.line(f"if {x}.flags.c_contiguous:")
    with em.block():
        em.line(f"{acc} = {pairwise}")
    if len(inner.axes) == ndim > 1:
        em.line(f"elif {x}.flags.f_contiguous:")
        with em.block():
            em.line(f"{acc} = {helper}({x}.T, np.int64(0), {inner.count})")
    em.line("else:")
    with em.block():
        em.line(f"{acc} = {s.zero(dtype)}")
        with inner.over(inner.axes[:-1]):
            row = s.index_expr(x, [*inner.idx[:-1], ":"])
            em.line(f"{acc} += {helper}_run({row}, np.int64(0), np.int64({inner.sizes[-1]}))")


def _accumulate_in_order(em: Emitter, inner: ReducedLoops, element: str, acc: str,
                         dtype: np.dtype, combine: str) -> None:
    if dtype == np.bool_:
        em.line(f"{acc} = {'True' if combine == '*' else 'False'}")
        logical = "and" if combine == "*" else "or"
        with inner():
            em.line(f"{acc} = {acc} {logical} ({element} != 0)")
        return
    em.line(f"{acc} = {s.zero(dtype) if combine == '+' else s.one(dtype)}")
    with inner():
        em.line(s.accumulate(acc, combine, s.cast(element, dtype), dtype))


def _sum_like(combine: str):
    def emit(op, em, inner, element, first, count):
        acc = em.fresh("acc")
        _accumulate(em, inner, element, acc, op.results[0].type.dtype, combine)
        return acc
    return emit


def _mean(op, em, inner, element, first, count):
    acc_dtype = accumulation_dtype(op.operands[0].type.dtype, op.attrs.get("dtype"))
    acc = em.fresh("acc")
    _accumulate(em, inner, element, acc, acc_dtype, "+")
    wide = np_dtype(_wide(acc_dtype))
    return s.cast(f"{wide}({acc}) / np.float64({count})", op.results[0].type.dtype)


def _var_value(op, em, inner, element, count) -> str:
    """The variance (in the result dtype) in two passes, as np.var computes it."""
    x_dtype = op.operands[0].type.dtype
    acc_dtype = accumulation_dtype(x_dtype, None)
    diff_dtype = np.result_type(x_dtype, acc_dtype)
    acc, mean, d = em.fresh("acc"), em.fresh("mean"), em.fresh("d")
    _accumulate(em, inner, element, acc, acc_dtype, "+")
    wide = np_dtype(_wide(acc_dtype))
    em.line(f"{mean} = {s.cast(f'{wide}({acc}) / np.float64({count})', acc_dtype)}")
    sq_dtype = np.empty(0, diff_dtype).real.dtype  # |d|^2 is real
    ss = em.fresh("ss")
    squares = inner.pairwise.get("squares")
    if squares:
        squares.start()
    else:
        em.line(f"{ss} = {s.zero(sq_dtype)}")
    with inner():
        em.line(f"{d} = {s.cast(element, diff_dtype)} - {mean}")
        square = (f"{d}.real * {d}.real + {d}.imag * {d}.imag" if diff_dtype.kind == "c"
                  else f"{d} * {d}")
        if squares:
            squares.add(square)
        else:
            em.line(f"{ss} += {square}")
    if squares:
        em.line(f"{ss} = {squares.total()}")
    ddof = op.attrs["ddof"]
    return s.cast(f"np.float64({ss}) / np.float64({s.int_max(f'{count} - {ddof!r}', '0')})",
                  op.results[0].type.dtype)


def _var(op, em, inner, element, first, count):
    return _var_value(op, em, inner, element, count)


def _std(op, em, inner, element, first, count):
    dtype = op.results[0].type.dtype
    return s.cast(f"np.sqrt({_var_value(op, em, inner, element, count)})", dtype)


def _check_nonempty(op: ir.Op, em: Emitter, inner: ReducedLoops, count: str) -> None:
    if all(inner.sizes[a].isdigit() and int(inner.sizes[a]) > 0 for a in inner.axes):
        return  # sizes known while tracing: nothing to test
    ufunc = {"max": "maximum", "min": "minimum"}.get(op.name, op.name)
    message = (f"attempt to get {op.name} of an empty sequence" if op.name.startswith("arg")
               else f"zero-size array to reduction operation {ufunc} which has no identity")
    run_errors.check(em, op, f"{count} == 0", ValueError, message, [])


def _better(name: str, v: str, best: str) -> str:
    """The test that ``v`` replaces ``best``: larger (smaller), or a NaN (which then sticks);
    for argmax/argmin, where the first of equal values wins."""
    compare = ">" if name in ("max", "argmax") else "<"
    return f"{v} {compare} {best} or {v} != {v}"


def replaces(name: str, v: str, best: str) -> str:
    """The test that ``v`` replaces ``best`` in a max (min) reduction, as NumPy's
    ``maximum.reduce`` (``minimum``): unless ``best`` is larger (smaller) or a NaN, so that of
    equal values the last wins (``np.max([0.0, -0.0])`` is ``-0.0``)."""
    compare = ">" if name == "max" else "<"
    return f"not ({best} {compare} {v} or {best} != {best})"


def _complex_better(name: str, v: str, best: str) -> str:
    """NumPy's complex maximum/minimum (lexicographic; a NaN in either part sticks): ``v``
    replaces ``best`` unless ``best`` has a NaN or ``best >= v`` (``<=`` for min), where a real
    part that is larger counts only if neither imaginary part is NaN."""
    c = ">" if name == "max" else "<"
    keeps = (f"{best}.real != {best}.real or {best}.imag != {best}.imag or ({best}.real {c} "
             f"{v}.real and {best}.imag == {best}.imag and {v}.imag == {v}.imag) or "
             f"({best}.real == {v}.real and {best}.imag {c}= {v}.imag)")
    return f"not ({keeps})"


def _complex_arg_better(name: str, v: str, best: str) -> str:
    """NumPy's complex argmax/argmin: lexicographically larger (smaller), or a NaN part."""
    c = ">" if name == "argmax" else "<"
    return (f"{best}.real == {best}.real and {best}.imag == {best}.imag and ({v}.real {c} "
            f"{best}.real or ({v}.real == {best}.real and {v}.imag {c} {best}.imag) or "
            f"{v}.real != {v}.real or {v}.imag != {v}.imag)")


def _extreme(op, em, inner, element, first, count):
    _check_nonempty(op, em, inner, count)
    best, v = em.fresh("best"), em.fresh("v")
    better = (_complex_better if s.is_complex(op.operands[0].type.dtype) else replaces)
    em.line(f"{best} = {first}")
    with inner():
        em.line(f"{v} = {element}")
        em.line(f"if {better(op.name, v, best)}:")
        with em.block():
            em.line(f"{best} = {v}")
    return best


def _arg_extreme(op, em, inner, element, first, count):
    _check_nonempty(op, em, inner, count)
    best, where_, k, v = em.fresh("best"), em.fresh("at"), em.fresh("k"), em.fresh("v")
    em.line(f"{best} = {first}")
    em.line(f"{where_} = 0")
    em.line(f"{k} = 0")
    with inner():
        em.line(f"{v} = {element}")
        test = (_complex_arg_better(op.name, v, best) if s.is_complex(op.operands[0].type.dtype)
                else f"{best} == {best} and ({_better(op.name, v, best)})")
        em.line(f"if {test}:")
        with em.block():
            em.line(f"{best} = {v}")
            em.line(f"{where_} = {k}")
        em.line(f"{k} += 1")
    return f"np.int64({where_})"


def _truth(combine: str):
    def emit(op, em, inner, element, first, count):
        acc = em.fresh("acc")
        _accumulate(em, inner, element, acc, np.dtype(np.bool_), combine)
        return acc
    return emit


_PAIRWISE_SUMS = ("sum", "mean", "var", "std")  # reducers whose float sums may add pairwise
REDUCERS = {
    "sum": _sum_like("+"), "prod": _sum_like("*"), "mean": _mean,
    "max": _extreme, "min": _extreme, "argmax": _arg_extreme, "argmin": _arg_extreme,
    "any": _truth("+"), "all": _truth("*"), "var": _var, "std": _std,
}


def reduced_axes(axis: object, ndim: int) -> tuple[int, ...]:
    """The attr ``axis`` (None, an int, or a tuple) as a tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


class ReducedLoops:
    """Calling it gives a context manager emitting the loops over all reduced axes (innermost
    last); ``over(axes)`` loops over some of them only (matrix norms nest them their way)."""

    def __init__(self, em: Emitter, idx: list[str], sizes: list[str], axes: tuple[int, ...],
                 x: ir.Value | None = None, count: str = ""):
        self.em, self.idx, self.sizes, self.axes = em, idx, sizes, axes
        self.operand, self.count = x, count
        self.x = em.name(x) if x is not None else ""
        self.flat = ""  # the operand's flat view when it is C-contiguous (pairwise sums)
        self.pairwise: dict[str, PairwiseSum] = {}  # sums of computed values (_pairwise_parts)

    def trailing(self) -> bool:
        """Whether the reduced axes are the trailing ones (a C-contiguous block per result)."""
        ndim = len(self.sizes)
        return bool(self.axes) and self.axes == tuple(range(ndim - len(self.axes), ndim))

    def pairwise_start(self, dtype: np.dtype) -> str:
        """The flat index where the reduced block starts, when NumPy would add it pairwise
        (the reduced axes are the trailing ones; a float operand of the accumulation dtype,
        which NumPy adds without a cast); else ''."""
        if self.operand is None or self.operand.type.dtype != dtype or dtype.kind != "f":
            return ""
        ndim = len(self.sizes)
        if not self.trailing():
            return ""
        start = "0"
        for a in range(ndim - len(self.axes)):
            start = self.idx[a] if start == "0" else f"({start} * {self.sizes[a]} + {self.idx[a]})"
        return f"{start} * {self.count}"

    def rows(self) -> bool:
        """Whether each sum is of one row (only the last axis reduced): added pairwise as the
        row's own elements whatever the operand's layout, so its C-ordered copy serves."""
        return len(self.axes) == 1

    def __call__(self):
        return self.over(self.axes)

    def over(self, axes):
        return s.loops(self.em, [self.idx[a] for a in axes], [self.sizes[a] for a in axes])


def lower_reduction(op: ir.Op, em: Emitter) -> None:
    emit_reduction(op, em, reduced_axes(op.attrs["axis"], op.operands[0].type.ndim),
                   op.attrs["keepdims"], REDUCERS[op.name])


def _pairwise_parts(op: ir.Op) -> dict[str, np.dtype]:
    """The sums of computed values a reduction over trailing axes adds pairwise, as NumPy adds
    the arrays it computes them in: a complex sum (NumPy pairs complex values in its own blocks:
    within a few ulps), and a variance's squared deviations (NumPy's bits)."""
    x = op.operands[0].type.dtype
    acc = accumulation_dtype(x, op.attrs.get("dtype")) if op.name != "sum" else (
        op.results[0].type.dtype)
    parts = {}
    if acc.kind == "c":
        parts["complex"] = acc
    if op.name in ("var", "std"):
        squares = np.empty(0, np.result_type(x, accumulation_dtype(x, None))).real.dtype
        if squares.kind == "f":
            parts["squares"] = squares
    return parts


def emit_reduction(op: ir.Op, em: Emitter, axes: tuple[int, ...], keepdims: bool,
                   reducer) -> None:
    """One loop nest: kept axes outside (writing one result element each), reduced inside;
    ``reducer(op, em, inner, element, first, count)`` emits the accumulation inside the kept
    loops and returns the expression of the result element."""
    x, result = op.operands[0], op.results[0]
    ndim = x.type.ndim
    kept = [a for a in range(ndim) if a not in axes]
    idx = s.fresh_indices(em, ndim)
    sizes = s.dims(em, x)
    xname = em.name(x)
    count = em.fresh("n")
    # An int64, not a constant: a literal count would compile the sum helpers once per size.
    em.line(f"{count} = np.int64({' * '.join(sizes[a] for a in axes) or '1'})")
    element = s.index_expr(xname, idx)
    first = s.index_expr(xname, [idx[a] if a in kept else "0" for a in range(ndim)])
    requested = op.attrs.get("dtype")
    if x.type.dtype.kind == "c" and requested is not None and np.dtype(requested).kind != "c":
        element, first = f"{element}.real", f"{first}.real"  # NumPy drops the imaginary part
    inner = ReducedLoops(em, idx, sizes, tuple(sorted(axes)), x, count)
    if op.name in _PAIRWISE_SUMS and inner.pairwise_start(x.type.dtype):
        # The operand as one flat view, made once outside the kept loops: of its C-ordered
        # elements (itself when C-contiguous, else a copy) where each sum is of one row
        # (``_accumulate``), else of the C-contiguous operand only.
        inner.flat = em.fresh("flat")
        s.new_arrays_import(em)
        if inner.rows():
            em.line(f"{inner.flat} = cpu_new.flat_view({s.contiguous(em, xname)})")
        else:
            em.line(f"{inner.flat} = cpu_new.flat_view({xname}) if "
                    f"{xname}.flags.c_contiguous else {s.empty(em, ['0'], x.type.dtype)}")
    if op.name in _PAIRWISE_SUMS and inner.trailing():
        inner.pairwise = {key: PairwiseSum(em, dtype, count) for key, dtype in
                          _pairwise_parts(op).items()}
    out = em.name(result)
    if result.type.ndim == 0:
        em.line(f"{out} = {reducer(op, em, inner, element, first, count)}")
        return
    out_sizes = [sizes[a] if a in kept else "1" for a in range(ndim)] if keepdims else [
        sizes[a] for a in kept]
    out_index = [idx[a] if a in kept else "0" for a in range(ndim)] if keepdims else [
        idx[a] for a in kept]
    if op.name == "sum" and axes == tuple(range(len(axes))) and kept:
        # Leading axes: the kept ones innermost, one running sum per result element: the same
        # additions in the same order, along memory (LLVM vectorises them) instead of across.
        em.line(f"{out} = {s.zeros(em, out_sizes, result.type.dtype)}")
        with s.loops(em, [idx[a] for a in (*axes, *kept)], [sizes[a] for a in (*axes, *kept)]):
            em.line(f"{s.index_expr(out, out_index)} += {s.cast(element, result.type.dtype)}")
        return
    em.line(f"{out} = {s.empty(em, out_sizes, result.type.dtype)}")
    with s.loops(em, [idx[a] for a in kept], [sizes[a] for a in kept]):
        value = reducer(op, em, inner, element, first, count)
        em.line(f"{s.index_expr(out, out_index)} = {value}")


for _name in REDUCERS:
    lowering(_name)(lower_reduction)


@lowering("sum_to")
def lower_sum_to(op: ir.Op, em: Emitter) -> None:
    """One pass over ``ct`` adding each element into the target-shaped result (``like``'s shape,
    or the staged sizes of attr ``shape``), at index 0 on the axes where the target has size 1;
    equal shapes (the common case) take ``ct`` as it is."""
    ct, *rest = op.operands
    out, name = em.name(op.results[0]), em.name(ct)
    if "shape" in op.attrs:
        sizes = staged_shape(em, op.attrs["shape"], tuple(rest))
        target = s.shape_tuple(sizes)
    else:
        sizes, target = s.dims(em, rest[0]), f"{em.name(rest[0])}.shape"
    have = s.dims(em, ct)
    em.line(f"if {name}.shape == {target}:")
    with em.block():
        em.line(f"{out} = {s.contiguous(em, name)}")
    em.line("else:")
    with em.block():
        em.line(f"{out} = {s.zeros(em, sizes, op.results[0].type.dtype)}")
        indices = [em.fresh("i") for _ in sizes]
        target = [f"{i} * ({size} != 1)" for i, size in zip(indices, sizes, strict=True)]
        with contextlib.ExitStack() as loops:
            for index, size in zip(indices, have, strict=True):
                em.line(f"for {index} in range({size}):")
                loops.enter_context(em.block())
            em.line(f"{s.index_expr(out, target)} += {s.index_expr(name, indices)}")
