"""Tracing: running Python code on symbolic tensors records ops into the function being traced.

A ``Trace`` builds one ``ir.Function``; its stack of open regions says where ``emit`` appends ops
(a ``cond`` branch or a loop body being traced is the innermost). Traces are per thread. Every op
records the user's location, found by ``user_location`` from the Python stack (the compiler layer
registers a resolver that maps converted code back to the user's lines). A value may only be used
where it is visible: in its own region or one nested inside it, while its trace is running; any
other use (a tensor kept in a global, or returned from a branch through a side channel) is a
``TracerLeakError`` that says where the tensor was created.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import re
import sys
import sysconfig
import threading
import types
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.types import Type, strong

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_local = threading.local()

# Functions frame -> Location | None, tried in order; the compiler registers one for converted code.
location_resolvers: list[Callable[[Any], ir.Location | None]] = []
# Directories whose frames are never user code (the compiler adds its own).
internal_dirs: list[str] = [_RUNTIME_DIR]
# Tests frame -> bool for other frames that are not user code (the compiler adds converted code).
internal_frame_tests: list[Callable[[Any], bool]] = []
# Called with (op name, operands, trace) before an op is emitted, and with the op after
# (array_identity, value_info).
operand_checks: list[Callable[[str, Sequence[ir.Value], Trace], None]] = []
result_hooks: list[Callable[[ir.Op], None]] = []
_GENERATED_CPU_FILE = re.compile(r"stage_[0-9a-f]{16,}\.py$")  # backends/cpu/module_cache.py


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """The directories of the compiler libraries (found without importing them)."""
    dirs = []
    for name in ("numba", "llvmlite"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.append(os.path.dirname(os.path.abspath(spec.origin)) + os.sep)
    return tuple(dirs)


def is_internal_frame(frame: Any) -> bool:
    """Whether ``frame`` belongs to autostage, Numba, generated or converted code, not to the
    user's own code (for tracebacks and for the line warnings are attributed to)."""
    filename = frame.f_code.co_filename
    if filename.startswith(tuple(internal_dirs)) or filename.startswith(_library_dirs()):
        return True
    if _GENERATED_CPU_FILE.search(filename):
        return True
    return any(test(frame) for test in internal_frame_tests)


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by the caller of this function that
    attributes the warning to the innermost user frame (walking out of autostage's frames,
    whatever their number)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and is_internal_frame(frame):
        frame = frame.f_back
        level += 1
    return level


class StagingError(Exception):
    """Base class of errors found while staging; messages name the user's file and line."""


class TracerLeakError(StagingError, RuntimeError):
    """A staged tensor was used outside the trace (or the branch/loop body) that created it.

    Example: ``cache.append(x * 2)`` inside a converted function, then ``cache[0] + 1`` in a later
    call. Fix: return tensors from the function (or from the branch, by assigning a variable on
    every path) instead of storing them elsewhere.
    """


class Trace:
    """The function being traced: its module, its IR function and its open regions."""

    def __init__(self, module: ir.Module, name: str, param_types: Sequence[Type]):
        self.module = module
        self.function = ir.Function(name, ir.Region(param_types))
        self.regions: list[ir.Region] = [self.function.body]  # open, innermost last
        self.all_regions: set[ir.Region] = {self.function.body}  # ever opened here
        self.finished = False
        self.embedded_arrays: list[tuple[weakref.ref, bytes]] = []  # see guards()
        # What the traced function received (its function object, arguments): objects reachable
        # from them outlive the call (None: unknown, so every object is assumed to).
        self.roots: tuple | None = None

    def sizes_staged(self, value: ir.Value) -> bool:
        """Whether code reading a known size of ``value`` gets it staged, not as an int
        (``static_sizes``: a trace that knows argument sizes the code did not know)."""
        return False

    def guards(self) -> list[tuple[weakref.ref, bytes]]:
        """The arrays frozen into this trace as constants that are still alive after it.

        They belong to something that outlives the call (an object's attribute...); if one of
        them changes in place, the trace is stale and must not run (``arrays_unchanged``).
        """
        return [(ref, digest) for ref, digest in self.embedded_arrays if ref() is not None]

    @property
    def region(self) -> ir.Region:
        return self.regions[-1]

    def visible(self, value: ir.Value) -> bool:
        return not self.finished and value.region in self.regions


def _digest(array: np.ndarray) -> bytes:
    digest = hashlib.blake2b(repr((array.dtype.str, array.shape)).encode(), digest_size=16)
    digest.update(np.ascontiguousarray(array).view(np.uint8).reshape(-1))
    # A subclass's own state (a masked array's mask and fill value, a user's attributes)
    for name, value in sorted(getattr(array, "__dict__", {}).items()):
        digest.update(name.encode())
        digest.update(_digest(value) if isinstance(value, np.ndarray) else repr(value).encode())
    return digest.digest()


def record_embedded_array(array: np.ndarray, trace: Trace | None = None) -> None:
    """Notes that ``array`` is frozen into ``trace`` (the current one by default) as a constant,
    or that Python code the trace ran computed with it (see Trace.guards)."""
    trace = trace or current()
    if trace is not None and not any(ref() is array for ref, _ in trace.embedded_arrays):
        trace.embedded_arrays.append((weakref.ref(array), _digest(array)))


def arrays_unchanged(guards: list[tuple[weakref.ref, bytes]]) -> bool:
    """Whether every guarded array that is still alive holds what the trace froze."""
    for ref, digest in guards:
        array = ref()
        if array is not None and _digest(array) != digest:
            return False
    return True


def _stack() -> list[Trace]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def current() -> Trace | None:
    """The innermost trace running in this thread, or None outside tracing."""
    stack = _stack()
    return stack[-1] if stack else None


def is_tracing() -> bool:
    return bool(_stack())


def in_staged_region() -> bool:
    """Whether the code running now is traced inside a staged ``if`` branch or loop (a region
    in the function's body): Python code there runs at trace time whatever path the run takes,
    so it must not change what the paths share (a NumPy array made before it, in place)."""
    trace = current()
    return trace is not None and not trace.finished and len(trace.regions) > 1


@contextlib.contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    """Makes ``trace`` the current trace for the duration of the block."""
    stack = _stack()
    stack.append(trace)
    try:
        yield trace
    finally:
        stack.pop()


def checkpoint() -> tuple[ir.Region, int] | None:
    """Where the current region stands now (for ``rollback``), or None when nothing is traced."""
    stack = _stack()
    if not stack:
        return None
    current_region = stack[-1].region
    return current_region, len(current_region.ops)


def rollback(mark: tuple[ir.Region, int] | None) -> None:
    """Drops the ops emitted into the current region since ``checkpoint`` returned ``mark``."""
    trace = current()
    if mark is not None and trace is not None and trace.region is mark[0]:
        del mark[0].ops[mark[1]:]


@contextlib.contextmanager
def region(arg_types: Sequence[Type] = ()) -> Iterator[ir.Region]:
    """Opens a new region in the current trace; ops emitted inside the block go into it. Its
    arguments are not weak (as ``emit``'s results): the caller marks those that are."""
    trace = _require_trace()
    new = ir.Region([strong(t) for t in arg_types])
    trace.regions.append(new)
    trace.all_regions.add(new)
    try:
        yield new
    finally:
        trace.regions.pop()


@contextlib.contextmanager
def reopen(existing: ir.Region) -> Iterator[ir.Region]:
    """Makes an already traced region of the current trace current again, to append to it."""
    trace = _require_trace()
    trace.regions.append(existing)
    try:
        yield existing
    finally:
        trace.regions.pop()


def _require_trace() -> Trace:
    trace = current()
    if trace is None:
        raise StagingError("no function is being traced")
    return trace


def mark_staged_only(reason: str) -> None:
    """Records that the traced function's Python code may not stand in for its trace (a tiered
    start's first calls, ``staged_function``): its results would differ in ``reason``."""
    shared = getattr(current(), "shared", None)
    if shared is not None and shared.staged_only is None:
        shared.staged_only = reason


def user_location() -> ir.Location | None:
    """The user's file and line for the op being emitted (innermost user frame)."""
    return frame_location(sys._getframe(1))


def at(loc: ir.Location | None = None) -> str:
    """`` at file:line`` of ``loc`` (default: the user's line being staged now) for messages;
    empty when no user frame is known."""
    loc = loc if loc is not None else user_location()
    return f" at {loc}" if loc is not None else ""


def traceback_location(tb: Any) -> ir.Location | None:
    """The innermost user location in a traceback (where an exception was raised)."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        loc = _location_of(frame)
        if loc is not None:
            return loc
    return None


def function_location(fn: Any) -> ir.Location | None:
    """The user's file and line of the ``def`` of ``fn`` (converted or not)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    if code is None:
        return None
    return _location_of(types.SimpleNamespace(f_code=code, f_lineno=code.co_firstlineno))


def frame_location(frame: Any) -> ir.Location | None:
    """The user location of ``frame`` or of the nearest caller frame that is user code."""
    while frame is not None:
        loc = _location_of(frame)
        if loc is not None:
            return loc
        frame = frame.f_back
    return None


def in_user_code(frame: Any) -> bool:
    """Whether ``frame`` runs converted user code (not the runtime, a library or the user's
    code that was not converted)."""
    return any(resolve(frame) is not None for resolve in location_resolvers)


def user_names(holds: Callable[[object], bool], exclude: str = "") -> list[str]:
    """The variables of the user's frames (converted code) on the stack whose value ``holds``
    accepts, innermost first, each once; not ``exclude`` nor generated ``ag__`` names."""
    found = []
    frame = sys._getframe(1)
    while frame is not None:
        if _location_of(frame) is not None:
            found += [var for var, obj in frame.f_locals.items()
                      if var != exclude and not var.startswith("ag__") and holds(obj)]
        frame = frame.f_back
    return list(dict.fromkeys(found))


def _location_of(frame: Any) -> ir.Location | None:
    for resolve in location_resolvers:
        loc = resolve(frame)
        if loc is not None:
            return loc
    filename = frame.f_code.co_filename
    if not filename.startswith(("<", *internal_dirs, *_library_dirs())) and not _stdlib(
            filename):
        return ir.Location(filename, frame.f_lineno, frame.f_code.co_name)
    return None


@functools.cache
def _stdlib(filename: str) -> bool:
    """Whether ``filename`` is a module of the standard library (not one installed beside it):
    its frames (``copy.deepcopy``, ``statistics.mean`` reaching a staged value) are never the
    user's line, the caller's is."""
    stdlib = sysconfig.get_paths().get("stdlib")
    if not stdlib or not filename.startswith(os.path.abspath(stdlib) + os.sep):
        return False
    return not any(part in filename for part in ("site-packages", "dist-packages"))


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """The package directories of NumPy, Numba and SciPy: their frames (a function converting
    a list that holds staged values with ``np.asarray``, a Numba ufunc's ``__call__``) are
    never the user's line, the caller's is."""
    dirs = []
    for name in ("numpy", "numba", "scipy"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            dirs.append(os.path.dirname(os.path.abspath(spec.origin)) + os.sep)
    return tuple(dirs)


def check_visible(value: ir.Value, what: str = "a staged tensor") -> ir.Value:
    """Raises TracerLeakError unless ``value`` may be used at the current point of tracing."""
    trace = current()
    if trace is not None and trace.visible(value):
        return value
    where = f" created at {value.loc}" if value.loc is not None else ""
    if trace is not None and value.region in trace.all_regions:
        raise TracerLeakError(
            f"{what}{where} is used outside the staged branch or loop body that created it; "
            "pass it out as a variable assigned on every path (or carried by the loop) instead")
    if any(value.region in t.regions for t in _stack()):
        raise TracerLeakError(
            f"{what}{where} belongs to the function that calls this one; pass it as an argument")
    raise TracerLeakError(
        f"{what}{where} is used after the trace that created it ended; a staged tensor exists "
        "only while its function is traced: return it from the function instead of keeping it "
        "(e.g. in a global or a list)")


def emit(name: str, operands: Sequence[ir.Value], attrs: dict[str, Any] | None = None,
         regions: Sequence[ir.Region] = (), loc: ir.Location | None = None,
         derived: bool = False) -> tuple[ir.Value, ...]:
    """Appends op ``name`` to the current region and returns its results.

    The result types come from the op's type rule, never weak: whether a result stands for a
    Python number is staging's decision (``value_info.mark_weak``), not the rule's (one that
    passes an operand's type through would make ``np.asarray(n)`` a Python int). Operands must be
    visible here. The op's location is ``loc``, or the user's line that is running now.
    ``derived``: an op autostage derives from the program (the backward pass of a gradient), not
    one the user's code runs: the checks and hooks of user-visible array identity skip it.
    """
    trace = _require_trace()
    for value in operands:
        check_visible(value)
    if not derived:
        for check in operand_checks:
            check(name, operands, trace)
    attrs = dict(attrs or {})
    types = [strong(t) for t in op_registry.result_types(name, [v.type for v in operands], attrs)]
    op = ir.Op(name, operands, types, attrs, regions, loc or user_location())
    trace.region.append(op)
    if not derived:
        for hook in result_hooks:
            hook(op)
    return op.results
