"""``StagedFunction``: a Python function traced into typed IR once per signature, then run.

A call binds the arguments like Python (defaults applied) and flattens them (``pytree``):
``np.ndarray`` / ``np.generic`` leaves are staged (their dtype and rank; sizes stay unknown),
every other leaf is a compile-time constant the trace is specialised on (by value if hashable,
else by identity). The trace cache key is ``(treedef, per leaf: (dtype, ndim) or the constant,
per environment source: its key)``. A miss traces the function (``trace``), verifies the module
and caches a ``ConcreteFunction``; a hit is one dict read, without a lock.

Globals and closed-over variables are read at call time (``environment``); arrays frozen in from
constant objects are checked at each call (``Trace.guards``). Keys are made in ``cache_keys``.
Calls from staged code to user functions with staged arguments become ``call`` ops
(``call_from_trace``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    array_identity,
    captures,
    config,
    dtype_rules,
    escapes,
    fp_state,
    ir,
    pytree,
    result_identity,
    tracing,
    value_info,
    view_writes,
)
from autostage.runtime import inputs as _inputs
from autostage.runtime.cache_keys import SCALAR, ById, constant_key, leaf_key
from autostage.runtime.environment import Source, bind_environment, environment_key, made_here
from autostage.runtime.staging import raises, random_freeze
from autostage.runtime.tensor import Tensor
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.types import GeneratorType, TensorType, type_of_array

_fp_current, _fp_accepted = fp_state.current, fp_state.accepted

logger = logging.getLogger(__name__)

RETRACE_WARNING_THRESHOLD = 5  # traces of one function before RetracingWarning explains why
TARGETS = ("cpu", "interpreter", "cuda")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class RetracingWarning(UserWarning):
    """A staged function was traced many times; the message says which argument changed.

    Example: ``step(x, n)`` called with a new Python int ``n`` each time traces once per value.
    Fix: pass ``np.int64(n)`` so that ``n`` is staged (one trace for all values).
    """


def is_staged_leaf(leaf: object) -> bool:
    return isinstance(leaf, np.ndarray | np.generic | TensorSpec | np.random.Generator)


def _leaf_type(leaf: object) -> TensorType | GeneratorType:
    if type(leaf) is TensorSpec:
        return leaf.type
    if type(leaf) is np.random.Generator:
        return GeneratorType()
    return TensorType(_inputs.native(leaf.dtype), (None,) * np.ndim(leaf))


def _staged_input(value: ir.Value) -> Tensor | Any:
    """What traced code sees for a parameter: a tensor, or a staged random Generator."""
    if type(value.type) is GeneratorType:
        from autostage.runtime.staging.random_draws import StagedGenerator
        return StagedGenerator(value)
    return Tensor(value)


class ConcreteFunction:
    """One trace: an IR module and how to turn its results back into the returned structure."""

    __slots__ = ("module", "key", "description", "read", "alternative", "outputs", "guards",
                 "used", "_prepare", "_runner", "_lock", "_released")

    def __init__(self, module: ir.Module, key: tuple, description: dict[str, tuple],
                 read: Callable | None, outputs: Outputs, prepare: Callable,
                 guards: list | None = None):
        self.module = module
        self.key = key
        self.description = description  # component label -> key, for retrace messages
        # read(leaves, env) -> the implicit parameters (environment arrays, arrays read through
        # objects), or None when a Python value this trace was specialised on changed
        # (captures.reader); None: no implicit parameters and nothing guarded.
        self.read = read
        self.alternative: ConcreteFunction | None = None  # another trace of the same key
        self.outputs = outputs
        # Arrays frozen in as constants that outlive the call (e.g. `self.w` of an object passed
        # as a constant): if one changes in place, this trace is stale (tracing.Trace.guards).
        self.guards = guards or []
        # The backend's ``prepare(module) -> run(args) -> tuple``, called on the first run (the
        # CPU backend compiles then), so that each call afterwards is one closure call.
        self._prepare = prepare
        self._runner: Callable[[list], tuple] | None = None
        self._lock = threading.Lock()  # one thread prepares (compiles); the others wait for it
        self.used = True  # run since the trace cache last looked (StagedFunction._bound)
        self._released = False  # dropped from the trace cache (release)

    @property
    def function(self) -> ir.Function:
        return self.module.main

    def run(self, staged: list, implicit: list | None) -> Any:
        if implicit:
            staged = staged + implicit
        self.used = True
        runner = self._runner
        if runner is None:
            runner = self._prepared()
        outputs = self.outputs
        if outputs.python_types is None:
            return outputs.build(runner(staged))
        return outputs.build(outputs.as_python(runner(staged)))

    def _prepared(self) -> Callable[[list], tuple]:
        with self._lock:
            if self._runner is None:
                # The backend prepares (the cpu target optimizes) a copy, so the trace stays
                # as traced (``f.ir()``); the identity fixes depend on the copy's passes.
                module = ir.copy_module(self.module)
                body = module.main.body
                self._runner = result_identity.keeping_identity(
                    self._prepare(module), self.outputs.identity, body.args, body.results)
                if self._released:  # prepared for a caller holding a dropped trace
                    _release_runner(self._runner)
            return self._runner

    def release(self) -> None:
        """Tells the backend this trace was dropped from its function's cache (the CPU backend
        forgets its module, so that its compiled code is freed with the last reference)."""
        with self._lock:
            if not self._released:
                self._released = True
                _release_runner(self._runner)

    def text(self) -> str:
        """The printed IR of this trace (every function of its module)."""
        return importlib.import_module("autostage.runtime.printer").format_module(self.module)

    def __repr__(self) -> str:
        params = ", ".join(str(t) for t in self.function.param_types)
        return f"<ConcreteFunction {self.function.name}({params})>"


def _release_runner(runner: Callable | None) -> None:
    release = getattr(runner, "release", None)
    if release is not None:
        release()


class Outputs:
    """How a traced function's results map back to the structure it returned.

    Staged tensors become results of the IR function; Python constants in the output are returned
    as they are (NumPy arrays computed at trace time are copied on each call, as Python would
    build a new one each time). A result that stands for a Python number (a weak value:
    ``x.shape[0]``, ``len(lst)``, their arithmetic) comes back as the Python int/float/bool/complex
    the plain function returns (``python_types``, decided per result when tracing; None when no
    result is one, so that the call path tests one attribute).
    """

    __slots__ = ("treedef", "constants", "positions", "single", "flat", "python_types",
                 "identity")

    def __init__(self, treedef: pytree.TreeDef, constants: list, positions: tuple[int, ...],
                 python_types: tuple | None = None):
        self.treedef = treedef
        self.constants = constants  # the output leaves, with None where a result goes
        self.positions = positions  # leaf position of result i
        self.single = treedef is pytree.LEAF and bool(positions)
        # a tuple of results and nothing else (``return a, b``): the results as they come
        self.flat = (treedef == (tuple, (pytree.LEAF,) * len(constants))
                     and all(c is None for c in constants)
                     and positions == tuple(range(len(constants))))
        # (result index, Python type: int, float, bool or complex) of each weak result, and
        # (result index, np.asarray of its dtype) of each 0-d ndarray one; None if there is none
        self.python_types = tuple((i, kind) for i, kind in enumerate(python_types or ())
                                  if kind is not None) or None
        # what Python's identity of each result is (``result_identity.plan``)
        self.identity: tuple = ()

    def as_python(self, results: tuple) -> list:
        """The results of a run with each weak one as the Python number it stands for (and
        each 0-d ndarray one as an ndarray)."""
        results = list(results)
        for i, kind in self.python_types:
            results[i] = kind(results[i])
        return results

    def build(self, results: tuple) -> Any:
        if self.single and self.constants[0] is None:
            return results[0]
        if self.flat:
            return tuple(results)
        leaves = [c.copy() if type(c) in (np.ndarray, list) else c for c in self.constants]
        for position, value in zip(self.positions, results, strict=True):
            marker = leaves[position]
            if isinstance(marker, _ListResult):  # a callee's list, in its caller's trace
                value = marker.rebuild(value)
            elif marker is _AS_LIST:
                value = list(value)
            elif marker is _AS_PYTHON_LIST:  # a NumPy array here; a tensor in a caller's trace
                value = value.tolist() if type(value) is np.ndarray else list(value)
            leaves[position] = value
        return pytree.unflatten(self.treedef, leaves)


def collect_outputs(trace: tracing.Trace, output: Any, callee: bool = False) -> Outputs:
    """Makes the staged leaves of ``output`` the results of the traced function.

    A tensor list returned by a ``callee`` (a staged call's function) stays a list value, so
    that its caller gets a tensor list back (to iterate, index, append to or ``np.stack``); one
    returned to Python comes back as a Python list of the rows of its stack.
    """
    from autostage.runtime.staging import list_elements, tensor_lists
    from autostage.runtime.staging import values as staged_values

    leaves, treedef = pytree.flatten(output)
    constants, positions, values, python_types = [], [], [], []
    for position, leaf in enumerate(leaves):
        if isinstance(leaf, staged_values.MaybeUnbound):
            raise leaf.error()
        if isinstance(leaf, tensor_lists.TensorList):
            if leaf.value is None:  # never appended to: Python returns the empty list
                constants.append([])
                continue
            if callee:
                tracing.check_visible(leaf.value, "a returned list")
                constants.append(_ListResult(leaf.elements))
                positions.append(position)
                values.append(leaf.value)
                python_types.append(None)
                continue
            # It comes back as a list of the rows of its stack (empty if it stays empty), as
            # Python numbers if every element put in it is one (``list_elements``).
            python = list_elements.returned_as_python(leaf.value, leaf.element.dtype,
                                                      trace.function.name)
            (stacked,) = tracing.emit("list_stack", (leaf.value,), {"empty_ok": True})
            leaf = Tensor(stacked)
            constants.append(_AS_PYTHON_LIST if python else _AS_LIST)
        elif isinstance(leaf, Tensor):
            constants.append(None)
        else:
            _reject_staged_output(leaf)
            constants.append(captures.unwrap(leaf))
            continue
        tracing.check_visible(leaf.value, "a returned tensor")
        array_identity.check_use(leaf.value)
        positions.append(position)
        values.append(leaf.value)
        python_types.append(_python_type(leaf))
    view_writes.check_written_back()
    trace.function.body.results = tuple(values)
    outputs = Outputs(treedef, constants, tuple(positions), tuple(python_types))
    outputs.identity = result_identity.plan(trace.function.body.args, values)
    return outputs


def _python_type(leaf: Tensor) -> Callable | None:
    """The Python number type a returned 0-d weak value stands for, or how a 0-d ndarray result
    comes back (``ndarray_results``); None for NumPy values (backends give NumPy scalars)."""
    if leaf.ndim == 0 and value_info.is_weak(leaf.value):
        return dtype_rules.weak_kind(leaf.dtype)
    if leaf.ndim == 0 and value_info.is_array(leaf.value):
        return functools.partial(np.asarray, dtype=leaf.dtype)  # an argument: itself
    return None


def _mark_arguments(binding: _Binding, positional: tuple, keywords: dict,
                    scalars: dict[int, bool]) -> None:
    """Tells the ops layer which tensors are the caller's arrays (writing into them is an error,
    as the caller would not see the change; NumPy scalars are immutable, so `n //= 10` rebinds)."""
    from autostage.runtime import tensor as tensor_module

    named = [(p.name, v) for p, v in zip(binding.params, positional, strict=False)]
    named += list(keywords.items())
    for name, value in named:
        leaves, treedef = pytree.flatten(value)
        for path, leaf in zip(pytree.leaf_paths(treedef), leaves, strict=True):
            if isinstance(leaf, Tensor):
                scalar = scalars.get(id(leaf))
                tensor_module.mark_argument(leaf, name + path, scalar)
                if scalar is False:  # a 0-d ndarray argument stays one where NumPy keeps it
                    value_info.mark_array(leaf.value)


class _ListResult:
    """Marks a callee's result that is a tensor list, with what its elements are
    (``list_elements``: Python numbers or NumPy values), which its caller's list keeps."""

    __slots__ = ("elements",)

    def __init__(self, elements: Any):
        self.elements = elements

    def rebuild(self, value: Tensor) -> Any:
        from autostage.runtime.staging import list_elements, tensor_lists
        list_elements.record(value.value, self.elements)
        return tensor_lists.TensorList(value.value)


_AS_LIST = object()  # marks an output that was a tensor list: returned as a Python list
_AS_PYTHON_LIST = object()  # ... of Python numbers (``tolist()`` of its stack)


def _reject_staged_output(leaf: object) -> None:
    from autostage.runtime.operator_hooks import Staged

    if isinstance(leaf, Staged):
        raise tracing.StagingError(
            f"a staged function returned a {type(leaf).__name__}, which cannot leave staged code; "
            "return tensors or lists of tensors instead")


class _Binding:
    """How a Python signature maps arguments to a canonical tuple of parameter values and back."""

    def __init__(self, fn: Callable):
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters.values())
        self.names = [p.name for p in self.params]
        simple = all(p.kind in _POSITIONAL for p in self.params)
        # Calls with exactly one positional argument per parameter skip binding (the hot path).
        self.arity = len(self.params) if simple else -1

    def canonical(self, args: tuple, kwargs: dict) -> tuple:
        """Every parameter's value in order, defaults applied (``*args`` a tuple, ``**kw`` a
        dict); raises TypeError like the Python call would."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def call_args(self, values: tuple) -> tuple[list, dict]:
        """The positional and keyword arguments that pass ``values`` to the function."""
        positional, keywords = [], {}
        for param, value in zip(self.params, values, strict=True):
            if param.kind in _POSITIONAL:
                positional.append(value)
            elif param.kind is inspect.Parameter.VAR_POSITIONAL:
                positional.extend(value)
            elif param.kind is inspect.Parameter.KEYWORD_ONLY:
                keywords[param.name] = value
            else:
                keywords.update(value)
        return positional, keywords

    def labels(self, values: tuple, short: bool = False) -> list[str]:
        """A label per leaf of ``values``: ``argument 'x'``, ``argument 'xs'[1]`` (short:
        ``x``, ``xs[1]``)."""
        labels = []
        for name, value in zip(self.names, values, strict=True):
            _, treedef = pytree.flatten(value)
            labels += [f"{name}{path}" if short else f"argument '{name}'{path}"
                       for path in pytree.leaf_paths(treedef)]
        return labels


class FunctionTrace(tracing.Trace):
    """A trace of a staged function: it also records the environment the code read.

    ``captures``: environment arrays made implicit parameters (source -> tensor), in parameter
    order; ``sources``: every environment source read (their values are in the cache key);
    ``shared``: state common to all functions traced into one module (callees, recursion).
    """

    def __init__(self, module: ir.Module, name: str, param_types: list, shared: _ModuleState):
        super().__init__(module, name, param_types)
        module.add(self.function)
        self.captures: dict[Source, Tensor] = {}
        self.sources: dict[Source, None] = {}
        self.shared = shared
        self.variable_policy = shared.variable_policy
        self.written: list[tuple[str, Source, Any]] = []  # (label, source, value before)
        # The Python lists given as arguments: staged code cannot change them in place
        # (the caller's list would not see it; tensor_lists.from_python refuses).
        self.argument_lists: list[list] = []
        self.raised: Exception | None = None  # the trace ended with a raise op of this

    def check_escapes(self) -> None:
        """Raises TensorEscapeError if a staged value was left in a global/nonlocal variable or
        in an object the trace was given, and PythonSideEffectError if the trace changed a
        global/nonlocal variable (put back first; see runtime/escapes.py)."""
        named = [(label, source.read()) for label, source, _ in self.written]
        roots = [(str(path), proxy) for path, proxy in self.shared.stand_ins.items()
                 if not path.steps]
        escapes.check_after_trace(named, roots)
        for (label, source, before), (_, after) in zip(self.written, named, strict=True):
            try:
                escapes.check_change(label, before, after, at_line=False)
            except escapes.PythonSideEffectError:
                source.write(before)
                raise

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
            tensor = self.captures[source] = _staged_input(param)
        return tensor


class _ModuleState:
    """What the functions traced into one module share."""

    def __init__(self, variable_policy: Callable[[], None] | None):
        self.callees: dict[tuple, Any] = {}  # callee key -> staged_calls.Callee
        self.active: set[tuple] = set()  # callee keys being traced (recursion check)
        self.variable_policy = variable_policy
        self.reads: dict[captures.Path, dict] = {}  # path read through an object -> its checks
        self.stand_ins: dict[captures.Path, Any] = {}  # path -> the stand-in given to the code
        self.made: dict[int, object] = {}  # id -> a user object the traced code constructed


def _verify(module: ir.Module) -> None:
    try:
        verifier = importlib.import_module("autostage.runtime.verifier")
    except ImportError:  # pragma: no cover - the verifier lands with the interpreter
        return
    verifier.verify(module)


def _interpreter(module: ir.Module) -> Callable[[list], tuple]:
    """Runs the traced IR as it is, with only the in-place marking of setitems (so a write
    into a dead array does not copy it, as in compiled code)."""
    from autostage.runtime import interpreter
    from autostage.runtime.passes import optimize

    optimize(module, ("inplace",))
    return lambda args: interpreter.run(module, args)


def optimized(module: ir.Module) -> ir.Module:
    """``module`` after the default pass pipeline (where it exists), verified: what compiled
    backends lower."""
    try:
        passes = importlib.import_module("autostage.runtime.passes")
    except ImportError:  # pragma: no cover - the passes package always exists
        return module
    optimize = getattr(passes, "optimize", None)
    if optimize is None:
        return module
    module = optimize(module)
    _verify(module)
    return module


def _cpu(module: ir.Module) -> Callable[[list], tuple]:
    """Optimizes and compiles (on the first call of a trace; see ConcreteFunction.run)."""
    from autostage.runtime.backends.cpu.compile import compile_module

    return compile_module(optimized(module))


# target -> prepare(module) -> run(args: list) -> tuple of NumPy results.
BACKENDS: dict[str, Callable[[ir.Module], Callable[[list], tuple]]] = {
    "interpreter": _interpreter, "cpu": _cpu}


def backend_for(target: str, stacklevel: int = 1) -> tuple[str, Callable]:
    """The backend that runs ``target``: its name and ``prepare(module) -> run(args)``."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    if target in BACKENDS:
        return target, BACKENDS[target]
    raise NotImplementedError(
        f"autostage: the {target!r} backend is not implemented yet; use target='interpreter'")


# --- Staged calls: a user function called with staged arguments becomes a `call` op. ---------

_active_traces = 0  # traces running in any thread; converted() checks it before thread state
_active_lock = threading.Lock()


def staging_active() -> bool:
    """Whether a staged function is being traced in this thread (cheap when none is)."""
    return _active_traces > 0 and isinstance(tracing.current(), FunctionTrace)


class Callee:
    """A function traced into a module for staged calls: its name and how to call it."""

    __slots__ = ("name", "outputs", "captures", "result_types", "weak_results", "raised")

    def __init__(self, name: str, outputs: Outputs, captures: tuple, result_types: tuple,
                 weak_results: tuple[int, ...], raised: Exception | None = None):
        self.name = name
        self.outputs = outputs
        self.captures = captures  # the environment sources of its implicit parameters
        self.result_types = result_types
        # per result: a NumPy value, a Python number or a 0-d ndarray (``_kind``)
        self.weak_results = weak_results
        self.raised = raised  # it always raises this (after its prints...): so does the caller


def _immutable_constant(leaf: object) -> bool:
    return leaf is None or isinstance(leaf, int | float | complex | str | bytes | np.dtype
                                      | type | types.FunctionType)


def call_from_trace(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Calls converted ``fn`` from the function being traced.

    With staged arguments (and otherwise only immutable constants, so that rebuilding the
    arguments cannot lose a mutation the caller would see) the call is traced into its own
    function of the module and stays a ``call`` op; any other call runs inline, reading its
    environment like the caller does. A method of an object the trace's Python code made
    (``made_in_trace``) runs inline too: its ``self`` is a local object whose attributes the
    method may change (at every call, as Python does).
    """
    trace = tracing.current()
    leaves, treedef = pytree.flatten((args, kwargs))
    method = isinstance(fn, types.MethodType)
    if not any(isinstance(leaf, Tensor) for leaf in leaves) or not all(
            isinstance(leaf, Tensor) or _immutable_constant(leaf) for leaf in leaves) or (
            _has_mutable_nodes(treedef)) or (method and made_here(trace, fn.__self__)):
        return bind_environment(fn, trace)(*args, **kwargs)
    target = fn.__func__ if method else fn
    owner = ById(fn.__self__) if method else None  # a method's callee is per object
    # A weak argument (a Python scalar such as `x.shape[0]`) stays weak in the callee, as Python
    # would pass the int itself: it is part of the key.
    key = (ById(target), owner, treedef, *[
        (leaf.type, _kind(leaf.value)) if isinstance(leaf, Tensor)
        else constant_key(leaf) for leaf in leaves])
    callee = trace.shared.callees.get(key)
    if callee is None:
        callee = _trace_callee(fn, key, leaves, treedef, trace)
    operands = [leaf.value for leaf in leaves if isinstance(leaf, Tensor)]
    operands += [trace.capture(source, source.read()).value for source in callee.captures]
    results = tracing.emit("call", operands, {"callee": callee.name,
                                               "result_types": callee.result_types})
    for value, kind in zip(results, callee.weak_results, strict=True):
        _mark_kind(value, kind)
    if callee.raised is not None:
        raise callee.raised
    return callee.outputs.build(tuple(Tensor(value) for value in results))


def made_in_trace(cls: type) -> Callable:
    """``cls`` as traced code calls it: an instance of a user class is recorded as the trace's
    own object. Its methods then run inline with a plain ``self`` (changing its attributes is
    local state, as for ``box.n += 1`` in the function itself), not as call ops that would see
    it as an object from outside the trace."""
    def make(*args: Any, **kwargs: Any) -> Any:
        obj = cls(*args, **kwargs)
        shared = getattr(tracing.current(), "shared", None)
        if shared is not None and captures.is_user_object(obj):
            shared.made[id(obj)] = obj
        return obj
    return make


def _has_mutable_nodes(treedef: pytree.TreeDef) -> bool:
    """Whether the ``(args, kwargs)`` structure holds a list or dict (other than kwargs itself):
    containers the callee could mutate, which a call op would rebuild."""
    args_def, kwargs_def = treedef[1]
    return _mutable(args_def) or any(_mutable(child) for child in kwargs_def[2])


def _mutable(treedef: pytree.TreeDef) -> bool:
    if treedef is pytree.LEAF:
        return False
    if treedef[0] is list or treedef[0] is dict:
        return True
    return any(_mutable(child) for child in treedef[-1])


def _trace_callee(fn: Callable, key: tuple, leaves: list, treedef: pytree.TreeDef,
                  caller: FunctionTrace) -> Callee:
    shared = caller.shared
    if key in shared.active:
        where = tracing.user_location()
        raise tracing.StagingError(
            f"staged recursion is not supported yet: {getattr(fn, '__qualname__', fn)} calls "
            f"itself with staged arguments of the same types"
            f"{f' at {where}' if where is not None else ''}; make the recursion depend on a "
            "Python constant, or write it as a loop")
    name = _unique_name(caller.module, getattr(fn, "__name__", "callee"))
    tensors = [leaf for leaf in leaves if isinstance(leaf, Tensor)]
    kinds = [_kind(leaf.value) for leaf in tensors]  # facts of the caller's trace
    trace = FunctionTrace(caller.module, name, [leaf.type for leaf in tensors], shared)
    trace.roots = None if caller.roots is None else (fn, *caller.roots)
    params = iter(trace.function.body.args)
    args, kwargs = pytree.unflatten(treedef, [
        Tensor(next(params)) if isinstance(leaf, Tensor) else leaf for leaf in leaves])
    trace.argument_lists = _lists_in([*args, *kwargs.values()])
    shared.active.add(key)
    try:
        with tracing.tracing(trace):
            for param, kind in zip(trace.function.body.args, kinds, strict=False):
                _mark_kind(param, kind)
            output = _run_traced(trace, bind_environment(fn, trace), args, kwargs)
            outputs = collect_outputs(trace, output, callee=True)
            trace.check_escapes()
            weak_results = tuple(_kind(v) for v in trace.function.body.results)
    finally:
        shared.active.discard(key)
        trace.finished = True
    caller.sources.update(trace.sources)
    callee = Callee(name, outputs, tuple(trace.captures), trace.function.result_types,
                    weak_results, trace.raised)
    shared.callees[key] = callee
    return callee


def _lists_in(arguments: list) -> list[list]:
    """The Python lists given as (or inside) ``arguments``, held so that their ids stay theirs."""
    found: list[list] = []
    todo = list(arguments)
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo += item.values()
        elif isinstance(item, (list, tuple)):
            if isinstance(item, list):
                found.append(item)
            todo += item
    return found


# What a staged value passed to or returned from a staged call is, as Python sees it: a NumPy
# value, a Python number (weak), or a 0-d ndarray (``ndarray_results``).
_NUMPY, _WEAK, _ARRAY = 0, 1, 2


def _kind(value: ir.Value) -> int:
    return _WEAK if value_info.is_weak(value) else _ARRAY if value_info.is_array(value) else _NUMPY


def _mark_kind(value: ir.Value, kind: int) -> None:
    if kind == _WEAK:
        value_info.mark_weak(value)
    elif kind == _ARRAY:
        value_info.mark_array(value)


def _run_traced(trace: FunctionTrace, fn: Callable, args: tuple | list, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` in ``trace``; a user exception raised after ops with effects
    (prints...) ends the trace with a ``raise`` op: Python prints, then raises (``raises``)."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        if not raises.finish_with(e, trace.function.body):
            raise
        trace.raised = e
        return None


def _unique_name(module: ir.Module, base: str) -> str:
    name, n = base, 0
    while name in module.functions:
        n += 1
        name = f"{base}_{n}"
    return name


def traced_call(fn: Callable) -> Callable:
    """What ``ag__.converted(f)`` returns while a staged function is traced: ``f`` called through
    ``call_from_trace`` (a call op, or inline with its environment captured)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return call_from_trace(fn, args, kwargs)

    return call


# --- The staged function. ------------------------------------------------------------------

STRUCTURE = "the structure of the arguments"
_GENERATOR_KEY = (GeneratorType(),)


def _unwrap(fn: Callable) -> Callable:
    """The converted function itself (``to_graph`` wraps it to add error notes)."""
    if isinstance(fn, types.MethodType):
        return types.MethodType(_unwrap(fn.__func__), fn.__self__)
    return getattr(fn, "__autostage_converted__", fn)


class StagedFunction:
    """A function that is traced into typed IR once per signature and run by a backend.

    Args:
      python_function: the (converted) Python function.
      name: the IR function's name (default: the function's ``__name__``).
      input_signature: TensorSpecs (nested like the arguments) of the leading parameters: one
        trace, and calls whose arguments do not fit are a TypeError.
      target: ``"interpreter"`` (NumPy reference), ``"cpu"`` (Numba, compiled on the first call
        of each trace and cached on disk) or ``"cuda"`` (not yet).
      error_hook: called with every exception leaving a call (the compiler adds source notes).
    """

    def __init__(self, python_function: Callable, name: str | None = None,
                 input_signature: Any = None, target: str = "interpreter",
                 error_hook: Callable[[BaseException], None] | None = None):
        self.python_function = python_function
        self._traced = _unwrap(python_function)
        self.name = name or getattr(python_function, "__name__", "staged")
        self.__name__ = self.name
        self.__qualname__ = getattr(python_function, "__qualname__", self.name)
        self.__doc__ = getattr(python_function, "__doc__", None)
        self.__wrapped__ = python_function
        self.target = target
        self.backend, self._execute = backend_for(target)
        self._binding = _Binding(python_function)
        self.input_signature = None
        self._spec_leaves: list[TensorSpec] = []
        if input_signature is not None:
            self._set_signature(input_signature)
        self._error_hook = error_hook
        self._cache: dict[tuple, ConcreteFunction] = {}
        self._sources: tuple[Source, ...] = ()
        self.concrete_functions: list[ConcreteFunction] = []  # the traces kept (max_traces)
        self._trace_count = 0  # traces made, kept or dropped
        self._descriptions: tuple[dict, dict] = ({}, {})  # of the last two traces made
        self._lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}
        self._local = threading.local()  # keys this thread is tracing (recursion check)
        self._warned: set[str] = set()

    @property
    def trace_count(self) -> int:
        return self._trace_count

    def __get__(self, instance: object, owner: type | None = None) -> Callable:
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<StagedFunction {self.__qualname__} target={self.target}>"

    # The hot path: bind, flatten, key, one dict read, run.
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if _fp_current() is not _fp_accepted[0]:  # np.seterr changed: ~20 ns when not
                fp_state.check(f"when {self.name} is called")
            if kwargs or len(args) != self._binding.arity:
                values = self._binding.canonical(args, kwargs)
            else:
                values = args
            leaves, treedef = pytree.flatten(values)
            if _active_traces and staging_active() and any(
                    isinstance(leaf, Tensor) for leaf in leaves):
                return call_from_trace(self._traced, args, kwargs)
            if self.input_signature is not None:
                self._check_signature(args, kwargs, values)
            key, staged = self._key(treedef, leaves)
            sources = self._sources
            env = [source.read() for source in sources]
            if env:
                key = (*key, *[environment_key(value) for value in env])
            concrete = self._cache.get(key)
            implicit = None
            while concrete is not None:  # the traces of this key: the first whose reads pass
                if concrete.read is None or (implicit := concrete.read(leaves, env)) is not None:
                    break
                concrete = concrete.alternative
            if concrete is not None and concrete.guards and not tracing.arrays_unchanged(
                    concrete.guards):
                concrete = self._evict(key, concrete)
            if concrete is None:
                concrete = self._miss(key, values, leaves, treedef)
                env = [source.read() for source in self._sources]
                implicit = concrete.read(leaves, env) if concrete.read is not None else None
            return concrete.run(staged, implicit)
        except Exception as e:
            if self._error_hook is not None:
                self._error_hook(e)
            raise

    def _lookup(self, key: tuple, leaves: list) -> ConcreteFunction | None:
        """The trace of ``key`` whose reads through objects pass now, if any."""
        concrete = self._cache.get(key)
        env = [source.read() for source in self._sources]
        while concrete is not None and concrete.read is not None and concrete.read(
                leaves, env) is None:
            concrete = concrete.alternative
        return concrete

    def _evict(self, key: tuple, stale: ConcreteFunction) -> None:
        """Drops a trace whose frozen arrays changed, so that the call traces again."""
        with self._lock:
            for k in [k for k, v in self._cache.items() if v is stale]:
                del self._cache[k]
        return None

    @staticmethod
    def _key(treedef: pytree.TreeDef, leaves: list) -> tuple[tuple, list]:
        key, staged = [treedef], []
        for leaf in leaves:
            kind = type(leaf)
            if kind is np.ndarray:
                key.append((leaf.dtype, leaf.ndim))
                staged.append(leaf)
            elif kind is float or kind is int or kind is bool:  # the common constants first
                key.append(constant_key(leaf))
            elif isinstance(leaf, np.generic):  # not a 0-d ndarray's key (ndarray_results)
                key.append((leaf.dtype, 0, SCALAR))
                staged.append(leaf)
            elif type(leaf) is np.random.Generator:  # a run-time input, whichever it is
                key.append(_GENERATOR_KEY)
                staged.append(leaf)
            elif isinstance(leaf, np.ndarray):  # a subclass: staged or refused by its trace
                key.append(_inputs.subclass_key(leaf))
                staged.append(leaf)
            else:
                key.append(leaf_key(leaf))
        return tuple(key), staged

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The trace for these arguments (traced now if needed), without running it.

        Arguments may be TensorSpecs in place of arrays; with an ``input_signature`` and no
        arguments, the signature's trace.
        """
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(pytree.unflatten(pytree.flatten(self.input_signature)[1],
                                          [_example(s) for s in self._spec_leaves]))
        values = self._binding.canonical(args, kwargs)
        leaves, treedef = pytree.flatten(values)
        leaves = [_example(leaf) if type(leaf) is TensorSpec and (
            self.input_signature is not None or all(d is None for d in leaf.shape)) else leaf
            for leaf in leaves]
        if self.input_signature is not None:
            self._check_signature(args, kwargs, values=pytree.unflatten(treedef, leaves))
        key, _ = self._key(treedef, leaves)
        env = [environment_key(source.read()) for source in self._sources]
        key = (*key, *env)
        return self._cache.get(key) or self._miss(key, values, leaves, treedef)

    def ir(self, *args: Any, **kwargs: Any) -> str:
        """The printed IR of the trace for these arguments (arrays, scalars or TensorSpecs)."""
        return self.get_concrete_function(*args, **kwargs).text()

    # Input signatures.
    def _set_signature(self, signature: Any) -> None:
        signature = tuple(signature)
        leaves, _ = pytree.flatten(signature)
        for leaf in leaves:
            if type(leaf) is not TensorSpec:
                raise TypeError(f"input_signature of {self.name} must hold TensorSpecs (nested in "
                                f"tuples, lists or dicts), not {leaf!r}")
        params = self._binding.params
        if len(signature) > len(params) or any(
                p.kind not in _POSITIONAL for p in params[:len(signature)]):
            raise TypeError(f"input_signature of {self.name} has {len(signature)} entries, but "
                            "the function has fewer positional parameters")
        for param in params[len(signature):]:
            if param.default is inspect.Parameter.empty and param.kind in _POSITIONAL + (
                    inspect.Parameter.KEYWORD_ONLY,):
                raise TypeError(f"input_signature of {self.name} does not cover parameter "
                                f"'{param.name}', which has no default")
        self.input_signature = signature
        self._spec_leaves = leaves

    def _check_signature(self, args: tuple, kwargs: dict, values: tuple) -> None:
        """Raises TypeError naming the argument whose value does not fit the signature."""
        covered = self._binding.names[:len(self.input_signature)]
        if len(args) > len(covered) or any(k not in covered for k in kwargs):
            raise TypeError(f"{self.name}() takes the {len(covered)} arguments of its "
                            f"input_signature ({', '.join(covered)}); got {len(args)} positional "
                            f"and {sorted(kwargs)} keyword arguments")
        for name, spec_tree, value in zip(covered, self.input_signature, values, strict=False):
            spec_leaves, spec_def = pytree.flatten(spec_tree)
            value_leaves, value_def = pytree.flatten(value)
            if spec_def != value_def:
                raise TypeError(
                    f"{self.name}() argument '{name}' must have the structure "
                    f"{pytree.describe(spec_def)} of its input_signature, got "
                    f"{pytree.describe(value_def)}")
            paths = pytree.leaf_paths(spec_def)
            for path, spec, leaf in zip(paths, spec_leaves, value_leaves, strict=True):
                problem = spec.mismatch(leaf)
                if problem is not None:
                    raise TypeError(
                        f"{self.name}() argument '{name}'{path} must be {spec} ({spec!r}) as its "
                        f"input_signature says; got {problem}")

    # Tracing.
    def _miss(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
              ) -> ConcreteFunction:
        """Traces once per key: other threads wanting the same key wait for that trace."""
        mine = self._local.__dict__.setdefault("keys", set())
        if key in mine:
            raise tracing.StagingError(
                f"staged recursion is not supported yet: {self.name} calls itself with arguments "
                "of the same types while it is being traced")
        with self._lock:
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            concrete = self._lookup(key, leaves)
            if concrete is None:
                mine.add(key)
                try:
                    concrete = self._trace(key, values, leaves, treedef)
                finally:
                    mine.discard(key)
        with self._lock:
            self._key_locks.pop(key, None)
        return concrete

    def _trace(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
               ) -> ConcreteFunction:
        for leaf in leaves:
            if isinstance(leaf, Tensor):  # a tensor kept from an earlier trace
                tracing.check_visible(leaf.value, "a staged tensor passed as an argument")
        for label, leaf in zip(self._binding.labels(values), leaves, strict=True):
            if isinstance(leaf, np.ndarray | np.generic):
                _inputs.check(leaf, label, self.name)
        module = ir.Module(self.name)
        specs = iter(self._spec_leaves)
        types_ = [next(specs, None) or _leaf_type(leaf) for leaf in leaves
                  if is_staged_leaf(leaf)]
        types_ = [t.type if type(t) is TensorSpec else t for t in types_]
        trace = FunctionTrace(module, self.name, types_, _ModuleState(self._variable_policy))
        trace.roots = (self._traced, values)
        params = iter(trace.function.body.args)
        scalars: dict[int, bool] = {}  # id(tensor) -> whether the argument is a NumPy scalar

        def parameter(leaf: object) -> Tensor:
            tensor = _staged_input(next(params))
            scalars[id(tensor)] = isinstance(leaf, np.generic)
            return tensor

        labels = self._binding.labels(values, short=True)
        inputs = pytree.unflatten(treedef, [
            parameter(leaf) if is_staged_leaf(leaf) else captures.proxy_root(
                leaf, captures.Root("arg", i, labels[i])) for i, leaf in enumerate(leaves)])
        positional, keywords = self._binding.call_args(inputs)
        trace.argument_lists = _lists_in([*positional, *keywords.values()])
        random_check = random_freeze.FreezeCheck()  # no draw may be frozen into the trace
        _enter()
        try:
            with tracing.tracing(trace):
                _mark_arguments(self._binding, positional, keywords, scalars)
                output = _run_traced(trace, bind_environment(self._traced, trace), positional,
                                     keywords)
                outputs = collect_outputs(trace, output)
                trace.check_escapes()
                fp_state.check_while_tracing()
            random_check.check(self.name, random_freeze.names_in_trace(trace, labels, leaves))
        finally:
            random_check.close()
            trace.finished = True
            _leave()
        _verify(module)
        return self._store(key, trace, outputs, values, leaves, treedef)

    def _store(self, key: tuple, trace: FunctionTrace, outputs: Outputs, values: tuple,
               leaves: list, treedef: pytree.TreeDef) -> ConcreteFunction:
        with self._lock:
            sources = self._sources + tuple(s for s in trace.sources if s not in self._sources)
            env = [source.read() for source in sources]
            description = self._describe(values, leaves, treedef, sources, env)
            reads = trace.shared.reads
            description.update(captures.describe(reads))
            read = captures.reader(list(trace.captures), reads, sources) if (
                trace.captures or reads) else None
            prepare = self._execute
            staged = [leaf for leaf in leaves if is_staged_leaf(leaf)]
            swapped = tuple(i for i, leaf in enumerate(staged) if _inputs.needs_native_copy(leaf))
            if swapped:  # non-native byte order: copied at each call (only this trace's calls)
                prepare = (lambda module, _prepare=prepare: _inputs.native_order(
                    _prepare(module), swapped))
            concrete = ConcreteFunction(trace.module, key, description, read, outputs,
                                        prepare, trace.guards())
            own_key = key[:1 + len(leaves)]
            concrete.alternative = self._cache.get(key)
            self._cache[key] = concrete
            full_key = (*own_key, *[environment_key(v) for v in env])
            if full_key != key:
                self._cache[full_key] = concrete
            self._sources = sources
            self.concrete_functions.append(concrete)
            self._trace_count += 1
            self._descriptions = (self._descriptions[1], description)
            count = self._trace_count
            dropped = self._bound()
        for old in dropped:
            old.release()
        if count > RETRACE_WARNING_THRESHOLD and count > 1:
            self._warn_retrace(count, values, leaves)
        return concrete

    def _variable_policy(self) -> None:
        if self._trace_count:
            raise _variable_error(self.name, self._trace_count + 1)

    def _bound(self) -> list[ConcreteFunction]:
        """Drops the traces beyond ``max_traces`` (the least recently run first, by second
        chance: a trace run since the last look is kept once more); returns them. Call with
        ``self._lock`` held."""
        kept, dropped = self.concrete_functions, []
        limit = config.MAX_TRACES.value()
        while limit > 0 and len(kept) > limit:
            victim = kept.pop(0)
            if victim.used and victim is not kept[-1]:
                victim.used = False
                kept.append(victim)
                continue
            self._unlink(victim)
            dropped.append(victim)
        return dropped

    def _unlink(self, victim: ConcreteFunction) -> None:
        """Removes ``victim`` from the trace cache (and the chains of alternatives)."""
        for key, head in list(self._cache.items()):
            if head is victim:
                if victim.alternative is None:
                    del self._cache[key]
                else:
                    self._cache[key] = victim.alternative
                continue
            node = head
            while node.alternative is not None:
                if node.alternative is victim:
                    node.alternative = victim.alternative
                    break
                node = node.alternative

    # Retrace warnings.
    def _describe(self, values: tuple, leaves: list, treedef: pytree.TreeDef,
                  sources: tuple, env: list) -> dict[str, tuple]:
        description: dict[str, Any] = {STRUCTURE: treedef}
        for label, leaf in zip(self._binding.labels(values), leaves, strict=False):
            description[label] = leaf_key(leaf)
        for source, value in zip(sources, env, strict=False):
            description[str(source)] = environment_key(value)
        return description

    def _warn_retrace(self, count: int, values: tuple, leaves: list) -> None:
        old, new = self._descriptions
        changed = [label for label in new if old.get(label, new[label]) != new[label]]
        if not changed or changed[0] in self._warned:
            return
        self._warned.add(changed[0])
        by_label = dict(zip(self._binding.labels(values), leaves, strict=False))
        reason = _explain(changed[0], old[changed[0]], new[changed[0]], by_label)
        warnings.warn(
            f"{self.name} has been traced {count} times (more than {RETRACE_WARNING_THRESHOLD}); "
            f"tracing is slow, and this trace was needed because {reason}", RetracingWarning,
            stacklevel=tracing.user_stacklevel())


def _example(spec: TensorSpec) -> np.ndarray:
    """An array that fits ``spec``, standing for it where only its type matters."""
    return np.zeros([1 if d is None else d for d in spec.shape], spec.dtype)


def _variable_error(name: str, trace_number: int) -> Exception:
    from autostage.runtime.state import VariableCreationError

    return VariableCreationError(
        f"{name} created a Variable on its trace number {trace_number}; a staged function may "
        "create Variables only on its first trace (traces are reused, so a Variable created per "
        "trace would silently be a different one). Create it outside the function, or once: "
        "`if self.v is None: self.v = Variable(...)`")


_SUGGESTED = {int: "np.int64", float: "np.float64", bool: "np.bool_", complex: "np.complex128"}


def _explain(label: str, old: Any, new: Any, leaves_by_label: dict[str, Any]) -> str:
    """Why component ``label`` of the trace key changed, and what to do about it."""
    if label == STRUCTURE:
        return (f"{label} changed from {pytree.describe(old)} to {pytree.describe(new)}")
    if label.startswith(("global", "closed-over")):
        return (f"{label} changed; globals and closed-over values that are not NumPy arrays are "
                "compile-time constants (arrays are read at call time: one trace per dtype and "
                "shape)")
    if label not in leaves_by_label:  # a Python value read through an object (captures)
        return (f"{label} changed from {_value_text(old)} to {_value_text(new)}; a Python value "
                "read through an object or container is a constant the trace is specialised on "
                "(arrays are read at each call): store a NumPy value (e.g. np.float64(v)) there "
                "to stage it")
    leaf = leaves_by_label.get(label)
    if is_staged_leaf(leaf):
        return (f"{label} changed from {_key_text(old)} to {_key_text(new)} (a trace is per "
                "dtype and rank)")
    kind = type(leaf)
    if kind in _SUGGESTED:
        name = label.split("'")[1] if "'" in label else "value"
        return (f"{label} is a Python {kind.__name__} and is traced per value (now {leaf!r}); "
                f"pass {_SUGGESTED[kind]}({name}) to stage it")
    if isinstance(new[1], ById) or type(leaf).__hash__ is object.__hash__:
        return (f"{label} is a {kind.__name__} object, traced per identity (a new object each "
                "call traces again); pass the same object, or pass its arrays as arguments")
    return f"{label} is a constant traced per value (now {leaf!r:.60})"


def _value_text(key: tuple) -> str:
    kind, value = key
    if kind is float and isinstance(value, str):  # a zero or NaN keys on its hex text
        value = float.fromhex(value)
    return f"{value!r:.60}"


def _key_text(key: tuple) -> str:
    dtype, rank = key[0], key[1]
    if isinstance(dtype, np.dtype) and isinstance(rank, int):
        text = str(TensorType(dtype, (None,) * rank))
        if rank == 0:
            return text + (" (a NumPy scalar)" if key[2:] == (SCALAR,) else " (a 0-d ndarray)")
        return text
    return repr(key)


def _enter() -> None:
    global _active_traces
    with _active_lock:
        _active_traces += 1


def _leave() -> None:
    global _active_traces
    with _active_lock:
        _active_traces -= 1
