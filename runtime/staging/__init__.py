"""Staging of control flow and Python constructs: importing it registers the operator hooks
(``if_stmt``, ``while_stmt``, ``for_stmt``, logical ops, builtins, list ops, ``print_``,
``assert_stmt``), which emit the ops defined under ``runtime/ops/`` (``cond``, ``while``, the
tensor list ops, ``print``...). ``autostage.runtime`` imports it, so the hooks exist whenever the
runtime does.
"""

from autostage.runtime.staging import (  # noqa: F401 - imported for their registrations
    builtins,
    comprehensions,
    control_flow,
    io,
    iteration,
    loops,
    nondeterministic_calls,
    numpy_lists,
    random_draws,
    sequences,
    text,
    text_layouts,
    try_regions,
)
from autostage.runtime.staging.errors import (
    PythonSideEffectError,
    StagingUnboundError,
    StagingValueError,
)
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.staging.values import MaybeUnbound

__all__ = ["MaybeUnbound", "PythonSideEffectError", "StagingUnboundError", "StagingValueError",
           "TensorList"]
