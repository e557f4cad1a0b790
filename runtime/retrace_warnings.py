"""Retrace warnings: when a staged function traced many times, say which argument changed.

Each trace is described per component of its key (``describe``: the structure, each argument
leaf, each environment source); after ``RETRACE_WARNING_THRESHOLD`` traces, the component that
changed between the last two is explained with what to do instead (``explain``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from autostage.runtime import pytree
from autostage.runtime.cache_keys import SCALAR, ByContents, ById, leaf_key
from autostage.runtime.environment import environment_key
from autostage.runtime.function_trace import is_staged_leaf
from autostage.runtime.signature_binding import Binding
from autostage.runtime.types import TensorType

RETRACE_WARNING_THRESHOLD = 5  # traces of one function before RetracingWarning explains why
STRUCTURE = "the structure of the arguments"


class RetracingWarning(UserWarning):
    """A staged function was traced many times; the message says which argument changed.

    Example: ``step(x, n)`` called with a new Python int ``n`` each time traces once per value.
    Fix: pass ``np.int64(n)`` so that ``n`` is staged (one trace for all values).
    """


def describe(binding: Binding, values: tuple, leaves: list, treedef: pytree.TreeDef,
             sources: tuple, env: list) -> dict[str, Any]:
    """A trace's key by component label (for ``explain``)."""
    description: dict[str, Any] = {STRUCTURE: treedef}
    for label, leaf in zip(binding.labels(values), leaves, strict=False):
        description[label] = leaf_key(leaf)
    for source, value in zip(sources, env, strict=False):
        description[str(source)] = environment_key(value)
    return description


_SUGGESTED = {int: "np.int64", float: "np.float64", bool: "np.bool_", complex: "np.complex128"}


def explain(label: str, old: Any, new: Any, leaves_by_label: dict[str, Any]) -> str:
    """Why component ``label`` of the trace key changed, and what to do about it."""
    if label == STRUCTURE:
        return (f"{label} changed from {pytree.describe(old)} to {pytree.describe(new)}")
    if label.startswith(("global", "closed-over")):
        return (f"{label} changed; globals and closed-over values that are not NumPy arrays are "
                "compile-time constants (arrays are read at call time: one trace per dtype and "
                "shape)")
    if label not in leaves_by_label:  # a Python value read through an object (captures)
        return (f"{label} changed from {_value_text(old)} to {_value_text(new)}; a Python value "
                "read through an object or container is a constant the trace is specialised on "
                "(arrays are read at each call): store a NumPy value (e.g. np.float64(v)) there "
                "to stage it")
    leaf = leaves_by_label.get(label)
    if is_staged_leaf(leaf):
        return (f"{label} changed from {_key_text(old)} to {_key_text(new)} (a trace is per "
                "dtype and rank)")
    kind = type(leaf)
    if kind in _SUGGESTED:
        name = label.split("'")[1] if "'" in label else "value"
        return (f"{label} is a Python {kind.__name__} and is traced per value (now {leaf!r}); "
                f"pass {_SUGGESTED[kind]}({name}) to stage it")
    if isinstance(new[1], ByContents):
        return (f"{label} is a {kind.__name__} object, traced per identity and contents (a "
                "change to it, or a new object, traces again); pass its values as arrays")
    if isinstance(new[1], ById) or type(leaf).__hash__ is object.__hash__:
        return (f"{label} is a {kind.__name__} object, traced per identity (a new object each "
                "call traces again); pass the same object, or pass its arrays as arguments")
    return f"{label} is a constant traced per value (now {leaf!r:.60})"


def _value_text(key: tuple) -> str:
    kind, value = key
    if kind is float and type(value) is str:  # zeros and NaNs key on their bits (constant_key)
        return repr(float.fromhex(value))
    return f"{value!r:.60}"


def _key_text(key: tuple) -> str:
    dtype, rank = key[0], key[1]
    if isinstance(dtype, np.dtype) and isinstance(rank, int):
        if not dtype.isnative:  # (a big-endian array: staged as its native copy)
            dtype = dtype.newbyteorder("=")
        text = str(TensorType(dtype, (None,) * rank))
        if rank == 0:
            return text + (" (a NumPy scalar)" if key[2:] == (SCALAR,) else " (a 0-d ndarray)")
        return text
    return repr(key)
