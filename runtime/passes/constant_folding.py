"""Constant folding: a pure op whose operands are all constants becomes a ``constant`` op.

The value comes from the op's own NumPy reference (``OpDef.evaluate``), so a folded program
computes exactly what the unfolded one would. An op is left alone when folding could change what
the user sees: it has side effects or regions; a result is not a tensor, has more than
``MAX_ELEMENTS`` elements (large constants bloat the generated code), or would have a more
specific type than the op's result (users' type rules would then disagree); or evaluating it
raises or warns (the error or ``RuntimeWarning`` must happen at run time, in program order).
Folded ops' old constants become dead; DCE removes them. Three rules need one constant operand
only: an integer scalar ``i + 0`` (``- 0``, ``* 1``) is ``i``; an overflow test that a
constant decides (adding 0, multiplying by 0 or 1) is false, so DCE drops its ``raise_if``; a
bool ``t & False`` is False and ``t | True`` True (a staged ``zip``'s length tests). A ``cond``
on a constant is the branch it takes, in line: the other can never run.
"""

from __future__ import annotations

import warnings

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.passes import analysis
from autostage.runtime.types import TensorType

MAX_ELEMENTS = 64


def run(module: ir.Module) -> bool:
    """Folds constant computations in every region of ``module``; returns whether it did any."""
    changed = False
    for function in module.functions.values():
        changed |= _region(function.body, {}, module)
    return changed


def _region(region: ir.Region, known: dict, module: ir.Module) -> bool:
    """Folds in order, so a chain of constant ops folds in one sweep; ``known`` maps values to
    their constant arrays (inherited from enclosing regions, which inner ops may read)."""
    known = dict(known)
    changed = False
    new_ops: list[ir.Op] = []
    mapping: dict[ir.Value, ir.Value] = {}
    for op in region.ops:
        if any(v in mapping for v in op.operands):
            op.operands = tuple(mapping.get(v, v) for v in op.operands)
        same = _identity(op, known)
        if same is not None:  # ``i + 0``: its other operand
            changed = True
            mapping[op.results[0]] = same
            continue
        taken = _taken_branch(op, known)
        if taken is not None:  # ``cond`` of a constant: the branch it takes, in line
            changed = True
            _region(taken, known, module)
            for inner_op in taken.ops:
                for value in inner_op.results:
                    value.region = region
            new_ops += taken.ops
            # (a yielded value may be one this region replaced already: its replacement)
            mapping.update((r, mapping.get(t, t)) for r, t in zip(op.results, taken.results,
                                                                   strict=True))
            for inner_op in taken.ops:
                if inner_op.name == "constant":
                    known[inner_op.results[0]] = inner_op.attrs["value"]
            continue
        folded = _fold(op, known, module)
        if folded is None:
            new_ops.append(op)
            for inner in op.regions:
                changed |= _region(inner, known, module)
        else:
            changed = True
            new_ops += folded
            mapping.update(zip(op.results, (c.results[0] for c in folded), strict=True))
        for c in folded or [op]:
            if c.name == "constant":
                known[c.results[0]] = c.attrs["value"]
    region.ops[:] = new_ops
    if mapping:  # later uses of the folded values, in this region and the regions inside it
        analysis.replace_uses(region, mapping)
    return changed


def _fold(op: ir.Op, known: dict, module: ir.Module) -> list[ir.Op] | None:
    """The constant ops replacing ``op``, or None if it stays (a ``call`` too: its reference
    needs the interpreter, so evaluating it here fails and leaves it)."""
    if (op.name == "constant" or op.regions or not op.results
            or analysis.has_effects(op, module)):
        return None
    if op.name in ("dim", "size"):  # a size the type knows (static_sizes): its value
        values = _known_size(op)
    elif op.name == "int_overflows" and _cannot_overflow(op, known):
        values = (np.asarray(False),)
    elif (absorbed := _absorbed(op, known)) is not None:  # ``t & False``: False
        values = (absorbed,)
    else:
        operands = _operand_values(op, known)
        if operands is None:
            return None
        if not all(isinstance(v.type, TensorType) and _small(v.type) for v in op.results):
            return None
        values = _evaluate(op, operands)
    if values is None or len(values) != len(op.results):
        return None
    constants = []
    for value, result in zip(values, op.results, strict=True):
        array = as_constant_array(value)
        if TensorType(array.dtype, array.shape) != result.type:
            return None
        constant = ir.Op("constant", (), (result.type,), {"value": array}, loc=op.loc)
        constants.append(constant)
    return constants


# Integer ops one constant operand makes the identity: (op, operand position) -> that constant.
# (Not float ones: -0.0 + 0.0 is +0.0.)
_IDENTITIES = {("add", 0): 0, ("add", 1): 0, ("subtract", 1): 0, ("multiply", 0): 1,
               ("multiply", 1): 1}
# Overflow tests a constant operand decides: exact int arithmetic stays in range whatever the
# other operand is. (op attr, operand position) -> those constants.
_NEVER_OVERFLOWS = {("add", 0): (0,), ("add", 1): (0,), ("subtract", 1): (0,),
                    ("multiply", 0): (0, 1), ("multiply", 1): (0, 1)}


def _identity(op: ir.Op, known: dict) -> ir.Value | None:
    """The operand an integer ``add``/``subtract``/``multiply`` of scalars returns unchanged
    (``i + 0``: ``i``, of the result's own type), or None. A staged range from 0 computes
    ``0 + index``. (Not arrays: ``x + 0`` is a new array in Python, not ``x``.)"""
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    result = op.results[0].type
    if not (isinstance(result, TensorType) and result.dtype.kind in "iu" and result.ndim == 0):
        return None
    for k, value in enumerate(op.operands):
        unit = _IDENTITIES.get((op.name, k))
        other = op.operands[1 - k]
        if unit is not None and _is_constant(value, known, unit) and other.type == result:
            return other
    return None


def _taken_branch(op: ir.Op, known: dict) -> ir.Region | None:
    """The region a ``cond`` on a constant takes (its other region can never run), or None."""
    if op.name != "cond":
        return None
    test = known.get(op.operands[0])
    if test is None or np.ndim(test) != 0:
        return None
    taken = op.regions[0] if bool(test) else op.regions[1]
    if any(t.type != r.type for t, r in zip(taken.results, op.results, strict=True)):
        return None  # (it yields a more precise type than the cond's: its readers have this one)
    return taken


# Boolean ops one constant operand decides: op -> that constant (the result).
_ABSORBING = {"logical_and": False, "bitwise_and": False, "logical_or": True, "bitwise_or": True}


def _absorbed(op: ir.Op, known: dict) -> np.ndarray | None:
    """The result of a 0-d bool ``and``/``or`` that one constant operand decides (a staged
    ``zip``'s length test ``done & False``), or None."""
    decided = _ABSORBING.get(op.name)
    result = op.results[0].type if len(op.results) == 1 else None
    if decided is None or not (isinstance(result, TensorType) and result.ndim == 0
                               and result.dtype == np.bool_):
        return None
    if any(_is_constant(v, known, decided) and v.type.dtype == np.bool_ for v in op.operands):
        return np.asarray(decided)
    return None


def _cannot_overflow(op: ir.Op, known: dict) -> bool:
    """Whether an ``int_overflows`` test is false for any value of its unknown operand."""
    return any(_is_constant(value, known, unit) for k, value in enumerate(op.operands)
               for unit in _NEVER_OVERFLOWS.get((op.attrs["op"], k), ()))


def _is_constant(value: ir.Value, known: dict, number: int) -> bool:
    """Whether ``value`` is the constant ``number`` (a 0-d array of it)."""
    array = known.get(value)
    return array is not None and array.ndim == 0 and array == number


def _known_size(op: ir.Op) -> tuple | None:
    """``dim``/``size`` of an operand whose type has the sizes asked for, else None."""
    t = op.operands[0].type
    if not isinstance(t, TensorType):
        return None
    sizes = t.shape if op.name == "size" else (t.shape[op.attrs["axis"]],)
    if None in sizes:
        return None
    return (np.asarray(int(np.prod(sizes, dtype=np.int64)), op.results[0].type.dtype),)


def _operand_values(op: ir.Op, known: dict) -> tuple | None:
    """The operands' constant arrays, or None if one is not known. A 0-d operand read only for
    its shape (``OpDef.shape_operands``: ``full_like``'s) is known, so the ``ones_like`` seed of
    a gradient folds and no longer keeps the loss's computation alive. (A small array of known
    shape is not: a ``zeros_like`` later written into would become a constant copied at each
    write.)"""
    shape_only = op_registry.REGISTRY[op.name].shape_operands if (
        op.name in op_registry.REGISTRY) else ()
    values = []
    for i, v in enumerate(op.operands):
        if v in known:
            values.append(known[v])
        elif i in shape_only and isinstance(v.type, TensorType) and v.type.ndim == 0:
            values.append(np.zeros(v.type.shape, v.type.dtype))
        else:
            return None
    return tuple(values)


def _small(t: TensorType) -> bool:
    return None not in t.shape and int(np.prod(t.shape, dtype=np.int64)) <= MAX_ELEMENTS


def _evaluate(op: ir.Op, values: tuple) -> tuple | None:
    """The op's NumPy results, or None if computing them raised or warned."""
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            return tuple(op_registry.REGISTRY[op.name].evaluate(op, values, _no_regions))
    except Exception:  # the op fails on these values: let it fail at run time, in order
        return None


def _no_regions(region, args):  # pragma: no cover - ops with regions are never folded
    raise RuntimeError("constant folding does not run regions")
