"""The op kinds of the IR, one module per family; importing this package registers them all.

Every op is defined here and only here: its type rule, NumPy reference, effects, verifier rule,
printing hints and fusibility live in its ``OpDef`` (``runtime/op_registry.py``); backends add
their lowerings to it. README "How to add an op" shows the two files a new op touches.
"""

from autostage.runtime.ops import (  # noqa: F401
    call,
    checks,
    constant,
    control_flow,
    creation,
    elementwise,
    exceptions,
    fused,
    indexing,
    io,
    linalg,
    lists,
    matrices,
    numpy_linalg,
    python_math,
    random,
    rearrange,
    reductions,
    shapes,
    sorting,
    statistics,
    variables,
)
