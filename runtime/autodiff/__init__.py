"""Reverse-mode automatic differentiation of staged code (``GradientTape``, ``grad``).

``backprop`` differentiates a stretch of traced ops by emitting the backward ops into the trace;
``control_flow`` holds the VJP rules of ops with regions (cond, while, call); every other op's
VJP lives in its ``OpDef`` (``runtime/ops``). ``tape`` is the user-facing recorder.
"""

from autostage.runtime.autodiff import control_flow  # noqa: F401 - registers the region VJPs
from autostage.runtime.autodiff.backprop import GradientError
from autostage.runtime.autodiff.tape import GradientTape, mark_custom_gradient, stop_gradient

__all__ = ["GradientError", "GradientTape", "mark_custom_gradient", "stop_gradient"]
