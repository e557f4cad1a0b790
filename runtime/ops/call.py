"""``call``: a call of another function of the same module (staged calls stay calls in the IR).

attrs: ``callee`` (the function's name in the module) and ``result_types`` (its result types,
recorded when the call was traced, because a type rule sees only operand types and attributes;
the verifier checks they match the callee); ``writes``, (operand, result) pairs of the array
arguments the callee writes into (its ``writes_back``: the result is the argument's final
state), and ``in_place_args``, those whose buffer the caller hands over (passes/inplace.py; the
others are passed as copies). Printed ``%3:f64[?] = call @helper %1 %2 {...}``.
The NumPy reference runs the callee in a new interpreter frame (``run.call``). A call has the
effects of its callee's body (``runtime/effects.py``), so DCE may remove and CSE may merge calls
of pure helpers; without the module (while tracing) a call is assumed to do anything.
"""

from __future__ import annotations

from autostage.runtime import effects, ir, op_registry
from autostage.runtime.autodiff.control_flow import call_vjp
from autostage.runtime.verifier import all_fit, check_region_count, types_text


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    return tuple(attrs["result_types"])


def written(op: ir.Op) -> dict[int, int]:
    """Operand -> result (its final state) of each array argument the callee writes into."""
    return dict(op.attrs.get("writes", ()))


def copied(op: ir.Op) -> frozenset[int]:
    """The written operands the call passes as copies: those the caller does not hand over."""
    return frozenset(written(op)) - frozenset(op.attrs.get("in_place_args", ()))


def _evaluate(op: ir.Op, values: tuple, run) -> tuple:
    passed = copied(op)
    return tuple(run.call(op.attrs["callee"], [v.copy() if k in passed else v
                                               for k, v in enumerate(values)]))


def _effects(op: ir.Op, module: ir.Module | None) -> op_registry.Effects:
    return effects.of_callee(op.attrs["callee"], module)


def _check(op: ir.Op, module: ir.Module) -> str | None:
    """``call @callee args...``: the callee is a function of the module taking the arguments and
    returning the op's result types."""
    problem = check_region_count(op, 0)
    if problem:
        return problem
    callee = module.functions.get(op.attrs.get("callee"))
    if callee is None:
        return f"calls @{op.attrs.get('callee')}, which is not a function of the module"
    arg_types = tuple(v.type for v in op.operands)
    if not all_fit(arg_types, callee.param_types):
        return (f"passes {types_text(arg_types)} to @{callee.name}, which takes "
                f"{types_text(callee.param_types)}")
    result_types = tuple(v.type for v in op.results)  # (the callee's may be more precise:
    if not all_fit(callee.result_types, result_types):  # a pass folded a join of shapes)
        return (f"has results {types_text(result_types)}, but @{callee.name} returns "
                f"{types_text(callee.result_types)}")
    return None


op_registry.register(
    "call", _infer, _evaluate,
    doc="attrs: callee (function name in the module), result_types; operands: its arguments",
    effects=_effects, verify=_check, bare_attr="callee", vjp=call_vjp,
    raises=())  # its callee's ops may
