"""Staged calls: a converted function called from traced code with staged arguments.

Such a call is traced once per argument types into its own function of the caller's module and
stays a ``call`` op (``call_from_trace``); a call whose arguments include mutable Python values,
or a method of an object the trace made (``made_in_trace``), runs inline instead, reading its
environment as the caller does. Whether an argument or result is a Python number travels in its
type (weak: the callee's parameter and result types say it); whether a 0-d one is a 0-d ndarray
(``value_info.mark_array``) is carried across the call here.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_identity,
    array_shapes,
    captures,
    ir,
    ir_text,
    pytree,
    result_identity,
    tracing,
    value_info,
)
from autostage.runtime import types as types_
from autostage.runtime.array_api import astype
from autostage.runtime.cache_keys import ById, constant_key
from autostage.runtime.environment import bind_environment, made_here
from autostage.runtime.function_outputs import ArrayIf, Outputs, PythonIf, collect_outputs
from autostage.runtime.function_trace import FunctionTrace, named_tensors, run_traced
from autostage.runtime.operator_hooks import Staged, register_operator_hook
from autostage.runtime.ops import call as _call_op  # noqa: F401 - registers the call op
from autostage.runtime.staging import errors, python_state
from autostage.runtime.tensor import StagingTypeError, Tensor, constant, mark_argument


class Callee:
    """A function traced into a module for staged calls: its name and how to call it."""

    __slots__ = ("name", "outputs", "captures", "result_types", "array_results", "raised",
                 "writes", "objects")

    def __init__(self, name: str, outputs: Outputs, captures: tuple, result_types: tuple,
                 array_results: tuple[bool, ...], raised: Exception | None = None,
                 writes: tuple = (), objects: tuple = ()):
        self.name = name
        self.outputs = outputs
        self.captures = captures  # the environment sources of its implicit parameters
        self.result_types = result_types  # weak where a result is a Python number
        self.array_results = array_results  # per result: whether it is a 0-d ndarray
        self.raised = raised  # it always raises this (after its prints...): so does the caller
        # (parameter, result, name) of each array argument it writes into: the result is the
        # argument's final state (``ir.Function.writes_back``)
        self.writes = writes
        # per returned value: ("same", k) when it is parameter k's array itself, ("views",
        # ks) when it may be a view of parameters ks, None for a new array
        self.objects = objects


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
    if any(isinstance(leaf, Tensor) for leaf in leaves):  # a NumPy scalar is staged there too
        leaves = [constant(leaf) if isinstance(leaf, np.generic) and leaf.dtype.kind in "biufc"
                  else leaf for leaf in leaves]
    method = isinstance(fn, types.MethodType)
    if not any(isinstance(leaf, Tensor) for leaf in leaves) or not all(
            isinstance(leaf, Tensor) or _immutable_constant(leaf) for leaf in leaves) or (
            _has_mutable_nodes(treedef)) or (method and made_here(trace, fn.__self__)) or any(
            isinstance(leaf, Tensor) and (value_info.python_path(leaf.value) is not None
                                          or value_info.other_path(leaf.value) is not None
                                          or value_info.array_flag(leaf.value) is not None)
            for leaf in leaves):  # (a Python number or a 0-d ndarray where a flag says so)
        return bind_environment(fn, trace)(*args, **kwargs)
    target = fn.__func__ if method else fn
    owner = ById(fn.__self__) if method else None  # a method's callee is per object
    # A weak argument (a Python scalar such as `x.shape[0]`) stays weak in the callee, as Python
    # would pass the int itself: it is part of the key (types compare without weak-ness).
    parts = [(leaf.type, value_info.is_weak(leaf.value), value_info.is_array(leaf.value))
             if isinstance(leaf, Tensor) else constant_key(leaf) for leaf in leaves]
    key = (ById(target), owner, treedef, *parts)
    callee = trace.shared.callees.get(key)
    if callee is None:
        callee = _trace_callee(fn, key, leaves, treedef, trace)
        strong = (*key[:3], *[(p[0], False, p[2]) if isinstance(leaf, Tensor) else p
                              for leaf, p in zip(leaves, parts, strict=True)])
        if strong != key:
            callee = _strong_twin(callee, trace.shared.callees.get(strong), trace)
            trace.shared.callees[key] = callee
    tensors = [leaf for leaf in leaves if isinstance(leaf, Tensor)]
    operands = [leaf.value for leaf in tensors]
    operands += [trace.capture(source, source.read()).value for source in callee.captures]
    attrs = {"callee": callee.name, "result_types": callee.result_types}
    if callee.writes:
        attrs["writes"] = tuple((p, r) for p, r, _ in callee.writes)
    results = tracing.emit("call", operands, attrs)
    for value, type_, array in zip(results, callee.result_types, callee.array_results,
                                   strict=True):
        if getattr(type_, "weak", False):  # `emit` gives strong types; the callee's say weak
            value_info.mark_weak(value)
        if array:
            value_info.mark_array(value)
    if callee.raised is not None:
        raise callee.raised
    _write_back(callee, fn, tensors, results)
    values = callee.outputs.mark_python_paths(results[:len(results) - len(callee.writes)])
    return callee.outputs.build(tuple(_returned(callee, tensors, operands, values)))


def _write_back(callee: Callee, fn: Callable, tensors: list[Tensor], results: tuple) -> None:
    """The callee wrote into array arguments: each argument's tensor (the object the caller's
    names hold, as they hold the NumPy array in Python) becomes the call's final state of it;
    conds and loops around the call carry that change (``python_state``). Arguments sharing
    memory with another argument, or that the caller may not write into (a view, its own
    argument where it is not written back), are clear errors."""
    name = getattr(fn, "__name__", "the function")
    for p, r, param in callee.writes:
        arg = tensors[p]
        mine = {token for token, _ in array_identity.tokens_of(arg.value)}
        for k, other in enumerate(tensors):
            if k != p and other.ndim and mine & {t for t, _ in
                                                 array_identity.tokens_of(other.value)}:
                raise tracing.StagingError(
                    f"{_where()}`{name}` writes into its parameter `{param}`, and this call "
                    "passes it an array that another of its arguments is too (or a view of "
                    "one array in both): staged code cannot follow how Python's writes would "
                    f"show through the other. Pass a copy (`.copy()`) as one of them")
        array_shapes.check_writable(
            arg, f"this call of `{name}` (which writes into its parameter `{param}`)")
        array_identity.written(arg.value, results[r])
        python_state.note_write(arg, param)
        arg.value = results[r]


def _returned(callee: Callee, tensors: list[Tensor], operands: list[ir.Value],
              values: tuple) -> list[Tensor]:
    """The call's returned values as tensors: a parameter's own array is the argument's tensor
    (its state after the call), a view of parameters shares their arrays (a later write into them
    makes it stale, and writing into it is a write through a view), as in Python."""
    out = []
    for value, objects in zip(values, callee.objects or (None,) * len(values), strict=True):
        kind, params = objects or (None, ())
        if kind == "same" and params < len(tensors):
            out.append(tensors[params])  # the argument itself, as Python returns it
            continue
        params = (params,) if kind == "same" else params  # (an array the environment holds)
        if kind == "read_only":  # np.broadcast_to's view of memory the callee made: writing
            value_info.mark_view(value, value)  # into it raises in NumPy, is refused here
        elif params:
            bases = [tensors[k].value if k < len(tensors) else operands[k] for k in params]
            array_identity.share(value, *bases)
            value_info.mark_view(value, bases[0])
        out.append(Tensor(value))
    return out


def _where() -> str:
    where = tracing.user_location()
    return f"{where}: " if where is not None else ""


def _strong_twin(callee: Callee, twin: Callee | None, trace: tracing.Trace) -> Callee:
    """``twin`` (traced for the same arguments made strong) in place of ``callee`` (traced for
    weak ones) where the two functions are the same op for op, type for type: a recursion
    started on a Python int (``n - 1``) and continued on NumPy ints (``left[i]``) then is one
    function in the module, not two (each compiled, and differentiated, on its own)."""
    if twin is None or (callee.outputs.treedef, callee.array_results, callee.captures) != (
            twin.outputs.treedef, twin.array_results, twin.captures) or (
            callee.raised is not None or twin.raised is not None):
        return callee
    functions = trace.module.functions
    mine, theirs = (ir_text.format_function(functions[c.name]).split("\n", 1)
                    for c in (callee, twin))

    def header(line: str, name: str) -> str:  # the parameters' weak-ness aside
        params, results = line.replace(f"@{name}(", "@(", 1).split(") -> ", 1)
        return params.replace("~", "") + results
    if mine[1:] != theirs[1:] or header(mine[0], callee.name) != header(theirs[0], twin.name):
        return callee
    del functions[callee.name]
    return twin


def foreign_call(fn: Callable) -> Callable:
    """``fn``, code autostage does not convert (a C function, a Cython one, a builtin type such
    as ``bytes``), as traced code calls it: an exception it raises itself when given a staged
    value is that value's doing (``TypeError: cannot convert 'Tensor' object to bytes``), not
    the program's: a ``StagingTypeError`` naming the user's line, never an exception the staged
    code would raise at run time where Python returns."""
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not _foreign_error(e, args, kwargs):
                raise
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
            raise StagingTypeError(
                f"{_where()}`{name}` was given a staged value, which code autostage does not "
                f"convert cannot take ({type(e).__name__}: {e}); call it on NumPy values "
                "outside the converted function, or use NumPy functions autostage stages"
            ) from None
    return call


def _foreign_error(e: Exception, args: tuple, kwargs: dict) -> bool:
    """Whether ``e`` came from the foreign code itself given staged arguments (no frame of
    autostage or of converted code between it and the call, but a stand-in's forwarding)."""
    if not any(isinstance(leaf, Staged) for leaf in pytree.flatten((args, kwargs))[0]):
        return False
    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith("autostage") and module != captures.__name__:
            return False
        tb = tb.tb_next
    return True


_PYTHON_KINDS = {"b": np.bool_, "i": np.int64, "u": np.int64, "f": np.float64,
                 "c": np.complex128}


def numba_result(result: Any, dtype: np.dtype | None) -> Any:
    """The result of an ``@numba.njit`` function staged from its Python source, as Numba's
    compiled function returns it: cast to the dtype an explicit signature declares
    (``"i4(...)"`` wraps an int64 to int32), and a scalar boxed as Python's number."""
    if not isinstance(result, Tensor):
        return result
    if dtype is not None and result.dtype != dtype:
        result = astype(result, dtype)
    if result.ndim == 0 and result.dtype.kind in _PYTHON_KINDS:
        result = astype(result, _PYTHON_KINDS[result.dtype.kind])  # (a new value: its own)
        value_info.mark_weak(result.value)
    return result


def made_in_trace(cls: type, init: Callable | None = None) -> Callable:
    """``cls`` as traced code calls it: an instance of a user class is recorded as the trace's
    own object. Its methods then run inline with a plain ``self`` (changing its attributes is
    local state, as for ``box.n += 1`` in the function itself), not as call ops that would see
    it as an object from outside the trace. ``init``: the class's ``__init__`` converted (the
    caller's choice), run on ``object.__new__``'s instance as ``type.__call__`` would run it;
    the instance is the trace's own from before ``init`` runs, so that a method ``init`` calls
    (filterpy's ``self.reset()``) sets its attributes as ``init`` itself does."""
    construct = foreign_call(cls) if cls.__module__ == "builtins" else cls
    if init is not None:
        def construct(*args: Any, **kwargs: Any) -> Any:
            obj = cls.__new__(cls)
            _record_made(obj)
            init(obj, *args, **kwargs)
            return obj

    def make(*args: Any, **kwargs: Any) -> Any:
        obj = construct(*args, **kwargs)
        _record_made(obj)
        return obj
    return make


def _record_made(obj: object) -> None:
    """Records ``obj`` as an object the trace's Python code made (``made_here``)."""
    shared = getattr(tracing.current(), "shared", None)
    if shared is not None and captures.is_user_object(obj):
        shared.made[id(obj)] = obj


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


class RecursionPending(Exception):  # noqa: N818 - not an error: a pass of the fixpoint
    """Raised by a recursive call whose result types are not known yet (the first pass of
    ``_trace_callee``). An Exception, so that the staged ``if`` around it takes the branch as
    one that raises and the other branch's results give the types (Numba's rule: types come
    from the paths that return without recursing)."""

    def __init__(self, keys: set, name: str):
        super().__init__(f"staged recursion of {name}: result types not known yet")
        self.keys = keys


_FIXPOINT_PASSES = 6  # passes of a recursive callee before its types must have settled


def _trace_callee(fn: Callable, key: tuple, leaves: list, treedef: pytree.TreeDef,
                  caller: FunctionTrace) -> Callee:
    """Traces ``fn`` into the module; recursion (``key`` called while it is traced) is solved
    by a fixpoint over its result types and implicit parameters."""
    shared = caller.shared
    name = getattr(fn, "__qualname__", fn)
    if key in shared.active:  # a recursive call
        assumed = shared.assumed.get(key)
        if assumed is None:
            shared.unknown.add(key)
            raise RecursionPending({key}, name)
        return assumed
    outer_unknown, shared.unknown = shared.unknown, set()
    assumed = None
    try:
        for _ in range(_FIXPOINT_PASSES):
            mark = (set(caller.module.functions), set(shared.callees))
            if assumed is not None:
                shared.assumed[key] = assumed
            failure = None
            try:
                callee = _trace_once(fn, key, leaves, treedef, caller)
            except RecursionPending as e:
                if key not in e.keys:  # (outer_unknown is the caller's pass: updated in place)
                    _undo(caller, shared, mark)
                    outer_unknown |= e.keys
                    raise
                callee = None  # it recursed before any staged if
            except tracing.StagingError as e:
                if key not in shared.unknown:
                    raise
                callee, failure = None, e  # e.g. both branches of an if recurse (first pass)
            finally:
                shared.assumed.pop(key, None)
            unknown, shared.unknown = shared.unknown, set()
            if unknown - {key}:  # it needs the types of a function being traced outside it
                _undo(caller, shared, mark)
                outer_unknown |= unknown - {key}
                raise RecursionPending(unknown - {key}, name)
            if key in unknown:  # the first pass: types of the paths that do not recurse
                if callee is None or isinstance(callee.raised, RecursionPending):
                    why = f" (tracing its other paths failed: {failure})" if failure else ""
                    raise tracing.StagingError(
                        f"staged recursion: {name} has no path that returns without calling "
                        f"itself{_at()}{why}; its result types cannot be found (give it a base "
                        "case under a staged if, or make the recursion depend on a Python "
                        "constant)") from failure
                _undo(caller, shared, mark)
                assumed = callee
                continue
            if assumed is None or _settled(assumed, callee):
                shared.callees[key] = callee
                return callee
            _undo(caller, shared, mark)
            assumed = _widened(assumed, callee, name)
        raise tracing.StagingError(
            f"staged recursion: the result types of {name} did not settle after "
            f"{_FIXPOINT_PASSES} passes{_at()}: {assumed.result_types} then "
            f"{callee.result_types}")
    finally:
        shared.unknown = outer_unknown


def _at() -> str:
    where = tracing.user_location()
    return f" at {where}" if where is not None else ""


def _undo(caller: FunctionTrace, shared: Any, mark: tuple[set, set]) -> None:
    """Forgets the functions and callees traced since ``mark`` (a pass that was provisional)."""
    functions, callees = mark
    for name in set(caller.module.functions) - functions:
        del caller.module.functions[name]
    for key in set(shared.callees) - callees:
        del shared.callees[key]


def _settled(assumed: Callee, callee: Callee) -> bool:
    """Whether the pass's callee is what its recursive calls assumed: same outputs, result
    types (weak-ness included) and implicit parameters."""
    return (assumed.outputs.treedef == callee.outputs.treedef
            and assumed.captures == callee.captures
            and assumed.array_results == callee.array_results
            and assumed.writes == callee.writes and assumed.objects == callee.objects
            and _python_flags(assumed) == _python_flags(callee)
            and [(t, getattr(t, "weak", False)) for t in assumed.result_types]
            == [(t, getattr(t, "weak", False)) for t in callee.result_types])


def _python_flags(callee: Callee) -> tuple:
    """Which results are Python numbers (``PythonIf``) or 0-d ndarrays (``ArrayIf``) where
    another result says so."""
    return tuple((i, kind.flag, kind.kind, type(kind.number), kind.number)
                 if type(kind) is PythonIf else (i, kind.flag, "ndarray", kind.otherwise is None)
                 for i, kind in callee.outputs.python_types or ()
                 if type(kind) in (PythonIf, ArrayIf))


def _widened(assumed: Callee, callee: Callee, name: str) -> Callee:
    """The next assumption: the pass's callee with each result type joined with the assumed
    one (a shape seen static then different becomes unknown)."""
    if assumed.writes != callee.writes or _python_flags(assumed) != _python_flags(callee):
        return callee  # a pass that wrote (or gave a Python number) on paths the first did not
    if assumed.outputs.treedef != callee.outputs.treedef:
        raise tracing.StagingError(
            f"staged recursion: {name} returns different structures on its paths{_at()}: "
            f"{assumed.outputs.treedef} and {callee.outputs.treedef}")
    results = []
    for a, b in zip(assumed.result_types, callee.result_types, strict=True):
        both = isinstance(a, types_.TensorType) and isinstance(b, types_.TensorType)
        joined = types_.join(a, b) if both else (a if a == b else None)  # (lists: equal only)
        if joined is None:
            raise tracing.StagingError(
                f"staged recursion: a result of {name} changes type between its paths{_at()}: "
                f"{a} and {b}")
        if both:
            joined = types_.TensorType(joined.dtype, joined.shape, a.weak and b.weak)
        results.append(joined)
    return Callee(callee.name, callee.outputs, callee.captures, tuple(results),
                  callee.array_results, callee.raised, callee.writes, callee.objects)


def _mark_parameters(fn: Callable, args: tuple, kwargs: dict, writable: bool) -> None:
    """Marks the callee's array parameters as the caller's arrays. Where the target writes back
    (``writable``), a write into a whole array parameter (``_sift(heap, i)``) is the call's
    write into its argument (``_write_back``); into a view of one, or on other targets, it is a
    clear error, since the caller's array would not change."""
    try:
        named = list(inspect.signature(fn).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):  # (no signature: every argument by its position)
        named = [(f"argument {k}", a) for k, a in enumerate((*args, *kwargs.values()))]
    for leaf, label in named_tensors(named):
        mark_argument(leaf, label, leaf.ndim == 0 and not value_info.is_array(leaf.value))
        if writable and leaf.ndim and label.isidentifier():
            argument_writes.allow(leaf.value, label)


def _objects(params: tuple, values: tuple) -> tuple:
    """``Callee.objects`` of the returned ``values``, from the callee's trace."""
    out = []
    for value in values:
        if not isinstance(value.type, types_.TensorType) or value.type.ndim == 0:
            out.append(None)
        elif value in params or argument_writes.param_of(value) is not None:
            whole = value if value in params else argument_writes.param_of(value)
            out.append(("same", params.index(whole)))
        else:
            ks = array_identity.param_objects(params, value)
            out.append(("views", ks) if ks else ("read_only", ())
                       if result_identity.is_broadcast(value) else None)
    return tuple(out)


def _trace_once(fn: Callable, key: tuple, leaves: list, treedef: pytree.TreeDef,
                caller: FunctionTrace) -> Callee:
    shared = caller.shared
    name = caller.module.unique_name(getattr(fn, "__name__", "callee"))
    tensors = [leaf for leaf in leaves if isinstance(leaf, Tensor)]
    arrays = [value_info.is_array(leaf.value) for leaf in tensors]  # facts of the caller's trace
    # The parameters have the arguments' types, weak ones included.
    trace = FunctionTrace(caller.module, name, [leaf.type for leaf in tensors], shared)
    trace.roots = None if caller.roots is None else (fn, *caller.roots)
    params = iter(trace.function.body.args)
    args, kwargs = pytree.unflatten(treedef, [
        Tensor(next(params)) if isinstance(leaf, Tensor) else leaf for leaf in leaves])
    trace.watch_argument_lists([*args, *kwargs.values()])
    shared.active.add(key)
    try:
        with tracing.tracing(trace):
            for param, array in zip(trace.function.body.args, arrays, strict=False):
                if array:
                    value_info.mark_array(param)
            _mark_parameters(fn, args, kwargs, shared.writes_back)
            iterators = python_state.OutsideState([fn])
            try:
                output = run_traced(trace, bind_environment(fn, trace), args, kwargs)
            except Exception:
                iterators.advanced()
                raise
            moved = iterators.advanced()
            if moved:  # (its calls run its trace: a change it makes would happen once)
                raise errors.PythonSideEffectError(
                    f"{moved[0]} while {getattr(fn, '__qualname__', fn)} is traced as a "
                    "staged call (it outlives the call): a staged call runs the function's "
                    "Python code once per trace, not at every call, so later calls would not "
                    "change it. Pass the values as arguments and return the new ones")
            outputs = collect_outputs(trace, output, callee=True)
            trace.check_escapes(fn)
            body = trace.function.body
            array_results = tuple(value_info.marked_array(v) for v in body.results)
            writes = trace.function.writes_back
            objects = _objects(body.args, body.results[:len(outputs.positions)])
    finally:
        shared.active.discard(key)
        trace.finished = True
    caller.sources.update(trace.sources)
    return Callee(name, outputs, tuple(trace.captures), trace.function.result_types,
                  array_results, trace.raised, writes, objects)


def traced_call(fn: Callable) -> Callable:
    """What ``ag__.converted(f)`` returns while a staged function is traced: ``f`` called through
    ``call_from_trace`` (a call op, or inline with its environment captured)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return call_from_trace(fn, args, kwargs)

    return call


def inline_call(fn: Callable) -> Callable:
    """``fn`` (converted) run inline in the function being traced, its environment captured as
    the caller's is: for callers that need the values ``fn`` returns to stay in this trace (a
    custom gradient's ``grad_fn`` closes over them)."""
    return bind_environment(fn, tracing.current())


# Converted code reaches staged calls the way it reaches every staged operator: by name.
register_operator_hook("converted_call", traced_call)
register_operator_hook("inline_call", inline_call)
register_operator_hook("construct", made_in_trace)
register_operator_hook("foreign_call", foreign_call)
register_operator_hook("numba_result", numba_result)
