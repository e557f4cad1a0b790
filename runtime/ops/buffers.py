"""Which ops return fresh buffers: the ownership facts the in-place pass (passes/inplace.py) uses.

An op declared here returns arrays that share memory with none of its operands, on every
backend (the interpreter's NumPy reference and each lowering): creation ops, copies and casts,
element-wise and fused ops, reductions, products, sorts, stacks. ``OpDef.fresh_results`` holds
the declaration: ``True``, or a predicate ``fresh(op) -> bool`` for ops fresh only in some forms
(advanced indexing copies, basic indexing gives a view). An op not declared is assumed to
return views of its operands (reshape, transpose, broadcast_to, list ops, calls, Variable
reads): always safe. tests/unit/runtime/ops/test_buffers.py checks every declaration with
``np.shares_memory`` on both targets.
"""

from __future__ import annotations

from autostage.runtime import ir, op_registry
from autostage.runtime.ops import elementwise, indexing  # noqa: F401 - registers getitem


def _getitem_fresh(op: ir.Op) -> bool:
    """Advanced indexing copies (NumPy and the cpu loops); a 0-d result is a scalar."""
    return op.results[0].type.ndim == 0 or any(v.type.ndim for v in op.operands[1:])


def _setitem_fresh(op: ir.Op) -> bool:
    """A copy with the write, unless the in-place pass let it write into its operand."""
    return not op.attrs.get("in_place")


# ``positive`` is left out: its cpu rule may hand the operand on (``+x`` is the operand).
FRESH: tuple[str, ...] = (
    *sorted(set(elementwise.UFUNCS) - {"positive"}),
    "cast", "where", "clip", "fused",
    "sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "argmax", "argmin",
    "norm", "cumsum", "cumprod",
    "matmul", "dot",
    "arange", "full", "full_like", "eye", "copy", "tril", "triu", "concatenate", "stack",
    "sort", "argsort", "take_along_axis", "list_stack",
)
PREDICATES = {"getitem": _getitem_fresh, "setitem": _setitem_fresh}


def declare() -> None:
    """Sets ``fresh_results`` on the registered ops named above (those that exist)."""
    for name in FRESH:
        if name in op_registry.REGISTRY:
            op_registry.REGISTRY[name].fresh_results = True
    for name, predicate in PREDICATES.items():
        op_registry.REGISTRY[name].fresh_results = predicate


def is_fresh(op: ir.Op) -> bool:
    """Whether ``op``'s results share no memory with its operands (nor with each other's
    sources): False for an op not declared."""
    definition = op_registry.REGISTRY.get(op.name)
    fresh = definition.fresh_results if definition is not None else False
    return fresh(op) if callable(fresh) else bool(fresh)

