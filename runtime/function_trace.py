"""The trace of a staged function: its parameters, the environment it read, and who is tracing.

``FunctionTrace`` is a ``tracing.Trace`` that also records the globals and closed-over arrays the
code read (made implicit parameters) and the state shared by every function traced into one
module (``ModuleState``: callees, recursion, objects read or made). ``enter``/``leave`` count the
traces running in any thread, so that ``staging_active`` costs one global read when none is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from autostage.runtime import (
    argument_writes,
    captures,
    escapes,
    inputs,
    ir,
    op_registry,
    pytree,
    tracing,
    value_info,
)
from autostage.runtime.environment import Source
from autostage.runtime.signature_binding import Binding
from autostage.runtime.staging import raises
from autostage.runtime.tensor import Tensor, mark_argument
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.types import GeneratorType, TensorType, type_of_array

# Traces running in any thread; read it (``function_trace.active_traces``) before the cheap but
# not free thread-local test of ``staging_active``. Changed only by ``enter``/``leave``.
active_traces = 0
_active_lock = threading.Lock()


def enter() -> None:
    """Counts a trace that starts (in any thread)."""
    global active_traces
    with _active_lock:
        active_traces += 1


def leave() -> None:
    """Counts a trace that ended."""
    global active_traces
    with _active_lock:
        active_traces -= 1


def staging_active() -> bool:
    """Whether a staged function is being traced in this thread (cheap when none is)."""
    return active_traces > 0 and isinstance(tracing.current(), FunctionTrace)


def is_staged_leaf(leaf: object) -> bool:
    """Whether ``leaf`` of the arguments is staged (a run-time input), not a constant."""
    return isinstance(leaf, np.ndarray | np.generic | TensorSpec | np.random.Generator) or (
        inputs.device_array(leaf))


def leaf_type(leaf: object, shape: tuple | None = None) -> TensorType | GeneratorType:
    """The IR type of the parameter that stands for staged ``leaf``: sizes unknown, or those of
    ``shape`` for an ndarray (its known sizes, ``static_sizes``)."""
    if type(leaf) is TensorSpec:
        return leaf.type
    if type(leaf) is np.random.Generator:
        return GeneratorType()
    if inputs.device_array(leaf):
        dtype, ndim = inputs.device_dtype_ndim(leaf)
        return TensorType(inputs.native(dtype), (None,) * ndim)
    return TensorType(inputs.native(leaf.dtype), shape or (None,) * np.ndim(leaf))


def staged_input(value: ir.Value) -> Tensor | Any:
    """What traced code sees for a parameter: a tensor, or a staged random Generator."""
    if type(value.type) is GeneratorType:
        from autostage.runtime.staging.random_draws import StagedGenerator
        return StagedGenerator(value)
    return Tensor(value)


def mark_arguments(binding: Binding, positional: tuple, keywords: dict,
                   scalars: dict[int, bool], writable: frozenset[int] = frozenset()) -> None:
    """Tells the ops layer which tensors are the caller's arrays (NumPy scalars are immutable, so
    `n //= 10` rebinds). Writing into one is an error, as the caller would not see the change,
    except into an argument itself whose tensor is in ``writable`` (by id): written back
    (``argument_writes``)."""
    named = [(p.name, v) for p, v in zip(binding.params, positional, strict=False)]
    named += list(keywords.items())
    for leaf, label in named_tensors(named):
        scalar = scalars.get(id(leaf))
        mark_argument(leaf, label, scalar)
        if id(leaf) in writable:  # (an argument, or an array in one: `params['W'] -= g`)
            argument_writes.allow(leaf.value, label)
        if scalar is False:  # a 0-d ndarray argument stays one where NumPy keeps it
            value_info.mark_array(leaf.value)


def _same_item(now: object, before: object) -> bool:
    """Whether an argument list's or dict's item ``now`` is still ``before``: the same object,
    or the state after in-place writes of the array argument ``before`` stands for
    (``params[k] -= lr * g`` stores the caller's own array back, written into:
    ``argument_writes``)."""
    return now is before or isinstance(now, Tensor) and isinstance(before, Tensor) and (
        argument_writes.param_of(now.value) is before.value)


def named_tensors(named: list[tuple[str, object]]) -> Iterator[tuple[Tensor, str]]:
    """The tensors in ``(name, value)`` arguments, each with its label (``xs[1]``, ``cfg['w']``)."""
    for name, value in named:
        leaves, treedef = pytree.flatten(value)
        for path, leaf in zip(pytree.leaf_paths(treedef), leaves, strict=True):
            if isinstance(leaf, Tensor):
                yield leaf, name + path


class FunctionTrace(tracing.Trace):
    """A trace of a staged function: it also records the environment the code read.

    ``captures``: environment arrays made implicit parameters (source -> tensor), in parameter
    order; ``sources``: every environment source read (their values are in the cache key);
    ``shared``: state common to all functions traced into one module (callees, recursion).
    """

    def __init__(self, module: ir.Module, name: str, param_types: list, shared: ModuleState):
        super().__init__(module, name, param_types)
        module.add(self.function)
        self.captures: dict[Source, Tensor] = {}
        self.sources: dict[Source, None] = {}
        self.shared = shared
        self.variable_policy = shared.variable_policy
        self.written: list[tuple[str, Source, Any]] = []  # (label, source, value before)
        # The Python lists given as arguments: staged code cannot change them in place
        # (the caller's list would not see it; tensor_lists.from_python refuses, and
        # check_escapes compares them with their items when the trace began).
        self.argument_lists: list[list] = []
        self._argument_items: list[tuple[list | dict, list]] = []
        self._places: dict[ir.Value, list] = {}  # param -> (container, key) holding it
        self.raised: Exception | None = None  # the trace ended with a raise op of this
        # Writes into the arrays it captures are written back into them (the function called
        # from Python, on a target that writes back: ``argument_writes``).
        self.writes_captures = False

    def sizes_staged(self, value: ir.Value) -> bool:
        """Whether ``value``'s known sizes may be argument sizes only the trace knows: it is
        computed from a parameter whose sizes the key holds (``StagedFunction._trace`` marks
        them; an array read from the environment is not one) or from a value with known sizes
        that a region receives (a loop's carried value, a callee's parameter); sizes of
        constants and of what only they make stay ints, as without ``static_sizes``."""
        if not self.shared.sizes_staged:
            return False
        cache = self.shared.from_sizes
        pending = [value]
        while pending:
            v = pending[-1]
            if v in cache:
                pending.pop()
                continue
            producer = v.producer
            if not isinstance(producer, ir.Op):
                cache[v] = isinstance(v.type, TensorType) and any(
                    d is not None for d in v.type.shape)
                pending.pop()
                continue
            inputs = _inputs_of(producer)
            missing = [o for o in inputs if o not in cache]
            if missing:
                pending.extend(missing)
                continue
            cache[v] = any(cache[o] for o in inputs)
            pending.pop()
        return cache[value]

    def check_escapes(self, fn: Callable | None = None) -> None:
        """Raises TensorEscapeError if a staged value was left in a global/nonlocal variable or
        in an object the trace was given, and PythonSideEffectError if the trace changed a
        global/nonlocal variable (put back first; see runtime/escapes.py)."""
        named = [(label, source.read()) for label, source, _ in self.written]
        roots = [(str(path), proxy) for path, proxy in self.shared.stand_ins.items()
                 if not path.steps]
        try:
            escapes.check_after_trace(named, roots)
            for (label, _, before), (_, after) in zip(self.written, named, strict=True):
                escapes.check_change(label, before, after, at_line=False)
        except (escapes.PythonSideEffectError, escapes.TensorEscapeError):
            self.put_back_written()  # (a staged value or a change left in the user's global)
            raise
        for container, items in self._argument_items:
            now = _items(container)
            if len(now) != len(items) or not all(
                    _same_item(a, b) for a, b in zip(now, items, strict=True)):
                kind = type(container).__name__
                loc = tracing.function_location(fn)
                defined = f" (defined at {loc})" if loc is not None else ""
                raise escapes.PythonSideEffectError(
                    f"the staged function {self.function.name}{defined} changes a Python {kind} "
                    "given to it as an argument (or inside one). A staged function runs its Python "
                    f"code once per trace, not at every call, and on its own copy of the {kind}:"
                    f" the caller's {kind} would not change. Build a new {kind} and return it "
                    f"(`xs = {kind}(xs)` first)")

    def put_back_written(self) -> None:
        """Puts back the globals and nonlocals the trace wrote (a refused trace, or one its
        code raised out of, leaves none changed: later calls would not change them either)."""
        for _, source, before in reversed(self.written):  # (the first value read wins)
            source.write(before)

    def watch_argument_lists(self, arguments: list) -> None:
        """Notes the Python lists and dicts given as (or inside) ``arguments``, and their
        items, to refuse changes to them (``check_escapes``) and to follow writes into their
        arrays (``follow_write``)."""
        containers = _containers_in(arguments)
        self.argument_lists = [c for c in containers if isinstance(c, list)]
        self._argument_items = [(c, _items(c)) for c in containers]
        self._places = {}
        for container in containers:
            keys = container.keys() if isinstance(container, dict) else range(len(container))
            for key in keys:
                if isinstance(container[key], Tensor):
                    self._places.setdefault(container[key].value, []).append((container, key))

    def follow_write(self, param: ir.Value, new: ir.Value) -> None:
        """The argument lists and dicts (the trace's own, which the code reads) hold the state
        of a written array argument after the write, as the caller's hold the array Python
        wrote into: a second epoch of ``for p, g in zip(params, grads): p -= lr * g`` reads
        the written ``params``. (A write in staged control flow leaves them: reading such an
        item after it is the clear error of any stale reference, ``array_identity``.)"""
        for container, key in self._places.get(param, ()):
            item = container[key]
            if isinstance(item, Tensor) and item.value is not new and (
                    argument_writes.param_of(item.value) is param):
                container[key] = Tensor(new)

    def capture(self, source: Source, value: np.ndarray | np.random.Generator) -> Tensor | Any:
        """The tensor (or staged Generator) that stands for ``source`` in this function: a new
        implicit parameter."""
        tensor = self.captures.get(source)
        if tensor is None:
            body = self.function.body
            type_ = GeneratorType() if type(value) is np.random.Generator else type_of_array(
                value, exact_shape=True)
            param = ir.Value(type_, body, len(body.args))
            body.args = (*body.args, param)
            self.shared.from_sizes[param] = False  # a global's sizes were always known
            tensor = self.captures[source] = staged_input(param)
            # Writes into an array read through an object (``self.mean *= m``) are written
            # back, as into an argument; read again there, it is its latest state (below). (A
            # global or closure array is read once per trace: writes into it stay refused.)
            if self.writes_captures and type(source) is captures.Path and type(
                    value) is np.ndarray and value.ndim and not inputs.needs_native_copy(value):
                argument_writes.allow(param, str(source), captured=True)
        if not isinstance(tensor, Tensor):  # (a Generator)
            return tensor
        latest = argument_writes.latest(tensor.value)  # (read again after a write)
        if latest is not None and not self.visible(latest):
            raise argument_writes.captured_write_error(str(source), latest)
        return tensor if latest is None else Tensor(latest)


def _inputs_of(op: ir.Op) -> list[ir.Value]:
    """What ``op``'s known sizes may come from: its operands (those its rule names,
    ``OpDef.size_sources``), and the values its regions read from outside."""
    sources = getattr(op_registry.REGISTRY.get(op.name), "size_sources", None)
    inputs = list(op.operands) if sources is None else [op.operands[i] for i in sources(op)]
    if op.regions:
        inside: set[ir.Value] = set()
        for region in op.regions:
            inside.update(region.args)
            for inner in region.walk():
                inside.update(inner.results)
                inside.update(arg for sub in inner.regions for arg in sub.args)
        inputs += [v for region in op.regions for o in region.walk() for v in o.operands
                   if v not in inside]
        inputs += [v for region in op.regions for v in region.results if v not in inside]
    return inputs


class ModuleState:
    """What the functions traced into one module share."""

    def __init__(self, variable_policy: Callable[[], None] | None):
        self._variable_policy = variable_policy
        # Why the traced function's Python code may not stand in for the trace (a tiered
        # start's first calls), or None: a GradientTape records only while tracing; a Variable
        # made while tracing is made once, where Python would make one per call.
        self.staged_only: str | None = None
        self.callees: dict[tuple, Any] = {}  # callee key -> staged_calls.Callee
        self.active: set[tuple] = set()  # callee keys being traced (recursion check)
        # Staged recursion (staged_calls): the callee each recursive key is assumed to be in
        # the current pass, and the keys whose result types a trace needed before knowing them.
        self.assumed: dict[tuple, Any] = {}
        self.unknown: set[tuple] = set()
        self.reads: dict[captures.Path, dict] = {}  # path read through an object -> its checks
        self.stand_ins: dict[captures.Path, Any] = {}  # path -> the stand-in given to the code
        self.made: dict[int, object] = {}  # id -> a user object the traced code constructed
        # The trace knows argument sizes (static_sizes) that code must still see staged.
        self.sizes_staged = False
        self.from_sizes: dict[ir.Value, bool] = {}  # value -> whether it knows such a size
        # The target writes back into array arguments: so may a callee (``staged_calls``).
        self.writes_back = False


    def variable_policy(self) -> None:
        """Called as a Variable is made while tracing: raises VariableCreationError on a
        function's retrace (its policy)."""
        self.staged_only = "it makes a Variable"
        if self._variable_policy is not None:
            self._variable_policy()


def _items(container: list | dict) -> list:
    """What a change to ``container`` changes: its items (a dict's keys and values)."""
    if isinstance(container, dict):
        return [x for pair in container.items() for x in pair]
    return list(container)


def _containers_in(arguments: list) -> list[list | dict]:
    """The Python lists and dicts given as (or inside) ``arguments``."""
    found: list[list | dict] = []
    todo = list(arguments)
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            found.append(item)
            todo += item.values()
        elif isinstance(item, (list, tuple)):
            if isinstance(item, list):
                found.append(item)
            todo += item
    return found


def run_traced(trace: FunctionTrace, fn: Callable, args: tuple | list, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` in ``trace``; a user exception raised after ops with effects
    (prints...) ends the trace with a ``raise`` op: Python prints, then raises (``raises``);
    ``sys.exit()`` too (SystemExit, which is no Exception)."""
    try:
        return fn(*args, **kwargs)
    except (Exception, SystemExit) as e:
        if not raises.finish_with(e, trace.function.body):
            raise
        trace.raised = e
        return None
