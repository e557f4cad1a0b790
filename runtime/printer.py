"""Readable text of the IR: one op per line, SSA names assigned at print time, short types.

Users read this text (the IR of a trace, ``--ir`` on the CLI) and tests compare it with golden
outputs, so its form is part of the API. Names ``%0, %1, ...`` are numbered per function in order
of definition: parameters, then each op's results before the arguments of its regions. A line is
``%3:f64[?] = name %1 %2 {attr=value, ...}`` with attributes sorted by key, then the user's
``# file.py:LINE`` (basename); a weak type (a value that stands for a Python number) ends in ``~``
(``%1:i64[]~ = dim %0``); an op's ``OpDef.bare_attr`` is printed right after its name
(``constant 1.0``, ``call @helper``). Regions are indented under their op, headed by their name
(``OpDef.region_names``) and arguments (``body(%4:i64[]):``) and closed by a ``yield`` line; a
function ends with ``return``. A module with state starts with its state table, one
``state 0 = variable 'v0' : f32[3]`` line per entry; Variable ops name an entry (``var=0``).
Printing never fails on malformed IR (the verifier prints the ops it rejects): a value that is not
defined in the function prints as ``%?``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
from autostage.runtime import ir, op_registry
from autostage.runtime.types import DTYPES

MAX_CONSTANT_ELEMENTS = 8  # larger constants print their first and last elements only
LOCATION_COLUMN = 40  # `# file.py:12` comments start here (or two spaces after a longer line)
INDENT = "  "


def value_names(function: ir.Function) -> dict[ir.Value, str]:
    """The print names of every value defined in ``function``, numbered in order of definition."""
    names: dict[ir.Value, str] = {}

    def name_region_args(region: ir.Region) -> None:
        for value in region.args:
            names.setdefault(value, f"%{len(names)}")

    def name_ops(region: ir.Region) -> None:
        for op in region.ops:
            for value in op.results:
                names.setdefault(value, f"%{len(names)}")
            for inner in op.regions:
                name_region_args(inner)
                name_ops(inner)

    name_region_args(function.body)
    name_ops(function.body)
    return names


def format_module(module: ir.Module) -> str:
    """The text of every function of ``module``, the entry function first, after its state
    table (if it has state)."""
    order = [module.entry] if module.entry in module.functions else []
    order += [name for name in module.functions if name != module.entry]
    state = ["\n".join(state_lines(module))] if module.state else []
    return "\n\n".join(state + [format_function(module.functions[name]) for name in order])


def state_lines(module: ir.Module) -> list[str]:
    """One line per entry of the module's state table, which ops name by index (``var=0``):
    ``state 0 = variable 'v0' : f32[3]``."""
    return [f"state {i} = variable {entry.name!r} : {entry.type}"
            for i, entry in enumerate(module.state)]


def format_function(function: ir.Function) -> str:
    """The text of one function: a header with its signature, its ops and ``return``."""
    names = value_names(function)
    params = _typed_names(function.body.args, names)
    results = ", ".join(str(t) for t in function.result_types)
    lines = [f"func @{function.name}({params}) -> ({results}):"]
    _format_ops(function.body, names, 1, lines)
    lines.append(INDENT + _terminator("return", function.body.results, names))
    return "\n".join(lines)


def format_op(op: ir.Op, names: dict[ir.Value, str] | None = None) -> str:
    """The first line of ``op`` (no regions, no location), e.g. for error messages.

    Args:
      op: the op.
      names: the names of its function's values (``value_names``); without them values print as
        ``%?``, so pass them where the reader needs to match the line with the printed function.
    """
    names = names if names is not None else {}
    head = _op_head(op, names)
    if not op.results:
        return head
    return f"{_typed_names(op.results, names)} = {head}"


def format_location(loc: ir.Location | None) -> str:
    """``file.py:12`` (the basename: the printed IR is read next to the user's file)."""
    return "" if loc is None else f"{os.path.basename(loc.filename)}:{loc.lineno}"


def format_attribute(value: Any) -> str:
    """An attribute value as short text: constants abbreviated, dtypes by their short name."""
    if isinstance(value, np.ndarray | np.generic):
        return _format_array(np.asarray(value))
    if isinstance(value, np.dtype):
        return DTYPES.get(value, str(value))
    if isinstance(value, tuple):
        inner = ", ".join(format_attribute(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(format_attribute(v) for v in value) + "]"
    if isinstance(value, slice):
        parts = [value.start, value.stop] + ([value.step] if value.step is not None else [])
        return ":".join("" if p is None else format_attribute(p) for p in parts)
    if isinstance(value, str | float):
        return repr(value)
    return str(value)


def _format_ops(region: ir.Region, names: dict, depth: int, lines: list[str]) -> None:
    indent = INDENT * depth
    for op in region.ops:
        lines.append(_with_location(indent + format_op(op, names), op.loc))
        definition = op_registry.REGISTRY.get(op.name)
        region_names = definition.region_names if definition is not None else ()
        for i, inner in enumerate(op.regions):
            label = region_names[i] if i < len(region_names) else f"region{i}"
            args = f"({_typed_names(inner.args, names)})" if inner.args else ""
            lines.append(f"{indent}{INDENT}{label}{args}:")
            _format_ops(inner, names, depth + 2, lines)
            lines.append(indent + INDENT * 2 + _terminator("yield", inner.results, names))


def _op_head(op: ir.Op, names: dict) -> str:
    parts = [op.name]
    definition = op_registry.REGISTRY.get(op.name)
    bare = definition.bare_attr if definition is not None else None
    if bare in op.attrs:
        value = op.attrs[bare]
        parts.append(f"@{value}" if bare == "callee" else format_attribute(value))
    parts += [names.get(v, "%?") for v in op.operands]
    others = sorted(k for k in op.attrs if k != bare and not _redundant(op, k))
    if others:
        parts.append("{" + ", ".join(f"{k}={format_attribute(op.attrs[k])}" for k in others)
                     + "}")
    return " ".join(parts)


def _redundant(op: ir.Op, key: str) -> bool:
    """Ops whose type rule cannot see their regions or callee keep their result types in an
    attribute; the line shows them already."""
    value = op.attrs[key]
    return (key == "result_types" and isinstance(value, tuple | list)
            and tuple(value) == tuple(v.type for v in op.results))


def _typed_names(values: Iterable[ir.Value], names: dict) -> str:
    return ", ".join(f"{names.get(v, '%?')}:{v.type}" for v in values)


def _terminator(keyword: str, values: Iterable[ir.Value], names: dict) -> str:
    operands = ", ".join(names.get(v, "%?") for v in values)
    return f"{keyword} {operands}" if operands else keyword


def _with_location(line: str, loc: ir.Location | None) -> str:
    if loc is None:
        return line
    return f"{line.ljust(LOCATION_COLUMN - 2)}  # {format_location(loc)}"


def _format_array(array: np.ndarray) -> str:
    if array.ndim == 0:
        return str(array[()])
    if array.size <= MAX_CONSTANT_ELEMENTS:
        return _nested(array)
    flat = array.reshape(-1)
    head = ", ".join(str(x) for x in flat[:3])
    return f"[{head}, ..., {flat[-1]}]"


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return str(array[()])
    return "[" + ", ".join(_nested(row) for row in array) + "]"
