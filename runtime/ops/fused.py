"""The ``fused`` op: a chain of element-wise ops (optionally ending in a reduction) as one op.

``fused x y ...`` has one region, ``body``, whose arguments stand for the operands (same types) and
which captures nothing; its ops are element-wise (``OpDef.elementwise``, ``per_element``), except
that the last may be a ``sum``/``max``/``min`` over all axes or the last axis
(``OpDef.fusible_reduction``, ``is_fusible_reduction``); it yields the op's results, whose types
the op keeps in attr ``result_types`` (a type rule cannot see regions).
The NumPy reference runs the body on whole arrays: element-wise ops commute with broadcasting, so
that equals computing the body once per output element, which is what the CPU lowering does
(``runtime/backends/cpu/lower_fused.py``). The fusion pass (``passes/fusion.py``) builds it; which
ops a loop may take is asked of the target (``Target.fuses``).
"""

from __future__ import annotations

from autostage.runtime import effects, ir, op_registry
from autostage.runtime.types import TensorType


def per_element(op: ir.Op) -> bool:
    """Whether ``op`` is element-wise (``OpDef.elementwise``), so that a loop may compute it
    element by element where the target's lowering can (``Target.fuses``)."""
    definition = op_registry.REGISTRY.get(op.name)
    return definition is not None and definition.elementwise


def is_fusible_reduction(op: ir.Op) -> bool:
    """A reduction one loop can accumulate: over all axes or the last one (keepdims or not), no
    ``dtype=``, max/min only of numbers ordered by ``>``, mean only of floats."""
    definition = op_registry.REGISTRY.get(op.name)
    if definition is None or not definition.fusible_reduction or len(op.operands) != 1:
        return False
    x = op.operands[0].type
    if not isinstance(x, TensorType) or x.ndim == 0:
        return False
    if op.attrs.get("dtype") is not None:
        return False
    if op.name in ("max", "min") and x.dtype.kind not in "iuf":
        return False  # bool and complex max/min order differently from a ``>`` test
    if op.name == "mean" and x.dtype.kind != "f":
        return False  # NumPy adds other dtypes cast to float64 in buffers of its own
    return op.attrs.get("axis") in (None, (x.ndim - 1,))


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    return tuple(attrs["result_types"])


def _evaluate(op: ir.Op, values: tuple, run) -> tuple:
    return tuple(run(op.regions[0], values))


def _check(op: ir.Op, module: ir.Module) -> str | None:
    """The verifier rule: one capture-free body over the operands yielding the results."""
    if len(op.regions) != 1:
        return f"has {len(op.regions)} regions; 'fused' has 1"
    (body,) = op.regions
    if tuple(v.type for v in body.args) != tuple(v.type for v in op.operands):
        return "has a body whose arguments do not match its operands"
    if body.result_types != tuple(v.type for v in op.results):
        return "has a body whose results do not match its result types"
    defined = set(body.args)
    for i, inner in enumerate(body.ops):
        last = i == len(body.ops) - 1
        if not per_element(inner) and not (last and is_fusible_reduction(inner)):
            return f"fuses {inner.name!r}, which is not element-wise (or a final reduction)"
        if any(v not in defined for v in inner.operands):
            return f"has a body whose op {inner.name!r} captures a value from outside"
        defined.update(inner.results)
    return None


op_registry.register(
    "fused", _infer, _evaluate,
    exemptions={"vjp": "made by the fusion pass after tracing; gradients are taken while tracing"},
    doc="operands: the chain's inputs; attrs: result_types; region body (args = operands) of "
        "element-wise ops, optionally ending in a sum/max/min over all or the last axis",
    verify=_check, region_names=("body",), raises=effects.broadcast_errors,
    fresh_results=True)
