"""The staging runtime, imported as ``autostage.runtime``.

It knows nothing of ASTs or the compiler: it may import NumPy, Numba and llvmlite, never
``autostage.pyct``, ``autostage.converters`` or ``autostage.operators``.

Public surface used by the operators: ``Staged`` (the base class of staged values),
``is_staged``/``any_staged``, ``is_tracing`` (is a function being traced in this thread?),
``staging_active`` (is a staged function being traced? then calls of converted functions go
to the hooks ``converted_call`` and ``construct``), ``in_staged_region`` (inside a staged
branch or loop body?) and
``Standin`` (the base class of stand-ins for user objects while tracing),
``stage_operator`` (hand an operator's staged inputs to its registered hook) and
``checkpoint`` (where the trace stands, so that a hook can drop ops emitted after it),
``OWN_ERRORS`` (the errors the runtime raises itself while tracing: about the program or
autostage, never the program's own exceptions, so no user handler may catch them); the runtime
registers hooks with ``register_operator_hook``.
"""

from autostage.runtime.operator_hooks import (
    Staged,
    Standin,
    any_staged,
    holds_staged,
    is_staged,
    register_operator_hook,
    stage_operator,
)
from autostage.runtime.tracing import StagingError, checkpoint, in_staged_region, is_tracing

__all__ = ["OWN_ERRORS", "Staged", "Standin", "any_staged", "checkpoint", "holds_staged",
           "in_staged_region", "is_staged", "is_tracing", "register_operator_hook",
           "shared_arrays", "stage_operator", "staging_active"]

# The operators, methods and NumPy dispatch of Tensor, attached to the class from above it, so
# that tensor.py (which the NumPy-surface modules import) imports none of them. First: the
# operator hooks it registers come before those of staged Python constructs.
from autostage.runtime import tensor_methods  # noqa: E402, F401, I001  # isort: skip

# Staged control flow and Python constructs: registers the cond/while/list/print/assert ops and
# the operator hooks (last: it needs the rest of the runtime).
from autostage.runtime import staging  # noqa: E402, F401
from autostage.runtime.function_trace import staging_active  # noqa: E402
from autostage.runtime.interpreter import TypeRuleMismatchError  # noqa: E402
from autostage.runtime.passes.pass_manager import PassError  # noqa: E402
from autostage.runtime.value_info import shared_arrays  # noqa: E402
from autostage.runtime.verifier import VerificationError  # noqa: E402

OWN_ERRORS = (StagingError, TypeRuleMismatchError, VerificationError, PassError)
