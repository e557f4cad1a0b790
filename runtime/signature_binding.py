"""How a Python signature binds a staged function's arguments, and its ``input_signature``.

``Binding`` maps a call's arguments to one canonical tuple of parameter values (defaults
applied, as Python binds them) and back, and labels each leaf for messages (``argument 'x'[1]``).
``input_signature`` checks say, as a TypeError, which argument does not fit the TensorSpecs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import pytree
from autostage.runtime.tensor_spec import TensorSpec

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _stub(fn: Callable, params: list[inspect.Parameter]) -> Callable:
    """A function with ``fn``'s parameters, defaults and name that does nothing: calling it
    with arguments that do not bind raises the TypeError Python raises for ``fn`` (``f()
    missing 1 required positional argument: 'x'``; inspect's own messages name no function)."""
    parts, previous = [], None
    for p in params:
        if previous is inspect.Parameter.POSITIONAL_ONLY and p.kind is not previous:
            parts.append("/")
        if p.kind is inspect.Parameter.KEYWORD_ONLY and previous not in (
                inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_POSITIONAL):
            parts.append("*")
        parts.append({inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"
                      }.get(p.kind, "") + p.name)
        previous = p.kind
    if previous is inspect.Parameter.POSITIONAL_ONLY:
        parts.append("/")
    scope: dict = {}
    exec(f"def stub({', '.join(parts)}): pass", scope)  # noqa: S102
    stub = scope["stub"]
    stub.__name__ = getattr(fn, "__name__", "stub")
    stub.__qualname__ = getattr(fn, "__qualname__", stub.__name__)  # (what the message names)
    stub.__defaults__ = tuple(p.default for p in params if p.kind in POSITIONAL
                              and p.default is not inspect.Parameter.empty) or None
    stub.__kwdefaults__ = {p.name: p.default for p in params if p.kind is
                           inspect.Parameter.KEYWORD_ONLY and p.default is not
                           inspect.Parameter.empty} or None
    return stub


class Binding:
    """How a Python signature maps arguments to a canonical tuple of parameter values and back."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters.values())
        self.names = [p.name for p in self.params]
        simple = all(p.kind in POSITIONAL for p in self.params)
        # Calls with exactly one positional argument per parameter skip binding (the hot path).
        self.arity = len(self.params) if simple else -1

    def canonical(self, args: tuple, kwargs: dict) -> tuple:
        """Every parameter's value in order, defaults applied (``*args`` a tuple, ``**kw`` a
        dict); raises TypeError like the Python call would."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            _stub(self.fn, self.params)(*args, **kwargs)  # (raises Python's own TypeError)
            raise
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def call_args(self, values: tuple) -> tuple[list, dict]:
        """The positional and keyword arguments that pass ``values`` to the function."""
        positional, keywords = [], {}
        for param, value in zip(self.params, values, strict=True):
            if param.kind in POSITIONAL:
                positional.append(value)
            elif param.kind is inspect.Parameter.VAR_POSITIONAL:
                positional.extend(value)
            elif param.kind is inspect.Parameter.KEYWORD_ONLY:
                keywords[param.name] = value
            else:
                keywords.update(value)
        return positional, keywords

    def labels(self, values: tuple, short: bool = False) -> list[str]:
        """A label per leaf of ``values``: ``argument 'x'``, ``argument 'xs'[1]`` (short:
        ``x``, ``xs[1]``)."""
        labels = []
        for name, value in zip(self.names, values, strict=True):
            _, treedef = pytree.flatten(value)
            labels += [f"{name}{path}" if short else f"argument '{name}'{path}"
                       for path in pytree.leaf_paths(treedef)]
        return labels


def checked_signature(name: str, binding: Binding, signature: Any) -> tuple[tuple, list]:
    """``signature`` as a tuple, and its TensorSpec leaves.

    Raises:
      TypeError: a signature that is not a list or tuple, a leaf that is not a TensorSpec, more
        entries than positional parameters, or a parameter without a default that the
        signature does not cover.
    """
    if not isinstance(signature, list | tuple):
        one = (f" (for one parameter: [{signature!r}])" if type(signature) is TensorSpec
               else "")
        raise TypeError(f"input_signature of {name} must be a list or tuple of TensorSpecs, one "
                        f"per leading parameter, not {signature!r:.80}{one}")
    signature = tuple(signature)
    leaves, _ = pytree.flatten(signature)
    for leaf in leaves:
        if type(leaf) is not TensorSpec:
            raise TypeError(f"input_signature of {name} must hold TensorSpecs (nested in "
                            f"tuples, lists or dicts), not {leaf!r}")
    params = binding.params
    if len(signature) > len(params) or any(
            p.kind not in POSITIONAL for p in params[:len(signature)]):
        raise TypeError(f"input_signature of {name} has {len(signature)} entries, but "
                        "the function has fewer positional parameters")
    for param in params[len(signature):]:
        if param.default is inspect.Parameter.empty and param.kind in POSITIONAL + (
                inspect.Parameter.KEYWORD_ONLY,):
            raise TypeError(f"input_signature of {name} does not cover parameter "
                            f"'{param.name}', which has no default")
    return signature, leaves


def check_arguments(name: str, binding: Binding, signature: tuple, args: tuple, kwargs: dict,
                    values: tuple) -> None:
    """Raises TypeError naming the argument whose value does not fit ``signature``."""
    covered = binding.names[:len(signature)]
    if len(args) > len(covered) or any(k not in covered for k in kwargs):
        raise TypeError(f"{name}() takes the {len(covered)} arguments of its "
                        f"input_signature ({', '.join(covered)}); got {len(args)} positional "
                        f"and {sorted(kwargs)} keyword arguments")
    for param, spec_tree, value in zip(covered, signature, values, strict=False):
        spec_leaves, spec_def = pytree.flatten(spec_tree)
        value_leaves, value_def = pytree.flatten(value)
        if spec_def != value_def:
            raise TypeError(
                f"{name}() argument '{param}' must have the structure "
                f"{pytree.describe(spec_def)} of its input_signature, got "
                f"{pytree.describe(value_def)}")
        paths = pytree.leaf_paths(spec_def)
        for path, spec, leaf in zip(paths, spec_leaves, value_leaves, strict=True):
            problem = spec.mismatch(leaf)
            if problem is not None:
                raise TypeError(
                    f"{name}() argument '{param}'{path} must be {spec} ({spec!r}) as its "
                    f"input_signature says; got {problem}")


def example(spec: TensorSpec) -> np.ndarray:
    """An array that fits ``spec``, standing for it where only its type matters."""
    return np.zeros([1 if d is None else d for d in spec.shape], spec.dtype)
