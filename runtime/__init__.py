"""The staging runtime, imported as ``autostage.runtime``.

It knows nothing of ASTs or the compiler: it may import NumPy, Numba and llvmlite, never
``autostage.pyct``, ``autostage.converters`` or ``autostage.operators``.

Public surface used by the operators: ``is_staged``/``any_staged`` (is a value staged?) and
``stage_operator`` (hand an operator's staged inputs to its registered hook); the runtime registers
its staged classes and hooks with ``register_staged_type`` and ``register_operator_hook``.
"""

from autostage.runtime.operator_hooks import (
    any_staged,
    is_staged,
    register_operator_hook,
    register_staged_type,
    stage_operator,
    unregister_staged_type,
)

__all__ = [
    "any_staged",
    "is_staged",
    "register_operator_hook",
    "register_staged_type",
    "stage_operator",
    "unregister_staged_type",
]
