"""Marker ops of automatic differentiation: ``stop_gradient`` and ``custom_gradient``.

Both are the identity on their first operand; they matter only to the reverse sweep
(``runtime/autodiff``): ``stop_gradient`` passes no gradient, and ``custom_gradient`` (operands y
and the function's array inputs; region ``backward``: argument dy, yields one gradient per input,
the user's ``grad_fn`` as traced) gives its inputs that gradient instead of y's own. Backends
lower both to ``y`` (the region never runs forwards).
"""

from __future__ import annotations

from autostage.runtime import op_registry
from autostage.runtime.autodiff.residuals import replay_all


def _identity_type(types: tuple, attrs: dict) -> tuple:
    return (types[0],)


def _identity(op, values: tuple, run) -> tuple:
    return (values[0],)


op_registry.register(
    "stop_gradient", _identity_type, _identity, raises=(), vjp=op_registry.NO_GRADIENT,
    doc="operand x: x itself, through which no gradient flows")
def _custom_vjp(op, cotangents: tuple) -> tuple:
    """The user's gradient: the backward region run on y's cotangent (all of it: grad_fn runs
    only here, so its prints print)."""
    (backward,) = op.regions
    _, copies = replay_all(backward, [cotangents[0]])
    return (None, *(copies.get(v, v) for v in backward.results))


def _check_custom(op, module) -> str | None:
    """``custom_gradient y inputs...``: one region over dy (y's type) yielding one value of each
    input's type."""
    (backward,) = op.regions
    if tuple(v.type for v in backward.args) != (op.operands[0].type,):
        return "has a backward region that does not take one argument of y's type"
    if backward.result_types != tuple(v.type for v in op.operands[1:]):
        return "has a backward region that does not yield one gradient per input"
    return None


op_registry.register(
    "custom_gradient", _identity_type, _identity, raises=(), verify=_check_custom,
    vjp=_custom_vjp,
    region_names=("backward",),
    doc="operands y, inputs...; region backward (dy -> one gradient per input): y itself; its "
        "gradient is the backward region (the user's grad_fn) applied to y's cotangent")
