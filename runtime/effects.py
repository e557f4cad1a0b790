"""The effects of an op, its regions included, read from each op's ``OpDef.effects``.

An op's own effects are declared where the op is defined (``runtime/ops/``); an op with regions
has those of every op inside them too, and a ``call`` has those of its callee's body, which only
the module knows: without the module (while tracing) a call is assumed to do anything. A callee
that reaches itself through calls may not terminate, so calling it is never pure. Unregistered
ops count as doing anything: a pass must not delete what it does not understand. ``raises``
says which exceptions an op itself may raise at run time (``OpDef.raises``: errors Python would
raise even if the result is unused, which try staging must not claim to catch); ``may_fail``
says whether an op may raise at all, its regions and callee included (what DCE respects).
"""

from __future__ import annotations

import threading

from autostage.runtime import ir, op_registry
from autostage.runtime.op_registry import PURE, UNKNOWN, Effects
from autostage.runtime.types import TensorType

_RECURSION = Effects(may_not_terminate=True)
_computing = threading.local()  # fact -> the callees whose fact is being computed


def own(op: ir.Op, module: ir.Module | None = None) -> Effects:
    """The effects of ``op`` itself (``OpDef.effects``), not of the ops in its regions."""
    definition = op_registry.REGISTRY.get(op.name)
    if definition is None:
        return UNKNOWN
    rule = definition.effects
    return rule(op, module) if callable(rule) else rule


def of_op(op: ir.Op, module: ir.Module | None = None) -> Effects:
    """The effects of running ``op``: its own and those of the ops in its regions."""
    effects = own(op, module)
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
    return _through_callee("effects", name, module, UNKNOWN, _RECURSION,
                           lambda body: of_region(body, module))


def _through_callee(fact: str, name: str, module: ir.Module | None, unknown, recursive, compute):
    """``compute(callee body)``, or ``unknown`` without the module, or ``recursive`` when the
    callee is reached again while its ``fact`` is being computed (a recursive call).

    Each callee's body is computed once per outermost question (a recursion unrolled on a
    Python int calls each level twice: without the memo, 2**depth bodies). A callee answered
    while an outer one is still open may lack that one's facts, but the outermost answer is
    the union over every body reached either way."""
    if module is None or name not in module.functions:
        return unknown
    active = _computing.__dict__.setdefault(fact, set())
    if name in active:
        return recursive
    memo = _computing.__dict__.setdefault(f"{fact} answers", {})
    if name in memo:
        return memo[name]
    outermost = not active
    active.add(name)
    try:
        memo[name] = answer = compute(module.functions[name].body)
        return answer
    finally:
        active.discard(name)
        if outermost:
            memo.clear()


def raises(op: ir.Op) -> tuple[type[BaseException], ...]:
    """The exceptions ``op`` itself may raise at run time (not those of its regions or callee),
    by its ``OpDef.raises``; ``(Exception,)`` stands for any exception. By default an
    element-wise op raises ValueError only where its operands may not broadcast, and any other
    op (or an unregistered one) may raise anything."""
    definition = op_registry.REGISTRY.get(op.name)
    if definition is None:
        return (Exception,)
    rule = definition.raises
    if rule is None:
        return broadcast_errors(op) if definition.elementwise else (Exception,)
    return rule(op) if callable(rule) else rule


def may_fail(op: ir.Op, module: ir.Module | None = None) -> bool:
    """Whether ``op`` may raise at run time: by its own rule (``raises``), or because an op in
    its regions, or in its callee's body, may."""
    if raises(op):
        return True
    if op.name == "call":
        return _callee_may_fail(op.attrs["callee"], module)
    return any(may_fail(inner, module) for region in op.regions for inner in region.ops)


def _callee_may_fail(name: str, module: ir.Module | None) -> bool:
    """Whether a call of ``name`` may raise: an op of its body may (a recursive callee may
    exceed the recursion limit; without the module, anything may)."""
    return _through_callee("failing", name, module, True, True,
                           lambda body: any(may_fail(op, module) for op in body.ops))


def broadcast_errors(op: ir.Op) -> tuple[type[BaseException], ...]:
    """``(ValueError,)`` when the array operands of ``op`` may not broadcast (more than one, and
    a size unknown when tracing), else none: what an element-wise op may raise."""
    arrays = [v.type for v in op.operands if isinstance(v.type, TensorType) and v.type.ndim]
    return (ValueError,) if len(arrays) > 1 and any(
        d is None for t in arrays for d in t.shape) else ()


def shape_errors(op: ir.Op) -> tuple[type[BaseException], ...]:
    """``(ValueError,)`` unless ``op`` has two or more tensor operands that surely broadcast: the
    conservative answer for an op whose shape errors, if any, show only at run time."""
    if len(op.operands) >= 2 and all(isinstance(v.type, TensorType) for v in op.operands):
        return broadcast_errors(op)
    return (ValueError,)


def has_effects(op: ir.Op, module: ir.Module | None = None) -> bool:
    """Whether ``op`` must run even if nothing reads its results (``bool(of_op(...))``, stopping
    at the first effect: passes ask this of every op)."""
    if own(op, module):
        return True
    return any(has_effects(inner, module) for region in op.regions for inner in region.ops)
