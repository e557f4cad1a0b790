"""The table of op kinds: for each op name, its type rule and its NumPy reference implementation.

Each op module registers its ops beside their definitions (``register``); later backends add their
lowering rules to the same ``OpDef``. ``infer(operand_types, attrs)`` returns the result types or
raises ``TypeError``/``ValueError`` with a message in the user's terms; ``evaluate(op, values,
run)`` computes the results with NumPy (``run(region, args)`` executes a region, for ops that have
them). A test checks that every registered op has every rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autostage.runtime.types import Type

InferRule = Callable[[tuple[Type, ...], dict[str, Any]], tuple[Type, ...]]
Evaluate = Callable[..., tuple]


@dataclass(slots=True)
class OpDef:
    """Everything autostage knows about one op kind."""

    name: str
    infer: InferRule
    evaluate: Evaluate
    doc: str = ""
    side_effects: bool = False  # print, assert, state ops: never removed or reordered
    lowerings: dict[str, Callable[..., Any]] = field(default_factory=dict)  # backend -> rule
    # Results share no memory with the operands: True, or a predicate on the op (ops/buffers.py).
    fresh_results: bool | Callable[..., bool] = False


REGISTRY: dict[str, OpDef] = {}


def register(name: str, infer: InferRule, evaluate: Evaluate, doc: str = "",
             side_effects: bool = False) -> OpDef:
    """Adds an op kind; registering a name twice is a programming error."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is registered twice")
    definition = OpDef(name, infer, evaluate, doc, side_effects)
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
