"""Common-subexpression elimination: an op that repeats an earlier, visible op is replaced by it.

Two ops are the same computation when they have the same name, the same operands (after earlier
replacements), equal attributes and the same result types. Only pure ops without regions take
part: ops with effects never do, which covers every op that reads state (``var_read`` is
declared as reading state, so a read is never merged across an assignment); calls of pure
callees do. An op may reuse a
computation from its own region or any enclosing one (what it can see), never from a sibling
branch or a region that has closed. Attributes are compared by value: arrays by dtype, shape and
bytes, floats by their bit pattern (``0.0`` and ``-0.0`` differ); an op with an attribute that
cannot be compared stays as it is. The dead duplicates are removed here; DCE handles the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.passes import analysis

# New empty lists stay apart: merged, the program's lists would start as one object that all but
# its last reader must copy (the CPU backend updates a list in place only at its last use).
_NEVER_MERGED = frozenset({"list_new"})
# So do new arrays: a program that makes two (`a = np.empty_like(x); b = np.empty_like(x)`)
# writes both, and merged they were one buffer that each write but the last copied (a loop
# writing both took time quadratic in their size). 0-d copies (weak to strong) still merge.
_NEW_ARRAYS = frozenset({"full", "full_like", "arange", "eye", "copy"})


class _Unhashable(Exception):
    """An attribute that cannot be compared by value: the op is left alone."""


def run(module: ir.Module) -> bool:
    """Merges repeated computations in every function; returns whether anything changed."""
    changed = False
    for function in module.functions.values():
        mapping: dict[ir.Value, ir.Value] = {}
        changed |= _region(function.body, {}, mapping, module) > 0
    return changed


def _region(region: ir.Region, seen: dict, mapping: dict, module: ir.Module) -> int:
    """Walks ``region`` in order with ``seen`` (key -> results) inherited from enclosing regions;
    returns how many ops it removed."""
    seen = dict(seen)  # what this region learns is invisible to its siblings and its parent
    kept: list[ir.Op] = []
    removed = 0
    for op in region.ops:
        if any(v in mapping for v in op.operands):
            op.operands = tuple(mapping.get(v, v) for v in op.operands)
        key = _key(op, module)
        if key is not None and key in seen:
            mapping.update(zip(op.results, seen[key], strict=True))
            continue
        if key is not None:
            seen[key] = op.results
        for inner in op.regions:
            removed += _region(inner, seen, mapping, module)
        kept.append(op)
    if any(v in mapping for v in region.results):
        region.results = tuple(mapping.get(v, v) for v in region.results)
    removed += len(region.ops) - len(kept)
    region.ops[:] = kept
    return removed


def _key(op: ir.Op, module: ir.Module) -> tuple | None:
    """What identifies the computation of ``op``, or None if it must not be merged."""
    if (op.regions or not op.results or op.name in _NEVER_MERGED
            or analysis.has_effects(op, module)):
        return None
    if op.name in _NEW_ARRAYS and any(getattr(v.type, "ndim", 0) for v in op.results):
        return None
    if op.name not in op_registry.REGISTRY:
        return None
    try:
        attrs = freeze(op.attrs)
        hash(attrs)
    except (_Unhashable, TypeError):
        return None
    types = tuple(v.type for v in op.results)
    return (op.name, tuple(id(v) for v in op.operands), attrs, types)


def freeze(value: Any) -> Any:
    """A hashable stand-in for an attribute value that is equal exactly when values are."""
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        return ("array", array.dtype.str, array.shape, array.tobytes())
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(freeze(v) for v in value))
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    if isinstance(value, slice):
        return ("slice", freeze(value.start), freeze(value.stop), freeze(value.step))
    if value is None or isinstance(value, bool | int | str | np.dtype | type):
        return (type(value).__name__, value)
    try:  # types and other immutable values of the IR compare structurally
        hash(value)
    except TypeError:
        raise _Unhashable(repr(value)) from None
    if type(value).__eq__ is object.__eq__:
        raise _Unhashable(repr(value))  # compared by identity: two equal-looking ones may differ
    return (type(value).__name__, value)
