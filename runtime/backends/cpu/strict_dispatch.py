"""A copy of a compiled entry function's dispatcher that never compiles, for the call fast path.

Numba's dispatcher types every argument before it runs (dtype, rank, layout, writability), and
compiles another specialisation for types it has not seen. The fast path (``fast_calls``) must
not let it compile one: the generated code is typed for the trace's dtypes, and Numba's typing
of another dtype is not NumPy's. So it tested each array's dtype and rank itself, work Numba
then did again (~40 ns per array, a fifth of a ten-array call). ``strict(dispatcher)`` holds the
same compiled code with compilation off: for arguments of another type it raises ``Refused``
(the fast path returns its miss) instead of compiling. Numba then converts arrays only where it
is safe (C or F layout to A, writable to read-only), never across dtypes or ranks; it does
convert between scalar types, unsafely too (float64 to a float32 parameter), so scalars stay the
caller's to test.

A caller that tests every argument itself needs no typing at all: ``compiled_entry`` gives the
compiled signature's own entry point, Numba's wrapper that unboxes and runs (~35 ns less per
argument than the dispatcher), with what each argument must be. The Python fast path calls it
when every parameter is a scalar (a model's 0-d weights, tested by their exact types); the C
level of a call (``call_slot``) for arrays too, testing their flags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
from autostage.runtime import call_slot
from autostage.runtime.backends.cpu import llvm_worker


class Refused(Exception):
    """The arguments match no compiled signature of a strict dispatcher."""


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise Refused


def strict(dispatcher: Any) -> tuple[Any, Callable[[], None]]:
    """A dispatcher with ``dispatcher``'s compiled signatures that raises ``Refused`` where
    ``dispatcher`` would compile, and ``catch_up()``, which gives it the signatures
    ``dispatcher`` compiled since (another layout, compiled on the full path)."""
    copy = type(dispatcher)(dispatcher.py_func, locals=dispatcher.locals,
                            targetoptions=dispatcher.targetoptions)

    def catch_up() -> None:
        for signature, compiled in list(dispatcher.overloads.items()):
            if signature not in copy.overloads:
                copy.add_overload(compiled)

    catch_up()
    copy.disable_compile()
    # Numba's C dispatcher calls these methods, looked up on the object, when nothing matches
    # and when several signatures match equally well (a Fortran-ordered array where both a
    # writable and a read-only layout-A signature were compiled): the full path compiles one.
    copy._explain_matching_error = _refuse
    copy._explain_ambiguous = _refuse
    return copy, catch_up


def compiled_entry(dispatcher: Any, values: Sequence[Any]
                   ) -> tuple[Callable[..., Any], list[tuple[int, int] | None]] | None:
    """The entry point of ``dispatcher``'s compiled signature for ``values``, and for each
    value what it must be for that entry: None for a number or bool (of exactly its type, which
    the caller tests), for an array ``(mask, wanted)`` of NumPy's flags (its layout, alignment
    and writability, which Numba's typing tells signatures apart by; its dtype and rank the
    caller tests). None when that signature is not compiled or a value is of another kind.
    Numba's entry unboxes each value by its parameter's type without testing it."""
    signature = tuple(dispatcher.typeof_pyval(v) for v in values)
    compiled = dispatcher.overloads.get(signature)
    if compiled is None:
        return None
    flags = []
    for kind in signature:
        if isinstance(kind, (numba.types.Number, numba.types.Boolean)):
            flags.append(None)
        elif isinstance(kind, numba.types.Array) and kind.layout in "CFA":
            layout = {"C": call_slot.C_CONTIGUOUS, "F": call_slot.F_CONTIGUOUS, "A": 0}[
                kind.layout]
            mask = layout | call_slot.ALIGNED | call_slot.WRITEABLE
            flags.append((mask, layout | call_slot.ALIGNED * kind.aligned
                          | call_slot.WRITEABLE * kind.mutable))
        else:
            return None
    return llvm_worker.resolved(compiled.entry_point), flags

