"""Marker ops of automatic differentiation: ``stop_gradient`` and ``custom_gradient``.

Both are the identity on their first operand; they matter only to the reverse sweep
(``runtime/autodiff``): ``stop_gradient`` passes no gradient, and ``custom_gradient`` (attr
``rule``: which user ``grad_fn`` of the trace applies; operands y and the function's array
inputs) gives its inputs the user's gradient instead of y's own. Backends lower both to ``y``.
"""

from __future__ import annotations

from autostage.runtime import op_registry


def _identity_type(types: tuple, attrs: dict) -> tuple:
    return (types[0],)


def _identity(op, values: tuple, run) -> tuple:
    return (values[0],)


op_registry.register(
    "stop_gradient", _identity_type, _identity, may_fail=False, vjp=op_registry.NO_GRADIENT,
    doc="operand x: x itself, through which no gradient flows")
op_registry.register(
    "custom_gradient", _identity_type, _identity, may_fail=False,
    doc="attrs: rule; operands y, inputs...: y itself; its gradient is the user's grad_fn "
        "(autodiff/tape.py) applied to y's cotangent")
