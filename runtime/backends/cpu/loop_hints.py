"""Hints to LLVM's loop passes: a loop ID (``llvm.loop`` metadata) on a loop's back edge.

A loop ID is a distinct metadata node whose first operand is itself, followed by the loop's
options; LLVM keeps it on the loop's latch through its passes. Two sets are used:

* ``PLAIN``: neither vectorised nor unrolled — copies that are rare (new_arrays.py): LLVM's
  vector body, remainder and runtime checks made them ten times larger for no run-time gain.
* ``NO_RUNTIME_UNROLL``: not unrolled by a count known only at run time — loops whose body is a
  transcendental kernel lowered in line (direct_lowering.py). LLVM vectorises such a loop and
  then unrolled its scalar remainder (fewer iterations than one vector step) four times: three
  more copies of the kernel, 17% of the GRU encoder's instructions, for nothing at run time.
"""

from __future__ import annotations

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
