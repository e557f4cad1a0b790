"""Which functions of an IR module call which: staged recursion is a cycle in this graph."""

from __future__ import annotations

from autostage.runtime import ir


def callees(function: ir.Function) -> set[str]:
    """The names of the functions ``function`` calls (in any region)."""
    found: set[str] = set()
    regions = [function.body]
    while regions:
        for op in regions.pop().ops:
            if op.name == "call":
                found.add(op.attrs["callee"])
            regions.extend(op.regions)
    return found


def reachable(start: str, calls: dict[str, set[str]]) -> set[str]:
    """The functions ``start`` reaches through one call or more, given each one's callees."""
    seen: set[str] = set()
    todo = list(calls.get(start, ()))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(calls.get(name, ()))
    return seen


def recursive(module: ir.Module) -> frozenset[str]:
    """The functions of ``module`` that reach themselves."""
    calls = {name: callees(f) for name, f in module.functions.items()}
    return frozenset(name for name in calls if name in reachable(name, calls))
