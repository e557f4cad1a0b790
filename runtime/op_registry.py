"""The table of op kinds: for each op name, every rule autostage has for it, in one ``OpDef``.

Each op module under ``runtime/ops/`` registers its ops beside their definitions (``register``);
backends add their lowering rules to the same ``OpDef`` (``lowerings[target]``). So the verifier,
the printer, the passes and the interpreter read one record per op instead of side tables, and
adding an op touches its op module and its lowering module only. ``infer(operand_types, attrs)``
returns the result types or raises ``TypeError``/``ValueError`` with a message in the user's terms;
``evaluate(op, values, run)`` computes the results with NumPy (``run(region, args)`` executes a
region, for ops that have them; ``run.module`` is the module being run).
tests/unit/runtime/test_op_rules.py checks that every registered op has every rule, or says why it
lacks one (``exemptions``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from autostage.runtime.types import Type

if TYPE_CHECKING:
    from autostage.runtime import ir

InferRule = Callable[[tuple[Type, ...], dict[str, Any]], tuple[Type, ...]]
Evaluate = Callable[..., tuple]
# A verifier rule checks what the generic checks cannot (regions, callees): it returns a problem
# description, or None when the op is fine.
VerifyRule = Callable[["ir.Op", "ir.Module"], "str | None"]


@dataclass(frozen=True, slots=True)
class Effects:
    """What running an op does besides computing its results; an op with none is pure.

    A pure op whose results are unused may be removed (DCE), merged with an equal one (CSE) or
    computed at compile time (constant folding); an op with any effect stays, in program order.
    ``raises`` marks ops whose purpose is to raise (``assert``, ``raise``, ``raise_if``): an op
    that may fail incidentally (an index out of range: ``OpDef.raises``) is still pure, as in every
    optimizing compiler. ``may_not_terminate``: removing it could make a hanging program finish
    (``while``).
    """

    reads_state: bool = False   # reads a Variable or a random generator
    writes_state: bool = False  # assigns a Variable or advances a random generator
    io: bool = False            # prints
    raises: bool = False
    may_not_terminate: bool = False

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def __or__(self, other: Effects) -> Effects:
        return Effects(*(getattr(self, f.name) or getattr(other, f.name) for f in fields(self)))


PURE = Effects()
STATE = Effects(reads_state=True, writes_state=True)
# What an op whose effects cannot be known is assumed to do: everything.
UNKNOWN = Effects(True, True, True, True, True)
# A VJP rule: given the op and the cotangents of its results (None where a result has none), it
# emits ops into the current trace and returns the cotangents of its operands (None where an
# operand gets none), or, for ops with regions, a dict from each value it reads (operands and
# values its regions capture) to its cotangent. runtime/autodiff/ explains the protocol.
VjpRule = Callable[["ir.Op", tuple], "Sequence | dict"]


def NO_GRADIENT(op: ir.Op, cotangents: tuple) -> tuple:  # noqa: N802 - a named constant
    """The ``vjp`` of ops whose results do not change smoothly with their operands (comparisons,
    rounding, integer results, random draws): no operand gets a cotangent."""
    return (None,) * len(op.operands)


# Effects that depend on the op itself (a ``call``: its callee), given the module when known.
EffectsRule = Callable[["ir.Op", "ir.Module | None"], Effects]


@dataclass(slots=True)
class OpDef:
    """Everything autostage knows about one op kind.

    Attributes beyond the type rule and NumPy reference:
      effects: ``Effects``, or a rule ``effects(op, module)`` for ops whose effects depend on
        the instance (``call``).
      verify: the verifier's rule for what generic checks cannot see (regions, callees); None
        for ops without regions (the verifier refuses regions it has no rule for).
      region_names: how the printer heads each region (others print ``region0``...).
      bare_attr: an attribute printed right after the op name (``constant 1.0``, ``call @f``).
      scalar_operator: the Python operator the interpreter applies to 0-d operands of one dtype
        (faster than the ufunc on 0-d arrays, same values).
      elementwise: NumPy computes each result element from the operands' elements at that
        index, so a loop may compute it element by element (fusion), where the target's
        lowering can (``Target.fuses``; the CPU's answer is backends/cpu/fusible.py).
      fusible_reduction: a fused loop may end in it (``sum``/``max``/``min``, see ops/fused.py).
      fresh_results: results share no memory with the operands: True, or a predicate on the
        op (ops/buffers.py).
      raises: the exceptions running the op may raise for reasons its operand types do not rule
        out (an index out of range, shapes that do not broadcast): a tuple of exception classes
        (``()``: it cannot raise; ``(Exception,)``: anything), or a rule ``raises(op) -> tuple``;
        the op's own, not those of its regions or callee (``effects.may_fail`` adds those).
        None (the default): an element-wise op raises ValueError only where its operands may
        not broadcast, any other op may raise anything (``effects.raises``). DCE keeps an
        unused op that may raise, since Python would raise there; a ``try`` around staged code
        is refused when it would catch one of these exceptions (``staging/try_regions.py``).
      vjp: the op's reverse-mode derivative (``VjpRule``), written with ops that have VJPs
        themselves (so gradients of gradients work); ``NO_GRADIENT`` for ops whose results are
        piecewise constant in their operands; None: not differentiable yet (a clear error when a
        gradient needs it).
      shape_operands: positions of operands read only for their shape (``full_like``'s x): a
        gradient never flows through them, so they do not make the op depend on a source.
      size_sources: the positions of the operands whose sizes the results' sizes come from,
        given the op (None: all of them): a quantile of all elements has the shape of ``q``
        whatever the sizes of its data (``FunctionTrace.sizes_staged``).
      exemptions: rules this op deliberately lacks (``"evaluate"``, a target name), each with
        the reason; the op-rules test accepts nothing else missing.
    """

    name: str
    infer: InferRule
    evaluate: Evaluate | None
    doc: str = ""
    effects: Effects | EffectsRule = PURE
    lowerings: dict[str, Callable[..., Any]] = field(default_factory=dict)  # target -> rule
    fresh_results: bool | Callable[..., bool] = False
    verify: VerifyRule | None = None
    region_names: tuple[str, ...] = ()
    bare_attr: str | None = None
    scalar_operator: Callable[..., Any] | None = None
    elementwise: bool = False
    fusible_reduction: bool = False
    raises: tuple[type[BaseException], ...] | Callable[[ir.Op], tuple] | None = None
    vjp: VjpRule | None = None
    shape_operands: tuple[int, ...] = ()
    size_sources: Callable[[ir.Op], tuple[int, ...]] | None = None
    exemptions: dict[str, str] = field(default_factory=dict)

    @property
    def side_effects(self) -> bool:
        """Whether the op may have effects (an effects rule counts: it may)."""
        return callable(self.effects) or bool(self.effects)


REGISTRY: dict[str, OpDef] = {}


def register(name: str, infer: InferRule, evaluate: Evaluate | None, doc: str = "",
             **rules: Any) -> OpDef:
    """Adds an op kind; ``rules`` are any other ``OpDef`` fields (``effects=STATE``...).

    Raises:
      ValueError: the name is registered already (a programming error).
    """
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is registered twice")
    definition = OpDef(name, infer, evaluate, doc, **rules)
    REGISTRY[name] = definition
    return definition


def lookup(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} is registered") from None


def result_types(name: str, operand_types: Sequence[Type], attrs: dict[str, Any]
                 ) -> tuple[Type, ...]:
    return tuple(lookup(name).infer(tuple(operand_types), attrs))
