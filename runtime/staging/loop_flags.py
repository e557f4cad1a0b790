"""Proving that a loop variable assigned on some iterations only is assigned exactly when a flag
is set: ``retval_`` and ``do_return`` after an early ``return`` in a loop, ``val`` and ``found``
in ``found = False`` / ``for ...: if c: found = True; val = x; break``.

A staged loop carries such a variable with an ``undef`` placeholder (``loop_state``); after the
loop it is a ``MaybeUnbound`` unless its definedness is proven. The proof is an induction over
the iterations: a *hypothesis* "variable ``v`` is assigned exactly when the carried ``bool[]``
flag ``f`` is true" is chosen when it holds before the loop; the body is traced *assuming* it (the
body's ``v`` is defined when its ``f`` is), and it is kept if the body gives back a ``v`` defined
exactly when its new ``f`` is true, else rejected and the body traced again without it. Because
the body is traced under the hypothesis, loops nested in it (which see ``v`` and ``f`` as their
own initial state) prove the same relation for themselves, so a ``return`` in any nesting of
staged loops and ifs leaves ``retval_`` provably assigned when ``do_return`` is set.
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


class Hypotheses:
    """The flag each maybe-assigned slot is assumed to follow, and the pairs already rejected."""

    def __init__(self):
        self.flag_of: dict[int, Slot] = {}
        self._rejected: set[tuple[int, int]] = set()

    def choose(self, slots: Sequence[Slot]) -> None:
        """Assumes a flag for each maybe-assigned slot that has none, where one holds at entry
        (``do_return`` preferred for ``retval_``, as the return lowering pairs them)."""
        flags = [f for f in slots if _is_flag(f)]
        for slot in slots:
            if not (slot.carried and slot.maybe) or id(slot) in self.flag_of:
                continue
            init = definedness(slot.init)
            candidates = sorted(
                (f for f in flags if (id(slot), id(f)) not in self._rejected
                 and logic.equivalent(init, fact(f.init))),
                key=lambda f: slot.name.startswith("retval_") != f.name.startswith("do_return"))
            if candidates:
                self.flag_of[id(slot)] = candidates[0]

    def check(self, slots: Sequence[Slot], outs: Sequence[object]) -> bool:
        """Rejects the hypotheses the traced body breaks; True if one was (trace again)."""
        out_of = {id(s): x for s, x in zip(slots, outs, strict=True)}
        broken = [
            (sid, flag) for sid, flag in self.flag_of.items()
            if not _is_flag(flag) or id(flag) not in out_of or not logic.equivalent(
                definedness(out_of[sid]), fact(out_of[id(flag)]))]
        for sid, flag in broken:
            del self.flag_of[sid]
            self._rejected.add((sid, id(flag)))
        return bool(broken)

    def flag(self, slot: Slot) -> Slot | None:
        return self.flag_of.get(id(slot))
