"""Reverse-mode automatic differentiation of staged code (``GradientTape``, ``grad``).

``backprop`` differentiates a stretch of traced ops by emitting the backward ops into the trace;
``control_flow`` has the VJP rules of ops with regions (cond, while, call), registered by those
ops; every other op's VJP lives in its ``OpDef`` (``runtime/ops``), written with ``build``.
``tape`` is what users meet (``GradientTape``, ``stop_gradient``). The package imports no op
module, so op modules import its builders at their top.
"""

from autostage.runtime.autodiff.backprop import GradientError

__all__ = ["GradientError"]
