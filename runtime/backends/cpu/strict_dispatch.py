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

A call whose every parameter is a scalar the caller tests by its exact type (a model's 0-d
weights) needs no typing at all: ``scalar_entry`` gives the compiled signature's own entry
point, Numba's wrapper that unboxes and runs (~35 ns less per argument than the dispatcher).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba


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


def scalar_entry(dispatcher: Any, values: Sequence[Any]) -> Callable[..., Any] | None:
    """The entry point of ``dispatcher``'s compiled signature for ``values``, when every one is
    a number or bool (Numba's entry unboxes each by its parameter's type without testing it:
    the caller must pass values of exactly these types); None otherwise."""
    signature = tuple(dispatcher.typeof_pyval(v) for v in values)
    if not all(isinstance(t, (numba.types.Number, numba.types.Boolean)) for t in signature):
        return None
    compiled = dispatcher.overloads.get(signature)
    return None if compiled is None else compiled.entry_point
