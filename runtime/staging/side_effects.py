"""Python state changed by a staged branch, loop body or lazy operand: threaded, or refused.

A staged branch or loop body runs once (or a few times) at trace time, never at run time. A
``Watch`` snapshots the Python state the traced code can reach (``python_state``), records where
user code calls a mutating method (``append``, ``update``...) of a watched container, and after
each traced piece says what changed, then undoes it. Values assigned to existing places
(``self.count += 1``, ``d['a'] = x``, a ``nonlocal`` written by a called closure) are threaded
through the ``cond``/``while`` like variables by the callers; what cannot be threaded is a
``PythonSideEffectError`` naming the place and the staged statement: a list or set that grows or
shrinks (lists made state by the converter are tensor lists instead), keys or attributes that
appear on one path only, and a staged value that would be stored in an object that outlives the
call (reachable from the function's arguments, globals or closure: ``outlives_call``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
import sysconfig
import types
import warnings
from collections.abc import Callable, Iterable, Iterator

from autostage.runtime import tracing
from autostage.runtime.staging import errors, opaque_state, python_state
from autostage.runtime.staging.python_state import (
    ABSENT,
    Changes,
    Entry,
    PythonState,
    global_names,
)

_MUTATORS = frozenset((
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
    "setdefault", "popitem", "add", "discard", "__setitem__", "__delitem__", "__iadd__",
    "difference_update", "intersection_update", "symmetric_difference_update"))

_REACH_LIMIT = 200_000  # objects visited before "unknown" (treated as outliving the call)


class Watch:
    """The Python state reachable from ``fns`` and the ``named`` state values of a staged
    ``where`` ('if', 'while loop'...): ``changes()`` after each traced piece, ``restore()``.

    Inside ``recording()`` a profile hook notes where user code first calls a mutating method of
    a watched container, so that an error names that line as well as the staged statement.
    """

    def __init__(self, fns: Iterable[Callable | None], where: str,
                 named: Iterable[tuple[str, object]] = ()):
        self.where = where
        self.state = PythonState(fns, named)
        self.mutated_at: dict[int, object] = {}

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        with python_state.recording(self.state):
            try:
                yield from self._profiling()
            except ValueError as e:  # (a write into an array made read-only meanwhile)
                errors.refuse_read_only_write(e)
                raise

    def _profiling(self) -> Iterator[None]:
        ids = {id(o.obj) for o in self.state.owners if o.kind in ("list", "dict", "set")}
        previous = sys.getprofile()
        if not ids or (previous is not None and not callable(previous)):
            # (A profiler written in C runs, such as cProfile, whose object is no function to
            # chain to, and which a hook set here would replace: left alone; errors then name
            # the staged statement only.)
            yield
            return

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

    def changes(self) -> Changes:
        """What the code traced since the snapshot changed (the snapshot is not restored)."""
        return self.state.changes()

    def restore(self) -> None:
        try:
            self.state.restore()
        except opaque_state.Irreversible as e:
            raise errors.IrreversibleSideEffectError(
                f"the iterator '{e}' is advanced inside the staged {self.where}{errors.at()} "
                "(while autostage traced it, and it cannot be put back): staged code runs its "
                "Python code once, when it is traced, so every iteration or path would see the "
                "item read then. Read its items into a list before the loop, or iterate it with "
                "a for loop of its own") from None

    def check_loop(self, changes: Changes) -> None:
        """A loop body (or test) may change values, not what exists; a variable of the user's
        function first bound in the loop is carried as maybe-assigned (``loops``)."""
        for owner, moved in changes.structure:
            if owner.kind == "cell" and owner.before is ABSENT:
                continue
            self._refuse_structure(owner, moved, "is added or removed by")

    def check_branches(self, first: Changes, second: Changes) -> None:
        """Both paths of a staged if/and/or must leave the same keys, attributes and lengths."""
        mine = {id(o): (o, m) for o, m in first.structure}
        theirs = {id(o): (o, m) for o, m in second.structure}
        for key in mine.keys() | theirs.keys():
            owner, moved = mine.get(key) or theirs[key]
            if owner.kind in ("list", "set", "opaque") or key not in mine or key not in theirs or (
                    _shape_of(mine[key][1]) != _shape_of(theirs[key][1])):
                self._refuse_structure(owner, moved, "exists after one path only of")

    def _refuse_structure(self, owner, moved: list[Entry], how: str) -> None:
        if owner.kind == "opaque":
            self._refuse_opaque(owner)
        loc = self.mutated_at.get(id(owner.obj))
        if owner.kind in ("list", "set", "dict"):
            changed = (f" by the call{errors.at(loc)} inside the staged {self.where}"
                       f"{errors.at()}" if loc is not None else
                       f" inside the staged {self.where}{errors.at()}")
            kind = type(owner.obj).__name__
            advice = (
                f"Assign the container (and its keys) before the {self.where} and change it "
                "with append/pop/x[i] = (a list becomes a tensor list), or compute the value "
                "with NumPy" if owner.name.isidentifier() else
                f"Only a {kind} in a variable of its own is staged: give it a name before the "
                f"{self.where} (`values = []`), change that, and put it into its container "
                "after the loop, or compute the value with NumPy")
            raise errors.PythonSideEffectError(
                f"the Python {kind} '{owner.name}' is changed{changed}"
                f"{_which(moved)}; staged code runs at trace time, so the change would not "
                f"depend on the data. {advice}")
        what = moved[0].describe() if moved else f"'{owner.name}'"
        raise errors.PythonSideEffectError(
            f"{what} {how} the staged {self.where}{errors.at()}; staged code runs at trace "
            "time, so whether it exists cannot depend on the data: assign it before the "
            f"{self.where}")

    def _refuse_opaque(self, owner) -> None:
        kind = type(owner.obj).__name__
        if opaque_state.is_iterator(owner.obj):
            raise errors.PythonSideEffectError(
                f"the {kind} '{owner.name}' is advanced inside the staged {self.where}"
                f"{errors.at()}: staged code runs its Python code once, when it is traced, so "
                "every iteration or path would see the item read then. Iterate it with a for "
                "loop of its own, or index a list or array with the loop's counter")
        raise errors.PythonSideEffectError(
            f"the Python {kind} '{owner.name}' is changed inside the staged {self.where}"
            f"{errors.at()}: staged code runs at trace time, so the change would not depend "
            "on the data. Use a list assigned before it (changed with append/pop/x[i] =, it "
            "becomes a tensor list) or a NumPy array")

    def check_kept(self, entry: Entry, staged: bool) -> None:
        """A staged value may be stored only in an object made by the traced function."""
        if staged and entry.kind != "tensor" and outlives_call(entry.owner, entry.kind):
            raise errors.PythonSideEffectError(
                f"{entry.describe()} is assigned inside the staged {self.where}{errors.at()}, "
                "so its value depends on staged data, but it belongs to an object that "
                "outlives the call (reachable from the function's arguments, globals or "
                "closure), where a staged value cannot be stored. Return the value instead, or "
                "keep it in a variable or a container created inside the function")


def _shape_of(moved: list[Entry]) -> tuple:
    return tuple(e.ident for e in moved)


def _which(moved: list[Entry]) -> str:
    names = [e.name for e in moved[:3]]
    return f" ({', '.join(names)})" if names else ""


def outlives_call(owner: object, kind: str = "") -> bool:
    """Whether ``owner`` is reachable from what the traced function received (its arguments,
    its closure and the globals it names), rather than made while it runs. Unknown: True."""
    if kind == "global":
        return True
    roots = getattr(tracing.current(), "roots", None)
    if roots is None:
        return True
    target = id(owner)
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        x = stack.pop()
        if id(x) in seen or isinstance(x, _LEAVES):
            continue
        if id(x) == target:
            return True
        seen.add(id(x))
        if len(seen) > _REACH_LIMIT:
            return True
        stack.extend(_referents(x, library_globals=any(x is r for r in roots)))
    return False


_LEAVES = (str, bytes, int, float, complex, bool, type(None), range, type,
           types.BuiltinFunctionType)


_LIBRARY_DIRS = tuple(os.path.join(os.path.realpath(p), "") for p in {
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    os.path.dirname(tracing.__file__),  # autostage.runtime
    os.path.dirname(importlib.util.find_spec("autostage").origin)})


@functools.lru_cache(maxsize=4096)
def _is_library(filename: str) -> bool:
    """Whether code in ``filename`` is the standard library, an installed package or autostage.

    Their functions' globals are not user state: following them walked pytest's, argparse's and
    autostage's caches, so that the answer depended on what the process had run before (a
    function converted earlier made the walk pass its limit and a fresh cell "outlive the call").
    Their closures are still followed (a decorator's wrapper holds the user's function), and so
    are the globals of a traced function itself, wherever it lives (toolz and mpmath are
    converted by the differential suite)."""
    path = os.path.realpath(filename)
    return filename.startswith("<frozen") or path.startswith(_LIBRARY_DIRS)


def _referents(x: object, library_globals: bool = False) -> list:
    if isinstance(x, types.CellType):
        try:
            return [x.cell_contents]
        except ValueError:
            return []
    if isinstance(x, (list, tuple, set, frozenset)):
        return list(x)
    if isinstance(x, dict):
        return list(x.values())
    if isinstance(x, types.MethodType):
        return [x.__self__, x.__func__]
    if isinstance(x, types.FunctionType):
        found = list(x.__closure__ or ())
        if not library_globals and _is_library(x.__code__.co_filename):
            return found
        names = global_names(x.__code__)
        for name in names:
            value = x.__globals__.get(name, ABSENT)
            if isinstance(value, types.ModuleType):  # mod.NAME: the attributes the code names
                with warnings.catch_warnings():  # np.object, np.str...: FutureWarnings
                    warnings.simplefilter("ignore")
                    found += [getattr(value, n) for n in names if hasattr(value, n)]
            elif value is not ABSENT:
                found.append(value)
        return found
    if isinstance(x, types.ModuleType) or type(x).__module__.startswith("autostage.runtime"):
        return []
    d = getattr(x, "__dict__", None)
    return list(d.values()) if type(d) is dict else []
