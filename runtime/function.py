"""The staged-function runtime under one name: ``autostage.runtime.function``.

Each job lives in its own module; this one re-exports the names the compiler, the CLI and tests
use, so that ``from autostage.runtime.function import StagedFunction`` keeps working:

* ``staged_function``: ``StagedFunction`` and its trace cache (``config.MAX_TRACES``);
* ``concrete_function``: ``ConcreteFunction``, one trace prepared by its target;
* ``function_outputs``: ``Outputs``/``collect_outputs``, results back to the returned structure;
* ``signature_binding``: ``Binding`` and the ``input_signature`` checks;
* ``function_trace``: ``FunctionTrace``, who is tracing (``staging_active``);
* ``staged_calls``: calls from traced code (``call_from_trace``, ``traced_call``...);
* ``targets``: ``Target`` objects (``TARGETS``, ``backend_for``, ``optimized``);
* ``retrace_warnings``: ``RetracingWarning`` and why a function traced again.
"""

from __future__ import annotations

from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.function_outputs import Outputs, collect_outputs
from autostage.runtime.function_trace import FunctionTrace, is_staged_leaf, staging_active
from autostage.runtime.retrace_warnings import (
    RETRACE_WARNING_THRESHOLD,
    STRUCTURE,
    RetracingWarning,
)
from autostage.runtime.staged_calls import Callee, call_from_trace, made_in_trace, traced_call
from autostage.runtime.staged_function import StagedFunction
from autostage.runtime.targets import TARGETS, Target, backend_for, optimized, target_for

__all__ = [
    "RETRACE_WARNING_THRESHOLD", "STRUCTURE", "TARGETS", "Callee",
    "ConcreteFunction", "FunctionTrace", "Outputs", "RetracingWarning", "StagedFunction",
    "Target", "backend_for", "call_from_trace", "collect_outputs", "is_staged_leaf",
    "made_in_trace", "optimized", "staging_active", "target_for", "traced_call",
]

