"""VJP rules of the ops with regions: ``cond``, ``while`` and ``call``.

The values computed inside a region are not visible after it, so the backward pass *replays* a
region (copies its ops into the backward program) and differentiates the copy:

* ``cond``: a backward ``cond`` on the same predicate; each branch replays its forward branch and
  yields the cotangents of the values the branches read. The forward ``cond`` is changed to
  yield the costly values of its branches too (``residuals.yield_saved``), which the backward
  branch reads instead of computing them again.
* ``while``: the forward loop is changed, when a gradient first needs it, to push its carried
  values onto one stack (a tensor list) per value in each iteration; the backward loop runs the
  iterations in reverse, replaying the body from the saved values, and reads the residuals that
  are costly to recompute (a matmul's result, a tanh's) from stacks of their own
  (``residuals.py``). Memory is O(iterations x (carried + saved) size); data-dependent trip
  counts need nothing else. A carried tensor
  list is not saved (a list of lists is not a type): the replay binds it to the loop's final
  list, which is right only when the body does nothing with it but ``list_append`` (the
  ``outs.append(h)`` pattern, whose VJP reads no element); any other read is refused. The
  backward loop carries the list's dense cotangent (``build.ct_type``), one row shorter per
  append undone.
* ``call``: the callee's body replayed inline; a recursive callee's backward function called.

A replay must compute what the forward pass computed: regions that draw random numbers or assign
Variables cannot be replayed (a clear error); prints, asserts and raises are not replayed, at
any depth, nor in the callees a replay calls (they ran in the forward pass; ``quiet.py``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np
from autostage.runtime import call_graph, ir, tracing
from autostage.runtime.autodiff import (
    build,
    list_appends,
    list_reads,
    quiet,
    recursion_tape,
    residuals,
)
from autostage.runtime.autodiff.backprop import (
    GradientError,
    Threaded,
    accumulate,
    active_values,
    backprop,
    captured,
    carries_gradient,
    cotangent_so_far,
    is_active,
    state_reads,
)
from autostage.runtime.types import ListType, TensorType, join, scalar

INDEX = scalar(np.int64)

# Ops whose replay would not compute what the forward pass did.
_NOT_REPLAYABLE = {
    "random_draw": "draws random numbers (draw them before the loop or branch)",
    "var_assign": "assigns a Variable", "var_assign_add": "assigns a Variable",
    "py_function": "calls Python with py_function (the gradient would run that code, and the "
                   "Python function, again; call it outside)",
    "var_assign_sub": "assigns a Variable",
}


def replay(region: ir.Region, args: Sequence[ir.Value]) -> tuple[list[ir.Op], dict]:
    """Copies ``region``'s ops into the current region with its arguments bound to ``args``;
    returns the copies and the map from the region's values to theirs."""
    copies: dict[ir.Value, ir.Value] = dict(zip(region.args, args, strict=True))
    context = tracing.current()
    ops = []
    for op in region.ops:
        _check_replayable(op)
        new = quiet.copy(op, copies, context.module)
        if new is not None:
            ops.append(context.region.append(new))
    return ops, copies


def _check_replayable(op: ir.Op) -> None:
    for inner in (op, *(o for r in op.regions for o in r.walk())):
        reason = _NOT_REPLAYABLE.get(inner.name)
        if reason is not None:
            where = f" (at {inner.loc})" if inner.loc is not None else ""
            raise GradientError(
                f"autostage cannot differentiate through a staged loop, branch or call that "
                f"{reason}{where}")


def differentiate_region(region: ir.Region, args: Sequence[ir.Value],
                         seeds: Sequence[tuple[ir.Value, ir.Value | None]],
                         wanted: Sequence[ir.Value], only_wanted: bool = False,
                         start: dict | None = None) -> list[ir.Value]:
    """Replays ``region`` on ``args`` and returns the cotangents of ``wanted`` (zeros where
    none), given cotangents ``seeds`` of (region result, cotangent) pairs. ``only_wanted``:
    the other arguments are constants of the differentiation (nothing computed for them).
    ``start``: cotangents some ``wanted`` values have already (the region's are added to
    them, and one the region does not touch comes back as it is, not as zeros)."""
    return _differentiate(region, args, seeds, wanted, only_wanted=only_wanted,
                          start=start)[0]


def _differentiate(region: ir.Region, args: Sequence[ir.Value],
                   seeds: Sequence[tuple[ir.Value, ir.Value | None]],
                   wanted: Sequence[ir.Value], prepare=None, only_wanted: bool = False,
                   start: dict | None = None) -> tuple[list[ir.Value], list[ir.Op], dict]:
    """``differentiate_region``, also returning the replayed ops and the replay's map;
    ``prepare(ops, copies)`` may change the replay before it is differentiated, and returns
    what to run once the backward ops exist (or None)."""
    ops, copies = replay(region, args)
    finish = prepare(ops, copies) if prepare is not None else None
    sources = {v for v in (*args, *wanted)
               if (v in wanted if only_wanted else is_active(v) or v in args)}
    active = active_values(ops, sources)
    cotangents: dict[ir.Value, ir.Value] = dict(start or {})
    for result, ct in seeds:
        value = copies.get(result, result)
        if ct is not None and value in active:
            accumulate(cotangents, value, ct)
    backprop(ops, cotangents, active)
    found = [cotangents[v] if v in cotangents else build.zeros_of(v) for v in wanted]
    if finish is not None:
        finish()
    return found, ops, copies


def _free(op: ir.Op) -> list[ir.Value]:
    """The active values ``op``'s regions capture that may take a gradient."""
    return [v for v in captured(op) if is_active(v) and carries_gradient(v)]


def cond_vjp(op: ir.Op, cotangents: tuple) -> dict:
    """Both branches differentiated under the predicate, reading the costly values the forward
    branch computed (``residuals.yield_saved``). A value with a cotangent already
    (from the ops after the ``cond``) has it added to inside the branches (``Threaded``): a
    branch that does not use the value yields it unchanged, where it would yield zeros."""
    pred, *passed = op.operands
    frees = list(dict.fromkeys((*(v for v in passed if is_active(v)), *_free(op))))
    start = {v: ct for v in frees if (ct := cotangent_so_far(v)) is not None}
    branches, replays = [], []
    for region in op.regions:
        with tracing.region() as backward:
            seeds = list(zip(region.results, cotangents, strict=True))
            found, replayed, copies = _differentiate(region, passed, seeds, frees, start=start)
            backward.results = tuple(found)
        branches.append(backward)
        replays.append((backward, replayed, copies))
    residuals.yield_saved(op, replays)
    types = [build.ct_type(v) for v in frees]
    for branch in branches:  # a branch's cotangent may know fewer sizes than its primal
        types = [_join(t, r.type) for t, r in zip(types, branch.results, strict=True)]
    results = build.emit("cond", [pred], {"result_types": tuple(types)}, tuple(branches))
    return {v: Threaded(ct) if v in start else ct
            for v, ct in zip(frees, results, strict=True)}


def _join(a, b):
    """The type of a cond result yielded as ``a`` by one branch and ``b`` by another."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return join(a, b) or a
    return a


def while_vjp(op: ir.Op, cotangents: tuple) -> dict:
    n = op.attrs.get("saved_inputs", len(op.operands))  # the loop's own carried values
    appended = list_appends.appended_lists(op, n)
    read = list_reads.read_lists(op.regions[1], n, appended)
    inputs_saved = _saved_inputs(op)
    lengths = list_reads.length_stacks(op, read)
    # A carried list is carried backward with a cotangent, or when the body reads it (else the
    # body only appends to it, so none arises inside). The stacks are such lists too: they get
    # cotangents only in a higher derivative (from the backward loop's reads of them).
    positions = [k for k, ct in enumerate(cotangents) if ct is not None or k in read or (
        k < n and not isinstance(op.results[k].type, ListType))]
    carried = [op.results[k] for k in positions]
    frees = _free(op)
    initial = [ct if ct is not None else build.zeros_of(r) for r, ct in zip(
        carried, (cotangents[k] for k in positions), strict=True)]
    zeros = [build.zeros_of(v) for v in frees]
    last = build.sub(build.op1("list_length", inputs_saved[0]), build.constant(1, INDEX.dtype))
    types = (INDEX, *(build.ct_type(v) for v in (*carried, *frees)))
    with tracing.region(types) as cond:
        cond.results = (build.op1("greater_equal", cond.args[0], build.constant(0, INDEX.dtype)),)
    with tracing.region(types) as body:
        i, *rest = body.args
        carried_cts, free_cts = rest[:len(carried)], rest[len(carried):]
        saved = iter(build.op1("list_get", stack, i) for stack in inputs_saved)
        # A carried list stands for itself at the end of the loop (see the module docstring).
        args = [r if isinstance(r.type, ListType) else next(saved) for r in op.results[:n]]
        args += op.results[n:]  # every stack (the body as rebuilt pushes onto them)
        inputs = [args[k] for k in positions]
        seeds = [(op.regions[1].results[k], ct) for k, ct in zip(
            positions, carried_cts, strict=True)]
        starts = {args[k]: build.op1("list_get", stack, i) for k, stack in lengths.items()}
        found, replayed, copies = _differentiate(
            op.regions[1], args, seeds, [*inputs, *frees],
            prepare=lambda ops, _: list_reads.rewrite(body, ops, starts))
        for k, grows in appended.items():
            if not grows and k in positions:  # a list the body makes anew: the one before
                found[positions.index(k)] = build.zeros_of(op.operands[k])  # the loop gets 0s
        new_carried = [ct if carries_gradient(x) else z for ct, x, z in zip(
            found[:len(carried)], inputs, carried_cts, strict=True)]
        new_free = [build.add(total, ct) for total, ct in zip(
            free_cts, found[len(carried):], strict=True)]
        body.results = (build.sub(i, build.constant(1, INDEX.dtype)), *new_carried, *new_free)
    residuals.read_saved(op, body, i, replayed, copies)
    results = build.emit("while", [last, *initial, *zeros], {"carried_types": types},
                         (cond, body))
    found: dict[ir.Value, ir.Value] = {}
    # One value may start two carried values, or start one and be read in the body (`y = x`
    # then `y * x`): its cotangents add up.
    for value, ct in zip([*(op.operands[k] for k in positions), *frees], results[1:],
                         strict=True):
        found[value] = build.add(found[value], ct) if value in found else ct
    return found


def _saved_inputs(op: ir.Op) -> tuple[ir.Value, ...]:
    """The stacks of ``op``'s carried tensors at the start of each iteration (the carried lists
    are not saved; a loop that carries only lists saves a 0 per iteration, to count them): the
    loop is rebuilt (in place, keeping its result values) to push them, once."""
    n = op.attrs.get("saved_inputs", len(op.operands))
    if "saved_inputs" in op.attrs:
        return op.results[n:n + op.attrs["input_stacks"]]
    saved = [k for k, v in enumerate(op.results) if not isinstance(v.type, ListType)]
    if saved:
        pushed = [op.regions[1].args[k] for k in saved]
        stacks = residuals.add_stacks(op, lambda copies: [copies[v] for v in pushed],
                                      [v.type for v in pushed])
    else:
        stacks = residuals.add_stacks(op, lambda copies: [build.constant(0, INDEX.dtype)],
                                      [INDEX])
    op.attrs = {**op.attrs, "saved_inputs": n, "input_stacks": len(stacks)}
    return stacks


_replaying = threading.local()  # .callees: those whose bodies call_vjp replays in this thread
# module -> callee name -> the name of its backward function (recursive callees)
_BACKWARD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def call_vjp(op: ir.Op, cotangents: tuple) -> dict:
    """The callee's body replayed inline and differentiated; a call of a recursive function
    calls the callee's backward function instead (inlining it would copy its body into the
    caller's backward pass once per call site, for nothing)."""
    name = op.attrs["callee"]
    replaying = _replaying.__dict__.setdefault("callees", [])
    module = tracing.current().module
    backward = recursion_tape.saved_backward(module, name)
    if backward is not None:  # a recursive call inside a taped backward function
        n = len(backward.tape.f.body.args)
        return _call_backward(op, cotangents, backward.name, backward.tape.f, backward.floats,
                              list(op.operands[n:]), op.operands[:n], threaded=True)
    if name in replaying or name in call_graph.recursive(module):
        return _recursive_call_vjp(op, cotangents)
    callee = module.functions[name]
    active = [v for v in (*op.operands, *state_reads(op)) if is_active(v)]
    seeds = list(zip(callee.body.results, cotangents, strict=True))
    body_args = list(op.operands)
    replaying.append(name)
    try:
        found = differentiate_region(callee.body, body_args, seeds, active, only_wanted=True)
    finally:
        replaying.pop()
    return dict(zip(active, found, strict=True))


def _recursive_call_vjp(op: ir.Op, cotangents: tuple) -> dict:
    """The gradient of a call of a recursive function. A function calling only itself, from
    outside loops, is taped (``recursion_tape``: each call's results saved once, read back by
    the backward function). Otherwise ``call @f_vjp(operands..., result cotangents...)``, a
    backward function that recomputes the callee's forward values (its nested calls included):
    a call at depth d recomputes its subtree."""
    name = op.attrs["callee"]
    module = tracing.current().module
    tape = recursion_tape.taped_forward(module, name)  # a call made to record already
    if tape is not None:
        return _taped_call_vjp(op, cotangents, tape)
    if state_reads(op):
        raise GradientError(
            f"gradients through staged recursion that reads Variables are not supported yet: "
            f"@{name}{_at(op)}; pass the values as arguments")
    callee = tracing.current().module.functions[name]
    floats = [i for i, p in enumerate(callee.body.args) if carries_gradient(p)]
    outs = [i for i, r in enumerate(callee.body.results) if carries_gradient(r)]
    for v in (*callee.body.args, *callee.body.results):
        if isinstance(v.type, ListType):
            raise GradientError(f"gradients through staged recursion with list arguments or "
                                f"results are not supported yet: @{name}{_at(op)} (so are "
                                "second derivatives of a recursion: its backward function "
                                "reads the first gradient's tape, a list)")
    tape = recursion_tape.tape_of(module, name, _check_replayable)
    if tape is not None:  # record the calls' results once, then read them back
        return _taped_call_vjp(op, cotangents, tape)
    return _call_backward(op, cotangents, _backward_function(callee, floats, outs), callee,
                          floats, [], op.operands, outs=outs)


def _taped_call_vjp(op: ir.Op, cotangents: tuple, tape: recursion_tape.Tape) -> dict:
    """The call ``op`` made to record its calls (``recursion_tape.record``), and the call of
    the backward function that reads them."""
    recorded = recursion_tape.record(op, tape)
    args = op.operands[:len(tape.f.body.args)]
    floats = [i for i, p in enumerate(tape.f.body.args) if carries_gradient(p)]
    backward = tape.backward({i for i in floats if is_active(args[i])}, differentiate_region)
    return _call_backward(op, cotangents[:len(tape.results)], backward.name, tape.f,
                          backward.floats, recorded, args, threaded=True)


def _call_backward(op: ir.Op, cotangents: tuple, backward: str, callee: ir.Function,
                   floats: list[int], extra: list, args: Sequence[ir.Value],
                   outs: list[int] | None = None, threaded: bool = False) -> dict:
    """``call @backward(args..., cotangents of results outs..., extra...)``: the cotangents
    of ``callee``'s float parameters, accumulated onto the active ``args``. ``threaded`` (a
    taped backward function): the call also takes each float argument's cotangent so far
    (zeros where none, and for the second reading of one value) and returns the sums."""
    outs = list(range(len(callee.body.results))) if outs is None else outs
    cts = [cotangents[i] if cotangents[i] is not None else build.zeros_of(op.results[i])
           for i in outs]
    so_far, first = [], {}
    for i in floats if threaded else ():
        ct = cotangent_so_far(args[i]) if args[i] not in first else None
        first.setdefault(args[i], i)
        so_far.append(ct if ct is not None else build.zeros_of(args[i]))
    results = tracing.emit("call", [*args, *cts, *extra, *so_far], {
        "callee": backward, "result_types": tuple(callee.body.args[i].type for i in floats)})
    found: dict = {}
    for i, ct in zip(floats, results, strict=True):
        if is_active(args[i]):
            accumulate(found, args[i], Threaded(ct) if first.get(args[i]) == i else ct)
    return found


def _backward_function(callee: ir.Function, floats: list[int], outs: list[int]) -> str:
    """The name of ``callee``'s backward function in the module, built on first use."""
    module = tracing.current().module
    names = _BACKWARD.setdefault(module, {})
    if callee.name in names:
        return names[callee.name]
    name = module.unique_name(f"{callee.name}_vjp")
    names[callee.name] = name
    params = [*(a.type for a in callee.body.args), *(callee.body.results[i].type for i in outs)]

    def body(args: list[ir.Value]) -> list[ir.Value]:
        primal, seeds = args[:len(callee.body.args)], args[len(callee.body.args):]
        return differentiate_region(
            callee.body, primal,
            [(callee.body.results[i], ct) for i, ct in zip(outs, seeds, strict=True)],
            [primal[i] for i in floats])

    replaying = _replaying.__dict__.setdefault("callees", [])
    replaying.append(callee.name)
    try:
        build.define_function(module, name, params, body)
    finally:
        replaying.pop()
    return name


def _at(op: ir.Op) -> str:
    return f" at {op.loc}" if op.loc is not None else ""

