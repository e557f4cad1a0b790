"""The typed-list operations of generated code, through functions compiled once per machine.

Numba compiles its typed-list implementations (``List.empty_list``, ``append``, item
assignment, ``len``, ``copy``, ``pop``) into each function that uses them, once per item type,
in every process that compiles a new function: a function appending to two lists and reading
an item took 1.0-1.2 s to compile, 0.47 s calling these (the realistic programs with lists
spent 0.4-0.7 s each on them). Called through these they are compiled once per item type and
loaded from Numba's disk cache after; LLVM inlines the small ones (``append``, ``length``)
when it links them.

Reading an item stays inline in generated code (``lower_lists``): LLVM did not inline a call
of it, and a loop reading items ran 20-25% slower. It goes through ``size`` and ``item``,
intrinsics that write the list's length and item reads in line, instead of Numba's ``len`` and
``[]`` of a typed list: those are overloads Numba compiles again in every process that compiles
a function using them (0.1-0.25 s per item type; intrinsics compile nothing of their own).
``put`` and ``pop`` check their index as Python does, with Python's messages, before Numba's own
code (whose messages differ).

Generated modules import this module as ``cpu_list`` (``hashed_import``: its source hash is part
of theirs, so their cached code is dropped when it changes).
"""

from __future__ import annotations

import sys

import numba
import numpy as np
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
    """An empty list of ``item_type`` (a Numba type): ``List.empty_list``'s own implementation
    called directly (through ``empty_list``, an overload compiled twice per item type by
    Numba's pipeline, 0.1-0.2 s per program meeting a new item type)."""
    return listobject.new_list(item_type)


@numba.njit(**_JIT)
def append(lst, item):
    lst.append(item)


@numba.njit(**_JIT)
def put(lst, index, item):
    """``lst[index] = item``."""
    if not -len(lst) <= index < len(lst):
        raise IndexError("list assignment index out of range")
    lst[index] = item


@numba.njit(**_JIT)
def pop(lst, index):
    if not -len(lst) <= index < len(lst):
        raise IndexError("pop index out of range")
    return lst.pop(index)


@numba.njit(**_JIT)
def pop_last(lst):
    if len(lst) == 0:
        raise IndexError("pop from empty list")
    return lst.pop()


@numba.njit(**_JIT)
def length(lst):
    return np.int64(len(lst))


@numba.njit(**_JIT)
def copy(lst):
    return lst.copy()


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


numba_cache.tie_data_files(sys.modules[__name__])  # content-named, private files
