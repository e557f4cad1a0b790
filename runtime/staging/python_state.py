"""The Python state a staged branch, loop or lazy operand may change: find it, diff it, undo it.

A staged ``if`` traces both branches (a loop its body, several times) at trace time, so a change
one of them makes to a Python object (``self.count += 1``, ``d['a'] = x``, ``nonlocal n; n += 1``
in a called closure, ``global g``) would otherwise happen once, whatever the data, and leak
tensors of the branch's region. ``PythonState`` finds the objects such code can reach: the
closure cells and the globals the branch/loop functions name, the state variables, and one level
below each (attributes of objects, items of dicts and lists, the cells of functions they hold).
It snapshots them, reports what a traced piece of code changed as ``Entry`` objects (one
attribute, item, cell or global each; changes of structure, such as a key added or a list grown,
apart), and restores the snapshot, so that each branch and each loop trace starts from the same
Python state. ``control_flow`` and ``loops`` then thread the changed entries like variables.
A staged array that a staged call writes into (its tensor takes the call's final state of it:
``staged_calls``) is such state too: the call notes it (``note_write``) to every state being
recorded, which then watches that tensor's value like an entry.
"""

from __future__ import annotations

import contextlib
import functools
import io
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from autostage.runtime import tracing
from autostage.runtime.captures import unwrap
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.staging.opaque_state import (
    Irreversible,
    cannot_be_put_back,
    is_iterator,
    opaque_state,
    restore_opaque,
)
from autostage.runtime.tensor import Tensor

MAX_DEPTH = 8  # levels of objects looked into below the roots (d["a"]["b"]["c"] is 3)
MAX_OWNERS = 10_000
ABSENT = object()  # the value of an entry that does not exist (a key not in the dict...)

_ATOMS = (str, bytes, int, float, complex, bool, type(None), np.generic, np.ndarray, range,
          types.ModuleType, type, types.BuiltinFunctionType, Staged)
_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial)


def _own_dict(x: object) -> dict | None:
    """The attribute dict of a plain object whose attributes user code may assign, or None."""
    if isinstance(x, _ATOMS + _FUNCTIONS) or type(x).__module__.startswith("autostage"):
        return None
    d = getattr(x, "__dict__", None)
    return d if type(d) is dict else None


def reaches_irreversible(fns: Iterable[Callable | None], named: Iterable[tuple[str, object]]
                      ) -> bool:
    """Whether ``fns`` (a loop's functions) or the ``named`` values reach a generator or an
    iterator other than a sequence's: an attempt to stage the loop would advance it for good
    (``restore_opaque``)."""
    state = PythonState(fns, named, snapshot=False)
    return any(o.kind == "opaque" and cannot_be_put_back(o.obj) for o in state.owners)


class OutsideState:
    """The iterators and generators a traced function reaches (its globals, closure and what
    they hold, and the ``named`` ones: its arguments), and the attributes of its functions: one
    its code advances (changes) while traced would be advanced once per trace, not at every
    call (later calls would read nothing from it; a counter ``f.calls += 1`` would count
    traces; an iterator argument given again, the items of the first call)."""

    def __init__(self, fns: Iterable[Callable | None],
                 named: Iterable[tuple[str, object]] = ()):
        named = list(named)
        # a file argument (``fh.write(line)``: written once per trace) by its position; one
        # that has none (a terminal, a pipe: ``sys.stdout`` passed in) is ``unseen``: its
        # writes could not be seen (the caller refuses it before the trace runs)
        files = [(name, f, _position(f)) for name, f in named if isinstance(f, io.IOBase)
                 and not f.closed]
        self.files = [entry for entry in files if entry[2] is not None]
        self.unseen = [name for name, _, position in files if position is None]
        state = PythonState(fns, [(n, v) for n, v in named if not isinstance(v, io.IOBase)],
                            snapshot=False)
        self.owners = [o for o in state.owners if o.kind == "opaque" and (
            is_iterator(o.obj) or type(o.obj) is types.FunctionType)]  # (``f.calls += 1``)
        for owner in self.owners:
            owner.before = owner.contents()

    def advanced(self) -> list[str]:
        """What changed since (``the iterator 'it' is advanced``), each put back where it
        can be (a file written or read cannot be)."""
        moved = [f"the file '{name}' is written or read" for name, f, position in self.files
                 if _position(f) != position]
        for owner in self.owners:
            if owner.contents() != owner.before:
                moved.append(f"the iterator '{owner.name}' is advanced" if is_iterator(owner.obj)
                             else f"the attributes of the function '{owner.name}' are changed")
                try:
                    owner.restore()
                except Irreversible:
                    pass
        return moved


def _position(f: io.IOBase) -> int | None:
    """Where a seekable open file is (None for one that cannot say: a terminal, a pipe)."""
    try:
        return f.tell() if not f.closed and f.seekable() else None
    except (OSError, ValueError):
        return None


@dataclass(frozen=True, eq=False)
class Entry:
    """One place Python code can assign: ``kind`` is 'item' (dict/list), 'attr', 'cell',
    'global' (a key of a module's globals) or 'tensor' (the state of a staged array, which a
    staged call writing into its argument changes: ``staged_calls``); ``name`` is how the
    user's code spells it."""

    owner: object
    kind: str
    key: object
    name: str

    @property
    def ident(self) -> tuple:
        return (id(self.owner), self.kind, self.key)

    def get(self) -> object:
        if self.kind == "tensor":
            return Tensor(self.owner.value)
        if self.kind == "cell":
            try:
                return self.owner.cell_contents
            except ValueError:
                return ABSENT
        container = self.owner.__dict__ if self.kind == "attr" else self.owner
        if isinstance(container, list):
            return container[self.key] if self.key < len(container) else ABSENT
        return container.get(self.key, ABSENT)

    def set(self, value: object) -> None:
        if self.kind == "tensor":
            self.owner.value = value.value
            return
        if self.kind == "cell":
            if value is ABSENT:
                del self.owner.cell_contents
            else:
                self.owner.cell_contents = value
            return
        container = self.owner.__dict__ if self.kind == "attr" else self.owner
        if value is ABSENT:
            container.pop(self.key, None)
        else:
            container[self.key] = value

    def describe(self) -> str:
        if self.kind == "tensor":
            return f"the array '{self.name}'"
        if self.kind == "cell":
            return f"the variable '{self.name}' (shared with a nested function)"
        if self.kind == "global":
            return f"the global variable '{self.name}'"
        return f"'{self.name}'"


@dataclass(eq=False)
class _Owner:
    """A watched object and what it held when the snapshot was taken."""

    obj: object
    kind: str  # 'dict', 'list', 'set', 'attrs', 'cell', 'globals', 'tensor', 'opaque'
    name: str
    keys: tuple = ()  # for 'globals': the names watched
    before: object = None

    def contents(self) -> object:
        if self.kind == "opaque":
            return opaque_state(self.obj)
        if self.kind == "dict":
            return dict(self.obj)
        if self.kind == "list":
            return list(self.obj)
        if self.kind == "set":
            return set(self.obj)
        if self.kind == "attrs":
            return dict(self.obj.__dict__)
        if self.kind == "cell":
            return Entry(self.obj, "cell", None, self.name).get()
        if self.kind == "tensor":
            return self.obj.value
        return {k: self.obj.get(k, ABSENT) for k in self.keys}

    def structure(self, contents: object) -> object:
        """What must not differ for the entries to be threaded (keys, length, set items; all
        of an opaque object's state)."""
        if self.kind == "opaque":
            return contents
        if self.kind in ("dict", "attrs"):
            return tuple(contents)
        if self.kind == "list":
            return len(contents)
        if self.kind == "set":
            return frozenset(id(v) for v in contents)
        if self.kind == "globals":
            return tuple(k for k, v in contents.items() if v is ABSENT)
        return contents is ABSENT

    def entries(self, contents: object) -> Iterator[tuple[Entry, object]]:
        if self.kind in ("cell", "tensor"):
            yield Entry(self.obj, self.kind, None, self.name), contents
        elif self.kind == "list":
            for i, v in enumerate(contents):
                yield Entry(self.obj, "item", i, f"{self.name}[{i}]"), v
        elif self.kind == "dict":
            for k, v in contents.items():
                yield Entry(self.obj, "item", k, f"{self.name}[{k!r}]"), v
        elif self.kind == "attrs":
            for k, v in contents.items():
                yield Entry(self.obj, "attr", k, f"{self.name}.{k}"), v
        elif self.kind == "globals":
            for k, v in contents.items():
                yield Entry(self.obj, "global", k, k), v

    def restore(self) -> None:
        if self.kind == "opaque":
            restore_opaque(self.obj, self.before)
        elif self.kind == "dict":
            self.obj.clear()
            self.obj.update(self.before)
        elif self.kind == "list":
            self.obj[:] = self.before
        elif self.kind == "set":
            self.obj.clear()
            self.obj.update(self.before)
        elif self.kind == "attrs":
            d = self.obj.__dict__
            d.clear()
            d.update(self.before)
        elif self.kind == "cell":
            Entry(self.obj, "cell", None, self.name).set(self.before)
        elif self.kind == "tensor":
            self.obj.value = self.before
        else:
            for k, v in self.before.items():
                if v is ABSENT:
                    self.obj.pop(k, None)
                else:
                    self.obj[k] = v


@dataclass
class Changes:
    """What a traced piece of code changed: entries with their new values, owners whose
    structure changed (with the entries added or removed)."""

    values: dict[tuple, tuple[Entry, object]]
    structure: list[tuple[_Owner, list[Entry]]]

    def __bool__(self) -> bool:
        return bool(self.values or self.structure)


def global_names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names ``code`` and the functions nested in it may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= global_names(const)
    return names


class PythonState:
    """The Python objects reachable from ``fns`` and ``named`` values (see module doc)."""

    def __init__(self, fns: Iterable[Callable | None], named: Iterable[tuple[str, object]] = (),
                 snapshot: bool = True):
        self.owners: list[_Owner] = []
        self.arrays: list[tuple[str, np.ndarray]] = []  # NumPy arrays reachable (by name)
        self._seen: set[int] = set()
        trace = tracing.current()
        # the regions open as the state is taken: a tensor whose value is defined in one of
        # them existed before (one made by the traced code is its local state)
        self.outside = tuple(trace.regions) if trace is not None else ()
        roots: list[tuple[str, object]] = list(named)
        for fn in fns:
            roots += self._function(fn)
        level = roots  # the values of cells, globals and state variables
        for _ in range(MAX_DEPTH):  # then below them: self.count, d['a'], inc's cells...
            below: list[tuple[str, object]] = []
            for name, value in level:
                if isinstance(value, _FUNCTIONS):
                    below += self._function(value)
                elif len(self.owners) < MAX_OWNERS:
                    below += self._value(name, value)
            level = below
        for owner in self.owners if snapshot else ():
            owner.before = owner.contents()

    def _add(self, obj: object, kind: str, name: str, keys: tuple = ()) -> bool:
        key = id(obj) if kind != "globals" else (id(obj), keys)
        if key in self._seen:
            return False
        self._seen.add(key)
        self.owners.append(_Owner(obj, kind, name, keys))
        return True

    def _function(self, fn: object) -> list[tuple[str, object]]:
        """The cells and named globals of ``fn`` as owners; their contents, to look into."""
        if isinstance(fn, types.MethodType):
            return [("self", unwrap(fn.__self__)), *self._function(fn.__func__)]
        if isinstance(fn, functools.partial):
            # The operators hand on the rest of a comparison chain (``0 < n < f(log)``) as a
            # partial of the operator and the chain's operand functions: what those reach is
            # reached from here (the operator itself changes no user state).
            # (An iterator or generator it hands on is the operator's own: ``any(h < 0 for h in
            # xs)`` reads the rest of it in the staged ``or``'s lazy operand, which is how the
            # items after a staged one are read only where they are.)
            return [("an operand", a) for a in (*fn.args, *fn.keywords.values())
                    if not is_iterator(a)]
        code = getattr(fn, "__code__", None)
        if not isinstance(fn, types.FunctionType) or code is None:
            return []
        found = [(f"{fn.__name__}'s default", d) for d in (
            *(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())]
        if fn.__dict__ and self._add(fn, "opaque", fn.__name__):  # (``f.calls += 1``)
            found += [(f"{fn.__name__}.{k}", v) for k, v in fn.__dict__.items()]
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
            if self._add(cell, "cell", name):
                try:
                    found.append((name, cell.cell_contents))
                except ValueError:  # an empty cell: the variable is not bound yet
                    pass
        namespace = fn.__globals__
        if namespace.get("__name__", "").partition(".")[0] == "autostage":
            # autostage's own wrappers (custom_gradient's, checkpoint's) hold the user's
            # functions in their cells; their globals are autostage's caches, which tracing
            # itself changes (a converted grad_fn's entry in calls._decisions, dropped when the
            # function dies), never user state
            return found
        names = tuple(sorted(n for n in global_names(code) if n in namespace and not isinstance(
            namespace[n], (types.ModuleType, type))))
        if names and self._add(namespace, "globals", "", names):
            found += [(n, namespace[n]) for n in names]
        # (the user's classes it names: their attributes are state too, ``K.n += 1``)
        found += [(n, namespace[n]) for n in sorted(global_names(code))
                  if isinstance(namespace.get(n), type) and opaque_state(namespace[n]) is not None]
        return found

    def _value(self, name: str, x: object) -> list[tuple[str, object]]:
        """``x`` as an owner (a container or a plain object); its items/attributes."""
        x = unwrap(x)  # the user's object itself, not the stand-in that records reads
        if isinstance(x, _FUNCTIONS):
            return [(name, x)]
        if isinstance(x, tuple):
            return [(f"{name}[{i}]", v) for i, v in enumerate(x)]

        if type(x) is np.ndarray:  # (a trace-time array: written in place, refused)
            self.arrays.append((name, x))
            return []
        if opaque_state(x) is not None:
            if self._add(x, "opaque", name) and isinstance(x, type):
                return [(f"{name}.{k}", v) for k, v in vars(x).items() if not k.startswith("__")]
            return []
        if isinstance(x, (list, dict, set)):
            kind = "list" if isinstance(x, list) else "dict" if isinstance(x, dict) else "set"
            if not self._add(x, kind, name) or kind == "set":
                return []
            items = enumerate(x) if kind == "list" else x.items()
            return [(f"{name}[{k!r}]", v) for k, v in items]
        d = _own_dict(x)
        if d is None or not self._add(x, "attrs", name):
            return []
        return [(f"{name}.{k}", v) for k, v in d.items()]

    def watch_tensor(self, tensor: Tensor, name: str) -> None:
        """A staged call is about to write into ``tensor`` (``note_write``): if it existed
        before this state was taken, its state as it is now is what ``restore`` puts back."""
        if tensor.value.region in self.outside and self._add(tensor, "tensor", name):
            self.owners[-1].before = tensor.value

    def changes(self) -> Changes:
        """What changed since the snapshot (by identity of the values)."""
        values: dict[tuple, tuple[Entry, object]] = {}
        structure = []
        for owner in self.owners:
            now = owner.contents()
            if owner.structure(now) != owner.structure(owner.before):
                before = {e.ident for e, _ in owner.entries(owner.before)}
                after = {e.ident: e for e, _ in owner.entries(now)}
                moved = [e for i, e in after.items() if i not in before] + [
                    e for e, _ in owner.entries(owner.before) if e.ident not in after]
                structure.append((owner, moved))
            old = {e.ident: v for e, v in owner.entries(owner.before)}
            for entry, value in owner.entries(now):
                if old.get(entry.ident, ABSENT) is not value:
                    values[entry.ident] = (entry, entry.get() if entry.kind == "tensor"
                                           else value)
        return Changes(values, structure)

    def restore(self) -> None:
        """Puts back what every watched object held at the snapshot (``Irreversible``: one,
        a generator, could not be put back; the others are)."""
        lost = None
        for owner in self.owners:
            try:
                owner.restore()
            except Irreversible as e:
                lost = lost or (owner, e)
        if lost is not None:
            raise Irreversible(lost[0].name) from None


_recording = threading.local()  # .states: the PythonStates recording now, innermost last


@contextlib.contextmanager
def recording(state: PythonState) -> Iterator[None]:
    """While a staged branch or loop body watched by ``state`` is traced. The NumPy arrays it
    reaches are read-only meanwhile: Python code writing into one (``d['a'][0] += 1``,
    ``np.add(a, 1, out=a)``, ``self.counts[b] += 1``) would write once, at trace time, whatever
    the data; it fails at the write instead (``read_only_write``)."""
    states = _recording.__dict__.setdefault("states", [])
    protected = _recording.__dict__.setdefault("protected", [])
    states.append(state)
    mine = [(name, a) for name, a in state.arrays if a.flags.writeable]
    for _, a in mine:
        a.flags.writeable = False
    protected.extend(mine)
    try:
        yield
    finally:
        states.pop()
        del protected[len(protected) - len(mine):]
        for _ in range(2):  # (a view after its base: its flag can be set once the base's is)
            for _, a in reversed(mine):
                if not a.flags.writeable:
                    try:
                        a.flags.writeable = True
                    except ValueError:
                        pass


_READ_ONLY = ("assignment destination is read-only", "output array is read-only",
              "array is read-only", "is not writeable")


def read_only_write(e: BaseException) -> list[str] | None:
    """The names of the arrays ``recording`` made read-only, if ``e`` is NumPy's error for a
    write into a read-only array raised while any are (else None). Only a string message is
    read: the user's ``ValueError(f"size {x.shape[0]}")`` holds a staged text, whose str()
    is an error (filterpy's sigma points check their argument so, beside array attributes)."""
    protected = getattr(_recording, "protected", ())
    if not protected or not isinstance(e, ValueError) or not e.args or not isinstance(
            e.args[0], str) or not any(text in e.args[0] for text in _READ_ONLY):
        return None
    return [name for name, _ in protected]


def note_write(tensor: Tensor, name: str) -> None:
    """A staged call writes into the array ``tensor`` stands for (``staged_calls``): every
    branch or loop body being traced around it watches that tensor's state from now on."""
    for state in getattr(_recording, "states", ()):
        state.watch_tensor(tensor, name)
