"""Converted functions pickled by value: what a ``convert``-ed function that is not importable
(defined in ``__main__`` or inside a function) sends to a Dask or Ray worker.

cloudpickle pickles such a function's code by value but renames its file to
``<dynamic-code>``, so on the worker its source cannot be found and converted code is not
known as such. ``PortableFunction`` sends instead the user's function (pickled by value, for its
globals, closure and defaults) with the compiled code of its converted version (``marshal``: the
same Python version on both sides, as cloudpickle needs anyway) and its source map; and the same
for each function it calls by a global or closure name in its own module that this process has
converted or can convert. The worker rebuilds the converted functions from that code and seeds
the conversion cache with them: nothing is converted again, and the user's source is not needed.
"""

from __future__ import annotations

import marshal
import types
from collections.abc import Callable
from typing import Any

from autostage import calls, conversion
from autostage.pyct import loader


class PortableFunction:
    """Pickles as ``to_graph``'s ``wrapper`` of a converted function and unpickles as one."""

    __slots__ = ("wrapper",)

    def __init__(self, wrapper: Callable) -> None:
        self.wrapper = wrapper

    def __reduce__(self) -> tuple:
        original = self.wrapper.__wrapped__
        return _unpickled, (original, _converted_code(original))


def _converted_code(original: types.FunctionType) -> list[tuple]:
    """``(function, marshalled converted code, its GeneratedOrigin)`` for ``original`` and the
    user functions of its module it reaches by name, converted here if not yet (a function that
    does not convert is left out: the worker reports it where it is called, as here)."""
    parts, seen, todo = [], set(), [original]
    while todo:
        fn = todo.pop()
        if id(fn) in seen or not isinstance(fn, types.FunctionType):
            continue
        seen.add(id(fn))
        if fn is not original and (fn.__module__ != original.__module__
                                   or not calls.is_user_function(fn)):
            continue
        try:
            converted = conversion.convert_entity(fn)
        except Exception:  # noqa: BLE001 - left to the worker's converted_call, as said above
            continue
        parts.append((fn, marshal.dumps(converted.__code__), converted.__autostage_origin__))
        todo += _named_functions(fn)
    return parts


def _named_functions(fn: types.FunctionType) -> list[Any]:
    """The values of the globals and closure cells ``fn``'s code (nested code included) names."""
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    cells = [cell.cell_contents for cell in loader.cells_of(fn).values()
             if conversion.is_filled(cell)]
    return [fn.__globals__[name] for name in sorted(names) if name in fn.__globals__] + cells


def _unpickled(original: types.FunctionType, parts: list[tuple]) -> Callable:
    """The wrapper of ``original``'s converted function, rebuilt from its code; the functions it
    calls go into the conversion cache (their origins registered as they were unpickled)."""
    for fn, code, origin in parts:
        conversion.seed(fn, marshal.loads(code), origin)
    return conversion.wrap_converted(conversion.convert_entity(original), original)
