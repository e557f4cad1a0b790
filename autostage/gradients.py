"""``autostage.grad`` and ``autostage.value_and_grad``: gradients of converted functions.

Both return a staged function (trace cache, targets and call conventions of ``convert``) whose
trace runs ``f`` under a ``GradientTape`` watching the chosen arguments and returns the gradient,
so the forward and backward programs compile together. Differentiated arguments that are Python
floats are passed as float64 arrays (a Python number would be a trace-time constant).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from autostage import api, errors
from autostage.calls import converted, converted_inline
from autostage.runtime import ndarray_results, pytree, tracing, value_info
from autostage.runtime.autodiff.tape import GradientTape, float_arguments, mark_custom_gradient
from autostage.runtime.function import StagedFunction
from autostage.runtime.tensor import Tensor


class GradientFunction:
    """What ``grad``/``value_and_grad`` return: calls a ``StagedFunction`` that computes the
    value and gradients; ``ir``, ``get_concrete_function`` and the rest are the staged one's."""

    def __init__(self, staged: Any, argnums: tuple[int, ...]):
        self._staged, self._argnums = staged, argnums
        self.__name__ = staged.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._staged(*float_arguments(args, self._argnums), **kwargs)

    def __getattr__(self, name: str) -> Any:
        # (Not for special names, nor before __init__ ran: copy and pickle rebuild an instance
        # without it and look up __setstate__, where reading _staged would recurse.)
        if name.startswith("__") or "_staged" not in vars(self):
            raise AttributeError(f"'GradientFunction' object has no attribute {name!r}")
        return getattr(self._staged, name)

    def __repr__(self) -> str:
        return f"<GradientFunction {self.__name__} argnums={self._argnums}>"


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
                   ) -> GradientFunction:
    """``f``'s value and its gradient with respect to the arguments ``argnums``.

    ``f`` (plain or already converted) must return a float scalar, or ``(scalar, aux)`` with
    ``has_aux``. The result is ``(value, grads)`` (``((value, aux), grads)`` with ``has_aux``),
    where ``grads`` has the structure of the chosen argument (pytrees of arrays allowed), or is a
    tuple of them when ``argnums`` is a sequence. Example::

        loss_and_grads = autostage.value_and_grad(loss, argnums=(0, 1))
        value, (dw, db) = loss_and_grads(w, b, x, y)
    """
    return _transform(f, argnums, has_aux, with_value=True)


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False
         ) -> GradientFunction:
    """The gradient of ``f`` with respect to the arguments ``argnums`` (``value_and_grad``
    without the value; with ``has_aux``, ``(grads, aux)``)."""
    return _transform(f, argnums, has_aux, with_value=False)


def _transform(f: Callable, argnums: int | Sequence[int], has_aux: bool,
               with_value: bool) -> GradientFunction:

    # ``f``'s Python function, traced inline into the gradient's trace (a staged call would
    # make the backward pass replay the whole callee).
    instance = None
    if inspect.ismethod(f) and isinstance(f.__func__, StagedFunction):
        f, instance = f.__func__, f.__self__  # a convert-ed method of an object: model.loss
    if isinstance(f, GradientFunction):
        body, target = f._staged.python_function, f.target
    elif isinstance(f, StagedFunction):
        body, target = f.python_function, f.target
    else:
        body, target = api.to_graph(f), "cpu"
    if instance is not None:
        body = types.MethodType(body, instance)
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    original = inspect.unwrap(body)

    def differentiated(*args: Any, **kwargs: Any) -> Any:
        with GradientTape() as tape:
            for i in nums:
                tape.watch(args[i])
            out = converted_inline(body)(*args, **kwargs)
        value, aux = out if has_aux else (out, None)
        _check_scalar(value, original)
        found = tape.gradient(value, [args[i] for i in nums])
        grads = tuple(_like_argument(g, args[i]) for g, i in zip(found, nums, strict=True))
        grads = grads[0] if single else grads
        result = (value, grads) if with_value else grads
        if has_aux:
            return ((value, aux), grads) if with_value else (grads, aux)
        return result

    # (``body``'s, not ``original``'s: unwrapping a bound method finds the function, whose
    # signature still has ``self``)
    differentiated.__signature__ = inspect.signature(body)
    kind = "value_and_grad" if with_value else "grad"
    differentiated.__name__ = differentiated.__qualname__ = f"{kind}_{original.__name__}"
    return GradientFunction(StagedFunction(differentiated, target=target,
                                           error_hook=errors.report), nums)


def custom_gradient(f: Callable) -> Callable:
    """Decorator: ``f`` returns ``(y, grad_fn)``; gradients through ``y`` are ``grad_fn(dy)``
    (one gradient per array argument of ``f``, in order) instead of ``f``'s own derivative.

    Outside staged code the decorated function returns ``y``. Example::

        @autostage.custom_gradient
        def clip_gradient(x):
            return x, lambda dy: np.clip(dy, -1.0, 1.0)
    """
    def with_custom_gradient(*args: Any) -> Any:

        y, grad_fn = converted_inline(f)(*args)
        return mark_custom_gradient(y, list(args), converted_inline(grad_fn))

    with_custom_gradient.__name__ = with_custom_gradient.__qualname__ = getattr(
        f, "__name__", "custom_gradient")
    return with_custom_gradient


def checkpoint(g: Callable) -> Callable:
    """``g`` whose intermediates are recomputed in the backward pass instead of kept.

    Called from staged code with staged arguments, ``g`` becomes a ``call`` op marked
    ``recompute``: the optimizer keeps it a call (its intermediates die when it returns), and the
    gradient replays its body. Elsewhere it is ``g`` itself. Example: ``h = autostage.checkpoint(
    block)(h, w)`` in a deep stack of blocks keeps one block's intermediates alive at a time.
    """
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        mark = tracing.checkpoint()
        out = converted(g)(*args, **kwargs)
        if mark is not None:
            region, start = mark
            for op in region.ops[start:]:
                if op.name == "call":
                    op.attrs = {**op.attrs, "recompute": True}
        return out

    # Not functools.wraps: its __module__ would be the user's, and converted code would convert
    # this wrapper instead of calling it.
    checkpointed.__name__ = checkpointed.__qualname__ = getattr(g, "__name__", "checkpointed")
    return checkpointed


def _check_scalar(value: Any, f: Callable) -> None:
    shape = np.shape(value) if not hasattr(value, "type") else value.type.shape
    dtype = np.asarray(value).dtype if not hasattr(value, "type") else value.type.dtype
    if shape != () or dtype.kind != "f":
        raise TypeError(f"autostage.grad of {f.__qualname__}: the function must return a float "
                        f"scalar (or (scalar, aux) with has_aux=True), got {dtype}{list(shape)}")


def _like_argument(gradient: Any, argument: Any) -> Any:
    """``argument``'s gradient with its structure and kinds: zeros where the value does not
    depend on a leaf (JAX's convention), and a 0-d leaf's gradient of the leaf's kind, a 0-d
    ndarray or a NumPy scalar (ops give a NumPy scalar, ``zeros_like`` a 0-d ndarray: the
    kind followed whether the value depended on the leaf)."""

    found = pytree.flatten(gradient)[0]  # None is a leaf: one per leaf of the argument
    leaves, treedef = pytree.flatten(argument)
    return pytree.unflatten(treedef, [_of_kind(np.zeros_like(a) if g is None else g, a)
                                      for g, a in zip(found, leaves, strict=True)])


def _of_kind(gradient: Any, leaf: Any) -> Any:
    if not isinstance(leaf, Tensor) or leaf.value.type.ndim != 0:
        return gradient
    return ndarray_results.as_kind(gradient, value_info.stands_for_ndarray(leaf.value))
