"""Detects Python containers changed by a staged branch or loop body while it is traced.

A staged branch or loop body runs once (or a few times) at trace time, never at run time, so a
change it makes to a Python list, dict or set it captured (``seen.extend([x])``, ``d[k] = x``)
would happen regardless of the data, a silently different result. ``Watch`` snapshots the
containers in the closures (and the globals read) of the branch/loop functions and raises
``PythonSideEffectError`` naming the variable and the staged statement if one changed. Lists
made state by the converter (``append``, ``pop``, ``x[i] =``) are tensor lists instead.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator

from autostage.runtime import tracing
from autostage.runtime.staging import errors


def _snapshot(x: object) -> object:
    if isinstance(x, list):
        return [id(v) for v in x]
    if isinstance(x, dict):
        return [(k, id(v)) for k, v in x.items()]
    return sorted(id(v) for v in x)


def _global_names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the functions nested in it may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _captured(fns: Iterable[Callable | None]) -> dict[int, tuple[str, object]]:
    found = {}
    for fn in fns:
        code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
        if code is None:
            continue
        namespace = getattr(fn, "__globals__", {})
        for name in _global_names(code):
            x = namespace.get(name)
            if isinstance(x, (list, dict, set)):
                found[id(x)] = (name, x)
        for name, cell in zip(code.co_freevars, cells or (), strict=True):
            try:
                x = cell.cell_contents
            except ValueError:  # an empty cell: the variable is not bound yet
                continue
            if isinstance(x, (list, dict, set)):
                found[id(x)] = (name, x)
    return found


_MUTATORS = frozenset((
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
    "setdefault", "popitem", "add", "discard", "__setitem__", "__delitem__", "__iadd__",
    "difference_update", "intersection_update", "symmetric_difference_update"))


class Watch:
    """Snapshots of the containers captured by ``fns``; ``check()`` compares them.

    Inside ``recording()`` (around the traced branch/loop functions) a profile hook notes where
    user code first calls a mutating method (``append``, ``update``...) of a watched container,
    so that the error names that line; other changes (``d[k] = v``) name the staged statement.
    """

    def __init__(self, fns: Iterable[Callable | None], where: str):
        self.where = where
        self.watched = [(name, x, _snapshot(x)) for name, x in _captured(fns).values()]
        self.mutated_at: dict[int, object] = {}

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        if not self.watched:
            yield
            return
        ids = {id(x) for _, x, _ in self.watched}
        previous = sys.getprofile()

        def profile(frame: types.FrameType, event: str, arg: object) -> None:
            if event == "c_call":
                owner = getattr(arg, "__self__", None)
                if id(owner) in ids and getattr(arg, "__name__", "") in _MUTATORS \
                        and id(owner) not in self.mutated_at:
                    self.mutated_at[id(owner)] = tracing.frame_location(frame)
            if previous is not None:
                previous(frame, event, arg)

        sys.setprofile(profile)
        try:
            yield
        finally:
            sys.setprofile(previous)

    def check(self) -> None:
        for name, x, before in self.watched:
            if _snapshot(x) != before:
                loc = self.mutated_at.get(id(x))
                changed = (f" by the call{errors.at(loc)} inside the staged {self.where}"
                           f"{errors.at()}" if loc is not None else
                           f" inside the staged {self.where}{errors.at()}")
                raise errors.PythonSideEffectError(
                    f"the Python {type(x).__name__} {name!r} is changed{changed}; staged code "
                    "runs at trace time, so the change would not depend on the data. Assign the "
                    f"container before the {self.where} and change it with append/pop/x[i] = "
                    "(it becomes a tensor list), or compute the value with NumPy")
