"""Staged recursion on the cpu target: which generated functions call themselves, and how.

A function in a cycle of calls is a native recursive function, so a runaway recursion would
overflow the thread's stack (a segfault). Each such function takes a trailing ``depth``
argument, raises ``RecursionError`` past ``RECURSION_LIMIT`` (as Python does past its own
limit), and passes ``depth + 1`` to the functions of its cycle.

A function calling itself whose results are arrays, scalars and tensor lists calls itself through
``self_calls``' intrinsics (typed from the IR, no recursive type inference in Numba; cached on
disk like any module). Other cycles (functions calling each other, results of other kinds) are
typed by Numba's own recursion rule, which is slow to compile and whose code Numba's disk
cache crashes loading (numba#6061, shared/TOOLCHAIN.md): a module with such a cycle is compiled
without the cache (every new process compiles it again).
"""

from __future__ import annotations

from autostage.runtime import config, ir
from autostage.runtime.call_graph import callees, reachable
from autostage.runtime.types import ListType, TensorType


class CallCycles:
    """The functions of ``module`` that reach themselves through calls."""

    def __init__(self, module: ir.Module):
        calls = {name: callees(f) for name, f in module.functions.items()}
        self.recursive = frozenset(name for name in calls if name in reachable(name, calls))
        # self-calls through self_calls' intrinsics: results Numba can be told up front
        self.direct = frozenset(
            name for name in self.recursive if name in calls[name]
            and all(isinstance(t, TensorType | ListType)
                    for t in module.functions[name].result_types))
        others = {name: callees - {name} for name, callees in calls.items()}
        mutual = any(name in reachable(name, others) for name in calls)
        self.uncacheable = mutual or bool(
            {name for name in self.recursive if name in calls[name]} - self.direct)
        self.limit = config.RECURSION_LIMIT.value()

    def depth_argument(self, caller: str, callee: str) -> list[str]:
        """The depth a call passes: one more than the caller's in a cycle, 1 from outside."""
        if callee not in self.recursive:
            return []
        return ["depth + 1" if caller in self.recursive else "np.int64(1)"]  # not a literal

    def entry_check(self) -> str:
        return (f"if depth > {self.limit}:\n"
                f"    raise RecursionError('maximum recursion depth exceeded in staged "
                f"recursion (AUTOSTAGE_RECURSION_LIMIT={self.limit})')")

    @staticmethod
    def self_call_names(function: str) -> tuple[str, str]:
        """The generated names of ``function``'s ``recurse`` and ``returns`` intrinsics."""
        return f"recurse_{function}", f"returns_{function}"

    @staticmethod
    def self_call_globals(function: str, result_types: tuple) -> str:
        """The module-level line that makes ``function``'s self-call intrinsics."""
        recurse, returns = CallCycles.self_call_names(function)
        declared = "".join(
            f", ({str(t.element.dtype)!r}, {t.element.ndim}, 'list')" if isinstance(t, ListType)
            else f", ({str(t.dtype)!r}, {t.ndim})" for t in result_types)
        return (f"{recurse}, {returns} = cpu_self.self_call(globals(), {function!r}"
                f"{declared})")
