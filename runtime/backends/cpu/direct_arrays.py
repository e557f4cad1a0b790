"""Array attributes and elements in ``direct``'s lowering, read from the array's value in line.

Numba's implementations of ``a.shape`` and ``a[i, j]`` first copy the array's structure into a
stack slot (a "struct proxy": an ``alloca``, a store of zeros, a store of the value) and read
each field back through pointers, once per use; an element read with two indices emitted ~50
LLVM instructions, of which LLVM's first passes then removed all but ~12. In generated code
(shape checks and element-wise loops on every line) that was most of a function's IR: the GRU
encoder's entry had 8,000 lines before optimisation, and LLVM's function passes, which clean it
up, were its largest LLVM cost. Here the fields are extracted from the value, and the element's
address computed by Numba's own functions on them (``fix_integer_index``: negative indices
counted from the end; ``get_item_pointer2``: the address by layout; the bounds check when
Numba's is on), so the result is the same code without the round trip through memory.

Only what these cover is taken here (an array's ``shape``, ``strides`` and ``size``; one
element of an array by integer indices, one per dimension, of a numeric or boolean dtype; a row,
``a[i]`` of an array of two or more dimensions, the view Numba's basic indexing makes, built as
one value: 80-100 instructions through Numba's, ~15 here); anything else (slices, records) goes
to Numba's implementations.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.np import arrayobj

# The array attributes read from the array's fields, by field name.
_FIELDS = {"shape": "shape", "strides": "strides", "size": "nitems"}


def attribute(context, builder, array_type: types.Type, value, name: str) -> object | None:
    """``value.name`` for an array ``value``, or None where Numba's implementation is needed."""
    read = _FIELDS.get(name)
    if read is None or not isinstance(array_type, types.Array) or array_type.ndim == 0:
        return None
    return field(context, builder, array_type, value, read)


def element_type(array_type: types.Type, index_types: tuple) -> bool:
    """Whether ``array[indices]`` of these types is one element this module reads and writes."""
    return (isinstance(array_type, types.Array) and len(index_types) == array_type.ndim > 0
            and isinstance(array_type.dtype, (types.Number, types.Boolean))
            and all(isinstance(t, types.Integer) for t in index_types))


def element_pointer(context, builder, array_type: types.Array, value, index_types: tuple,
                    indices: list) -> object:
    """The address of ``value[indices]`` (``element_type``), as Numba's basic indexing
    computes it."""
    ndim = array_type.ndim
    shapes = cgutils.unpack_tuple(builder, field(context, builder, array_type, value, "shape"),
                                  ndim)
    strides = cgutils.unpack_tuple(
        builder, field(context, builder, array_type, value, "strides"), ndim)
    fixed = []
    for axis, (index_type, index) in enumerate(zip(index_types, indices, strict=True)):
        index = arrayobj.fix_integer_index(context, builder, index_type, index, shapes[axis])
        if context.enable_boundscheck:
            cgutils.do_boundscheck(context, builder, index, shapes[axis], axis)
        fixed.append(index)
    data = field(context, builder, array_type, value, "data")
    return cgutils.get_item_pointer2(context, builder, data, shapes, strides, array_type.layout,
                                     fixed, wraparound=False, boundscheck=False)


def row_type(array_type: types.Type, index_type: types.Type, result_type: types.Type) -> bool:
    """Whether ``array[index]`` of these types is a row this module makes: one integer index into
    an array of numbers or booleans with two or more dimensions, typed as the array of one
    dimension fewer."""
    return (isinstance(array_type, types.Array) and array_type.ndim >= 2
            and isinstance(array_type.dtype, (types.Number, types.Boolean))
            and isinstance(index_type, types.Integer) and isinstance(result_type, types.Array)
            and result_type.ndim == array_type.ndim - 1 and result_type.dtype == array_type.dtype)


def row(context, builder, array_type: types.Array, value, index_type: types.Integer, index,
        result_type: types.Array) -> object:
    """The view ``value[index]`` (``row_type``), as Numba's basic indexing and ``make_view``
    build it: the row's address, the array's other sizes and strides, its meminfo and parent."""
    ndim = array_type.ndim
    shapes = cgutils.unpack_tuple(builder, field(context, builder, array_type, value, "shape"),
                                  ndim)
    strides = cgutils.unpack_tuple(
        builder, field(context, builder, array_type, value, "strides"), ndim)
    index = arrayobj.fix_integer_index(context, builder, index_type, index, shapes[0])
    if context.enable_boundscheck:
        cgutils.do_boundscheck(context, builder, index, shapes[0], 0)
    zero = context.get_constant(types.intp, 0)
    data = cgutils.get_item_pointer2(
        context, builder, field(context, builder, array_type, value, "data"), shapes, strides,
        array_type.layout, [index] + [zero] * (ndim - 1), wraparound=False, boundscheck=False)
    nitems = context.get_constant(types.intp, 1)
    for size in shapes[1:]:
        nitems = builder.mul(nitems, size, flags=["nsw"])
    own = {name: field(context, builder, array_type, value, name)
           for name in ("meminfo", "parent", "itemsize")}
    return array_value(context, builder, result_type, data=data, shape=shapes[1:],
                       strides=strides[1:], nitems=nitems, **own)


def array_value(context, builder, array_type: types.Array, **fields) -> object:
    """The value of an array of ``array_type`` with these fields (``shape`` and ``strides`` as
    lists of intp values), built in registers: Numba's ``make_array`` and ``populate_array``
    build it in a stack slot, field by field, and load it back."""
    intp = context.get_value_type(types.intp)
    value = context.get_value_type(array_type)(None)
    for field, item in fields.items():
        if field in ("shape", "strides"):
            item = cgutils.pack_array(builder, item, intp)
        value = builder.insert_value(value, item, _position(context, array_type, field))
    return value


def field(context, builder, array_type: types.Array, value, name: str) -> object:
    """The field ``name`` of the array ``value`` (``data``, ``nitems``, ``shape``...)."""
    return builder.extract_value(value, _position(context, array_type, name))


def load(context, builder, array_type: types.Array, pointer) -> object:
    return arrayobj.load_item(context, builder, array_type, pointer)


def store(context, builder, array_type: types.Array, item, item_type: types.Type,
          pointer) -> None:
    item = context.cast(builder, item, item_type, array_type.dtype)
    arrayobj.store_item(context, builder, array_type, item, pointer)


def _position(context, array_type: types.Array, field: str) -> int:
    return context.data_model_manager[array_type].get_field_position(field)
