"""Which ops return fresh buffers: the ownership facts the in-place pass (passes/inplace.py) uses.

Each op declares it where it is registered (``OpDef.fresh_results``): an op declared fresh
returns arrays that share memory with none of its operands, on every backend (the interpreter's
NumPy reference and each lowering) — creation ops, copies and casts, element-wise and fused ops,
reductions, products, sorts, stacks: ``True``, or a predicate ``fresh(op) -> bool`` for ops fresh
only in some forms (advanced indexing copies, basic indexing gives a view). An op not declared
is assumed to return views of its operands (reshape, transpose, broadcast_to, list ops, calls,
Variable reads): always safe. tests/unit/runtime/test_ops_buffers.py checks every declaration
with ``np.shares_memory`` on both targets, and which ops declare it.
"""

from __future__ import annotations

from autostage.runtime import ir, op_registry


def is_fresh(op: ir.Op) -> bool:
    """Whether ``op``'s results share no memory with its operands (nor with each other's
    sources): False for an op not declared."""
    definition = op_registry.REGISTRY.get(op.name)
    fresh = definition.fresh_results if definition is not None else False
    return fresh(op) if callable(fresh) else bool(fresh)
