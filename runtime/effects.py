"""The effects of an op, its regions included, read from each op's ``OpDef.effects``.

An op's own effects are declared where the op is defined (``runtime/ops/``); an op with regions
has those of every op inside them too, and a ``call`` has those of its callee's body, which only
the module knows: without the module (while tracing) a call is assumed to do anything. A callee
that reaches itself through calls may not terminate, so calling it is never pure. Unregistered
ops count as doing anything: a pass must not delete what it does not understand.
"""

from __future__ import annotations

import threading

from autostage.runtime import ir, op_registry
from autostage.runtime.op_registry import PURE, UNKNOWN, Effects

_RECURSION = Effects(may_not_terminate=True)
_computing = threading.local()  # .callees: the callees whose effects are being computed


def of_op(op: ir.Op, module: ir.Module | None = None) -> Effects:
    """The effects of running ``op``: its own and those of the ops in its regions."""
    definition = op_registry.REGISTRY.get(op.name)
    if definition is None:
        return UNKNOWN
    own = definition.effects
    effects = own(op, module) if callable(own) else own
    for region in op.regions:
        effects = effects | of_region(region, module)
    return effects


def of_region(region: ir.Region, module: ir.Module | None = None) -> Effects:
    """The effects of running every op of ``region``."""
    effects = PURE
    for op in region.ops:
        effects = effects | of_op(op, module)
    return effects


def of_callee(name: str, module: ir.Module | None) -> Effects:
    """The effects of calling function ``name`` of ``module``: its body's, or UNKNOWN without
    the module; a callee that reaches itself again may not terminate."""
    if module is None or name not in module.functions:
        return UNKNOWN
    callees = getattr(_computing, "callees", None)
    if callees is None:
        callees = _computing.callees = set()
    if name in callees:
        return _RECURSION
    callees.add(name)
    try:
        return of_region(module.functions[name].body, module)
    finally:
        callees.discard(name)


def has_effects(op: ir.Op, module: ir.Module | None = None) -> bool:
    """Whether ``op`` must run even if nothing reads its results (``bool(of_op(...))``, stopping
    at the first effect: passes ask this of every op)."""
    definition = op_registry.REGISTRY.get(op.name)
    if definition is None:
        return True
    own = definition.effects
    if own(op, module) if callable(own) else own:
        return True
    return any(has_effects(inner, module) for region in op.regions for inner in region.ops)
