"""Reverse-mode differentiation of traced ops, emitting the backward program into the trace.

``gradients(ops, target, seed, sources)`` walks ``ops`` (a stretch of one region, in order) and
emits, after them, the ops that compute d target / d source for each source. Differentiation
happens while the program is traced: the backward ops are ordinary ops with VJP rules of their own,
so a gradient of a gradient (a tape inside a tape, ``grad(grad(f))``) is the same walk again.

1. *Activity*: a value is active when it depends on a source, through operands or through values
   an op's regions capture. Only active ops are differentiated, so an op without a VJP that
   does not depend on the sources (a random draw, an index computation) never stops a gradient.
2. *Reverse sweep*: from the seed, each active op with a cotangent on a result runs its
   ``OpDef.vjp`` (``op_registry.VjpRule``); cotangents of a value read twice add up. Cotangents
   have their primal's dtype and shape (``build.like``).
3. *Threaded cotangents*: a rule of an op with regions or a call may take a value's cotangent
   so far (``cotangent_so_far``) into its backward code and return the sum (``Threaded``),
   which replaces it: a ``cond`` whose branch does not use a weight passes its cotangent
   through instead of yielding zeros to be added, and a recursive model's backward calls add
   into one running cotangent per weight instead of each returning a dense one.

Integer and boolean values carry no gradient; an op that would pass a gradient through a value of
another kind (a tensor list, a tuple) without a rule is a clear error, never a zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from autostage.runtime import ir, op_registry, tracing
from autostage.runtime.autodiff import build
from autostage.runtime.types import ListType, TensorType


class GradientError(tracing.StagingError, TypeError):
    """A gradient needs the derivative of something autostage cannot differentiate.

    Example: ``tape.gradient(y, x)`` where ``y`` depends on ``x`` through ``np.linalg.eig``, or a
    loop that draws random numbers. The message names the op and the user's line.
    """


# The active values of the sweeps running now (innermost last): rules of ops with regions read
# it to differentiate only what depends on the sources.
_active: list[set] = []
# The cotangents of the sweeps running now (innermost last), for ``cotangent_so_far``.
_sweeps: list[dict] = []


class Threaded:
    """A rule's cotangent for a value that already includes that value's cotangent so far
    (``cotangent_so_far``, passed into the rule's backward code): it replaces it."""

    __slots__ = ("ct",)

    def __init__(self, ct: ir.Value):
        self.ct = ct


def cotangent_so_far(value: ir.Value) -> ir.Value | None:
    """``value``'s cotangent in the innermost running sweep, from the ops after the one whose
    rule runs now (None: none yet)."""
    return _sweeps[-1].get(value) if _sweeps else None


def carries_gradient(value: ir.Value) -> bool:
    """Whether ``value`` may carry a gradient: a float tensor, or a list of them."""
    t = value.type
    if isinstance(t, ListType):
        t = t.element
    return isinstance(t, TensorType) and t.dtype.kind in "fc"


def is_active(value: ir.Value) -> bool:
    """Whether ``value`` depends on the sources of the innermost running sweep."""
    return bool(_active) and value in _active[-1]


def captured(op: ir.Op) -> list[ir.Value]:
    """The values ``op``'s regions read that are defined outside them, in first-use order."""
    inside: set[ir.Value] = set()
    found: dict[ir.Value, None] = {}

    def visit(region: ir.Region) -> None:
        inside.update(region.args)
        for inner in region.ops:
            for v in inner.operands:
                if v not in inside:
                    found[v] = None
            for sub in inner.regions:
                visit(sub)
            inside.update(inner.results)
        for v in region.results:
            if v not in inside:
                found[v] = None

    for region in op.regions:
        visit(region)
    for inner in (o for region in op.regions for o in region.walk()):
        found.update(dict.fromkeys(state_reads(inner)))
    return list(found)


def state_reads(op: ir.Op) -> list[build.StateSource]:
    """The Variables ``op`` itself reads: a ``var_read``'s, or those its callee reads (at any
    depth of calls), as state sources."""
    if op.name == "var_read":
        return [build.StateSource(op.attrs["var"], op.attrs["type"])]
    if op.name != "call":
        return []
    module = tracing.current().module
    found: dict = {}
    pending, seen = [op.attrs["callee"]], set()
    while pending:
        name = pending.pop()
        if name in seen or name not in module.functions:
            continue
        seen.add(name)
        for inner in module.functions[name].body.walk():
            if inner.name == "var_read":
                found[build.StateSource(inner.attrs["var"], inner.attrs["type"])] = None
            elif inner.name == "call":
                pending.append(inner.attrs["callee"])
    return list(found)


def reads(op: ir.Op) -> Iterator[ir.Value | build.StateSource]:
    """The values ``op`` reads for their contents (not those it reads only for a shape), and the
    Variables it reads (``state_reads``; inside its regions: ``captured``)."""
    shape_only = op_registry.lookup(op.name).shape_operands
    if shape_only:
        yield from (v for i, v in enumerate(op.operands) if i not in shape_only)
    else:
        yield from op.operands
    if op.regions:
        yield from captured(op)
    if op.name in ("var_read", "call"):
        yield from state_reads(op)


def active_values(ops: Sequence[ir.Op], sources: set[ir.Value]) -> set[ir.Value]:
    """The values of ``ops`` (and ``sources``) that depend on ``sources``."""
    active = {v for v in sources if carries_gradient(v)}
    for op in ops:
        if any(v in active for v in reads(op)):
            active.update(r for r in op.results if carries_gradient(r))
    return active


def accumulate(cotangents: dict, value: ir.Value, ct: ir.Value | Threaded) -> None:
    """Adds ``ct`` (cast and summed to ``value``'s dtype and shape) to ``value``'s cotangent;
    a ``Threaded`` one replaces it (it includes it), where ``cotangents`` is the sweep's, and
    stays ``Threaded`` in a rule's own result dict.

    A tensor list's cotangent is a dense array, one row per element (``build.ct_type``): the
    cotangents of a list read twice are arrays of one shape (checked at run time: the rows of a
    ragged list must not broadcast), which add up.
    """
    if isinstance(ct, Threaded):
        _thread(cotangents, value, ct)
        return
    previous = cotangents.get(value)
    if isinstance(previous, Threaded):  # a rule's result: a threaded sum, and more to add
        cotangents[value] = Threaded(build.add(previous.ct, _fitted(ct, value)))
        return
    if isinstance(value, build.StateSource):
        ct = build.cast(ct, value.type.dtype)  # every read has the Variable's shape
    elif isinstance(value.type, TensorType):
        ct = build.like(ct, value)
    previous = cotangents.get(value)
    if isinstance(value.type, ListType):
        ct = build.cast(ct, value.type.element.dtype)
        if previous is not None:
            build.check_same_shape(previous, ct)
    cotangents[value] = ct if previous is None else build.add(previous, ct)


def _fitted(ct: ir.Value, value: ir.Value) -> ir.Value:
    """``ct`` as ``value``'s cotangent: a tensor's dtype and shape, or, for a tensor list, a
    dense array of its element dtype (which has no shape to sum to)."""
    if isinstance(value.type, ListType):
        return build.cast(ct, value.type.element.dtype)
    return build.like(ct, value)


def _thread(cotangents: dict, value: ir.Value, ct: Threaded) -> None:
    total = _fitted(ct.ct, value)
    previous = cotangents.get(value)
    if cotangents is (_sweeps[-1] if _sweeps else None):
        cotangents[value] = total  # it includes the sweep's cotangent so far
    elif previous is None:
        cotangents[value] = Threaded(total)
    else:  # a second threaded sum for the value in one rule: it took none of the first
        raise AssertionError("a rule threaded one value's cotangent twice")


def backprop(ops: Sequence[ir.Op], cotangents: dict[ir.Value, ir.Value],
             active: set[ir.Value]) -> None:
    """Emits the reverse sweep over ``ops``: ``cotangents`` (seeded with the cotangents of
    some results) gains the cotangent of every active value the seeds depend on."""
    _active.append(active)
    _sweeps.append(cotangents)
    try:
        for op in reversed(ops):
            outgoing = tuple(cotangents.get(r) for r in op.results)
            if all(ct is None for ct in outgoing) or not any(v in active for v in reads(op)):
                continue
            if op.name == "call" and op.attrs.get("writes"):
                raise GradientError(
                    f"autostage does not differentiate a call of `{op.attrs['callee']}`{_at(op)}, "
                    "which writes into an array it is given, yet: return the new array from "
                    "the helper instead (`v = f(v)`, with a copy in it)")
            rule = op_registry.lookup(op.name).vjp
            if any(_complex(v) for v in (*op.operands, *op.results)):
                raise GradientError(f"autostage does not differentiate complex values yet: "
                                    f"`{op.name}`{_at(op)} has a complex operand or result")
            if rule is None:
                raise GradientError(
                    f"autostage cannot differentiate `{op.name}` yet{_at(op)}; compute it "
                    "outside the gradient, or wrap it in autostage.stop_gradient if its "
                    "gradient is not needed")
            with build.at(op.loc):
                incoming = rule(op, outgoing)
                pairs = incoming.items() if isinstance(incoming, dict) else zip(
                    op.operands, incoming, strict=True)
                for value, ct in pairs:
                    if ct is not None and value in active:
                        accumulate(cotangents, value, ct)
    finally:
        _active.pop()
        _sweeps.pop()


def gradients(ops: Sequence[ir.Op], target: ir.Value, seed: ir.Value,
              sources: Sequence[ir.Value]) -> list[ir.Value | None]:
    """The cotangents of ``sources`` given ``seed`` for ``target`` (None: not connected)."""
    active = active_values(ops, set(sources))
    if target not in active and target not in sources:
        return [None] * len(sources)
    cotangents: dict[ir.Value, ir.Value] = {}
    accumulate(cotangents, target, seed)
    backprop(ops, cotangents, active)
    return [cotangents.get(s) for s in sources]


def _complex(value: ir.Value) -> bool:
    t = value.type.element if isinstance(value.type, ListType) else value.type
    return isinstance(t, TensorType) and t.dtype.kind == "c"


def _at(op: ir.Op) -> str:
    return f" (at {op.loc})" if op.loc is not None else ""
