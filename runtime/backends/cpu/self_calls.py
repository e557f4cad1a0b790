"""Native self-recursion without Numba's recursive type inference (imported by generated code).

Numba types a function's call to itself by resuming type inference of the partial function
at each such call (``typeinfer.return_types_from_partial``): the TreeLSTM's node function took
7.3 s to compile against ~1 s for the same body without the recursion, and code typed that way
crashes when loaded from Numba's disk cache (numba#6061). The IR already knows every result
type, so a generated self-call goes through the two intrinsics ``self_call`` makes instead:

- ``recurse(own, args)``: typed from the declared results, lowered as a direct call of the
  native function being compiled. ``own`` is the function's own parameters: their types are
  the specialisation being compiled, and ``args`` must convert to them (a contiguous array
  where the parameter is layout 'A'). Arguments that do not (a strided slice passed where the
  parameter is contiguous) call the specialisation for their own types through the function's
  dispatcher instead, whose self-calls are direct again.
- ``returns(values)``: the function's return value cast to the declared type, so that the
  callers' assumption holds. Arrays are declared with layout 'A' (every layout converts to it);
  a read-only array (a folded constant) is returned as a copy, as the interpreter would.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numba import types
from numba.core import cgutils, errors
from numba.core.typeconv import Conversion
from numba.extending import intrinsic


def self_call(namespace: dict, name: str, *results: tuple) -> tuple[Callable, Callable]:
    """The ``recurse`` and ``returns`` intrinsics of the generated function ``name`` (looked up
    in ``namespace``, the generated module's globals, when a call needs its dispatcher), whose
    results are arrays or scalars of the given (dtype, ndim), or typed lists of them (dtype,
    ndim, "list")."""
    declared = types.Tuple(tuple(_declared(*spec) for spec in results))

    def call_self(context, builder, sig, llargs):
        own, args = sig.args
        values = cgutils.unpack_tuple(builder, llargs[1], len(args))
        values = [context.cast(builder, v, a, o) for v, a, o in zip(values, args, own, strict=True)]
        status, result = context.call_conv.call_function(
            builder, builder.function, declared, own.types, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result

    def call_other(callee: object) -> Callable:
        def lower(context, builder, sig, llargs):
            values = cgutils.unpack_tuple(builder, llargs[1], len(sig.args[1]))
            return context.get_function(callee[0], callee[1])(builder, values)
        return lower

    @intrinsic
    def recurse(typingctx, own, args):
        frame = typingctx.callstack[0]
        dispatcher = namespace[name]
        if frame.func_id.func is not dispatcher.py_func or tuple(frame.args) != tuple(own):
            raise errors.TypingError(f"autostage: {name}'s self-call is typed outside {name}")
        if all(_passes(typingctx, a, o) for a, o in zip(args, own, strict=True)):
            return declared(own, args), call_self
        # another specialisation (a strided array where this one is contiguous, an int where
        # this one was specialised on a literal)
        callee = types.Dispatcher(dispatcher)
        signature = typingctx.resolve_function_type(callee, tuple(args), {})
        if signature is None:
            raise errors.TypingError(f"autostage: {name} cannot be called with {args}")
        return signature.return_type(own, args), call_other((callee, signature))

    @intrinsic
    def returns(typingctx, values):
        if len(values) != len(declared):
            raise errors.TypingError(f"autostage: {name} returns {values}, not {declared}")
        for got, want in zip(values, declared, strict=True):
            if not _returnable(got, want):
                raise errors.TypingError(f"autostage: {name} returns {got} where its IR "
                                         f"declares {want}")

        def lower(context, builder, sig, llargs):
            items = cgutils.unpack_tuple(builder, llargs[0], len(declared))
            out = [_owned(context, builder, got, want, item)
                   for got, want, item in zip(values, declared, items, strict=True)]
            return context.make_tuple(builder, declared, out)
        return declared(values), lower

    recurse.direct_refuses = True  # typed from Numba's call stack: ``direct`` has none
    return recurse, returns


def _declared(dtype: str, ndim: int, kind: str = "tensor") -> types.Type:
    """A tensor, or (``kind="list"``) a typed list of them as lower_control.list_item_type
    makes it."""
    scalar = numba.from_dtype(np.dtype(dtype))
    item = scalar if ndim == 0 else types.Array(scalar, ndim, "A")
    return types.ListType(item) if kind == "list" else item


def _passes(typingctx, arg: types.Type, param: types.Type) -> bool:
    """Whether ``arg`` can be passed as ``param`` unchanged: the same type, or an array of a
    layout that converts (never a value cast, never a literal parameter)."""
    if arg == param:
        return True
    return (isinstance(param, types.Array) and isinstance(arg, types.Array)
            and typingctx.can_convert(arg, param) == Conversion.safe)


def _returnable(got: types.Type, want: types.Type) -> bool:
    if isinstance(want, types.Array):
        return isinstance(got, types.Array) and (got.dtype, got.ndim) == (want.dtype, want.ndim)
    return got == want


def _owned(context, builder, got: types.Type, want: types.Type, value):
    """A new reference to ``value`` as type ``want`` (read-only arrays copied)."""
    if isinstance(got, types.Array) and not got.mutable:
        fresh = types.Array(got.dtype, got.ndim, "C")
        copied = context.compile_internal(builder, lambda a: a.copy(), fresh(got), [value])
        return context.cast(builder, copied, fresh, want)
    context.nrt.incref(builder, got, value)
    return context.cast(builder, value, got, want)
