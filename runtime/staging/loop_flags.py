"""Proving that a loop variable assigned on some iterations only is assigned whenever a flag
says so: ``retval_`` when ``do_return`` is set after an early ``return`` in a loop, ``val`` when
``found`` is (``for ...: if c: found = True; val = x; break``), ``y`` when ``do_return`` is not
(``if c: return a`` / ``else: y = b`` in a loop, then ``return y``).

A staged loop carries such a variable with an ``undef`` placeholder (``loop_state``); after the
loop it is a ``MaybeUnbound`` whose definedness formula says when it is assigned (``logic``). The
formula comes from an induction over the iterations, guessing and checking invariants (as the
Houdini algorithm does): each *hypothesis* says "if the carried ``bool[]`` flag ``f`` is true
(or false), the variable ``v`` is assigned". Every such implication that holds before the loop
is assumed; the body is traced under the assumptions (the body's ``v`` is defined when one of its
assumed flag literals holds, or when its own unknown atom does); an implication the body's
results break is dropped and the body traced again. The survivors hold after every iteration, so
after the loop ``v`` is defined when one of their literals holds. Because bodies are traced under
the assumptions, loops nested in them prove the same for themselves: a ``return`` in any nesting
of staged loops and ifs leaves ``retval_`` provably assigned when ``do_return`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from autostage.runtime.staging import logic, values
from autostage.runtime.staging.loop_state import Slot
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import TensorType

_FLAG_TYPE = TensorType(np.bool_, ())


def definedness(x: object) -> logic.Formula:
    """When ``x`` (a loop variable's value) is assigned."""
    if isinstance(x, values.MaybeUnbound):
        return x.defined
    return logic.FALSE if values.is_unset(x) else logic.TRUE


def fact(x: object) -> logic.Formula:
    """The truth value of a flag's value (a placeholder: any fact will do)."""
    if isinstance(x, Tensor):
        return logic.of(x.value)
    return logic.const(bool(x)) if isinstance(x, (bool, np.bool_)) else logic.FALSE


def _is_flag(slot: Slot) -> bool:
    return slot.carried and not slot.maybe and slot.type == _FLAG_TYPE


def _literal(flag_fact: logic.Formula, positive: bool) -> logic.Formula:
    return flag_fact if positive else logic.not_(flag_fact)


def _implies(a: logic.Formula, b: logic.Formula) -> bool:
    return logic.equivalent(logic.ite(a, b, logic.TRUE), logic.TRUE)


Hypothesis = tuple[Slot, bool]  # the flag, and whether it implies the variable when true


class Hypotheses:
    """The flag literals assumed to imply each maybe-assigned slot, and the rejected ones."""

    def __init__(self):
        self._assumed: dict[int, list[Hypothesis]] = {}
        self._tried: set[tuple[int, int, bool]] = set()

    def choose(self, slots: Sequence[Slot]) -> None:
        """Assumes, for each maybe-assigned slot, every flag literal not tried yet that implies
        it before the loop (a slot or flag may become carried in a later trace)."""
        flags = [f for f in slots if _is_flag(f)]
        for slot in slots:
            if not (slot.carried and slot.maybe):
                continue
            init = definedness(slot.init)
            assumed = self._assumed.setdefault(id(slot), [])
            for flag in flags:
                for positive in (True, False):
                    key = (id(slot), id(flag), positive)
                    if key in self._tried:
                        continue
                    self._tried.add(key)
                    if _implies(_literal(fact(flag.init), positive), init):
                        assumed.append((flag, positive))

    def defined(self, slot: Slot, own: logic.Formula, fact_of: dict[int, logic.Formula]
                ) -> logic.Formula:
        """The definedness of ``slot``'s value given its own atom and the flags' facts."""
        result = own
        for flag, positive in self._assumed.get(id(slot), ()):
            result = logic.ite(_literal(fact_of[id(flag)], positive), logic.TRUE, result)
        return result

    def check(self, slots: Sequence[Slot], outs: Sequence[object]) -> bool:
        """Drops the assumptions the traced body breaks; True if one was (trace again)."""
        out_of = {id(s): x for s, x in zip(slots, outs, strict=True)}
        broken = False
        for sid, assumed in self._assumed.items():
            kept = [(f, positive) for f, positive in assumed
                    if _is_flag(f) and id(f) in out_of and _implies(
                        _literal(fact(out_of[id(f)]), positive), definedness(out_of[sid]))]
            broken |= len(kept) != len(assumed)
            self._assumed[sid] = kept
        return broken
