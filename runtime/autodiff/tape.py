"""``GradientTape``, ``stop_gradient`` and custom gradients: gradients inside staged code.

A tape records nothing itself: the trace is the record. Entering the tape notes where the
current region stands; ``tape.gradient(target, sources)`` differentiates the ops traced since
then (up to the end of the ``with`` block) with ``backprop.gradients``, emitting the backward
program into the trace. Tapes nest: the ops an inner tape's ``gradient`` emits lie inside the
outer tape's stretch, so the outer tape differentiates them too (higher derivatives).
Trainable Variables read inside the tape are watched automatically; tensors and non-trainable
Variables must be watched (``tape.watch``), as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from autostage.runtime import config, ir, pytree, tracing
from autostage.runtime.autodiff import build
from autostage.runtime.autodiff.backprop import GradientError, captured, gradients, state_reads
from autostage.runtime.state import Variable
from autostage.runtime.tensor import Tensor, as_tensor

_OUTSIDE = ("autostage.GradientTape works inside staged code: decorate the function that uses "
            "it with @autostage.convert, or differentiate a function with autostage.grad / "
            "autostage.value_and_grad")
_OUTSIDE_EAGERLY = (
    "autostage.GradientTape records staged code, and config.EAGER (run_functions_eagerly) runs "
    "converted functions as Python: turn it off for the calls of functions that use a tape, "
    "or differentiate with autostage.grad / autostage.value_and_grad, which stage anyway")


class GradientTape:
    """Records the staged ops run inside ``with GradientTape() as tape:`` for ``tape.gradient``.

    Example (inside an ``@autostage.convert`` function)::

        with autostage.GradientTape() as tape:
            tape.watch(x)
            y = np.sum(np.tanh(x) ** 2)
        dy_dx = tape.gradient(y, x)

    ``persistent=True`` allows more than one ``gradient`` call. Gradients of sources the target
    does not depend on are None.
    """

    never_swallows_exceptions = True  # a staged ``with`` around it is fine (try_regions)

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._region: ir.Region | None = None
        self._start = self._end = 0
        self._watched: set[ir.Value] = set()
        self._watched_variables: set[Variable] = set()
        self._used = False

    def __enter__(self) -> GradientTape:
        trace = tracing.current()
        if trace is None:
            raise GradientError(_OUTSIDE_EAGERLY if config.EAGER.value() else _OUTSIDE)
        shared = getattr(trace, "shared", None)
        if shared is not None:
            shared.staged_only = "it uses a GradientTape"
            # a helper's write into an array it is given is not differentiated (its call's
            # results are not): such a helper stays the clear error it was
            shared.writes_back = False
        self._region, self._start, self._end = trace.region, len(trace.region.ops), None
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._region is not None:
            self._end = len(self._region.ops)

    def watch(self, tensor: Any) -> None:
        """Marks the staged tensors and Variables in ``tensor`` (a pytree) as sources of
        gradients."""
        for leaf in pytree.flatten(tensor)[0]:
            if isinstance(leaf, Tensor):
                self._watched.add(leaf.value)
            elif isinstance(leaf, Variable):
                self._watched_variables.add(leaf)
            else:
                raise GradientError(
                    f"tape.watch needs staged arrays (the function's array arguments or values "
                    f"computed from them), got a constant {type(leaf).__name__}: pass it as an "
                    "argument of the staged function to differentiate with respect to it")

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None) -> Any:
        """d target / d source for each source in ``sources`` (a pytree of tensors and
        Variables), with the structure of ``sources``; None where ``target`` does not depend on
        a source. ``target`` may be a pytree of tensors (their gradients add up);
        ``output_gradients`` weights each one (default: ones)."""
        if self._region is None or tracing.current() is None:
            raise GradientError(_OUTSIDE)
        if self._used and not self.persistent:
            raise GradientError("a non-persistent GradientTape can compute one set of gradients; "
                                "use GradientTape(persistent=True) for more")
        self._used = True
        if tracing.current().region is not self._region:
            raise GradientError("tape.gradient must be called in the same staged branch or loop "
                                "body as the `with GradientTape()` block that recorded")
        ops = self._region.ops[self._start:self._end]
        # (assignments after the block, before this call, come before the replays too)
        _check_state_replays(ops, self._region.ops[self._start:])
        leaves, treedef = pytree.flatten(sources)
        values = [self._source(leaf, ops) for leaf in leaves]
        targets = [as_tensor(t).value for t in pytree.flatten(target)[0]]
        weights = pytree.flatten(output_gradients)[0] if output_gradients is not None else None
        totals: list[ir.Value | None] = [None] * len(values)
        for k, y in enumerate(targets):
            seed = build.full_like(y, 1) if weights is None else as_tensor(weights[k]).value
            found = gradients(ops, y, seed, [v for group in values for v in group])
            totals = _add_groups(totals, _regroup(found, values))
        return pytree.unflatten(treedef, [None if t is None else Tensor(t) for t in totals])

    def _source(self, leaf: Any, ops: list[ir.Op]) -> list:
        """What stands for source ``leaf``: a watched tensor or one computed inside the tape (an
        intermediate value, as in TensorFlow), or a Variable (``build.StateSource``: all its
        reads, in branches, loops and calls too), if watched: explicitly, or read while the tape
        watches accessed Variables and trainable."""
        if isinstance(leaf, Variable):
            state = tracing.current().module.state
            index = next((i for i, entry in enumerate(state) if entry is leaf), None)
            watched = leaf in self._watched_variables or (
                self.watch_accessed_variables and leaf.trainable)
            if not watched or index is None:
                return []
            return [build.StateSource(index, leaf.type)]
        if isinstance(leaf, Tensor):
            recorded = leaf.value in self._watched or leaf.value.producer in ops
            return [leaf.value] if recorded else []
        raise GradientError(f"tape.gradient sources must be staged arrays or Variables, got "
                            f"{type(leaf).__name__}")


def _check_state_replays(ops: list[ir.Op], since_start: list[ir.Op]) -> None:
    """A Variable read inside a staged branch, loop or call of ``ops`` is read again when the
    backward pass replays that code: refused if the Variable is assigned after the tape began
    (``since_start``: the replay would read the new value)."""
    assigned, nested = set(), set()
    for op in since_start:
        for inner in (op, *(o for r in op.regions for o in r.walk())):
            if inner.name in ("var_assign", "var_assign_add", "var_assign_sub"):
                assigned.add(inner.attrs["var"])
    for op in ops:
        if op.regions or op.name == "call":
            nested.update(s.index for s in captured(op) + state_reads(op)
                          if isinstance(s, build.StateSource))
    clash = assigned & nested
    if clash:
        state = tracing.current().module.state
        names = ", ".join(repr(getattr(state[i], "name", i)) for i in sorted(clash))
        raise GradientError(
            f"Variable {names} is assigned after the tape began and read inside a staged branch, "
            "loop or call that the gradient replays (it would read the assigned value): assign "
            "it after the `tape.gradient` call")


def _regroup(found: list, groups: list[list]) -> list[ir.Value | None]:
    """One cotangent per source: the sum over the values standing for it."""
    out, it = [], iter(found)
    for group in groups:
        total = None
        for ct in (next(it) for _ in group):
            if ct is not None:
                total = ct if total is None else build.add(total, ct)
        out.append(total)
    return out


def _add_groups(a: list, b: list) -> list:
    return [y if x is None else x if y is None else build.add(x, y) for x, y in zip(
        a, b, strict=True)]


def stop_gradient(x: Any) -> Any:
    """``x`` unchanged, but no gradient flows through it (a constant to every tape)."""
    leaves, treedef = pytree.flatten(x)
    return pytree.unflatten(treedef, [
        Tensor(tracing.emit("stop_gradient", [leaf.value])[0]) if isinstance(leaf, Tensor)
        else leaf for leaf in leaves])


def mark_custom_gradient(y: Any, inputs: list, grad_fn: Any) -> Any:
    """``y`` marked so that gradients through it are ``grad_fn(dy)`` for the staged ``inputs``
    (``autostage.custom_gradient``); ``y`` itself when nothing is staged.

    ``grad_fn`` is traced now, into the op's ``backward`` region (argument dy): it may read
    values of this trace, which a later call would find out of scope (the trace of a staged
    callee, a loop body), and region captures follow the op wherever a replay copies it.
    """
    staged = [a for a in inputs if isinstance(a, Tensor)]
    if tracing.current() is None or not isinstance(y, Tensor):
        return y
    with tracing.region([y.type]) as backward:
        found = grad_fn(Tensor(backward.args[0]))
        found = list(found) if isinstance(found, tuple | list) else [found]
        if len(found) != len(staged):
            raise GradientError(f"the grad_fn of a custom_gradient returned {len(found)} "
                                f"gradients for {len(staged)} array arguments")
        backward.results = tuple(
            build.zeros_like(x.value) if g is None else build.like(as_tensor(g).value, x.value)
            for g, x in zip(found, staged, strict=True))
    (marked,) = tracing.emit("custom_gradient", [y.value, *(a.value for a in staged)],
                             regions=(backward,))
    return Tensor(marked)


def float_arguments(args: tuple, argnums: tuple[int, ...]) -> tuple:
    """``autostage.grad``'s arguments: differentiated Python floats (also inside pytrees) as
    float64 scalars, staged rather than trace-time constants (an exported gradient's loader
    converts them the same way)."""
    out = list(args)
    for i in argnums:
        if i >= len(out):
            raise TypeError(f"argnums {i} is out of range for {len(out)} positional arguments")
        leaves, treedef = pytree.flatten(out[i])
        for leaf in leaves:
            if isinstance(leaf, int | bool) and not isinstance(leaf, np.generic):
                raise TypeError(f"grad needs float arguments to differentiate, but argument {i} "
                                f"holds the {type(leaf).__name__} {leaf!r}; pass a float")
            # an integer or bool array has no gradient, and its derivative is not zero
            # (d sum(0.5 * x) / dx is 0.5): JAX's refusal, not a silent int zeros_like
            if isinstance(leaf, np.ndarray | np.generic) and leaf.dtype.kind in "biu":
                raise TypeError(f"grad needs float arguments to differentiate, but argument {i} "
                                f"holds values of dtype {leaf.dtype}; pass floats "
                                f"(x.astype(np.float64))")
        out[i] = pytree.unflatten(treedef, [np.float64(leaf) if type(leaf) is float else leaf
                                            for leaf in leaves])
    return tuple(out)
