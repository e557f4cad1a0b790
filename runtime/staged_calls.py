"""Staged calls: a converted function called from traced code with staged arguments.

Such a call is traced once per argument types into its own function of the caller's module and
stays a ``call`` op (``call_from_trace``); a call whose arguments include mutable Python values,
or a method of an object the trace made (``made_in_trace``), runs inline instead, reading its
environment as the caller does. Whether an argument or result is a Python number travels in its
type (weak: the callee's parameter and result types say it); whether a 0-d one is a 0-d ndarray
(``value_info.mark_array``) is carried across the call here.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import captures, ir, pytree, tracing, value_info
from autostage.runtime.cache_keys import ById, constant_key
from autostage.runtime.environment import bind_environment, made_here
from autostage.runtime.function_outputs import Outputs, collect_outputs
from autostage.runtime.function_trace import FunctionTrace, lists_in, run_traced
from autostage.runtime.operator_hooks import register_operator_hook
from autostage.runtime.ops import call as _call_op  # noqa: F401 - registers the call op
from autostage.runtime.tensor import Tensor


class Callee:
    """A function traced into a module for staged calls: its name and how to call it."""

    __slots__ = ("name", "outputs", "captures", "result_types", "array_results", "raised")

    def __init__(self, name: str, outputs: Outputs, captures: tuple, result_types: tuple,
                 array_results: tuple[bool, ...], raised: Exception | None = None):
        self.name = name
        self.outputs = outputs
        self.captures = captures  # the environment sources of its implicit parameters
        self.result_types = result_types  # weak where a result is a Python number
        self.array_results = array_results  # per result: whether it is a 0-d ndarray
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
    # would pass the int itself: it is part of the key (types compare without weak-ness).
    key = (ById(target), owner, treedef, *[
        (leaf.type, value_info.is_weak(leaf.value), value_info.is_array(leaf.value))
        if isinstance(leaf, Tensor) else constant_key(leaf) for leaf in leaves])
    callee = trace.shared.callees.get(key)
    if callee is None:
        callee = _trace_callee(fn, key, leaves, treedef, trace)
    operands = [leaf.value for leaf in leaves if isinstance(leaf, Tensor)]
    operands += [trace.capture(source, source.read()).value for source in callee.captures]
    results = tracing.emit("call", operands, {"callee": callee.name,
                                               "result_types": callee.result_types})
    for value, type_, array in zip(results, callee.result_types, callee.array_results,
                                   strict=True):
        if getattr(type_, "weak", False):  # `emit` gives strong types; the callee's say weak
            value_info.mark_weak(value)
        if array:
            value_info.mark_array(value)
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
    arrays = [value_info.is_array(leaf.value) for leaf in tensors]  # facts of the caller's trace
    # The parameters have the arguments' types, weak ones included.
    trace = FunctionTrace(caller.module, name, [leaf.type for leaf in tensors], shared)
    trace.roots = None if caller.roots is None else (fn, *caller.roots)
    params = iter(trace.function.body.args)
    args, kwargs = pytree.unflatten(treedef, [
        Tensor(next(params)) if isinstance(leaf, Tensor) else leaf for leaf in leaves])
    trace.argument_lists = lists_in([*args, *kwargs.values()])
    shared.active.add(key)
    try:
        with tracing.tracing(trace):
            for param, array in zip(trace.function.body.args, arrays, strict=False):
                if array:
                    value_info.mark_array(param)
            output = run_traced(trace, bind_environment(fn, trace), args, kwargs)
            outputs = collect_outputs(trace, output, callee=True)
            trace.check_escapes()
            array_results = tuple(value_info.is_array(v) for v in trace.function.body.results)
    finally:
        shared.active.discard(key)
        trace.finished = True
    caller.sources.update(trace.sources)
    callee = Callee(name, outputs, tuple(trace.captures), trace.function.result_types,
                    array_results, trace.raised)
    shared.callees[key] = callee
    return callee


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


def inline_call(fn: Callable) -> Callable:
    """``fn`` (converted) run inline in the function being traced, its environment captured as
    the caller's is: for callers that need the values ``fn`` returns to stay in this trace (a
    custom gradient's ``grad_fn`` closes over them)."""
    return bind_environment(fn, tracing.current())


# Converted code reaches staged calls the way it reaches every staged operator: by name.
register_operator_hook("converted_call", traced_call)
register_operator_hook("inline_call", inline_call)
register_operator_hook("construct", made_in_trace)
