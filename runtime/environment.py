"""The environment of a staged function: the globals and closure cells it reads.

They are read at CALL time, as Python reads them: while tracing, the function runs with its
global/closure arrays replaced by tensors that are extra (implicit) parameters of the trace, and
each call reads the current values again and passes them in. Other globals are part of the cache
key (by value or identity), so rebinding one retraces. Nothing read by name is frozen into a trace.
Dicts, lists and user objects read by name are given to the code as stand-ins (``captures``), so
what the code reads through them is read at each call or guarded too.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from autostage.runtime import tracing, value_info
from autostage.runtime.cache_keys import constant_key
from autostage.runtime.captures import Root, is_user_module, proxy_root

if TYPE_CHECKING:
    from autostage.runtime.function_trace import FunctionTrace

_MISSING = object()


class Source:
    """A name a function reads from its environment: a global of its module or a closure cell."""

    __slots__ = ("container", "name", "is_cell")

    def __init__(self, container: dict | types.CellType, name: str, is_cell: bool):
        self.container = container
        self.name = name
        self.is_cell = is_cell

    def read(self) -> object:
        if self.is_cell:
            try:
                return self.container.cell_contents
            except ValueError:  # an empty cell: the variable is not assigned yet
                return _MISSING
        return self.container.get(self.name, _MISSING)

    def __hash__(self) -> int:
        return hash((id(self.container), self.name))

    def __eq__(self, other: object) -> bool:
        return (type(other) is Source and other.container is self.container
                and other.name == self.name)

    @property
    def kind(self) -> str:
        return "nonlocal" if self.is_cell else "global"

    def write(self, value: object) -> None:
        """Puts ``value`` back (``_MISSING``: unbinds the name)."""
        if self.is_cell:
            if value is _MISSING:
                del self.container.cell_contents
            else:
                self.container.cell_contents = value
        elif value is _MISSING:
            self.container.pop(self.name, None)
        else:
            self.container[self.name] = value

    def __str__(self) -> str:
        return f"{'closed-over variable' if self.is_cell else 'global'} '{self.name}'"


def environment_key(value: object) -> tuple:
    """A source's key component: arrays by dtype and exact shape (their values are passed at
    call time), anything else like a constant."""
    if type(value) is np.ndarray:
        return (value.dtype, value.shape)
    if type(value) is np.random.Generator:  # read at each call: any Generator will do
        return _GENERATOR_KEY
    return constant_key(value)


_GENERATOR_KEY = ("np.random.Generator",)


_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS", "STORE_GLOBAL",
                         "DELETE_GLOBAL"))


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _environment(fn: types.FunctionType) -> tuple[list[Source], set[str]]:
    """The globals and closure cells ``fn``'s code (nested code included) may read, modules
    excepted (but the user's own), and the names it assigns with ``global`` / ``nonlocal``."""
    instructions = [i for code in _code_objects(fn.__code__) for i in _instructions(code)]
    written = {i.argval for i in instructions
               if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF")}
    sources = []
    # Names read as globals, not every name of co_names: those hold attribute names too, and a
    # global `t` is no source of code that reads `self.t` (its changes retraced each call).
    names = dict.fromkeys(i.argval for i in instructions if i.opname in _GLOBAL_OPS)
    for name in names:
        if name in fn.__globals__ and _read_at_call(fn.__globals__[name]):
            sources.append(Source(fn.__globals__, name, False))
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        source = Source(cell, name, True)
        if _read_at_call(source.read()):
            sources.append(source)
    return sources, written


def _read_at_call(value: object) -> bool:
    """Modules are fixed, but the attributes of the user's own modules are read at each call."""
    return not isinstance(value, types.ModuleType) or is_user_module(value)


def _instructions(code: types.CodeType):
    import dis

    return dis.get_instructions(code)


def made_here(trace: FunctionTrace | None, obj: object) -> bool:
    """Whether ``obj`` was made by the Python code traced into ``trace``'s module
    (``staged_calls.made_in_trace``): a local object, not one reached from outside the trace."""
    shared = getattr(trace, "shared", None)
    return shared is not None and shared.made.get(id(obj)) is obj


def bind_environment(fn: Callable, trace: FunctionTrace) -> Callable:
    """``fn`` with every global/closure array it reads replaced by an implicit parameter of
    ``trace``; every source read is recorded (its value goes into the cache key).

    Raises:
      StagingError: the function assigns a global or nonlocal that holds an array.
    """
    if isinstance(fn, types.MethodType):
        bound, code = fn.__self__, getattr(fn.__func__, "__code__", None)
        # Reads through `self` are recorded, unless the traced code made the object itself.
        if code is not None and code.co_argcount and not made_here(trace, bound):
            bound = proxy_root(bound, Root("bound", bound, code.co_varnames[0]))
        return types.MethodType(bind_environment(fn.__func__, trace), bound)
    if type(fn) is not types.FunctionType:
        return fn
    sources, written = _environment(fn)
    new_globals, new_cells = {}, {}
    # Rebinding copies the globals: a function that assigns a global reads its objects as they
    # are (its global writes must reach the module).
    proxies = not any(name in fn.__globals__ for name in written)
    for source in sources:
        value = source.read()
        trace.sources[source] = None
        if type(value) is not np.ndarray and type(value) is not np.random.Generator:
            if isinstance(value, np.ndarray):  # a subclass: what Python computes from it is
                tracing.record_embedded_array(value, trace)  # frozen (its use staged: refused)
            stand_in = proxy_root(value, Root("env", source, source.name)) if (
                proxies and source.name not in written) else value
            if stand_in is not value:
                (new_cells if source.is_cell else new_globals)[source.name] = stand_in
            continue
        if source.name in written:
            raise tracing.StagingError(
                f"{fn.__qualname__} assigns {source}, which holds a NumPy array or Generator; a "
                "staged function "
                "cannot rebind arrays outside itself: return the new value instead")
        tensor = trace.capture(source, value)
        if type(value) is np.ndarray:  # (an in-place write into it is refused, as an argument's
            value_info.mark_argument(tensor.value, str(source), False)  # of this kind would be)
            if value.ndim == 0:
                value_info.mark_array(tensor.value)  # (a 0-d ndarray, not a NumPy scalar)
        (new_cells if source.is_cell else new_globals)[source.name] = tensor
    bound = _rebound(fn, new_globals, new_cells) if new_globals or new_cells else fn
    cells = dict(zip(fn.__code__.co_freevars, bound.__closure__ or (), strict=True))
    names = {n for code in _code_objects(fn.__code__) for n in code.co_names}
    for name in written:  # checked for escaping tensors when the trace ends (escapes)
        if name in cells:
            source = Source(cells[name], name, True)
        elif name in names:  # (a global a nested loop body writes: ``global g`` there)
            source = Source(bound.__globals__, name, False)
        else:
            continue
        label = f"{source.kind} variable '{name}' (assigned in {fn.__qualname__})"
        trace.written.append((label, source, source.read()))
    return bound


def _rebound(fn: types.FunctionType, new_globals: dict, new_cells: dict) -> types.FunctionType:
    # Functions the code defines (loop bodies, user closures) get these globals and cells too.
    globals_ = {**fn.__globals__, **new_globals} if new_globals else fn.__globals__
    closure = fn.__closure__
    if new_cells:
        closure = tuple(types.CellType(new_cells[name]) if name in new_cells else cell
                        for name, cell in zip(fn.__code__.co_freevars, closure, strict=True))
    new = types.FunctionType(fn.__code__, globals_, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new
