"""Limits of the CPU backend that Python or Numba impose, as clear errors or bounded headroom.

- **Nested loops.** Element-wise and reduction lowerings emit one loop per dimension, and
  CPython compiles at most 20 statically nested blocks: the generated module of a rank-20+
  array op does not compile. ``nested_blocks_error`` turns that SyntaxError into a
  ``LoweringError`` naming the op, the user's line and the rank.
- **Call depth.** Numba compiles a callee while typing its caller, about 250 Python frames per
  level, so a chain of calls (recursion unrolled on a Python constant: ``f(x, n - 1)``, one
  function per ``n``) exceeds Python's default recursion limit after a few levels. ``headroom``
  raises the limit for the compilation by an amount proportional to the module's call depth,
  up to ``MAX_CALL_DEPTH`` levels; deeper chains are a clear error.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import Iterator

from autostage.runtime import ir
from autostage.runtime.backends.cpu import codegen
from autostage.runtime.call_graph import callees
from autostage.runtime.types import TensorType

MAX_CALL_DEPTH = 100  # nested calls the CPU backend compiles (the interpreter has no bound)
FRAMES_PER_CALL = 400  # Python frames Numba spends per level of nested calls, with margin
MAX_BLOCKS = 20  # CPython's limit of statically nested blocks


def nested_blocks_error(error: SyntaxError, generated: object) -> Exception | None:
    """The clear error for generated code that nests too many blocks, or None for another
    SyntaxError (a bug in the code generator, which the caller re-raises)."""
    if "too many statically nested blocks" not in str(error.msg):
        return None
    op = generated.line_ops.get(error.lineno)
    if op is None:  # the error's line is a loop header: the op is on a line below
        op = next((generated.line_ops[line] for line in sorted(generated.line_ops)
                   if line > (error.lineno or 0)), None)
    rank = max((t.ndim for t in _types(op)), default=0) if op is not None else 0
    what = f"`{op.name}` at {codegen.where(op)}" if op is not None else "an op"
    of_rank = f" on a rank-{rank} array" if rank else ""
    return codegen.LoweringError(
        f"autostage: the CPU backend cannot compile {what}{of_rank}: it emits one loop per "
        f"dimension and Python compiles at most {MAX_BLOCKS} nested blocks (loops, ifs and "
        "whiles together). Reshape to fewer dimensions (merge axes with x.reshape) or use "
        "target='interpreter'")


def _types(op: ir.Op) -> list[TensorType]:
    values = [*op.operands, *op.results]
    return [v.type for v in values if isinstance(v.type, TensorType)]


def call_depth(module: ir.Module) -> int:
    """The longest chain of nested calls from the entry function (1: no calls), without
    recursion; a function calling itself (native recursion) counts once."""
    calls = {name: callees(fn) for name, fn in module.functions.items()}
    depth: dict[str, int] = {}
    stack = [(module.entry, False)]
    visiting: set[str] = set()
    while stack:
        name, done = stack.pop()
        if done:
            visiting.discard(name)
            depth[name] = 1 + max((depth.get(c, 0) for c in calls.get(name, ())
                                   if c not in visiting and c != name), default=0)
            continue
        if name in depth or name in visiting:
            continue
        visiting.add(name)
        stack.append((name, True))
        stack.extend((c, False) for c in calls.get(name, ()) if c not in depth)
    return depth.get(module.entry, 1)


@contextlib.contextmanager
def headroom(module: ir.Module) -> Iterator[None]:
    """Room on the Python stack for Numba to compile ``module``'s chain of calls; the old
    recursion limit is restored afterwards unless someone else changed it meanwhile.

    Raises:
      LoweringError: the chain is deeper than ``MAX_CALL_DEPTH``.
    """
    depth = call_depth(module)
    if depth > MAX_CALL_DEPTH:
        raise codegen.LoweringError(
            f"autostage: the CPU backend compiles calls nested at most {MAX_CALL_DEPTH} deep; "
            f"{module.entry} calls functions {depth} levels deep (recursion unrolled on a Python "
            "value traces one function per level). Pass the recursion's argument as a NumPy "
            "value (np.int64(n)) so that the recursion is staged once, or use "
            "target='interpreter'")
    frames = len(inspect.stack(0)) + depth * FRAMES_PER_CALL + 1000
    with _lock:
        old = sys.getrecursionlimit()
        new = max(old, frames)
        sys.setrecursionlimit(new)
    try:
        yield
    finally:
        with _lock:
            if sys.getrecursionlimit() == new:
                sys.setrecursionlimit(old)


_lock = threading.Lock()
