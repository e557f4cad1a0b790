"""The typed-list operations of generated code, through functions compiled once per machine.

Numba compiles its typed-list implementations (``List.empty_list``, ``append``, item
assignment, ``len``, ``copy``, ``pop``) into each function that uses them, once per item type,
in every process that compiles a new function: a function appending to two lists and reading
an item took 1.0-1.2 s to compile, 0.47 s calling these (the realistic programs with lists
spent 0.4-0.7 s each on them). Called through these they are compiled once per item type and
loaded from Numba's disk cache after; LLVM inlines the small ones (``append``) when it links
them.

Reading an item stays inline in generated code (``lower_lists``): LLVM did not inline a call
of it, and a loop reading items ran 20-25% slower. It goes through ``size`` and ``item``,
intrinsics that write the list's length (``len(lst)`` in generated code too) and item reads in
line, instead of Numba's ``len`` and ``[]`` of a typed list: those are overloads Numba compiles
again in every process that compiles a function using them (0.1-0.25 s per item type;
intrinsics compile nothing of their own).

The functions themselves are written with intrinsics too (``_empty``, ``_append``, ``_set``,
``_delete``), which call the C functions of Numba's list (``numba_list_append``...) as Numba's
own implementations do: those implementations are overloads compiled by Numba's pipeline per
item type (for ``pop`` of a list of arrays 0.3 s, in the first program meeting that item type).
The list counts its items' references through the method table it gets when it is made, as
Numba's ``new_list`` makes it. ``put`` and ``pop`` check their index as Python does, with
Python's messages.

Generated modules import this module as ``cpu_list`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
from autostage.runtime.backends.cpu import numba_cache
from llvmlite import ir as llvm_ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.typed import listobject
from numba.typed.typedobjectutils import _container_get_data

# (Options of its own, not shared_helpers': Numba's cache of this module is keyed by this file.)
_JIT = dict(cache=True, error_model="numpy", nogil=True, no_cfunc_wrapper=True,
            no_cpython_wrapper=True)


@numba.njit(**_JIT)
def new(item_type):
    """An empty list of ``item_type`` (a Numba type)."""
    return _empty(item_type, 0)


@numba.njit(**_JIT)
def append(lst, item):
    if _append(lst, item) != 0:
        raise MemoryError("Unable to allocate memory to append item")


@numba.njit(**_JIT)
def put(lst, index, item):
    """``lst[index] = item``."""
    n = size(lst)
    if not -n <= index < n:
        raise IndexError("list assignment index out of range")
    _set(lst, index + n if index < 0 else index, item)


@numba.njit(**_JIT)
def pop(lst, index):
    n = size(lst)
    if not -n <= index < n:
        raise IndexError("pop index out of range")
    index = index + n if index < 0 else index
    popped = item(lst, index)
    _delete(lst, index)
    return popped


@numba.njit(**_JIT)
def pop_last(lst):
    n = size(lst)
    if n == 0:
        raise IndexError("pop from empty list")
    popped = item(lst, n - 1)
    _delete(lst, n - 1)
    return popped


@numba.njit(**_JIT)
def copy(lst):
    n = size(lst)
    copied = _empty_like(lst, n)
    for i in range(n):
        _append(copied, item(lst, i))
    return copied


def _list_function(builder, name: str, returns):
    """Numba's C function ``name`` of a typed list (its helper library, linked into Numba)."""
    function = cgutils.get_or_insert_function(
        builder.module, llvm_ir.FunctionType(returns, [cgutils.voidptr_t]), name)
    for attribute in ("alwaysinline", "readonly", "nounwind"):
        function.attributes.add(attribute)
    return function


def _length(context, builder, list_type, value):
    data = _container_get_data(context, builder, list_type, value)
    address = builder.call(_list_function(builder, "numba_list_size_address", cgutils.intp_t),
                           [data])
    return builder.load(builder.inttoptr(address, cgutils.intp_t.as_pointer()))


@intrinsic
def size(typingctx, lst):
    """``len(lst)`` of a typed list, in line."""
    if not isinstance(lst, types.ListType):
        return None

    def codegen(context, builder, sig, args):
        return _length(context, builder, lst, args[0])

    return types.int64(lst), codegen


@intrinsic
def item(typingctx, lst, index):
    """``lst[index]`` of a typed list, in line, for an index the caller checked to be in
    ``-len(lst) <= index < len(lst)``."""
    if not isinstance(lst, types.ListType) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        value, position = args
        position = context.cast(builder, position, index, types.intp)
        wrapped = builder.add(position, _length(context, builder, lst, value))
        position = builder.select(builder.icmp_signed("<", position, position.type(0)),
                                  wrapped, position)
        data = _container_get_data(context, builder, lst, value)
        base = builder.call(_list_function(builder, "numba_list_base_ptr", cgutils.voidptr_t),
                            [data])
        items = builder.bitcast(base, context.get_data_type(lst.item_type).as_pointer())
        model = context.data_model_manager[lst.item_type]
        result = model.load_from_data_pointer(builder, cgutils.gep(builder, items, position))
        context.nrt.incref(builder, lst.item_type, result)  # a new reference, as lst[index]
        return result

    return lst.item_type(lst, index), codegen


def _status_call(builder, name: str, arguments):
    """Numba's C list function ``name`` (returns a status, 0 when it succeeded)."""
    function = cgutils.get_or_insert_function(
        builder.module, llvm_ir.FunctionType(cgutils.int32_t, [a.type for a in arguments]), name)
    return builder.call(function, arguments)


def _new_list(context, builder, list_type, allocated):
    """A new list of ``list_type`` with room for ``allocated`` items, as Numba's ``new_list``
    makes it (its item references counted through the list's method table)."""
    item_type = list_type.item_type
    data = listobject._list_new_codegen(context, builder, item_type, allocated,
                                        listobject.ErrorHandler(context))
    listobject._list_codegen_set_method_table(context, builder, data, item_type)
    made = cgutils.create_struct_proxy(list_type)(context, builder)
    made.data = data
    listobject._add_meminfo(context, builder, made)
    return made._getvalue()


@intrinsic
def _empty(typingctx, item_type, allocated):
    """An empty list of the type ``item_type`` names, with room for ``allocated`` items."""
    if getattr(item_type, "instance_type", None) is None:
        return None
    list_type = types.ListType(item_type.instance_type)

    def codegen(context, builder, sig, args):
        return _new_list(context, builder, list_type, args[1])

    return list_type(item_type, types.intp), codegen


@intrinsic
def _empty_like(typingctx, lst, allocated):
    """An empty list of ``lst``'s type, with room for ``allocated`` items."""
    if not isinstance(lst, types.ListType):
        return None

    def codegen(context, builder, sig, args):
        return _new_list(context, builder, lst, args[1])

    return lst(lst, types.intp), codegen


def _item_bytes(context, builder, item_type, value):
    """A pointer to ``value`` as the list stores it (the C functions copy its bytes)."""
    stored = context.data_model_manager[item_type].as_data(builder, value)
    return builder.bitcast(cgutils.alloca_once_value(builder, stored), cgutils.voidptr_t)


@intrinsic
def _append(typingctx, lst, value):
    """Append ``value`` (the list takes a reference); the status of ``numba_list_append``."""
    if not isinstance(lst, types.ListType):
        return None

    def codegen(context, builder, sig, args):
        data = _container_get_data(context, builder, lst, args[0])
        return _status_call(builder, "numba_list_append",
                            [data, _item_bytes(context, builder, lst.item_type, args[1])])

    return types.int32(lst, lst.item_type), codegen


@intrinsic
def _set(typingctx, lst, index, value):
    """``lst[index] = value`` for an index in ``0 <= index < len(lst)`` (the list releases the
    item it held and takes a reference to ``value``)."""
    if not isinstance(lst, types.ListType) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        data = _container_get_data(context, builder, lst, args[0])
        position = context.cast(builder, args[1], index, types.intp)
        _status_call(builder, "numba_list_setitem",
                     [data, position, _item_bytes(context, builder, lst.item_type, args[2])])
        return context.get_dummy_value()

    return types.none(lst, index, lst.item_type), codegen


@intrinsic
def _delete(typingctx, lst, index):
    """``del lst[index]`` for an index in ``0 <= index < len(lst)``."""
    if not isinstance(lst, types.ListType) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        data = _container_get_data(context, builder, lst, args[0])
        position = context.cast(builder, args[1], index, types.intp)
        _status_call(builder, "numba_list_delitem", [data, position])
        return context.get_dummy_value()

    return types.none(lst, index), codegen


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
