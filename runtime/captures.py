"""What a staged function reaches through objects: read at each call, or guarded.

A trace may read through the objects it is given: attributes of ``self`` or of a constant
argument, items of a global dict or list, attributes of an object in a closure cell. Python reads
them at each call, so a trace must too. While tracing, such objects are replaced by *stand-ins*
(``ObjectProxy``, ``DictProxy``, ``SequenceProxy``) that record every read as a ``Path`` from a
root (an argument leaf, the bound ``self``, a global or closure cell) through attribute and item
steps:

* a NumPy array or scalar read is *captured*: an implicit parameter of the trace, read again
  along its path at each call (by reference: in-place changes are seen, nothing is frozen);
* a Python value the trace may specialise on (number, string, tuple, function...) is *guarded*:
  compared at each call, and a different value selects (or traces) another trace;
* a dict, list or user object read is wrapped in turn (its type guarded, its reads recorded).

``reader`` compiles a trace's paths into one generated function that returns the values of its
implicit parameters, or None when a guard fails; the function object calls it on every hit.
Stand-ins are a runtime mechanism, so reads by any code (converted or not, properties, helper
methods) are recorded, and converted code stays free of load wrappers. ``x is y`` compares the
user's objects (``identity``: converted code's ``is``), guarded. Known limit: reads a C-level
method makes from a container (``cfg.copy()``) guard the whole container by value instead.
"""

from __future__ import annotations

import keyword
import sys
import types
from typing import Any

import numpy as np
from autostage.runtime import argument_writes, tracing
from autostage.runtime.cache_keys import ById, constant_key
from autostage.runtime.operator_hooks import Staged, Standin

_LIBRARY_MODULES = frozenset({"numpy", "autostage", "numba", "llvmlite", "scipy"})
_STDLIB_OBJECTS = frozenset({types.SimpleNamespace})  # stdlib objects read like user objects
_STDLIB = frozenset(sys.stdlib_module_names)


class Root:
    """Where a path starts: an argument leaf (``ref``: its index among the call's leaves), the
    object a method is bound to (``ref``: the object), or a global/closure cell (``ref``: the
    environment ``Source``)."""

    __slots__ = ("kind", "ref", "label")

    def __init__(self, kind: str, ref: Any, label: str):
        self.kind, self.ref, self.label = kind, ref, label

    def _id(self) -> tuple:
        return (self.kind, id(self.ref) if self.kind == "bound" else self.ref)

    def __hash__(self) -> int:
        return hash(self._id())

    def __eq__(self, other: object) -> bool:
        return type(other) is Root and other._id() == self._id()


class Path:
    """A root and the attribute/item steps from it: ``self.layers[0].w``. ``example`` is the
    value it had when the trace read it."""

    __slots__ = ("root", "steps", "example")

    def __init__(self, root: Root, steps: tuple = (), example: Any = None):
        self.root, self.steps, self.example = root, steps, example

    def child(self, step: tuple, example: Any) -> Path:
        return Path(self.root, (*self.steps, step), example)

    def read(self) -> Any:
        """The value at trace time (what a caller capturing a callee's parameter needs)."""
        return self.example

    def __hash__(self) -> int:
        return hash((self.root, self.steps))

    def __eq__(self, other: object) -> bool:
        return type(other) is Path and other.root == self.root and other.steps == self.steps

    def __str__(self) -> str:
        text = self.root.label
        for kind, key in self.steps:
            text += f".{key}" if kind == "attr" else f"[{_key_text(key)}]"
        return text


def _key_text(key: Any) -> str:
    if type(key) is tuple and key[:1] == ("slice",):
        return ":".join("" if k is None else repr(k) for k in key[1:])
    return repr(key)


# --- What a read value becomes. ---------------------------------------------------------------

def is_user_object(value: object) -> bool:
    """Whether ``value`` is an object whose attributes a trace reads through a stand-in."""
    kind = type(value)
    if kind in _STDLIB_OBJECTS:
        return True
    if not kind.__flags__ & (1 << 9) or isinstance(value, Staged | Standin | type | BaseException):
        return False  # not a class defined in Python (Py_TPFLAGS_HEAPTYPE), or ours
    if isinstance(value, types.FunctionType | types.MethodType | types.ModuleType):
        return False
    return _user_module(getattr(kind, "__module__", ""))


def is_user_module(value: object) -> bool:
    """Whether ``value`` is a module of the user's (not the standard library's, NumPy's...):
    its attributes (``config.SCALE``) are read through a stand-in, like an object's."""
    if type(value) is not types.ModuleType or getattr(value, "__file__", None) is None:
        return False
    return _user_module(value.__name__)


def _reads_through(value: object) -> bool:
    kind = type(value)
    # (an instance of a user's ndarray subclass is an array, used as np.matrix is: not read
    # through, NumPy runs what it computes)
    return kind in (dict, list) or (kind is tuple and not _hashable(value)) or (
        is_user_object(value) and not isinstance(value, np.ndarray) or is_user_module(value))


def proxy_root(value: object, root: Root) -> object:
    """``value`` wrapped in a stand-in that records reads from ``root``, if it is an object
    reads go through (a user object or module, dict, list or tuple holding such); else
    ``value``."""
    if _reads_through(value):
        return _stand_in(value, Path(root, (), value))
    _guard_attributes(value, Path(root, (), value))
    return value


def _guard_attributes(value: object, path: Path, depth: int = 3) -> None:
    """Guards the data attributes of a user's class or function (``Config.lr``, ``step.k``) by
    value, arrays by identity (what the trace computes from an array's items is guarded by its
    digest, ``tracing.record_embedded_array``), and those of the user's objects they hold. A
    class stays itself, not a stand-in (``type(x) is Config``, ``super(Config, self)`` and
    ``except`` need the class), so its reads are not recorded one by one: every attribute is
    guarded, and a change to one retraces."""
    if isinstance(value, type):
        if not value.__flags__ & (1 << 9) or not _user_module(value.__module__):
            return
        owners = [vars(c) for c in value.__mro__ if c.__flags__ & (1 << 9) and _user_module(
            c.__module__)]
    elif type(value) is types.FunctionType or is_user_object(value) and depth < 3:
        owners = [getattr(value, "__dict__", None) or {}]
    elif callable(getattr(type(value), "user_attributes", None)):  # a converted function
        owners = [value.user_attributes()]
    else:
        return
    seen = set()
    for attrs in owners:
        for name, item in attrs.items():
            if name in seen or (name.startswith("__") and name.endswith("__")) or hasattr(
                    type(item), "__get__"):
                continue  # (methods, properties, classmethods: not data)
            seen.add(name)
            child = path.child(("attr", name), item)
            _check(child, ("snapshot", _snapshot(item)))
            if depth > 1 and (is_user_object(item) or isinstance(item, type)):
                _guard_attributes(item, child, depth - 1)


def _user_module(name: str | None) -> bool:
    """Whether the module named ``name`` is the user's (not NumPy's, ours, the standard
    library's...)."""
    top = (name or "").partition(".")[0]
    return top not in _LIBRARY_MODULES and top not in _STDLIB


def unwrap(value: object) -> object:
    """The user's object behind a stand-in (other values as they are)."""
    return object.__getattribute__(value, "_obj") if isinstance(value, Standin) else value


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _reads() -> dict | None:
    trace = tracing.current()
    shared = getattr(trace, "shared", None)
    return None if shared is None else shared.reads


def _check(path: Path, check: tuple) -> None:
    reads = _reads()
    if reads is not None:
        reads.setdefault(path, {})[check[0]] = check


def _stand_in(value: object, path: Path) -> object:
    trace = tracing.current()
    shared = getattr(trace, "shared", None)
    if shared is None:  # read after the trace ended: the object itself
        return value
    known = shared.stand_ins.get(path)
    if known is not None and unwrap(known) is value:
        return known
    kind = type(value)
    proxy = shared.stand_ins[path] = _proxy_class(kind)(value, path)
    if path.steps:
        _check(path, ("type", kind))
    return proxy


def _proxy_class(kind: type) -> type:
    """The stand-in for objects of ``kind``: a user's dict or list subclass whose items are
    read by dict's or list's own methods is read as a dict or list (an ObjectProxy would hand
    its items out unrecorded, through those C-level methods)."""
    for base, proxy in ((dict, DictProxy), (list, SequenceProxy), (tuple, SequenceProxy)):
        if issubclass(kind, base) and kind.__getitem__ is base.__getitem__:
            return proxy
    return ObjectProxy


def identity(a: object, b: object) -> bool:
    """``a is b`` where either is a stand-in: whether they are one user's object, guarded at
    the stand-ins' paths (a later call that finds another object there takes another trace).
    Of two stand-ins, each path is guarded to hold its object (the answer depends on both)."""
    objects = (unwrap(a), unwrap(b))
    same = objects[0] is objects[1]
    both = isinstance(a, Standin) and isinstance(b, Standin)
    for side, own, other in ((a, objects[0], objects[1]), (b, objects[1], objects[0])):
        if isinstance(side, Standin):
            pinned, answer = (own, True) if both else (other, same)
            _check(_parts(side)[1], (f"is {id(pinned)}", pinned, answer))
    return same


def reached(path: Path, value: object) -> object:
    """What code reading ``value`` at ``path`` gets: a captured tensor for a NumPy value, a
    stand-in for an object or container, else ``value`` itself (guarded)."""
    if isinstance(value, Staged | Standin):
        return value
    trace = tracing.current()
    if getattr(trace, "shared", None) is None:
        return value
    kind = type(value)
    if kind is np.ndarray or isinstance(value, np.generic):
        if kind is np.ndarray and (value.dtype.hasobject or value.dtype.kind in "USVMm"):
            _check(path, ("value", ById(value)))
            return value
        from autostage.runtime import value_info
        path = Path(path.root, path.steps, value)
        tensor = trace.capture(path, value)
        _check(path, ("array", value.dtype, value.shape) if kind is np.ndarray
               else ("scalar", kind))
        value_info.mark_argument(tensor.value, str(path), kind is not np.ndarray)
        if kind is np.ndarray and value.ndim == 0:
            value_info.mark_array(tensor.value)  # (a 0-d ndarray, not a NumPy scalar)
        return tensor
    if kind is np.random.Generator:  # a run-time input: draws advance the object read now
        _check(path, ("type", kind))
        return trace.capture(Path(path.root, path.steps, value), value)
    if _reads_through(value):
        return _stand_in(value, path)
    if isinstance(value, np.ndarray):  # a subclass: what Python computes from it is frozen
        tracing.record_embedded_array(value, trace)  # (its use by staged code: refused)
    _check(path, ("value", constant_key(value)))
    _guard_attributes(value, path)
    return value


# --- Stand-ins. ------------------------------------------------------------------------------

def _parts(proxy: Standin) -> tuple[Any, Path]:
    return object.__getattribute__(proxy, "_obj"), object.__getattribute__(proxy, "_path")


def _label(proxy: Standin, what: str) -> str:
    path = _parts(proxy)[1]
    root = path.root
    named = (str(root.ref) if root.kind == "env" else f"argument '{root.label}'"
             if root.kind == "arg" else f"'{root.label}'")
    return f"{path}{what} (reached through {named})"


def _store_check(proxy: Standin, what: str, value: object, old: object = None,
                 step: tuple | None = None) -> object:
    """``value`` unwrapped, once it is known to be storable at ``what`` (the ``step`` from the
    proxy): not staged (it would escape the trace) and, unless ``old`` is passed as
    ``UNCHANGED``, not a change of the user's object (a trace's Python code runs once, not at
    every call). The written state of the array read there (``self.mean *= m`` stores it back)
    is the array itself: the call writes into it (``argument_writes``)."""
    from autostage.runtime import escapes
    if step is not None and _written_state_of(proxy, step, value, old):
        return old
    label = _label(proxy, what)
    escapes.check_store(label, value, old)
    value = unwrap(value)
    if old is not escapes.UNCHANGED:
        escapes.check_change(label, old, value)
    return value


def _written_state_of(proxy: Standin, step: tuple, value: object, old: object) -> bool:
    """Whether ``value`` is the state, after in-place writes, of the array ``old`` the trace
    captured at ``step`` from ``proxy`` (written back into it by the call)."""
    captured = getattr(tracing.current(), "captures", None)
    if not isinstance(value, Staged) or type(old) is not np.ndarray or captured is None:
        return False
    tensor = captured.get(_parts(proxy)[1].child(step, old))
    return tensor is not None and argument_writes.param_of(getattr(value, "value", None)) is (
        tensor.value)


class _StandIn(Standin):
    __slots__ = ("_obj", "_path")

    def __init__(self, obj: object, path: Path):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_path", path)

    @property
    def __class__(self) -> type:  # isinstance() sees the user's class
        return type(object.__getattribute__(self, "_obj"))

    def __setattr__(self, name: str, value: object) -> None:
        obj = _parts(self)[0]
        old = getattr(obj, name, _ABSENT)
        setattr(obj, name, _store_check(self, f".{name}", value, old, ("attr", name)))

    def __delattr__(self, name: str) -> None:
        _store_check(self, f".{name}", _ABSENT, getattr(_parts(self)[0], name, _ABSENT))
        delattr(_parts(self)[0], name)

    def __repr__(self) -> str:
        return repr(_parts(self)[0])

    def __str__(self) -> str:
        return str(_parts(self)[0])

    def __eq__(self, other: object) -> bool:
        return _parts(self)[0] == unwrap(other)

    def __ne__(self, other: object) -> bool:
        return _parts(self)[0] != unwrap(other)

    def __hash__(self) -> int:
        return hash(_parts(self)[0])

    def __bool__(self) -> bool:
        obj = _parts(self)[0]
        if hasattr(type(obj), "__len__") and not hasattr(type(obj), "__bool__"):
            return len(self) != 0
        return bool(obj)


class ObjectProxy(_StandIn):
    """A user object read through while tracing: attribute reads are recorded; methods run
    with the stand-in as ``self`` (so their reads are recorded too)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        obj, path = _parts(self)
        if name == "__class__":
            return type(obj)
        try:
            value = getattr(obj, name)
        except AttributeError:  # (getattr's default, hasattr: the absence is guarded; not
            if not (name.startswith("__") and name.endswith("__")):  # of a protocol's special
                _check(path, (f"lacks {name}", name, True))  # name, looked up on the type)
            raise
        if type(value) is types.MethodType and value.__self__ is obj:
            # The method the class has now (replaced on the class later: guarded), unless one
            # set on the object later shadows it (`net.act = f`): its absence is guarded.
            _guard_class_attribute(obj, path, name, value.__func__)
            attrs = getattr(obj, "__dict__", None)
            if type(attrs) is dict:
                _check(path.child(("attr", "__dict__"), attrs), (f"in {name}", name, False))
            return types.MethodType(value.__func__, self)
        return reached(path.child(("attr", name), value), value)


def _forward(name: str) -> Any:
    """A special method of ObjectProxy: the class's own, run with the stand-in as ``self`` when
    written in Python or bound as a method (a ``__call__`` that is a staged function: its reads
    through ``self`` are the caller's too), else on the object itself."""
    def method(self: ObjectProxy, *args: Any) -> Any:
        obj, path = _parts(self)
        if not _defines(type(obj), name):
            return _without(self, obj, name, args)  # (the proxy has it, the class not)
        fn = getattr(type(obj), name)
        if isinstance(fn, types.FunctionType):
            _guard_class_attribute(obj, path, name, fn)
            return fn(self, *args)
        bound = getattr(obj, name)
        if type(bound) is types.MethodType and bound.__self__ is obj:
            return types.MethodType(bound.__func__, self)(*args)
        # A C-level method (of a set or deque the user's class derives from) reads what it
        # reads unrecorded: the object is guarded by its whole state.
        _check(path, ("snapshot", _snapshot(obj)))
        return fn(obj, *args)

    method.__name__ = name
    return method


_OPERATOR_METHODS = frozenset({"__add__", "__sub__", "__mul__", "__matmul__", "__truediv__",
                               "__lt__", "__le__", "__gt__", "__ge__"})
_MISSING = {"__call__": "'{}' object is not callable",
            "__len__": "object of type '{}' has no len()",
            "__iter__": "'{}' object is not iterable",
            "__getitem__": "'{}' object is not subscriptable",
            "__setitem__": "'{}' object does not support item assignment",
            "__delitem__": "'{}' object doesn't support item deletion",
            "__neg__": "bad operand type for unary -: '{}'",
            "__enter__": "'{}' object does not support the context manager protocol",
            "__exit__": "'{}' object does not support the context manager protocol (missed "
                        "__exit__ method)"}


def _without(proxy: ObjectProxy, obj: object, name: str, args: tuple) -> Any:
    """``name`` of an object whose class lacks it, as Python treats it: an operator gives way to
    the other operand's, ``in`` iterates, the rest are Python's TypeErrors."""
    if name in _OPERATOR_METHODS:
        return NotImplemented
    if name == "__iter__" and _defines(type(obj), "__getitem__"):
        return _indexed(proxy)  # (Python's sequence protocol)
    if name == "__contains__":
        if _defines(type(obj), "__iter__") or _defines(type(obj), "__getitem__"):
            return any(item is args[0] or item == args[0] for item in proxy)
        raise TypeError(f"argument of type '{type(obj).__name__}' is not iterable")
    raise TypeError(_MISSING[name].format(type(obj).__name__))


def _defines(kind: type, name: str) -> bool:
    """Whether ``kind`` has special method ``name`` as Python looks it up (its classes' own, not
    its metaclass's: ``type.__call__`` makes every class callable, not its objects)."""
    return any(name in cls.__dict__ for cls in kind.__mro__)


def _indexed(proxy: ObjectProxy) -> Any:
    index = 0
    while True:
        try:
            item = proxy[index]
        except (IndexError, StopIteration):
            return
        yield item
        index += 1


for _name in ("__call__", "__len__", "__iter__", "__getitem__", "__contains__", "__setitem__",
              "__delitem__", "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__",
              "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "__enter__", "__exit__"):
    setattr(ObjectProxy, _name, _forward(_name))


def _guard_class_attribute(obj: object, path: Path, name: str, fn: object) -> None:
    """Guards that ``type(obj)``'s attribute ``name`` is still ``fn`` (a method the trace ran,
    which the user may replace on the class), where reading it gives ``fn`` itself."""
    if getattr(type(obj), name, None) is fn:
        _check(path, (f"class {name}", name, fn))


_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                       "update", "setdefault", "popitem"})


class _Container(_StandIn):
    __slots__ = ()

    def __len__(self) -> int:
        obj, path = _parts(self)
        _check(path, ("len", len(obj)))
        return len(obj)

    def __getattribute__(self, name: str) -> Any:
        obj, path = _parts(self)
        if name == "__class__":
            return type(obj)
        own = getattr(type(self), name, None)
        if own is not None and name in type(self).READS:
            return types.MethodType(own, self)
        value = getattr(obj, name)
        if name in _MUTATORS:
            return _checked_mutator(self, name, value)
        # Any other read (copy, index, count...): the whole container is guarded by value.
        _check(path, ("snapshot", _snapshot(obj)))
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        obj = _parts(self)[0]
        obj[key] = _store_check(self, f"[{key!r}]", value, _item(obj, key), ("item", key))

    def __delitem__(self, key: Any) -> None:
        obj = _parts(self)[0]
        _store_check(self, f"[{key!r}]", _ABSENT, _item(obj, key))
        del obj[key]

    def __contains__(self, item: Any) -> bool:
        obj, path = _parts(self)
        if type(obj) is dict:
            found = item in obj
            _check(path, (f"in {item!r}", item, found))
            return found
        return item in list(iter(self))


def _item(container: Any, key: Any) -> Any:
    try:
        return container[key]
    except (LookupError, TypeError):
        return _ABSENT


def _checked_mutator(proxy: Standin, name: str, method: Any) -> Any:
    from autostage.runtime import escapes

    def mutate(*args: Any, **kwargs: Any) -> Any:
        what = f".{name}()"
        args = tuple(_store_check(proxy, what, a, escapes.UNCHANGED) for a in args)
        kwargs = {k: _store_check(proxy, what, v, escapes.UNCHANGED) for k, v in kwargs.items()}
        # Every mutating method changes the user's container, but setdefault of a present key.
        if not (name == "setdefault" and args and args[0] in _parts(proxy)[0]):
            escapes.check_change(_label(proxy, what), _ABSENT, _MUTATED)
        return method(*args, **kwargs)
    return mutate


_ABSENT = object()  # no value at a path (a store creates it, a delete leaves it)
_MUTATED = object()  # the new state after an argument-less mutation (clear, sort...)


class SequenceProxy(_Container):
    """A list or tuple read through while tracing: items, length and iteration are recorded."""

    __slots__ = ()
    READS = frozenset({"__len__", "__iter__", "__getitem__", "__contains__"})

    def __getitem__(self, key: Any) -> Any:
        obj, path = _parts(self)
        value = obj[key]
        if type(key) is slice:
            _check(path, ("len", len(obj)))
            return _stand_in(value, path.child(("item", ("slice", key.start, key.stop,
                                                          key.step)), value))
        if type(key) is int and key < 0:
            _check(path, ("len", len(obj)))
        return reached(path.child(("item", key), value), value)

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]


class DictProxy(_Container):
    """A dict read through while tracing: items, keys, ``get``, ``in`` and iteration are
    recorded."""

    __slots__ = ()
    READS = frozenset({"__len__", "__iter__", "__getitem__", "__contains__", "get", "keys",
                       "values", "items"})

    def __getitem__(self, key: Any) -> Any:
        obj, path = _parts(self)
        value = obj[key]
        return reached(path.child(("item", key), value), value)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> list:
        obj, path = _parts(self)
        _check(path, ("keys", tuple(obj)))
        return list(obj)

    def __iter__(self) -> Any:
        return iter(self.keys())

    def values(self) -> list:
        return [self[k] for k in self.keys()]

    def items(self) -> list:
        return [(k, self[k]) for k in self.keys()]


def _lacks(value: object, name: str) -> bool:
    """Whether reading ``value.name`` raises AttributeError (as when the trace read it)."""
    try:
        getattr(value, name)
    except AttributeError:
        return True
    except Exception:  # noqa: BLE001 - another answer than the trace's: another trace
        return False
    return False


def _snapshot(value: object) -> Any:
    """A comparable copy of a container of Python values (identity for anything else)."""
    kind = type(value)
    if kind in (list, tuple):
        return (kind, tuple(_snapshot(v) for v in value))
    if kind is dict:
        return (dict, tuple((k, _snapshot(v)) for k, v in value.items()))
    if kind is np.ndarray:
        return ById(value)
    return constant_key(value)


# --- The reader: every path of a trace, read and checked at each call. -----------------------

def reader(captures: list, checks: dict[Path, dict], sources: tuple) -> Any:
    """Compiles ``read(leaves, env) -> list | None``: the values of a trace's implicit parameters
    (``captures``: environment ``Source``s, read as ``env[i]``, and ``Path``s), or None if a
    value read along a path no longer passes its check (the trace does not apply)."""
    lines, consts, results = read_code(captures, checks, sources, "None")
    source = "\n".join(["def read(leaves, env):", *lines, f"    return [{', '.join(results)}]"])
    exec(compile(source, "<autostage captures>", "exec"), consts)  # noqa: S102
    read = consts["read"]
    read.source = source
    read.inputs = (captures, checks, sources)  # for the fast path (``read_code``)
    return read


def read_code(captures: list, checks: dict[Path, dict], sources: tuple, miss: str,
              trusted: dict[int, str] | None = None) -> tuple[list[str], dict, list[str]]:
    """The body of ``reader``'s function, to run where ``leaves`` and ``env`` are defined:
    ``(its lines, which return miss where a check fails, the constants they name, the
    expressions of the implicit parameters' values)``. ``trusted``: the captures (by position)
    passed to a callee that tests an array's dtype and rank itself ("array": their checks leave
    those out), or passed as scalars ("scalar": a 0-d array is read as its scalar, whose type
    is tested; the callee refuses an array); the call fast path's strict dispatcher
    (``fast_calls``)."""
    names: dict[Any, str] = {}
    consts: dict[str, Any] = {"_nd": np.ndarray, "_key": constant_key, "_snap": _snapshot,
                              "_lacks": _lacks}
    lines: list[str] = []

    def const(value: Any) -> str:
        name = f"c{len(consts)}"
        consts[name] = value
        return name

    def load(path: Path) -> str:
        key = (path.root, path.steps)
        if key in names:
            return names[key]
        if not path.steps:
            root = path.root
            expr = (f"leaves[{root.ref}]" if root.kind == "arg" else const(root.ref)
                    if root.kind == "bound" else f"env[{sources.index(root.ref)}]")
        else:
            base = load(Path(path.root, path.steps[:-1]))
            kind, step = path.steps[-1]
            if kind == "attr":
                attr = step.isidentifier() and not keyword.iskeyword(step)
                expr = f"{base}.{step}" if attr else f"getattr({base}, {const(step)})"
            elif type(step) is tuple and step[:1] == ("slice",):
                expr = f"{base}[{const(slice(*step[1:]))}]"
            else:
                expr = f"{base}[{const(step)}]"
        name = names[key] = f"v{len(names)}"
        lines.append(f"        {name} = {expr}")
        return name

    values = [load(path) for path in checks]
    results = [f"env[{sources.index(c)}]" if type(c) is not Path else load(c) for c in captures]
    passed_as = {results[k]: how for k, how in (trusted or {}).items()}
    tests, as_scalars = [], {}
    for value, path_checks in zip(values, checks.values(), strict=True):
        for check in path_checks.values():
            how = passed_as.get(value)
            if how == "scalar" and check[0] == "array" and not check[2]:
                # a 0-d array passed as its scalar: read by its test, whose type is the dtype's
                as_scalars[value] = scalar = f"s{value[1:]}"
                tests.append(f"type({value}) is _nd and type({scalar} := {value}[()]) is "
                             f"{const(check[1].type)}")
            else:
                tests.append(_test(value, check, const, how))
    results = [as_scalars.get(value, value) for value in results]
    return (["    try:", *(lines or ["        pass"]), "    except Exception:",
             f"        return {miss}",
             *[f"    if not ({test}):\n        return {miss}" for test in tests]],
            consts, results)


def _test(value: str, check: tuple, const: Any, passed_as: str | None = None) -> str:
    kind = check[0]
    if kind == "array":
        if passed_as == "array":  # (its callee tests the dtype and rank)
            shape_test = f" and {value}.shape == {const(check[2])}" if check[2] else ""
            return f"type({value}) is _nd{shape_test}"
        dtype = const(check[1])  # identical first: ~10 ns less than comparing, per array
        return (f"type({value}) is _nd and {value}.shape == {const(check[2])} and "
                f"({value}.dtype is {dtype} or {value}.dtype == {dtype})")
    if kind in ("scalar", "type"):
        return f"type({value}) is {const(check[1])}"
    if kind == "len":
        return f"len({value}) == {check[1]}"
    if kind == "keys":
        return f"tuple({value}) == {const(check[1])}"
    if kind == "snapshot":
        return f"_snap({value}) == {const(check[1])}"
    if kind.startswith("in "):
        return f"({const(check[1])} in {value}) is {check[2]}"
    if kind.startswith("is "):
        return f"({value} is {const(check[1])}) is {check[2]}"
    if kind.startswith("class "):
        return f"getattr(type({value}), {check[1]!r}, None) is {const(check[2])}"
    if kind.startswith("lacks "):
        return f"_lacks({value}, {check[1]!r})"
    key = check[1]  # "value": the constant the trace used
    if type(key[1]) is ById:  # (not ByContents: a mutable container's contents count too)
        return f"{value} is {const(key[1].obj)}"
    if key[0] in (int, bool, str) or key[1] is None:
        return f"type({value}) is {const(key[0])} and {value} == {const(key[1])}"
    return f"_key({value}) == {const(key)}"


def describe(checks: dict[Path, dict]) -> dict[str, Any]:
    """Labels and values of the guarded paths, for retrace messages."""
    return {str(path): check[1] for path, path_checks in checks.items()
            for check in path_checks.values() if check[0] == "value"}
