"""Which tensor lists a staged loop only appends to: the ``outs.append(h)`` pattern.

The VJP of ``while`` (control_flow.py) saves the carried tensors of each iteration, but not the
carried lists (a list of lists is not a type): its replay of the body binds a carried list to the
loop's final list. That computes what the forward pass did when the body appends to the list
(``list_append``, whose VJP reads no element), directly or in a branch or an inner loop that only
appends, and yields the result as the same carried value, or replaces it with a list it makes.
The body may also read the list at its top level (``lst[-1]``, ``len(lst)``): the replay then
reads the final list at the index the list of that moment had (``reads.py``), from the length
the forward loop saves per iteration. Any other use (a read inside a branch or an inner loop, a
stack, a pop, a call) is refused with a ``GradientError`` naming the line.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.autodiff.backprop import GradientError, captured
from autostage.runtime.types import ListType


class _Read(Exception):
    """``op`` uses the list in a way other than appending to it."""

    def __init__(self, op: ir.Op | None):
        super().__init__()
        self.op = op


_READS = ("list_get", "list_length")


def appended_lists(op: ir.Op, n: int, reads: bool = True) -> dict[int, bool]:
    """For each carried list of the ``while`` ``op`` (by position among its ``n`` carried
    values): True when the body yields it after appends (and, with ``reads``, top-level reads)
    only, False when the body yields a list it makes instead.

    Raises:
      GradientError: the body uses a carried list in any other way.
    """
    body = op.regions[1]
    found = {}
    for k, arg in enumerate(body.args[:n]):
        if not isinstance(arg.type, ListType):
            continue
        try:
            position = _yield_position(body, arg, reads)
            if position not in (k, None):
                raise _Read(None)
        except _Read as read:
            where = read.op if read.op is not None and read.op.loc is not None else op
            at = f" (at {where.loc})" if where.loc is not None else ""
            raise GradientError(
                f"autostage can differentiate a staged loop that carries a list only when the "
                f"loop body appends to the list (outs.append(h)) and reads it (outs[-1], "
                f"len(outs)) outside its branches and inner loops; this one uses it otherwise"
                f"{at}: read it into a variable before the branch, or keep the list outside "
                "the gradient") from None
        found[k] = position == k
    return found


def _yield_position(region: ir.Region, start: ir.Value, reads: bool = False) -> int | None:
    """Where ``region`` yields ``start`` after appends (and, with ``reads``, reads by its own
    ops) only; None when it neither appends to nor yields it. Raises ``_Read`` for any other
    use."""
    uses: dict[ir.Value, list[ir.Op]] = {}
    for inner in region.ops:
        for v in (*inner.operands, *(captured(inner) if inner.regions else ())):
            uses.setdefault(v, []).append(inner)
    value = start
    while True:
        users = [u for u in uses.get(value, ()) if not (
            reads and u.name in _READS and u.operands[0] is value and value not in u.operands[1:])]
        if not users:
            break
        if len(users) != 1 or value in region.results:
            raise _Read(users[0])
        value = _appends_to(users[0], value)
    yielded = [j for j, v in enumerate(region.results) if v is value]
    if value is start and not yielded:
        return None
    if len(yielded) != 1:
        raise _Read(None)
    return yielded[0]


def _appends_to(op: ir.Op, lst: ir.Value) -> ir.Value:
    """The list ``op`` makes by appending to ``lst``: a ``list_append``'s result, or that of a
    branch or inner loop that only appends to it. Raises ``_Read`` for any other use."""
    if op.name == "list_append" and op.operands[0] is lst and op.operands[1] is not lst:
        return op.results[0]
    if op.name == "while" and lst not in captured(op) and list(op.operands).count(lst) == 1:
        k = op.operands.index(lst)
        n = op.attrs.get("saved_inputs", len(op.operands))  # (the rest: control_flow's stacks)
        if k < n and appended_lists(op, n, reads=False).get(k):
            return op.results[k]
    if op.name == "cond" and list(op.operands).count(lst) <= 1 and op.operands[0] is not lst:
        passed = list(op.operands[1:])
        j = passed.index(lst) if lst in passed else None
        if j is None or lst not in captured(op):
            positions = {_yield_position(r, lst if j is None else r.args[j]) for r in op.regions}
            if len(positions) == 1 and None not in positions:
                return op.results[positions.pop()]
    raise _Read(op)
