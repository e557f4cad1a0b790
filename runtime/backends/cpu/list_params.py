"""Which tensor-list parameters a function only reads (so a call may pass its list uncopied).

The cpu backend updates a list in place when the update is the list's only use, parameters
included (lower_lists, lower_control), so a caller hands a callee a copy of a list it still
uses afterwards. A parameter that the callee only reads (``list_get``, ``list_length``,
``list_stack``, or passes on to a parameter that is only read) needs no copy: the backward
functions of recursive gradients pass their tape to every call (autodiff/recursion_tape.py),
and a copy per call made that quadratic.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.types import ListType

_READS = frozenset({"list_get", "list_length", "list_stack"})


def read_only(module: ir.Module) -> dict[str, frozenset[int]]:
    """Per function, the indices of its list parameters it only reads (a greatest fixpoint:
    a recursive call passing a parameter on keeps it read-only)."""
    candidates = {name: {i for i, v in enumerate(f.body.args) if isinstance(v.type, ListType)}
                  for name, f in module.functions.items()}
    changed = True
    while changed:
        changed = False
        for name, f in module.functions.items():
            for i in list(candidates[name]):
                if not _only_read(f.body.args[i], f.body, candidates):
                    candidates[name].discard(i)
                    changed = True
    return {name: frozenset(found) for name, found in candidates.items()}


def _only_read(value: ir.Value, region: ir.Region, candidates: dict[str, set[int]]) -> bool:
    if value in region.results:
        return False
    for op in region.ops:
        for k, operand in enumerate(op.operands):
            if operand is not value or op.name in _READS:
                continue
            if op.name != "call" or k not in candidates.get(op.attrs["callee"], ()):
                return False
        if not all(_only_read(value, inner, candidates) for inner in op.regions):
            return False
    return True
