"""Staged recursion on the cpu target: which generated functions call themselves.

A function in a cycle of calls is a native recursive function, so a runaway recursion would
overflow the thread's stack (a segfault). Each such function takes a trailing ``depth``
argument, raises ``RecursionError`` past ``RECURSION_LIMIT`` (as Python does past its own
limit), and passes ``depth + 1`` to the functions of its cycle. Numba's disk cache crashes when
it loads recursive functions (numba#6061, shared/TOOLCHAIN.md; seen here for self-recursion
too: a segfault in the second process), so a module with a cycle is compiled without it (every
new process compiles it again).
"""

from __future__ import annotations

from autostage.runtime import config, ir


def _callees(function: ir.Function) -> set[str]:
    found: set[str] = set()
    todo = [function.body]
    while todo:
        region = todo.pop()
        for op in region.ops:
            if op.name == "call":
                found.add(op.attrs["callee"])
            todo.extend(op.regions)
    return found


class CallCycles:
    """The functions of ``module`` that reach themselves through calls."""

    def __init__(self, module: ir.Module):
        calls = {name: _callees(f) for name, f in module.functions.items()}
        reach = {name: self._reachable(name, calls) for name in calls}
        self.recursive = frozenset(name for name in calls if name in reach[name])
        self.limit = config.RECURSION_LIMIT.value()

    @staticmethod
    def _reachable(start: str, calls: dict[str, set[str]]) -> set[str]:
        seen: set[str] = set()
        todo = list(calls.get(start, ()))
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(calls.get(name, ()))
        return seen

    def depth_argument(self, caller: str, callee: str) -> list[str]:
        """The depth a call passes: one more than the caller's in a cycle, 1 from outside."""
        if callee not in self.recursive:
            return []
        return ["depth + 1" if caller in self.recursive else "1"]

    def entry_check(self) -> str:
        return (f"if depth > {self.limit}:\n"
                f"    raise RecursionError('maximum recursion depth exceeded in staged "
                f"recursion (AUTOSTAGE_RECURSION_LIMIT={self.limit})')")
