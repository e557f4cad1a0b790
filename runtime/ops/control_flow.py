"""IR ops for structured control flow: ``cond``, ``while`` and ``undef``.

``cond``: operand ``pred`` (``bool[]``); attr ``result_types`` (a tuple of types, since a type rule
sees operands and attrs, not regions); regions ``then`` and ``else``, without arguments, each
yielding values of ``result_types`` (a yield may be more specific in unknown dimensions).
``while``: operands are the initial loop-carried values, results the final ones, typed by attr
``carried_types`` (an initial value may be more specific, e.g. a known dimension the loop makes
unknown); region ``cond`` (args = carried, yields one ``bool[]``) and region ``body`` (args =
carried, yields the new carried values). ``undef``: attr ``type``; a value of that type standing
for a variable not assigned yet (carried through a branch or loop where the staging proved it is
assigned before it is read); its NumPy reference is zeros (unknown dimensions 0) or an empty list.
The verifier rules of ``cond`` and ``while`` check their regions against the op (``verify``).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.autodiff.control_flow import cond_vjp, while_vjp
from autostage.runtime.types import ListType, TensorType, scalar
from autostage.runtime.verifier import all_fit, check_region_count, types_text

BOOL_SCALAR = scalar("bool")


def _infer_cond(operand_types: tuple, attrs: dict) -> tuple:
    (pred,) = operand_types
    if not (isinstance(pred, TensorType) and pred.dtype == np.bool_ and pred.is_scalar):
        raise TypeError(f"cond needs a bool[] predicate, got {pred}")
    return tuple(attrs["result_types"])


def _evaluate_cond(op, values: tuple, run) -> tuple:
    branch = op.regions[0] if bool(values[0]) else op.regions[1]
    return tuple(run(branch, ()))


def _infer_while(operand_types: tuple, attrs: dict) -> tuple:
    carried = tuple(attrs.get("carried_types", operand_types))
    if len(carried) != len(operand_types):
        raise TypeError(f"while has {len(operand_types)} initial values for {len(carried)} "
                        "carried types")
    return carried


def _evaluate_while(op, values: tuple, run) -> tuple:
    cond, body = op.regions
    carried = tuple(values)
    while True:
        (go,) = run(cond, carried)
        if not bool(go):
            return carried
        carried = tuple(run(body, carried))


def _infer_undef(operand_types: tuple, attrs: dict) -> tuple:
    return (attrs["type"],)


def _evaluate_undef(op, values: tuple, run) -> tuple:
    return (placeholder_value(op.attrs["type"]),)


def placeholder_value(type_: object) -> object:
    """The NumPy reference value of ``undef``: never read, so any value of the type works."""
    if isinstance(type_, ListType):
        return []
    shape = tuple(0 if d is None else d for d in type_.shape)
    return np.zeros(shape, type_.dtype)


def _check_cond(op: ir.Op, module: ir.Module) -> str | None:
    """``cond pred [operands...]``: regions then/else over the operands after the predicate
    (usually none: branches capture values), each yielding values that fit the op's results."""
    problem = check_region_count(op, 2)
    if problem:
        return problem
    if not op.operands or op.operands[0].type != BOOL_SCALAR:
        return "needs a bool[] predicate as its first operand"
    passed = tuple(v.type for v in op.operands[1:])
    result_types = tuple(v.type for v in op.results)
    for label, region in zip(("then", "else"), op.regions, strict=True):
        arg_types = tuple(v.type for v in region.args)
        if not all_fit(passed, arg_types):
            return (f"passes {types_text(passed)} to its {label} region, which takes "
                    f"{types_text(arg_types)}")
        if not all_fit(region.result_types, result_types):
            return (f"has results {types_text(result_types)}, but its {label} region yields "
                    f"{types_text(region.result_types)}")
    return None


def _check_while(op: ir.Op, module: ir.Module) -> str | None:
    """``while init...``: a cond region and a body region, both over the carried values (the op's
    result types); cond yields one bool[], body yields the next carried values."""
    problem = check_region_count(op, 2)
    if problem:
        return problem
    carried = tuple(v.type for v in op.results)
    initial = tuple(v.type for v in op.operands)
    if not all_fit(initial, carried):
        return f"carries {types_text(carried)}, but its initial values are {types_text(initial)}"
    for label, region in zip(("cond", "body"), op.regions, strict=True):
        arg_types = tuple(v.type for v in region.args)
        if arg_types != carried:
            return (f"carries {types_text(carried)}, but its {label} region takes "
                    f"{types_text(arg_types)}")
    cond, body = op.regions
    if cond.result_types != (BOOL_SCALAR,):
        return (f"has a cond region that yields {types_text(cond.result_types)} instead of "
                "(bool[])")
    if not all_fit(body.result_types, carried):
        return f"carries {types_text(carried)}, but its body yields {types_text(body.result_types)}"
    return None


op_registry.register(
    "cond", _infer_cond, _evaluate_cond,
    doc="operands: pred bool[]; attrs: result_types; regions: then, else (no args, yield the "
        "results); runs one region",
    verify=_check_cond, region_names=("then", "else"), raises=(), vjp=cond_vjp)
op_registry.register(
    "while", _infer_while, _evaluate_while,
    doc="operands: initial carried values; attrs: carried_types; regions: cond (args carried, "
        "yields bool[]) and body (args carried, yields new carried); results: final carried",
    verify=_check_while, region_names=("cond", "body"), raises=(), vjp=while_vjp,
    effects=op_registry.Effects(may_not_terminate=True))  # removing it could end a hang
op_registry.register(
    "undef", _infer_undef, _evaluate_undef, raises=(), vjp=op_registry.NO_GRADIENT,
    doc="attrs: type; a value of that type for a variable not assigned yet, proven unread")
