"""Gradients of a function that calls itself, with a tape: every call's results saved once.

Differentiating ``f`` by replaying its body would replay its recursive calls too, each
recomputing its whole subtree (a call at depth d computed d times). Instead, a call of ``f``
from outside its recursion that a gradient goes through is changed, in place, to

    results..., root, tape... = call @f_fwd(operands..., empty tape...)

and its gradient is

    cotangents...             = call @f_bwd(operands..., result cotangents..., root, tape...,
                                            cotangents so far...)

``f_fwd`` is ``f`` that records, as it returns, its results and the call number of each of its
recursive call sites (-1 where a site did not run) at its own call number, the length of the
tape at that point; the tape is a tensor list per result and per site, threaded through the
calls and through the ``cond`` ops around the sites. ``f_bwd`` replays ``f``'s body with each
recursive call replaced by ``call @f_saved(operands..., number, tape...)``, which reads the
child's saved results, and is differentiated as any body: the gradient of ``f_saved`` is
``f_bwd`` of the child (``control_flow.call_vjp``). Each call's forward values are thus
computed once, by ``f_fwd`` (which prints, asserts and raises as ``f`` does, being the forward
pass), and its local ops replayed once more by ``f_bwd``: no subtree is ever recomputed.
Memory: O(calls x result size). ``f_bwd`` takes the cotangents its float parameters have so
far and returns them with its own added (``backprop.Threaded``): a weight passed down the
recursion has one running cotangent, where each call returned a dense one of its own (zeros
in a leaf that does not use it) for its caller to add.

Taped when ``f`` calls only itself in its cycle and its recursive calls sit in ``cond`` ops
(not in loops); other recursion recomputes (``control_flow._recursive_call_vjp``).
"""

from __future__ import annotations

import weakref

import numpy as np
from autostage.runtime import call_graph, ir, tracing
from autostage.runtime.autodiff import build, quiet
from autostage.runtime.autodiff.backprop import carries_gradient
from autostage.runtime.types import ListType, TensorType, scalar

INDEX = scalar(np.int64)


class Tape:
    """The functions of one taped function ``f`` in a module: ``forward``, and per set of
    wanted parameters its ``saved`` and ``backward`` (``Backward``)."""

    def __init__(self, module: ir.Module, f: ir.Function, sites: list[ir.Op]):
        self.module, self.f = module, f
        self.sites = {op: i for i, op in enumerate(sites)}
        self.results = [v.type for v in f.body.results]
        self.lists = [ListType(t) for t in self.results] + [ListType(INDEX)] * len(sites)
        self.forward = module.unique_name(f"{f.name}_fwd")
        self._backwards: dict[frozenset, Backward] = {}

    def backward(self, wanted: set[int], differentiate) -> Backward:
        """The backward function returning the cotangents of the parameters ``wanted`` and
        of those the recursion passes them on to (``floats``); ``differentiate`` is
        ``control_flow.differentiate_region``."""
        floats = self._closed(wanted)
        if floats not in self._backwards:
            self._backwards[floats] = Backward(self, sorted(floats), differentiate)
        return self._backwards[floats]

    def _closed(self, wanted: set[int]) -> frozenset[int]:
        """``wanted`` and the float parameters a recursive call passes a value to that may
        depend on them: anything but a parameter passed on unchanged from outside the set."""
        params = {v: i for i, v in enumerate(self.f.body.args)}
        floats = set(wanted)
        changed = True
        while changed:
            changed = False
            for op in self.sites:
                for j, v in enumerate(op.operands):
                    if j not in floats and carries_gradient(self.f.body.args[j]) and (
                            params.get(v) is None or params[v] in floats):
                        floats.add(j)
                        changed = True
        return frozenset(floats)


class Backward:
    """``f_saved`` and ``f_bwd`` for one set of wanted parameters (``floats``)."""

    def __init__(self, tape: Tape, floats: list[int], differentiate):
        self.tape, self.floats = tape, floats
        module, f = tape.module, tape.f
        self.saved = module.unique_name(f"{f.name}_saved")
        self.name = module.unique_name(f"{f.name}_bwd")
        _SAVED.setdefault(module, {})[self.saved] = self
        args = [v.type for v in f.body.args]
        build.define_function(module, self.saved, [*args, INDEX, *tape.lists], lambda params: [
            build.emit("list_get", [params[len(args) + 1 + k], params[len(args)]])[0]
            for k in range(len(tape.results))])
        so_far = [args[i] for i in floats]  # the cotangents so far of the float parameters
        build.define_function(module, self.name,
                              [*args, *tape.results, INDEX, *tape.lists, *so_far],
                              lambda params: _backward_body(self, params, differentiate))


# module -> function name -> its Tape (None: not taped)
_TAPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# module -> name of an f_saved function -> its Backward
_SAVED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tape_of(module: ir.Module, name: str, check) -> Tape | None:
    """``name``'s tape in ``module`` (its forward function made on first use), or None where
    the recursion is not taped. ``check(op)`` raises for ops a replay cannot repeat."""
    tapes = _TAPES.setdefault(module, {})
    if name not in tapes:
        f = module.functions[name]
        sites = _self_call_sites(module, f)
        if sites is None:
            tapes[name] = None
            return None
        for op in f.body.walk():
            check(op)
        tape = Tape(module, f, sites)
        args = [v.type for v in f.body.args]
        build.define_function(module, tape.forward, [*args, *tape.lists], lambda params: (
            _forward_body(tape, params[:len(args)], params[len(args):])))
        tapes[name] = tape
    return tapes[name]


def record(op: ir.Op, tape: Tape) -> list[ir.Value]:
    """Makes the ``call`` ``op`` of ``tape.f`` (or of its forward function already) call the
    forward function, which records the calls on a tape, in place: its results keep their
    values, and the root's number and the tape lists, returned, are new results."""
    n = len(tape.results)
    if op.attrs["callee"] != tape.forward:
        empty, _ = build.placed(op.results[0].region, op, lambda: [
            build.op1("list_new", element=t.element) for t in tape.lists])
        op.operands = (*op.operands, *empty)
        build.add_results(op, (INDEX, *tape.lists))
        op.attrs = {**op.attrs, "callee": tape.forward,
                    "result_types": tuple(v.type for v in op.results)}
    return list(op.results[n:])


def taped_forward(module: ir.Module, callee: str) -> Tape | None:
    """The Tape whose forward function is ``callee`` (None for other functions)."""
    return next((t for t in _TAPES.get(module, {}).values()
                 if t is not None and t.forward == callee), None)


def saved_backward(module: ir.Module, callee: str) -> Backward | None:
    """The Backward whose ``f_saved`` function is ``callee`` (None for other functions)."""
    return _SAVED.get(module, {}).get(callee)


def _self_call_sites(module: ir.Module, f: ir.Function) -> list[ir.Op] | None:
    """``f``'s calls of itself, in order, when the tape can record them: ``f`` reaches no
    other function that calls it back, each site is outside loops, values are tensors."""
    calls = {name: call_graph.callees(g) for name, g in module.functions.items()}
    if any(f.name in call_graph.reachable(c, calls) for c in calls[f.name] - {f.name}):
        return None
    if not all(isinstance(v.type, TensorType) for v in (*f.body.args, *f.body.results)):
        return None
    sites: list[ir.Op] = []

    def visit(region: ir.Region, in_loop: bool) -> bool:
        for op in region.ops:
            if op.name == "call" and op.attrs["callee"] == f.name:
                if in_loop:
                    return False
                sites.append(op)
            for inner in op.regions:
                if not visit(inner, in_loop or op.name != "cond"):
                    return False
        return True
    return sites if visit(f.body, False) and sites else None


def _forward_body(tape: Tape, args: list, lists: list) -> list:
    """``f``'s body recording its results and its sites' call numbers on the tape."""
    f = tape.f
    copies = dict(zip(f.body.args, args, strict=True))
    unset = build.constant(-1, np.int64)
    state = [*lists, *[unset] * len(tape.sites)]
    n_lists = len(tape.lists)

    def site(op: ir.Op, state: list) -> list:
        outs = build.emit("call", [copies.get(v, v) for v in op.operands] + state[:n_lists],
                          {"callee": tape.forward, "result_types": (
                              *tape.results, INDEX, *tape.lists)})
        copies.update(zip(op.results, outs, strict=False))
        k = len(tape.results)
        state = [*outs[k + 1:], *state[n_lists:]]
        state[n_lists + tape.sites[op]] = outs[k]
        return state

    state = _rebuild(f.body, copies, state, site, tape, loud=True)
    results = [copies.get(v, v) for v in f.body.results]
    lists, numbers = state[:n_lists], state[n_lists:]
    me = build.op1("list_length", lists[-1])
    lists = [build.emit("list_append", [lst, value])[0]
             for lst, value in zip(lists, [*results, *numbers], strict=True)]
    return [*results, me, *lists]


def _backward_body(backward: Backward, params: list, differentiate) -> list:
    """``f``'s body with its recursive calls read from the tape, differentiated: the
    cotangents of the parameters ``backward.floats``."""
    tape = backward.tape
    f = tape.f
    n_args, n_results = len(f.body.args), len(tape.results)
    args, seeds = params[:n_args], params[n_args:n_args + n_results]
    me = params[n_args + n_results]
    lists = params[n_args + n_results + 1:n_args + n_results + 1 + len(tape.lists)]
    so_far = params[n_args + n_results + 1 + len(tape.lists):]
    with tracing.region([v.type for v in f.body.args]) as saved_body:  # replayed below
        copies = dict(zip(f.body.args, saved_body.args, strict=True))
        numbers = [build.emit("list_get", [lists[n_results + i], me])[0]
                   for i in range(len(tape.sites))]

        def site(op: ir.Op, state: list) -> list:
            operands = [copies.get(v, v) for v in op.operands]
            outs = build.emit("call", [*operands, numbers[tape.sites[op]], *lists],
                              {"callee": backward.saved, "result_types": tuple(tape.results)})
            copies.update(zip(op.results, outs, strict=True))
            return state

        _rebuild(f.body, copies, [], site, tape)
        saved_body.results = tuple(copies.get(v, v) for v in f.body.results)
    pairs = [(r, ct) for r, ct in zip(saved_body.results, seeds, strict=True)
             if carries_gradient(r)]
    wanted = [args[i] for i in backward.floats]
    return differentiate(saved_body, args, pairs, wanted, only_wanted=True,
                         start=dict(zip(wanted, so_far, strict=True)))


def _rebuild(region: ir.Region, copies: dict, state: list, site, tape: Tape,
             loud: bool = False) -> list:
    """Emits ``region``'s ops into the current region: each recursive call through
    ``site(op, state) -> state``, each ``cond`` around one rebuilt with ``state`` threaded
    through as extra results; returns the state after the region. The copies print, assert
    and raise as ``region`` does when ``loud`` (the forward function runs in place of ``f``),
    else they are quiet (a replay)."""
    for op in region.ops:
        if op in tape.sites:
            state = site(op, state)
        elif op.name == "cond" and any(o in tape.sites for r in op.regions for o in r.walk()):
            branches = []
            for inner in op.regions:
                with tracing.region() as branch:
                    after = _rebuild(inner, copies, state, site, tape, loud)
                    branch.results = (*(copies.get(v, v) for v in inner.results), *after)
                branches.append(branch)
            outs = build.emit("cond", [copies.get(op.operands[0], op.operands[0])], {
                **op.attrs, "result_types": (*(v.type for v in op.results),
                                             *(v.type for v in state))}, tuple(branches))
            copies.update(zip(op.results, outs, strict=False))
            state = list(outs[len(op.results):])
        else:
            new = ir.copy_op(op, copies) if loud else quiet.copy(op, copies, tape.module)
            if new is not None:
                tracing.current().region.append(new)
    return state
