"""In-place operators on views: written back by the converter's ``x[k] op= v``, else refused.

``x[1:3] += 1`` is converted to ``x = setitem(x, k, iadd(x[k], 1))``: the in-place operator
runs on a view and its result is written back into ``x`` at the same index, which is Python's
effect. A user's own ``v = x[1:3]; v += 1`` changes ``x`` in Python too, but staged it would
only rebind ``v`` (staged values are immutable), silently leaving ``x`` unchanged. So each
in-place result on a view is *pending* until a ``setitem`` of the viewed array at the view's
own index consumes it; a pending one left at the end of the trace is a ``StagingError`` naming
the line of the operator. The table hangs off the ``Trace`` (weakly), so it dies with it.
"""

from __future__ import annotations

import weakref

from autostage.runtime import ir, tracing

_pending: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _table() -> dict | None:
    trace = tracing.current()
    return None if trace is None else _pending.setdefault(trace, {})


def changed_view(view: ir.Value, result: ir.Value) -> None:
    """``result`` is an in-place operator's value on ``view`` (a view of another array)."""
    table = _table()
    if table is not None:
        table[result] = (view, tracing.user_location())


def written_back(result: ir.Value, base: ir.Value, index: object,
                 operands: tuple[ir.Value, ...]) -> None:
    """A ``setitem(base, result, *operands)`` at ``index``: consumes ``result`` when it is the
    in-place value of ``base[index]`` (the converter's ``x[k] op= v``)."""
    table = _table()
    entry = None if table is None else table.get(result)
    if entry is None:
        return
    producer = entry[0].producer
    if (isinstance(producer, ir.Op) and producer.name == "getitem"
            and producer.operands[0] is base and producer.attrs.get("index") == index
            and producer.operands[1:] == tuple(operands)):
        del table[result]


def check_written_back() -> None:
    """At the end of a trace: raises for an in-place operator on a view never written back."""
    table = _table()
    if not table:
        return
    view, loc = next(iter(table.values()))
    made = f" (made at {view.loc})" if view.loc is not None else ""
    where = f"{loc}: " if loc is not None else ""
    table.clear()
    raise tracing.StagingError(
        f"{where}this in-place operator changes a view of another array{made}, which cannot be "
        "staged: the array it views would not change. Write into the original array instead "
        "(`x[a:b] += v`), or copy the view first (`v = v.copy()`)")
