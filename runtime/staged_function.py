"""``StagedFunction``: a Python function traced into typed IR once per signature, then run.

A call binds the arguments like Python (defaults applied) and flattens them (``pytree``):
``np.ndarray`` / ``np.generic`` leaves are staged (their dtype and rank; sizes stay unknown),
every other leaf is a compile-time constant the trace is specialised on (by value if hashable,
else by identity). The trace cache key is ``(treedef, per leaf: (dtype, ndim) or the constant,
per environment source: its key)``. A miss traces the function (``function_trace``), verifies the
module and caches a ``ConcreteFunction``; a hit is one dict read, without a lock. The cache keeps
``config.MAX_TRACES`` traces (least recently run dropped first); many traces warn why
(``retrace_warnings``).

Globals and closed-over variables are read at call time (``environment``); arrays frozen in from
constant objects are checked at each call (``Trace.guards``). Keys are made in ``cache_keys``.
Calls from staged code to user functions with staged arguments become ``call`` ops
(``staged_calls``).
"""

from __future__ import annotations

import functools
import importlib
import io
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    call_slot,
    captures,
    collector,
    config,
    fp_state,
    function_trace,
    ir,
    pytree,
    retrace_warnings,
    static_sizes,
    trace_output,
    tracing,
    verifier,
)
from autostage.runtime import inputs as _inputs
from autostage.runtime.argument_writes import RunAsPython
from autostage.runtime.cache_keys import SCALAR, constant_key, leaf_key
from autostage.runtime.call_slot import MISS
from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.config import EAGER as _EAGER
from autostage.runtime.environment import Source, bind_environment, environment_key
from autostage.runtime.escapes import PythonSideEffectError, TensorEscapeError
from autostage.runtime.fast_calls import fast_path
from autostage.runtime.function_outputs import Outputs, collect_outputs
from autostage.runtime.function_trace import (
    FunctionTrace,
    ModuleState,
    is_staged_leaf,
    leaf_type,
    mark_arguments,
    run_traced,
    staged_input,
    staging_active,
)
from autostage.runtime.retrace_warnings import RETRACE_WARNING_THRESHOLD, RetracingWarning
from autostage.runtime.signature_binding import (
    Binding,
    check_arguments,
    checked_signature,
    example,
)
from autostage.runtime.staged_calls import call_from_trace
from autostage.runtime.staging import python_state, random_freeze
from autostage.runtime.staging.errors import AlwaysRaisesError
from autostage.runtime.staging.random_draws import RandomStagingError
from autostage.runtime.targets import backend_text, target_for
from autostage.runtime.tensor import Tensor
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.trace_output import PrintsWhileTraced
from autostage.runtime.types import GeneratorType

_fp_current, _fp_accepted = fp_state.current, fp_state.accepted
_EAGER.on_engage(call_slot.engage_eager)  # (then every call takes the full path, which decides)
_traces = function_trace  # ``_traces.active_traces``: read on each call, changed by tracing

_GENERATOR_KEY = (GeneratorType(),)
_DEVICE_KEY = "device array"  # a GPU array's key: its dtype and rank (target 'cuda' stages it)
RANDOM_RETRIES = 3  # traces again when another thread may have drawn from a shared state


def _refuse_unseen_files(iterators: python_state.OutsideState) -> None:
    """Refuses, before the trace runs, a file argument whose writes it could not see."""
    if iterators.unseen:
        raise PythonSideEffectError(
            f"the file '{iterators.unseen[0]}' given as an argument cannot say where it is (a "
            "terminal or a pipe, such as sys.stdout): a staged function runs its Python code "
            "once per trace, not at every call, so a write into it would happen once, and "
            "autostage cannot tell whether the function writes it. print() in the function "
            "instead (staged at every call), or write the file outside it")


def _refuse_advanced(iterators: python_state.OutsideState, name: str) -> None:
    """Refuses (and puts back) what the trace of ``name`` advanced or changed outside it."""
    moved = iterators.advanced()
    if moved:
        raise PythonSideEffectError(
            f"{moved[0]} while {name} is traced (it outlives the call: an argument, a global, "
            "a closure variable or held by one): a staged function runs its Python code once "
            "per trace, "
            "not at every call, so later calls would not change it. Pass the values as "
            "arguments (items as a list or an array) and return the new ones, or change it in "
            "the caller")


def _refuse_changes_before(trace: FunctionTrace, traced: Callable, e: Exception) -> None:
    """Where the user's code raised ``e`` while traced after changing what outlives the call
    (an argument's list, a global), the refusal the change meets when the trace completes:
    Python would raise ``e`` with the change made, the trace had made it on its own copy."""
    if isinstance(e, tracing.StagingError):
        trace.put_back_written()
        return
    try:
        trace.check_escapes(traced)
    except (PythonSideEffectError, TensorEscapeError) as refusal:
        raise refusal from e
    except Exception:  # noqa: BLE001 - the user's exception is what to report
        return


def _imports_as(module: str | None, qualname: str) -> object:
    """What importing ``module`` and reading ``qualname`` there gives in this process (None if
    nothing): not for ``__main__`` (another process's main module is not this one) nor for
    modules cloudpickle is told to pickle by value."""
    if not module or module == "__main__" or "<locals>" in qualname:
        return None
    cloudpickle = sys.modules.get("cloudpickle")
    if cloudpickle is not None and module in getattr(
            cloudpickle, "list_registry_pickle_by_value", set)():
        return None
    value = sys.modules.get(module)
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value


def _imported(module: str, qualname: str) -> StagedFunction:
    """A staged function pickled by reference: imported."""
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def _reported(method: Callable) -> Callable:
    """A method that traces outside a call (``compile``, ``ir``...): its errors are reported
    as a call's are (``error_hook``: the user's lines, the traceback filtered)."""
    @functools.wraps(method)
    def reporting(self: StagedFunction, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as e:
            if self._error_hook is not None:
                self._error_hook(e)
            raise

    return reporting


def _unwrap(fn: Callable) -> Callable:
    """The converted function itself (``to_graph`` wraps it to add error notes)."""
    if isinstance(fn, types.MethodType):
        return types.MethodType(_unwrap(fn.__func__), fn.__self__)
    return getattr(fn, "__autostage_converted__", fn)


_OWN = frozenset({"python_function", "name", "target", "backend", "input_signature",
                  "concrete_functions"})  # StagedFunction's public attributes


class StagedFunction(call_slot.Base):
    """A function that is traced into typed IR once per signature and run by a backend.

    Args:
      python_function: the (converted) Python function.
      name: the IR function's name (default: the function's ``__name__``).
      input_signature: TensorSpecs (nested like the arguments) of the leading parameters: one
        trace, and calls whose arguments do not fit are a TypeError.
      target: ``"interpreter"`` (NumPy reference), ``"cpu"`` (Numba, compiled on the first call
        of each trace and cached on disk) or ``"cuda"`` (kernels on an NVIDIA GPU).
      error_hook: called with every exception leaving a call (the compiler adds source notes).
      tiered: while a cpu trace compiles in the background, calls run ``python_function`` with
        the NumPy values given (``config.TIERED``): for a converted user function, whose Python
        run is the original's. ``compile(*args)`` waits for the compiled code instead. Such a
        function also runs as Python while ``config.EAGER`` is on (any target).
      by_value: what pickles ``python_function`` by value (``__reduce__``), when it is not
        plain cloudpickle's work.
    """

    def __init__(self, python_function: Callable, name: str | None = None,
                 input_signature: Any = None, target: str = "interpreter",
                 error_hook: Callable[[BaseException], None] | None = None,
                 tiered: bool = False, by_value: Callable[[Callable], object] | None = None):
        self.python_function = python_function
        self._traced = _unwrap(python_function)
        self.name = name or getattr(python_function, "__name__", "staged")
        self.__name__ = self.name
        self.__qualname__ = getattr(python_function, "__qualname__", self.name)
        self.__doc__ = getattr(python_function, "__doc__", None)
        self.__wrapped__ = python_function
        self.target = target
        self._target = target_for(target)
        self.backend, self._execute = self._target.name, self._target.prepare
        self._binding = Binding(python_function)
        self.input_signature = None
        self._spec_leaves: list[TensorSpec] = []
        if input_signature is not None:
            self._set_signature(input_signature)
        self._error_hook = error_hook
        self._converted = tiered  # its Python run is the original's: it may run eagerly
        self._by_value = by_value
        self._tiered = tiered and self._target.name == "cpu"
        self._cache: dict[tuple, ConcreteFunction] = {}
        # A trace called with positional arrays only, checked by their dtypes and ranks before
        # anything else (``fast_calls``): set by the first call that finds a trace after the
        # cache changed (None), to False when that call's arguments are not such arrays.
        self._fast: Callable[[tuple], Any] | bool | None = None
        self._prints = False  # whether a trace printed through code not converted (Python runs)
        self._sources: tuple[Source, ...] = ()
        self.concrete_functions: list[ConcreteFunction] = []  # the traces kept (max_traces)
        self._trace_count = 0  # traces made, kept or dropped
        self._descriptions: tuple[dict, dict] = ({}, {})  # of the last two traces made
        self._lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}
        self._local = threading.local()  # keys this thread is tracing (recursion check)
        self._warned: set[str] = set()
        # Argument sizes up to this are part of trace keys (``static_sizes``): read at the first
        # call (None before), 0 once calls varied in them or with an input signature.
        self._size_limit: int | None = 0 if input_signature is not None else None
        self._sized: dict[tuple, tuple] = {}  # a key without sizes -> the first with them

    @property
    def trace_count(self) -> int:
        return self._trace_count

    def user_attributes(self) -> dict:
        """The attributes the user set on this function object (``step.k = 2.0``): read by
        its traces, which guard them (``captures``); the object's own are private or below."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and k not in _OWN}

    def __get__(self, instance: object, owner: type | None = None) -> Callable:
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<StagedFunction {self.__qualname__} target={self.target}>"

    def __reduce__(self) -> tuple:
        """Pickled by reference (its module and qualified name) when importing them gives this
        function, else by value: the converted Python function and the options, not the
        traces (the process that unpickles it traces again, and shares compiled code through
        the disk cache). By value needs a pickler of functions by value: cloudpickle, which
        Dask and Ray use; a module cloudpickle is told to pickle by value is pickled so.
        ``by_value`` sends converted code so that it is not converted again."""
        module = getattr(self.python_function, "__module__", None)
        if _imports_as(module, self.__qualname__) is self:
            return _imported, (module, self.__qualname__)
        python = self.python_function
        if self._by_value is not None:
            python = self._by_value(python)
        return StagedFunction, (python, self.name, self.input_signature, self.target,
                                self._error_hook, self._converted, self._by_value)

    # The full path (a call starts in ``call_slot.Base``, which tries ``_fast`` first): bind,
    # flatten, key, one dict read, run.
    def _call(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if _EAGER.engaged:  # (then the C level leaves the fast path to this test)
                if self._runs_eagerly(args, kwargs):
                    return self._traced(*args, **kwargs)
                fast = self._fast
                if fast and not kwargs:
                    out = fast(args)
                    if out is not MISS:
                        return out
            if self._prints:  # (a trace printed through code that is not converted)
                return self._traced(*args, **kwargs)
            if _fp_current() is not _fp_accepted[0]:  # np.seterr changed: ~20 ns when not
                fp_state.check(f"when {self.name} is called")
            if kwargs or len(args) != self._binding.arity:
                values = self._binding.canonical(args, kwargs)
            else:
                values = args
            leaves, treedef = pytree.flatten(values)
            if _traces.active_traces and staging_active() and any(
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
            if concrete.prepared_runner() is None:  # not compiled yet
                if self._tiered and concrete.staged_only is None and config.TIERED.value() and (
                        concrete.prepare_in_background(staged, implicit)):
                    return self._traced(*args, **kwargs)  # Python meanwhile: tiered start
            elif self._fast is None:  # the first call since the cache changed: a fast path?
                self._fast = values is args and not self._sources and (
                    self.input_signature is None) and fast_path(concrete, args, leaves) or False
            try:
                if concrete.outputs.argument_containers:
                    return concrete.outputs.with_argument_containers(
                        concrete.run(staged, implicit), values)
                return concrete.run(staged, implicit)
            except RunAsPython:  # a written argument aliases another input, or is read-only
                return self._traced(*args, **kwargs)
        except PrintsWhileTraced as e:  # (code that is not converted prints: Python's order)
            self._prints = True
            warnings.warn(str(e), RuntimeWarning, stacklevel=2)
            return self._traced(*args, **kwargs)
        except Exception as e:
            if self._error_hook is not None:
                self._error_hook(e)
            raise

    def _runs_eagerly(self, args: tuple, kwargs: dict) -> bool:
        """Whether this call runs as Python (``config.EAGER``: a debugging switch); an input
        signature still checks the arguments. Calls from a trace (a gradient) keep staging."""
        if not (self._converted and _EAGER.value()) or tracing.is_tracing():
            return False
        if self.input_signature is not None:
            self._check_signature(args, kwargs, self._binding.canonical(args, kwargs))
        return True

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
            self._fast = None
            for k in [k for k, v in self._cache.items() if v is stale]:
                del self._cache[k]
        return None

    def _key(self, treedef: pytree.TreeDef, leaves: list, sized: bool = True
             ) -> tuple[tuple, list]:
        """The trace key of these arguments and the staged ones among them; ``sized=False``:
        whatever their sizes, a key without any (``static_sizes``)."""
        key, staged = [treedef], []
        limit = self._size_limit
        if limit is None:
            limit = self._size_limit = config.STATIC_SIZES.value()
        limit = limit if sized else 0
        for leaf in leaves:
            kind = type(leaf)
            if kind is np.ndarray:
                sizes = static_sizes.of(leaf.shape, limit) if limit else None
                key.append((leaf.dtype, leaf.ndim) if sizes is None else (
                    leaf.dtype, leaf.ndim, sizes))
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
            elif _inputs.device_array(leaf):  # staged by the cuda target, else refused
                key.append((_DEVICE_KEY, *_inputs.device_dtype_ndim(leaf)))
                staged.append(leaf)
            else:
                key.append(leaf_key(leaf))
        return tuple(key), staged

    @_reported
    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The trace for these arguments (traced now if needed), without running it.

        Arguments may be TensorSpecs in place of arrays; with an ``input_signature`` and no
        arguments, the signature's trace.
        """
        return self._concrete(args, kwargs)[0]

    def _concrete(self, args: tuple, kwargs: dict) -> tuple[ConcreteFunction, list | None]:
        """``get_concrete_function``'s trace, and the arguments a run of it with these would
        take (TensorSpecs as example arrays)."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(pytree.unflatten(pytree.flatten(self.input_signature)[1],
                                          [example(s) for s in self._spec_leaves]))
        values = self._binding.canonical(args, kwargs)
        leaves, treedef = pytree.flatten(values)
        specs = any(type(leaf) is TensorSpec for leaf in leaves)
        leaves = [example(leaf) if type(leaf) is TensorSpec and (
            self.input_signature is not None or all(d is None for d in leaf.shape)) else leaf
            for leaf in leaves]
        if self.input_signature is not None:
            self._check_signature(args, kwargs, values=pytree.unflatten(treedef, leaves))
        key, staged = self._key(treedef, leaves, sized=not specs)  # a spec's None: size unknown
        env = [source.read() for source in self._sources]
        key = (*key, *[environment_key(value) for value in env])
        concrete = self._cache.get(key) or self._miss(key, values, leaves, treedef)
        if concrete.read is None:
            return concrete, staged
        implicit = concrete.read(leaves, [source.read() for source in self._sources])
        return concrete, None if implicit is None else staged + implicit  # None: reads changed

    @_reported
    def compile(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """Traces (if needed) and compiles the trace for these arguments (arrays, scalars or
        TensorSpecs) now: later calls with such arguments run compiled code, never the tiered
        start's Python. Waits for every compilation of this function running in the background
        too (other traces', started by tiered calls), so that none is left running after it."""
        concrete, example_args = self._concrete(args, kwargs)
        concrete.prepare(example_args)
        for other in list(self.concrete_functions):
            other.wait()
        return concrete

    @_reported
    def ir(self, *args: Any, **kwargs: Any) -> str:
        """The printed IR of the trace for these arguments (arrays, scalars or TensorSpecs)."""
        return self.get_concrete_function(*args, **kwargs).text()

    @_reported
    def backend_source(self, *args: Any, **kwargs: Any) -> str:
        """What this function's target generates for the trace of these arguments: the Python
        source the cpu backend compiles with Numba, the CUDA kernels of the cuda target (and the
        ops it leaves on the host), or the IR the interpreter runs."""
        module = ir.copy_module(self.get_concrete_function(*args, **kwargs).module)
        return backend_text(module, self._target.name)

    # Input signatures.
    def _set_signature(self, signature: Any) -> None:
        self.input_signature, self._spec_leaves = checked_signature(
            self.name, self._binding, signature)

    def _check_signature(self, args: tuple, kwargs: dict, values: tuple) -> None:
        """Raises TypeError naming the argument whose value does not fit the signature."""
        check_arguments(self.name, self._binding, self.input_signature, args, kwargs, values)

    # Tracing.
    def _miss(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
              ) -> ConcreteFunction:
        """Traces once per key: other threads wanting the same key wait for that trace. A key
        with sizes whose ranks and dtypes were traced with other sizes ends the function's
        specialising on sizes (``static_sizes``): it traces without them. So does a trace with
        sizes refused for an ``if`` whose branches both raise, which the sizes alone may cause
        (an index out of range in both, in code the call never runs). A trace that admits the
        call runs it instead: the one without sizes, or the first with them where it left
        unknown the sizes that differ (40 steps, then 3)."""
        if not static_sizes.specialised(key):
            return self._traced_once(key, values, leaves, treedef)
        generic = static_sizes.generic(key)
        with self._lock:
            first = self._sized.setdefault(generic, key)
        admitted = self._admitted((generic, first), key, leaves)
        if admitted is not None:
            return admitted
        if first != key:  # traced before with other sizes
            return self._generic_miss(generic, values, leaves, treedef)
        try:
            return self._traced_once(key, values, leaves, treedef)
        except AlwaysRaisesError:
            return self._generic_miss(generic, values, leaves, treedef)

    def _admitted(self, traced: tuple, key: tuple, leaves: list) -> ConcreteFunction | None:
        """The first trace of the keys ``traced`` that serves the call keyed ``key``
        (``static_sizes.admits``: a trace without sizes serves any), now found under ``key``
        too; None when there is none."""
        for known in traced:
            concrete = self._lookup(known, leaves) if static_sizes.admits(known, key) else None
            if concrete is not None:
                with self._lock:
                    self._cache.setdefault(key, concrete)
                return concrete
        return None

    def _generic_miss(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
                      ) -> ConcreteFunction:
        """Stops keying on sizes; the trace of ``key`` (a key without sizes)."""
        with self._lock:
            self._size_limit, self._fast = 0, None
        return self._lookup(key, leaves) or self._traced_once(key, values, leaves, treedef)

    def _traced_once(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
                     ) -> ConcreteFunction:
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
                    concrete = self._trace_again_if_another_thread_drew(key, values, leaves,
                                                                        treedef)
                finally:
                    mine.discard(key)
        with self._lock:
            self._key_locks.pop(key, None)
        return concrete

    def _trace_again_if_another_thread_drew(self, key: tuple, values: tuple, leaves: list,
                                            treedef: pytree.TreeDef) -> ConcreteFunction:
        """``_trace``, run again (up to ``RANDOM_RETRIES`` times) when it failed only because a
        random state shared with other threads changed while it ran: the check compares states
        and cannot tell whose draw changed one (a Dask worker samples with Python's ``random``
        while a task traces). A draw of the traced code itself changes the state at every trace
        and is raised."""
        with collector.deferred():  # (a with block: a decorator's frame shows in tracebacks)
            for _ in range(RANDOM_RETRIES):
                try:
                    return self._trace(key, values, leaves, treedef)
                except RandomStagingError as e:
                    if not getattr(e, "another_thread_may_have_drawn", False):
                        raise
            return self._trace(key, values, leaves, treedef)

    def _trace(self, key: tuple, values: tuple, leaves: list, treedef: pytree.TreeDef
               ) -> ConcreteFunction:
        for leaf in leaves:
            if isinstance(leaf, Tensor):  # a tensor kept from an earlier trace
                tracing.check_visible(leaf.value, "a staged tensor passed as an argument")
        for label, leaf in zip(self._binding.labels(values), leaves, strict=True):
            if isinstance(leaf, np.ndarray | np.generic):
                _inputs.check(leaf, label, self.name)
            else:
                _inputs.check_foreign(leaf, label, self.name, self._target.name)
        module = ir.Module(self.name)
        specs = iter(self._spec_leaves)
        parts = key[1:1 + len(leaves)]  # each leaf's part of the key: its known sizes
        types_ = [next(specs, None) or leaf_type(leaf, static_sizes.shape(part, np.ndim(leaf)))
                  for leaf, part in zip(leaves, parts, strict=True) if is_staged_leaf(leaf)]
        types_ = [t.type if type(t) is TensorSpec else t for t in types_]
        trace = FunctionTrace(module, self.name, types_, ModuleState(self._variable_policy))
        trace.shared.sizes_staged = static_sizes.specialised(key)
        staged_parts = [part for leaf, part in zip(leaves, parts, strict=True)
                        if is_staged_leaf(leaf)]
        for param, part in zip(trace.function.body.args, staged_parts, strict=True):
            trace.shared.from_sizes[param] = static_sizes.specialised((part,))
        trace.roots = (self._traced, values)
        params = iter(trace.function.body.args)
        scalars: dict[int, bool] = {}  # id(tensor) -> whether the argument is a NumPy scalar
        writable: set[int] = set()  # ids of the tensors whose arrays the call may write into
        writes_back = trace.shared.writes_back = trace.writes_captures = \
            self._target.writes_back

        def parameter(leaf: object) -> Tensor:
            tensor = staged_input(next(params))
            scalars[id(tensor)] = isinstance(leaf, np.generic)
            if writes_back and type(leaf) is np.ndarray and leaf.ndim and not (
                    _inputs.needs_native_copy(leaf)):  # (a copy is passed: refused)
                writable.add(id(tensor))
            return tensor

        labels = self._binding.labels(values, short=True)
        with tracing.tracing(trace):  # (stand-ins record their reads into the current trace)
            inputs = pytree.unflatten(treedef, [
                parameter(leaf) if is_staged_leaf(leaf) else captures.proxy_root(
                    leaf, captures.Root("arg", i, labels[i])) for i, leaf in enumerate(leaves)])
        positional, keywords = self._binding.call_args(inputs)
        trace.watch_argument_lists([*positional, *keywords.values()])
        # (a list or dict argument returned as it is: the caller's own, ``Outputs``)
        trace.argument_containers = {id(node): path for path, node in reversed(
            pytree.mutable_nodes(inputs))}  # (id -> the first path it is found at)
        random_check = random_freeze.FreezeCheck()  # no draw may be frozen into the trace
        function_trace.enter()
        try:
            with trace_output.holding(self.name), tracing.tracing(trace):
                mark_arguments(self._binding, positional, keywords, scalars,
                               frozenset(writable))
                iterators = python_state.OutsideState([self._traced], [
                    (labels[i], leaf) for i, leaf in enumerate(leaves)
                    if python_state.is_iterator(leaf) or isinstance(leaf, io.IOBase)])
                _refuse_unseen_files(iterators)
                try:
                    output = run_traced(trace, bind_environment(self._traced, trace),
                                        positional, keywords)
                except Exception as e:
                    iterators.advanced()
                    _refuse_changes_before(trace, self._traced, e)
                    raise
                _refuse_advanced(iterators, self.name)
                outputs = collect_outputs(trace, output)
                trace.check_escapes(self._traced)
                fp_state.check_while_tracing()
            random_check.check(self.name, random_freeze.names_in_trace(trace, labels, leaves))
        finally:
            random_check.close()
            trace.finished = True
            function_trace.leave()
        verifier.verify(module)
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
            concrete.staged_only = trace.shared.staged_only
            own_key = key[:1 + len(leaves)]
            concrete.alternative = self._cache.get(key)
            self._fast = None
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
        self._fast = None
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
        return retrace_warnings.describe(self._binding, values, leaves, treedef, sources, env)

    def _warn_retrace(self, count: int, values: tuple, leaves: list) -> None:
        old, new = self._descriptions
        changed = [label for label in new if old.get(label, new[label]) != new[label]]
        if not changed or changed[0] in self._warned:
            return
        self._warned.add(changed[0])
        by_label = dict(zip(self._binding.labels(values), leaves, strict=False))
        reason = retrace_warnings.explain(changed[0], old[changed[0]], new[changed[0]], by_label)
        warnings.warn(
            f"{self.name} has been traced {count} times (more than {RETRACE_WARNING_THRESHOLD}); "
            f"tracing is slow, and this trace was needed because {reason}", RetracingWarning,
            stacklevel=tracing.user_stacklevel())


def _variable_error(name: str, trace_number: int) -> Exception:
    from autostage.runtime.state import VariableCreationError

    return VariableCreationError(
        f"{name} created a Variable on its trace number {trace_number}; a staged function may "
        "create Variables only on its first trace (traces are reused, so a Variable created per "
        "trace would silently be a different one). Create it outside the function, or once: "
        "`if self.v is None: self.v = Variable(...)`")
