"""Small builders that VJP rules use to emit ops into the current trace, on ``ir.Value``s.

VJP rules run while a gradient is traced, below the ``Tensor`` layer, so they build the backward
program op by op. Each builder emits one op (or none, when the result is known) at the location of
the forward op being differentiated (``at``), so an error in the backward pass points at the
user's line. Cotangents have their primal's dtype: the builders cast where NumPy would promote.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from autostage.runtime import ir, tracing
from autostage.runtime.types import ListType, TensorType, Type

_location: list[ir.Location | None] = [None]


@dataclass(frozen=True)
class StateSource:
    """A Variable as a source of gradients: entry ``index`` of the module's state table, of
    ``type``. It stands for every read of the Variable in the ops differentiated, inside
    branches, loops and called functions too, so its cotangent sums theirs (``var_read``'s VJP)."""

    index: int
    type: TensorType


@contextlib.contextmanager
def at(loc: ir.Location | None) -> Iterator[None]:
    """Ops built inside the block carry ``loc`` (the forward op's line)."""
    previous, _location[0] = _location[0], loc
    try:
        yield
    finally:
        _location[0] = previous


def placed(region: ir.Region, at: int | ir.Op, make: Callable, *args: object
           ) -> tuple[object, list[ir.Op]]:
    """``make(*args)``, with the ops it emits put in ``region`` at index ``at`` (or just before
    the op ``at``) rather than at its end; returns the value and those ops."""
    with tracing.reopen(region):
        mark = len(region.ops)
        value = make(*args)
        made = region.ops[mark:]
        del region.ops[mark:]
    index = region.ops.index(at) if isinstance(at, ir.Op) else at
    region.ops[index:index] = made
    return value, made


def add_results(op: ir.Op, types: Sequence[Type]) -> tuple[ir.Value, ...]:
    """New results of ``types`` for ``op``, rebuilt in place by a VJP rule (its old results
    keep their values), defined where its first result is; the caller updates the attrs
    that declare them."""
    region = op.results[0].region
    extra = tuple(ir.Value(t, op, len(op.results) + k) for k, t in enumerate(types))
    for value in extra:
        value.region = region
    op.results = (*op.results, *extra)
    return extra


def define_function(module: ir.Module, name: str, params: Sequence[Type],
                    body: Callable[[list[ir.Value]], Sequence[ir.Value]]) -> None:
    """Adds function ``name`` to ``module``: its results are what ``body(parameters)`` emits
    and returns. It is in the module while ``body`` runs, so the body may call it (the
    backward functions of staged recursion)."""
    trace = tracing.Trace(module, name, params)
    module.functions[name] = trace.function
    try:
        with tracing.tracing(trace):
            trace.function.body.results = tuple(body(list(trace.function.body.args)))
    finally:
        trace.finished = True


def emit(name: str, operands: list[ir.Value] | tuple, attrs: dict | None = None,
         regions: tuple = ()) -> tuple[ir.Value, ...]:
    return tracing.emit(name, list(operands), attrs, regions, loc=_location[0], derived=True)


def op1(name: str, *operands: ir.Value, **attrs: object) -> ir.Value:
    """The single result of op ``name`` on ``operands``."""
    return emit(name, operands, attrs)[0]


def constant(value: object, dtype: np.dtype) -> ir.Value:
    return op1("constant", value=np.asarray(value, dtype=dtype))


def cast(x: ir.Value, dtype: np.dtype) -> ir.Value:
    return x if x.type.dtype == dtype else op1("cast", x, dtype=np.dtype(dtype))


def like(x: ir.Value, primal: ir.Value) -> ir.Value:
    """``x`` with ``primal``'s dtype and shape (summed over the axes it was broadcast along)."""
    return sum_to(cast(x, primal.type.dtype), primal)


def full_like(x: ir.Value, fill: float) -> ir.Value:
    return op1("full_like", x, constant(fill, x.type.dtype), dtype=x.type.dtype)


def zeros_like(x: ir.Value) -> ir.Value:
    return full_like(x, 0)


def shape_of(x: ir.Value) -> tuple[tuple, list[ir.Value]]:
    """``x``'s shape as a ``shape`` attr and its staged sizes (a ``dim`` op per unknown size),
    the convention of reshape, broadcast_to and full (ops/shapes.py)."""
    dims = x.type.shape
    return dims, [op1("dim", x, axis=i) for i, d in enumerate(dims) if d is None]


def full(shape: tuple, sizes: list[ir.Value], fill: float, dtype: np.dtype) -> ir.Value:
    """An array of ``shape`` (a ``shape`` attr with its staged ``sizes``) filled with ``fill``."""
    return op1("full", constant(fill, dtype), *sizes, shape=tuple(shape), dtype=np.dtype(dtype))


def ct_type(value: ir.Value) -> TensorType:
    """The type of ``value``'s cotangents: its own, or for a tensor list the dense array of the
    element cotangents stacked along a new leading axis (one row per element)."""
    t = value.type
    if isinstance(t, ListType):
        return TensorType(t.element.dtype, (None, *t.element.shape))
    return t


def zeros_of(value: ir.Value | StateSource) -> ir.Value:
    """A zero cotangent for ``value`` (a tensor, a list: see ``ct_type``, or a Variable)."""
    if isinstance(value, StateSource):
        return full(value.type.shape, [], 0, value.type.dtype)
    if not isinstance(value.type, ListType):
        return zeros_like(value)
    element = value.type.element
    if None not in element.shape:
        return full((None, *element.shape), [op1("list_length", value)], 0, element.dtype)
    # Unknown element sizes: the stacked list's (an error if the elements differ in shape).
    return zeros_like(op1("list_stack", value, empty_ok=True))


_RAGGED = ("a gradient through a list of arrays needs its elements to share one shape (the "
           "list's cotangent is one array), but this list holds arrays of different shapes")


def check_same_shape(a: ir.Value, b: ir.Value) -> None:
    """Emits a run-time check that ``a`` and ``b`` (of one rank) have one shape: a ragged
    list's rows must raise, never broadcast into a silent value."""
    for k, (m, n) in enumerate(zip(a.type.shape, b.type.shape, strict=True)):
        if m is None or n is None:
            differ = op1("not_equal", op1("dim", a, axis=k), op1("dim", b, axis=k))
            emit("raise_if", [differ], {"exception": ValueError(_RAGGED)})


def add(a: ir.Value, b: ir.Value) -> ir.Value:
    return op1("add", a, b)


def sub(a: ir.Value, b: ir.Value) -> ir.Value:
    return op1("subtract", a, b)


def mul(a: ir.Value, b: ir.Value) -> ir.Value:
    return op1("multiply", a, b)


def div(a: ir.Value, b: ir.Value) -> ir.Value:
    return op1("true_divide", a, b)


def neg(a: ir.Value) -> ir.Value:
    return op1("negative", a)


def scale(a: ir.Value, factor: float) -> ir.Value:
    """``a * factor`` in ``a``'s dtype."""
    return mul(a, constant(factor, a.type.dtype))


def sum_to(ct: ir.Value, primal: ir.Value) -> ir.Value:
    """``ct`` summed over the axes along which ``primal`` was broadcast to ``ct``'s shape.

    Static shapes decide it where they can; an unknown dimension that may be 1 at run time
    needs the ``sum_to`` op, which tests it then.
    """
    have, want = ct.type.shape, primal.type.shape
    if have == want and (None not in want or _summed_to(ct, primal)):
        return ct
    if not want:
        return ct if not have else op1("sum", ct, axis=None, keepdims=False, dtype=None)
    lead = len(have) - len(want)
    if lead > 0:
        ct = op1("sum", ct, axis=tuple(range(lead)), keepdims=False, dtype=None)
        have = ct.type.shape
    ones = tuple(i for i, (h, w) in enumerate(zip(have, want, strict=True)) if w == 1 and h != 1)
    if ones:
        ct = op1("sum", ct, axis=ones, keepdims=True, dtype=None)
        have = ct.type.shape
    if all(w is not None or h == 1 for h, w in zip(have, want, strict=True)):
        return ct
    return op1("sum_to", ct, primal)


def _summed_to(ct: ir.Value, primal: ir.Value) -> bool:
    producer = ct.producer
    return isinstance(producer, ir.Op) and producer.name == "sum_to" and (
        producer.operands[1] is primal)


def is_differentiable(value: ir.Value) -> bool:
    """Whether ``value`` can carry a gradient: a real floating-point tensor."""
    return isinstance(value.type, TensorType) and value.type.dtype.kind == "f"
