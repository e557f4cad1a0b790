"""The op kinds of the IR, one module per family; importing this package registers them all."""

from autostage.runtime.ops import (  # noqa: F401
    checks,
    constant,
    creation,
    elementwise,
    indexing,
    linalg,
    matrices,
    numpy_linalg,
    python_math,
    random,
    rearrange,
    reductions,
    shapes,
    sorting,
    statistics,
)
