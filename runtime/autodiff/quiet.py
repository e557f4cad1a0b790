"""Replays that print nothing: the copies of forward ops a backward pass runs again.

A gradient runs the forward ops once as written (they print, assert, raise), then replays some
of them to recompute values (a branch's, a loop body's, a callee's, a recursive function's taped
forward). A replay must not print again, at any depth: ``copy`` drops the ops of ``SKIPPED``
from the copy's regions too, and a call whose callee (or anything it calls) has one calls the
callee's quiet twin ``f_quiet`` instead, made once per module. Asserts and raises are dropped
with prints: the forward pass checked the same values.
"""

from __future__ import annotations

import weakref

from autostage.runtime import call_graph, ir

SKIPPED = frozenset(("print", "assert", "raise", "raise_if"))

# module -> function name -> the name of its quiet twin (itself when it has nothing to skip)
_TWINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def copy(op: ir.Op, copies: dict[ir.Value, ir.Value], module: ir.Module) -> ir.Op | None:
    """A copy of ``op`` for a replay (``ir.copy_op``), quiet; None when ``op`` is skipped."""
    if op.name in SKIPPED:
        return None
    new = ir.copy_op(op, copies)
    _quieten(new, module)
    return new


def callee(module: ir.Module, name: str) -> str:
    """The name of ``name``'s quiet twin in ``module``, made on first use."""
    twins = _TWINS.setdefault(module, {})
    if name not in twins:
        calls = {n: call_graph.callees(f) for n, f in module.functions.items()}
        speaking = any(op.name in SKIPPED for n in {name} | call_graph.reachable(name, calls)
                       for op in module.functions[n].body.walk())
        if not speaking:
            twins[name] = name
        else:
            twin = twins[name] = module.unique_name(f"{name}_quiet")
            body = ir.copy_region(module.functions[name].body, {})
            _strip(body, module)
            module.add(ir.Function(twin, body))
    return twins[name]


def _quieten(op: ir.Op, module: ir.Module) -> None:
    if op.name == "call":
        op.attrs = {**op.attrs, "callee": callee(module, op.attrs["callee"])}
    if op.name == "custom_gradient":  # the user's grad_fn: it runs in the backward pass only
        return
    for region in op.regions:
        _strip(region, module)


def _strip(region: ir.Region, module: ir.Module) -> None:
    region.ops[:] = [op for op in region.ops if op.name not in SKIPPED]
    for op in region.ops:
        _quieten(op, module)
