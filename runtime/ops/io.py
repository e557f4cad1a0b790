"""IR ops with side effects: ``print``, ``warn`` and ``assert``, run at run time in program
order.

Each carries a format template: attr ``parts``, a tuple of strings (text formatted at trace time,
from Python values), ints (the index of an operand, formatted with ``str`` at run time),
``("repr", index)`` (formatted with ``repr``: an item of a printed tuple or list) and
``("format", index, conversion, spec, kind)`` (an f-string field: ``staging.text``).
``print``: operands are the staged values printed; attrs ``parts`` (separators and ``end``
included), ``stream`` (``"stdout"`` or ``"stderr"``, looked up when it runs, so redirection
works) and ``flush``. ``warn``: ``warnings.warn`` at the user's line: operands and ``parts`` as
``print``'s (the message), attrs ``category`` (``"module:qualname"`` of the Warning class),
``filename``, ``lineno`` and ``module`` (the name of the module whose warning registry and
filters apply, as ``warnings.warn`` finds them from its caller's frame). ``assert``: operand 0
is the ``bool[]`` test, the others the staged values of the message; attrs ``parts`` (None: a
bare ``AssertionError``). None has results.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
from autostage.runtime import op_registry
from autostage.runtime.types import TensorType

CONVERSIONS = {"s": str, "r": repr, "a": ascii}  # an f-string field's !s, !r, !a


def render(parts: tuple, values: tuple) -> str:
    """The text of a template: strings as they are, operand indices replaced by ``str(value)``,
    ``("repr", index)`` by ``repr(value)`` (items of a printed tuple or list), ``("format",
    index, conversion, spec, kind)`` by an f-string field of the value held as ``kind`` says
    (``staging.text``)."""
    return "".join(p if isinstance(p, str) else str(values[p]) if isinstance(p, int) else
                   repr(_as_numpy(values[p[1]])) if p[0] == "repr" else _field(p, values)
                   for p in parts)


def _field(part: tuple, values: tuple) -> str:
    _, index, conversion, spec, kind = part
    value = np.asarray(values[index])
    held = value.item() if kind == "python" else value if kind == "array" else value[()]
    if conversion == "%":  # a %-formatting directive (staging/text_layouts.py)
        return spec % (held,)
    return format(CONVERSIONS[conversion](held) if conversion else held, spec)


def _as_numpy(value: object) -> object:
    """0-d values as the NumPy scalars plain NumPy code would hold (their repr differs)."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _no_results(types: tuple, attrs: dict) -> tuple:
    return ()


def _evaluate_print(op, values: tuple, run) -> tuple:
    stream = getattr(sys, op.attrs.get("stream", "stdout"))
    stream.write(render(op.attrs["parts"], values))
    if op.attrs.get("flush"):
        stream.flush()
    return ()


def issue_warning(parts: tuple, values: tuple, category: str, filename: str, lineno: int,
                  module: str) -> None:
    """``warnings.warn(message, category)`` as the user's line at ``filename:lineno`` issues it:
    the module's filters and registry (the default filter shows it once per line)."""
    owner, _, name = category.partition(":")
    cls = importlib.import_module(owner)
    for attr in name.split("."):
        cls = getattr(cls, attr)
    warn_at(render(parts, values), cls, filename, lineno, module)


def warn_at(message: object, category: type[Warning], filename: str, lineno: int,
            module: str, source: object = None) -> None:
    """``warnings.warn`` of ``message`` from ``filename:lineno`` of ``module``: with the
    globals and ``__warningregistry__`` of that module, as ``warnings.warn`` uses its caller's
    (none for a module no longer imported)."""
    globals_ = getattr(sys.modules.get(module), "__dict__", None)
    registry = None if globals_ is None else globals_.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, category, filename, lineno, module=module,
                           registry=registry, module_globals=globals_, source=source)


def _evaluate_warn(op, values: tuple, run) -> tuple:
    attrs = op.attrs
    issue_warning(attrs["parts"], values, attrs["category"], attrs["filename"], attrs["lineno"],
                  attrs["module"])
    return ()


def _infer_assert(types: tuple, attrs: dict) -> tuple:
    test = types[0]
    if not (isinstance(test, TensorType) and test.dtype == np.bool_ and test.is_scalar):
        raise TypeError(f"assert needs a bool[] test, got {test}")
    return ()


def _evaluate_assert(op, values: tuple, run) -> tuple:
    if bool(values[0]):
        return ()
    parts = op.attrs.get("parts")
    if parts is None:
        raise AssertionError
    raise AssertionError(render(parts, values[1:]) if is_text(parts) else
                         _single_value(parts, values[1:]))


def is_text(parts: tuple) -> bool:
    return not (len(parts) == 1 and isinstance(parts[0], int))


def _single_value(parts: tuple, values: tuple) -> object:
    """``assert t, x`` with a staged ``x``: Python's AssertionError holds ``x`` itself."""
    return values[parts[0]]


op_registry.register(
    "print", _no_results, _evaluate_print, effects=op_registry.Effects(io=True), raises=(),
    vjp=op_registry.NO_GRADIENT,
    doc="operands: printed staged values; attrs: parts (str | operand index), stream, flush")
op_registry.register(
    "warn", _no_results, _evaluate_warn, effects=op_registry.Effects(io=True),
    raises=(Warning,),  # (under an "error" filter)
    vjp=op_registry.NO_GRADIENT,
    doc="operands: staged values of the message; attrs: parts, category, filename, lineno, "
        "module: warnings.warn at the user's line")
op_registry.register(
    "assert", _infer_assert, _evaluate_assert, effects=op_registry.Effects(raises=True),
    raises=(AssertionError,), vjp=op_registry.NO_GRADIENT,
    doc="operands: test bool[], message values; attrs: parts (message template or None); "
        "raises AssertionError(message) when the test is false")
