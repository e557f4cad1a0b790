"""The staging runtime, imported as ``autostage.runtime``.

It knows nothing of ASTs or the compiler: it may import NumPy, Numba and llvmlite, never
``autostage.pyct``, ``autostage.converters`` or ``autostage.operators``.

Public surface used by the operators: ``Staged`` (the base class of staged values),
``is_staged``/``any_staged`` and ``stage_operator`` (hand an operator's staged inputs to its
registered hook); the runtime registers hooks with ``register_operator_hook``.
"""

from autostage.runtime.operator_hooks import (
    Staged,
    any_staged,
    is_staged,
    register_operator_hook,
    stage_operator,
)

__all__ = ["Staged", "any_staged", "is_staged", "register_operator_hook", "stage_operator"]
