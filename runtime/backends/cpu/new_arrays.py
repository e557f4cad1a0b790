"""New arrays for generated code, written in line: nothing to compile, in any process.

Numba's ``np.empty``/``np.zeros``/``np.full``/``np.ascontiguousarray`` (and the allocation of
its ``x.astype``) are overloads: each is compiled as a function of its own once per shape type
and dtype, in every process that compiles new code calling it (0.1-0.3 s per signature with the
allocator it compiles inside; ~4 s of the 47 realistic programs' compile time after ``autostage
--precompile``, which cannot cache them for the signatures a program meets first). These are
intrinsics instead: each call becomes the few instructions that allocate (and fill, or copy)
the array, with NumPy's errors.

A shape is a tuple of integers; generated code passes int64 (``np.int64(n)`` for a literal
size, ``lower_support.int64_shape``), so that the compiled helpers it hands shapes to are not
typed, and compiled, once per literal value.

Generated modules import this module as ``cpu_new`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import NamedTuple

from autostage.runtime.backends.cpu import direct_arrays, loop_hints
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed, impl_ret_new_ref
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, make_array, populate_array, store_item

_NEGATIVE = "negative dimensions are not allowed"
_TOO_BIG = ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
            "possible size.")


def _rank(shape: types.Type) -> int | None:
    """The number of sizes in a shape argument (a tuple of integers), or None."""
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return len(shape)
    return None


def _element(dtype: types.Type) -> types.Type | None:
    """The scalar type a dtype argument names (``np.float64``, ``x.dtype``), or None."""
    if isinstance(dtype, (types.DType, types.NumberClass)):
        return dtype.dtype
    return None


class NewArray(NamedTuple):
    """A new array's value and the fields the code filling it reads."""

    value: ir.Value
    data: ir.Value
    nitems: ir.Value
    itemsize: ir.Value
    strides: list  # intp values


def _allocate(context, builder, array_type: types.Array, sizes: list) -> NewArray:
    """A new array of ``array_type`` with ``sizes`` (intp values), not filled, C-contiguous
    (F-contiguous for an F ``array_type``):
    NumPy's ValueErrors for a negative size and for a byte count past intp, MemoryError when
    the allocation fails."""
    intp = context.get_value_type(types.intp)
    itemsize = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
    count, overflow, negative = ir.Constant(intp, 1), cgutils.false_bit, cgutils.false_bit
    for size in sizes:  # (one test and one raise for all the sizes: fewer blocks to compile)
        negative = builder.or_(negative, builder.icmp_signed("<", size, ir.Constant(intp, 0)))
    if sizes:
        with cgutils.if_unlikely(builder, negative):
            context.call_conv.return_user_exc(builder, ValueError, (_NEGATIVE,))
    for size in sizes:
        product = builder.smul_with_overflow(count, size)
        count = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    product = builder.smul_with_overflow(count, ir.Constant(intp, itemsize))
    nbytes = builder.extract_value(product, 0)
    with cgutils.if_unlikely(builder, builder.or_(overflow, builder.extract_value(product, 1))):
        context.call_conv.return_user_exc(builder, ValueError, (_TOO_BIG,))
    align = context.get_preferred_array_alignment(array_type.dtype)
    meminfo = context.nrt.meminfo_alloc_aligned_unchecked(builder, nbytes, align)
    with cgutils.if_unlikely(builder, cgutils.is_null(builder, meminfo)):
        context.call_conv.return_user_exc(builder, MemoryError, ("Unable to allocate array",))
    strides, stride = [], ir.Constant(intp, itemsize)
    for size in (sizes if array_type.layout == "F" else reversed(sizes)):
        strides.append(stride)
        stride = builder.mul(stride, size)
    if array_type.layout != "F":
        strides.reverse()
    data = builder.bitcast(context.nrt.meminfo_data(builder, meminfo),
                           context.get_data_type(array_type.dtype).as_pointer())
    itemsize = ir.Constant(intp, itemsize)
    value = direct_arrays.array_value(
        context, builder, array_type, meminfo=meminfo,
        parent=context.get_value_type(types.pyobject)(None), nitems=count, itemsize=itemsize,
        data=data, shape=sizes, strides=strides)
    return NewArray(value, data, count, itemsize, strides)


def _new(arguments: tuple, element: types.Type | None, fill):
    """The signature and code of a new C array of the shape ``arguments[0]``'s rank and
    ``element``'s dtype (None if they are not those); ``fill(context, builder, array, args)``
    writes its elements (or not)."""
    shape = arguments[0]
    rank = _rank(shape)
    if rank is None or element is None:
        return None
    result = types.Array(element, rank, "C")

    def codegen(context, builder, signature, args):
        sizes = [context.cast(builder, size, kind, types.intp) for size, kind in
                 zip(cgutils.unpack_tuple(builder, args[0], count=rank), shape, strict=True)]
        array = _allocate(context, builder, result, sizes)
        fill(context, builder, array, args)
        return impl_ret_new_ref(context, builder, result, array.value)
    return result(*arguments), codegen


@intrinsic
def empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)``."""
    return _new((shape, dtype), _element(dtype), lambda context, builder, array, args: None)


@intrinsic
def zeros(typingctx, shape, dtype):
    """``np.zeros(shape, dtype)``: the new bytes set to zero."""
    def fill(context, builder, array, args):
        cgutils.memset(builder, array.data, builder.mul(array.itemsize, array.nitems), 0)
    return _new((shape, dtype), _element(dtype), fill)


@intrinsic
def full(typingctx, shape, value):
    """``np.full(shape, value)``, of ``value``'s type."""
    element = types.unliteral(value)
    if not isinstance(element, (types.Number, types.Boolean)):
        return None

    def fill(context, builder, array, args):
        item = context.get_value_as_data(builder, element,
                                         context.cast(builder, args[1], value, element))
        with cgutils.for_range(builder, array.nitems) as loop:
            builder.store(item, builder.gep(array.data, [loop.index]))
    return _new((shape, value), element, fill)


@intrinsic
def contiguous(typingctx, x):
    """``np.ascontiguousarray(x)``: ``x`` itself when it is C-contiguous (typed so, or an 'A'
    array found so at run time, NumPy's rule), else a C copy; a 0-d ``x`` or a scalar as 1-d,
    as NumPy."""
    return _contiguous(x, plain=False)


@intrinsic
def rare_contiguous(typingctx, x):
    """``contiguous(x)`` where a copy is rare and cheap beside what follows (the rows of a
    batched product): its loops are ``rare_copy``'s."""
    return _contiguous(x, plain=True)


def _contiguous(x: types.Type, plain: bool):
    if isinstance(x, (types.Number, types.Boolean)):
        return _scalar_as_array(x)
    if not isinstance(x, types.Array):
        return None
    result = x.copy(layout="C", ndim=max(x.ndim, 1), readonly=False)
    if x.ndim == 0 or x.layout == "C" or (x.ndim == 1 and x.layout == "F"):
        def codegen(context, builder, signature, args):
            view = _flat(context, builder, x, result, args[0]) if x.ndim == 0 else args[0]
            return impl_ret_borrowed(context, builder, result, view)
        return result(x), codegen

    def codegen(context, builder, signature, args):
        if x.layout != "A":
            return c_copy(context, builder, x, args[0], plain)
        source = make_array(x)(context, builder, value=args[0])
        sizes = cgutils.unpack_tuple(builder, source.shape, count=x.ndim)
        strides = cgutils.unpack_tuple(builder, source.strides, count=x.ndim)
        with builder.if_else(_c_contiguous(builder, sizes, strides, source.itemsize),
                             likely=True) as (borrowed, copied):
            with borrowed:
                context.nrt.incref(builder, x, args[0])
                borrowed_block = builder.block
            with copied:
                copy = c_copy(context, builder, x, args[0], plain)
                copied_block = builder.block
        out = builder.phi(copy.type)  # (arrays of one dtype and rank: one LLVM type)
        out.add_incoming(args[0], borrowed_block)
        out.add_incoming(copy, copied_block)
        return out
    return result(x), codegen


@intrinsic
def copy(typingctx, x):
    """``x.copy()``: a new C-contiguous array (NumPy's default order; Numba's method kept an F
    array's order, and compiled its allocator once per process)."""
    return _copy(x, plain=False)


@intrinsic
def rare_copy(typingctx, x):
    """``x.copy()`` for a path taken rarely (a BLAS operand neither of whose axes is contiguous,
    ``blas``): loops LLVM neither vectorises nor unrolls, ~20 instructions where ``copy``'s
    vectorised nest is ~190, compiled into every function calling it."""
    return _copy(x, plain=True)


def _copy(x: types.Type, plain: bool):
    if not isinstance(x, types.Array):
        return None
    result = x.copy(layout="C", readonly=False)

    def codegen(context, builder, signature, args):
        return c_copy(context, builder, x, args[0], plain)
    return result(x), codegen


@intrinsic
def broadcast_copy(typingctx, src, shape):
    """``np.broadcast_to(src, shape).copy()`` for a ``shape`` of ``src``'s rank that ``src``
    broadcasts to (the caller checked): row by row, a row of ``src`` whose elements are
    contiguous copied with one ``memcpy``, a row broadcast from one element filled with it,
    another row element by element in a loop LLVM leaves as it is (the vectorised nest of one
    loop reading ``src`` at steps was ~800 instructions for two axes)."""
    rank = _rank(shape)
    if not isinstance(src, types.Array) or rank != src.ndim or rank == 0:
        return None
    result = src.copy(layout="C", readonly=False)

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
        sizes = [context.cast(builder, size, kind, types.intp) for size, kind in
                 zip(cgutils.unpack_tuple(builder, args[1], count=rank), shape, strict=True)]
        out = _allocate(context, builder, result, sizes)
        source = make_array(src)(context, builder, value=args[0])
        steps = [builder.select(builder.icmp_signed("==", size, one), zero, stride)
                 for size, stride in zip(cgutils.unpack_tuple(builder, source.shape, rank),
                                         cgutils.unpack_tuple(builder, source.strides, rank),
                                         strict=True)]
        columns, step = sizes[-1], steps[-1]
        with _loop_nest(builder, sizes[:-1], intp, plain=True) as outer:
            at = [*outer, zero]
            read = cgutils.get_item_pointer2(context, builder, source.data, sizes, steps, "A", at)
            write = cgutils.get_item_pointer2(context, builder, out.data, sizes, out.strides,
                                              "C", at)
            with builder.if_else(builder.icmp_signed("==", step, zero)) as (fill, copy):
                with fill:
                    item = builder.load(read)
                    with cgutils.for_range(builder, columns, intp=intp) as column:
                        builder.store(item, builder.gep(write, [column.index]))
                with copy:
                    contiguous = builder.icmp_signed("==", step, out.itemsize)
                    with builder.if_else(contiguous, likely=True) as (whole, strided):
                        with whole:
                            cgutils.raw_memcpy(builder, write, read, columns, out.itemsize)
                        with strided, _loop_nest(builder, [columns], intp, plain=True) as (i,):
                            element = cgutils.pointer_add(builder, read, builder.mul(i, step))
                            builder.store(builder.load(element), builder.gep(write, [i]))
        return impl_ret_new_ref(context, builder, result, out.value)
    return result(src, shape), codegen


@intrinsic
def astype(typingctx, x, dtype):
    """``x.astype(dtype)``: a new array of ``dtype``, each element converted as Numba's method
    converts it, in ``x``'s order for a C or F array, else C (Numba's ``astype``: its array
    allocation is an overload its pipeline compiled in every program using the method, 0.15 s)."""
    element = _element(dtype)
    if not isinstance(x, types.Array) or element is None:
        return None
    result = x.copy(dtype=element, layout="F" if x.layout == "F" else "C", readonly=False)

    def codegen(context, builder, signature, args):
        return impl_ret_new_ref(context, builder, result,
                                _converted(context, builder, x, args[0], result))
    return result(x, dtype), codegen


def _converted(context, builder, x: types.Array, value, result: types.Array,
               plain: bool = False) -> ir.Value:
    """A new array of ``result``'s dtype and layout with the elements of ``value`` (of type
    ``x``) converted to it, one by one in index order (a C array of the same dtype as one
    memcpy; ``plain``: in loops LLVM leaves as they are): a reference the caller owns."""
    source = make_array(x)(context, builder, value=value)
    sizes = cgutils.unpack_tuple(builder, source.shape, count=x.ndim)
    strides = cgutils.unpack_tuple(builder, source.strides, count=x.ndim)
    out = _allocate(context, builder, result, sizes)
    if x.layout == result.layout == "C" and x.dtype == result.dtype:
        cgutils.raw_memcpy(builder, out.data, source.data, out.nitems, out.itemsize, align=1)
        return out.value
    with _loop_nest(builder, sizes, context.get_value_type(types.intp), plain) as indices:
        item = load_item(context, builder, x, cgutils.get_item_pointer2(
            context, builder, source.data, sizes, strides, x.layout, indices))
        store_item(context, builder, result, context.cast(builder, item, x.dtype, result.dtype),
                   cgutils.get_item_pointer2(context, builder, out.data, sizes, out.strides,
                                             result.layout, indices))
    return out.value


@contextlib.contextmanager
def _loop_nest(builder, sizes: list, intp: ir.Type, plain: bool) -> Iterator[tuple]:
    """``cgutils.loop_nest``; ``plain``: each loop's back edge tells LLVM not to vectorise or
    unroll it (a loop ID: a metadata node whose first operand is itself)."""
    if not sizes:
        yield ()
        return
    with cgutils.for_range(builder, sizes[0], intp=intp) as loop:
        with _loop_nest(builder, sizes[1:], intp, plain) as inner:
            yield (loop.index, *inner)
    if plain:
        latch = loop.index.incomings[-1][1]  # (the index phi: the entry's value, the latch's)
        loop_hints.mark(latch.terminator, loop_hints.PLAIN)


def _scalar_as_array(x: types.Type):
    element = types.unliteral(x)
    result = types.Array(element, 1, "C")

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        array = _allocate(context, builder, result, [ir.Constant(intp, 1)])
        item = context.cast(builder, args[0], x, element)
        builder.store(context.get_value_as_data(builder, element, item), array.data)
        return impl_ret_new_ref(context, builder, result, array.value)
    return result(x), codegen


def _c_contiguous(builder, sizes: list, strides: list, itemsize) -> ir.Value:
    """NumPy's C-contiguity: an empty array, or each axis longer than 1 strided by the product
    of the later sizes and the item size."""
    zero, one = (ir.Constant(itemsize.type, v) for v in (0, 1))
    ok, empty_, expected = cgutils.true_bit, cgutils.false_bit, itemsize
    for size, stride in zip(reversed(sizes), reversed(strides), strict=True):
        ok = builder.and_(ok, builder.or_(builder.icmp_signed("==", size, one),
                                          builder.icmp_signed("==", stride, expected)))
        empty_ = builder.or_(empty_, builder.icmp_signed("==", size, zero))
        expected = builder.mul(expected, size)
    return builder.or_(ok, empty_)


def c_copy(context, builder, x: types.Array, value, plain: bool = False) -> ir.Value:
    """Code making a new C-contiguous array with the elements of ``value`` (of type ``x``):
    a reference the caller owns (``plain``: see ``_converted``)."""
    return _converted(context, builder, x, value, x.copy(layout="C", readonly=False), plain)


@intrinsic
def flat_view(typingctx, x):
    """A C-contiguous array ``x`` as a 1-d view of its elements; the caller has tested
    ``x.flags.c_contiguous`` (or ``x`` is typed C). Numba's ``x.reshape(-1)`` validates the new
    shape in code (~200 LLVM instructions in every function that links it); this is a new
    array header only."""
    if not isinstance(x, types.Array):
        return None
    flat = types.Array(x.dtype, 1, "C", readonly=not x.mutable, aligned=x.aligned)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, flat, _flat(context, builder, x, flat, args[0]))
    return flat(x), codegen


@intrinsic
def copy_leading(typingctx, dst, src, count):
    """Writes the first ``count`` elements of ``src`` over ``dst``'s, both C-contiguous arrays
    of one dtype (typed C; the caller checked that both hold ``count``, and they do not
    overlap): one ``memcpy`` (a list's buffer grown)."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.layout == src.layout == "C" and dst.dtype == src.dtype
            and dst.mutable and isinstance(count, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        target, source = (make_array(t)(context, builder, value=v)
                          for t, v in ((dst, args[0]), (src, args[1])))
        cgutils.raw_memcpy(builder, target.data, source.data,
                           context.cast(builder, args[2], count, types.intp),
                           ir.Constant(intp, context.get_abi_sizeof(
                               context.get_data_type(dst.dtype))))
        return context.get_dummy_value()
    return types.none(dst, src, count), codegen


@intrinsic
def reshaped(typingctx, x, shape):
    """``x.reshape(shape)`` of a C-contiguous ``x`` (typed C): a view with C strides, one size of
    -1 standing for the size the others leave, with Numba's errors. Numba's reshape calls
    ``normalize_reshape_value``, a function of its own compiled in each process that compiles
    new code reshaping (~0.1 s, in 5 of the 47 realistic programs after ``--precompile``)."""
    if not (isinstance(x, types.Array) and x.layout == "C" and isinstance(shape, types.BaseTuple)
            and len(shape) and all(isinstance(t, types.Integer) for t in shape)):
        return None
    out_type = types.Array(x.dtype, len(shape), "C", readonly=not x.mutable, aligned=x.aligned)

    def codegen(context, builder, signature, args):
        source = make_array(x)(context, builder, value=args[0])
        intp = context.get_value_type(types.intp)
        sizes = [context.cast(builder, builder.extract_value(args[1], i), t, types.intp)
                 for i, t in enumerate(shape)]
        final = _inferred(context, builder, sizes, source.nitems, intp)
        strides = [source.itemsize]  # (NumPy's C strides: a size of 0 counts as 1)
        one = intp(1)
        for size in reversed(final[1:]):
            step = builder.select(builder.icmp_signed("==", size, intp(0)), one, size)
            strides.insert(0, builder.mul(strides[0], step))
        out = make_array(out_type)(context, builder)
        populate_array(out, data=source.data, shape=final, strides=strides,
                       itemsize=source.itemsize, meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, out_type, out._getvalue())
    return out_type(x, shape), codegen


def _inferred(context, builder, sizes: list, total, intp) -> list:
    """``sizes`` with a negative one replaced by ``total`` over the others' product; Numba's
    errors (``normalize_reshape_value``'s) where they do not fit ``total`` elements."""
    zero, one = intp(0), intp(1)
    known, negatives = one, zero
    for size in sizes:
        negative = builder.icmp_signed("<", size, zero)
        negatives = builder.add(negatives, builder.zext(negative, intp))
        known = builder.mul(known, builder.select(negative, one, size))
    unknown_zero = builder.icmp_signed("==", known, zero)
    divisor = builder.select(unknown_zero, one, known)
    inferred = builder.select(unknown_zero, zero, builder.sdiv(total, divisor))
    fits = builder.select(unknown_zero, builder.icmp_signed("==", total, zero),
                          builder.icmp_signed("==", builder.srem(total, divisor), zero))
    with cgutils.if_unlikely(builder, builder.icmp_signed(">", negatives, one)):
        context.call_conv.return_user_exc(builder, ValueError,
                                          ("multiple negative shape values",))
    none_negative = builder.icmp_signed("==", negatives, zero)
    fits = builder.select(none_negative, builder.icmp_signed("==", total, known), fits)
    with cgutils.if_unlikely(builder, builder.not_(fits)):
        context.call_conv.return_user_exc(builder, ValueError,
                                          ("total size of new array must be unchanged",))
    return [builder.select(builder.icmp_signed("<", size, zero), inferred, size)
            for size in sizes]


def _flat(context, builder, x: types.Array, flat: types.Array, value) -> ir.Value:
    """A 1-d header over the elements of the C-contiguous ``value`` (of type ``x``), sharing
    its data (a 0-d array: one element)."""
    fields = {name: direct_arrays.field(context, builder, x, value, name)
              for name in ("meminfo", "parent", "nitems", "itemsize", "data")}
    return direct_arrays.array_value(context, builder, flat, shape=[fields["nitems"]],
                                     strides=[fields["itemsize"]], **fields)
