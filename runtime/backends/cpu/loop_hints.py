"""Hints to LLVM's loop passes: a loop ID (``llvm.loop`` metadata) on a loop's back edge.

A loop ID is a distinct metadata node whose first operand is itself, followed by the loop's
options; LLVM keeps it on the loop's latch through its passes. Two sets are used:

* ``PLAIN``: neither vectorised nor unrolled — copies that are rare (new_arrays.py): LLVM's
  vector body, remainder and runtime checks made them ten times larger for no run-time gain.
* ``NO_RUNTIME_UNROLL``: not unrolled by a count known only at run time — ``range`` loops that
  ``direct`` lowers (direct_lowering.py) whose body is a transcendental kernel lowered in line,
  or that carry nothing from one iteration to the next (``carries``: maps, such as a fused
  loop's). LLVM vectorises such a loop and then unrolled its scalar remainder (fewer iterations
  than one vector step) four to eight times: copies of the body for nothing at run time (the
  particle filter's entry 3,193 -> 1,593 instructions, the GRU encoder's 2,483 -> 2,063: three
  more copies of each kernel). A loop that carries a value (a sum in order, a cumulative sum, a
  recurrence) is not vectorised, and unrolling it still pays: a cumulative sum ran 20% slower
  rolled.
"""

from __future__ import annotations

import ast

from llvmlite import ir

PLAIN = (("llvm.loop.vectorize.enable", False), ("llvm.loop.unroll.disable",))
NO_RUNTIME_UNROLL = (("llvm.loop.unroll.runtime.disable",),)


def mark(branch: ir.Instruction, options: tuple) -> None:
    """Gives the loop whose back edge is ``branch`` a loop ID holding ``options`` (each a
    metadata name and its boolean values)."""
    module = branch.parent.module
    nodes = [module.add_metadata([ir.MetaDataString(module, name),
                                  *(ir.Constant(ir.IntType(1), value) for value in values)])
             for name, *values in options]
    loop_id = ir.values.MDValue(module, (), name=str(len(module.metadata)))
    loop_id.operands = (loop_id, *nodes)
    branch.set_metadata("llvm.loop", loop_id)


def carries(loop: ast.For) -> bool:
    """Whether ``loop``'s body may read a value an earlier iteration wrote (a sum, a recurrence):
    a name read before the body assigns it, in statement order (a compound statement counts as
    one, its reads first, a loop's target assigned before them), or an array the body both
    writes into and reads (``y[i] = y[i - 1]``; an in-place map counts too: an
    over-approximation)."""
    body = ast.Module(loop.body, [])
    stored = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)}
    targets = [n.value for n in ast.walk(body) if isinstance(n, ast.Subscript)
               and not isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)]
    read = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load) and not any(n is t for t in targets)}
    if {t.id for t in targets} & read:
        return True
    assigned = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for statement in loop.body:
        if isinstance(statement, ast.For):  # (its own target first)
            assigned |= {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
        names = [n for n in ast.walk(statement) if isinstance(n, ast.Name)]
        reads = {n.id for n in names if isinstance(n.ctx, ast.Load)}
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            reads.add(statement.target.id)
        if (reads - assigned) & stored:
            return True
        assigned |= {n.id for n in names if not isinstance(n.ctx, ast.Load)}
    return False
