"""The exact text form of the IR: ``format_module`` writes every op, type, attribute and location
in full, and ``parse`` reads it back into a module that formats to the same text.

The readable printer (``printer.py``) abbreviates (long constants, the file's basename, attributes
the result types repeat); this form does not, so a module can be written to a file, compared as
golden text, or rebuilt elsewhere. It keeps the printer's layout — one op per line, values
``%0, %1, ...`` numbered in order of definition, regions indented under their op and closed by
``yield`` — and writes what follows an op's operands as Python expressions, read back by a small
evaluator that accepts only literals and these constructors (never arbitrary code)::

    %2:f64[?] = add %0 %1 attrs(in_place=True), loc('/home/me/model.py', 12, 'step')
    %3:f64[] = constant attrs(value=array('f64', (), [1.5]))

``dtype('f64')``, ``type('list<f64[3]>')``, ``array(dtype, shape, values)``,
``scalar(dtype, value)``, ``slice(a, b, c)``, ``exception('IndexError', *args)`` (a builtin
exception, or ``'module:Class'`` of a module already imported: reading imports nothing),
``operand(k)`` (a random draw's staged argument) and ``nan`` / ``inf``. State is not an
attribute: the module's state table follows the ``module`` line, one entry per line
(``state 0 = variable 'v0' : f32[3]``, as the printer writes it), and Variable ops name an entry
by index (``attrs(type=type('f32[3]'), var=0)``). ``parse`` reads the entries as
``ir.UnboundState`` descriptions (name and type, no storage): a parsed module with state has
the text's meaning but cannot run (``ir.UnboundStateError``). The Python functions of
``py_function`` ops follow the same way (``callable 0 = 'model.log_step'``, ``fn=0``), read back
as ``ir.UnboundCallable``.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
import sys
from typing import Any

import numpy as np
from autostage.runtime import ir, op_registry, printer
from autostage.runtime.ops.py_function import qualified_name
from autostage.runtime.ops.random import Operand
from autostage.runtime.types import (
    DTYPES,
    GeneratorType,
    ListType,
    TensorType,
    TupleType,
    Type,
    as_dtype,
)

INDENT = "  "
_DTYPE_OF_NAME = {name: dtype for dtype, name in DTYPES.items()}


class TextFormError(ValueError):
    """A module that has no exact text form, or a text that is not one (with its line)."""


# -- writing --------------------------------------------------------------------------------------

def format_module(module: ir.Module) -> str:
    """The exact text of ``module``: a ``module @entry`` line, its state and callables tables,
    then each function."""
    order = [module.entry] + [name for name in module.functions if name != module.entry]
    parts = [f"module @{module.entry}", *printer.state_lines(module)]
    parts += [f"callable {i} = {qualified_name(fn)!r}" for i, fn in enumerate(module.callables)]
    parts += [format_function(module.functions[name]) for name in order
              if name in module.functions]
    return "\n".join(parts) + "\n"


def format_function(function: ir.Function) -> str:
    """The exact text of one function (constants in full, unlike the printer's)."""
    names: dict[ir.Value, str] = {}
    params = _define(function.body.args, names)
    results = ", ".join(str(t) for t in function.result_types)
    lines = [f"func @{function.name}({params}) -> ({results}):"]
    _format_region_ops(function.body, names, 1, lines)
    lines.append(INDENT + _terminator("return", function.body.results, names))
    return "\n".join(lines)


def _define(values, names: dict) -> str:
    for value in values:
        names[value] = f"%{len(names)}"
    return ", ".join(f"{names[v]}:{v.type}" for v in values)


def _format_region_ops(region: ir.Region, names: dict, depth: int, lines: list[str]) -> None:
    indent = INDENT * depth
    for op in region.ops:
        results = _define(op.results, names)
        head = f"{results} = {op.name}" if op.results else op.name
        operands = "".join(f" {names[v]}" for v in op.operands)
        tail = []
        if op.attrs:
            tail.append("attrs(" + ", ".join(f"{k}={_literal(op.attrs[k], op, k)}"
                                             for k in sorted(op.attrs)) + ")")
        if op.loc is not None:
            tail.append(f"loc({op.loc.filename!r}, {op.loc.lineno}, {op.loc.function!r})")
        lines.append(indent + head + operands + (" " + ", ".join(tail) if tail else ""))
        labels = _region_names(op.name)
        for i, inner in enumerate(op.regions):
            label = labels[i] if i < len(labels) else f"region{i}"
            lines.append(f"{indent}{INDENT}{label}({_define(inner.args, names)}):")
            _format_region_ops(inner, names, depth + 2, lines)
            lines.append(indent + INDENT * 2 + _terminator("yield", inner.results, names))


def _region_names(op_name: str) -> tuple[str, ...]:
    definition = op_registry.REGISTRY.get(op_name)
    return definition.region_names if definition is not None else ()


def _terminator(keyword: str, values, names: dict) -> str:
    return " ".join([keyword, *(names[v] for v in values)])


def _literal(value: Any, op: ir.Op, key: str) -> str:
    """``value`` as an expression ``_Reader`` evaluates back to an equal value."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return repr(value)
    if kind is float:
        return _float(value)
    if kind is complex:
        return f"complex({_float(value.real)}, {_float(value.imag)})"
    if kind is tuple:
        inner = ", ".join(_literal(v, op, key) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if kind is list:
        return "[" + ", ".join(_literal(v, op, key) for v in value) + "]"
    if isinstance(value, np.dtype):
        return f"dtype({DTYPES.get(value, value.str)!r})"
    if isinstance(value, TensorType | ListType | TupleType | GeneratorType):
        return f"type({str(value)!r})"
    if isinstance(value, np.ndarray):
        values = _literal(value.reshape(-1).tolist(), op, key)
        return f"array({_dtype_name(value.dtype)!r}, {value.shape!r}, {values})"
    if isinstance(value, np.generic):
        return f"scalar({_dtype_name(value.dtype)!r}, {_literal(value.item(), op, key)})"
    if kind is slice:
        parts = (value.start, value.stop, value.step)
        return f"slice({', '.join(_literal(p, op, key) for p in parts)})"
    if kind is Operand:
        return f"operand({value.index})"
    if isinstance(value, BaseException):
        cls = type(value)
        name = cls.__name__ if getattr(builtins, cls.__name__, None) is cls else \
            f"{cls.__module__}:{cls.__qualname__}"
        return f"exception({', '.join([repr(name), *(_literal(a, op, key) for a in value.args)])})"
    raise TextFormError(f"attribute {key!r} of `{op.name}` holds a {kind.__name__}, which has no "
                        "text form")


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _dtype_name(dtype: np.dtype) -> str:
    return DTYPES.get(dtype, dtype.str)


# -- reading --------------------------------------------------------------------------------------

_VALUE = re.compile(r"%(\d+):")
_STATE = re.compile(r"state (\d+) = variable (.+) : (.+)")
_CALLABLE = re.compile(r"callable (\d+) = (.+)")


def parse(text: str) -> ir.Module:
    """The module ``text`` (``format_module``'s form) describes.

    Raises:
      TextFormError: the text is not the exact form, naming the line.
    """
    return _Parser(text).module()


class _Parser:
    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.at = 0

    def fail(self, message: str) -> TextFormError:
        line = self.lines[self.at] if self.at < len(self.lines) else "<end of text>"
        return TextFormError(f"line {self.at + 1}: {message}: {line.strip()!r}")

    def next_line(self) -> str:
        if self.at >= len(self.lines):
            raise self.fail("unexpected end of text")
        line = self.lines[self.at]
        self.at += 1
        return line

    def module(self) -> ir.Module:
        first = self.next_line()
        if not first.startswith("module @"):
            self.at -= 1
            raise self.fail("expected `module @<entry>`")
        module = ir.Module(first[len("module @"):].strip())
        while self.at < len(self.lines) and self.lines[self.at].startswith("state "):
            module.state.append(self.state_entry(len(module.state)))
        while self.at < len(self.lines) and self.lines[self.at].startswith("callable "):
            module.callables.append(self.callable_entry(len(module.callables)))
        while self.at < len(self.lines):
            if not self.lines[self.at].strip():
                self.at += 1
                continue
            module.add(self.function())
        if module.entry not in module.functions:
            raise self.fail(f"the entry function @{module.entry} is not defined")
        return module

    def state_entry(self, index: int) -> ir.UnboundState:
        match = _STATE.fullmatch(self.next_line())
        if match is None or int(match.group(1)) != index:
            self.at -= 1
            raise self.fail(f"expected `state {index} = variable '<name>' : <type>`")
        try:
            name = ast.literal_eval(match.group(2))
            entry_type = parse_type(match.group(3))
        except (ValueError, SyntaxError, TextFormError) as e:
            self.at -= 1
            raise self.fail(f"cannot read the state entry ({e})") from None
        if not isinstance(name, str):
            self.at -= 1
            raise self.fail("a state entry's name must be a string")
        return ir.UnboundState(name, entry_type)

    def callable_entry(self, index: int) -> ir.UnboundCallable:
        match = _CALLABLE.fullmatch(self.next_line())
        try:
            name = ast.literal_eval(match.group(2)) if match is not None else None
        except (ValueError, SyntaxError):
            name = None
        if name is None or int(match.group(1)) != index or not isinstance(name, str):
            self.at -= 1
            raise self.fail(f"expected `callable {index} = '<qualified name>'`")
        return ir.UnboundCallable(name)

    def function(self) -> ir.Function:
        line = self.next_line()
        match = re.fullmatch(r"func @(\S+)\((.*)\) -> \((.*)\):", line)
        if match is None:
            self.at -= 1
            raise self.fail("expected `func @name(params) -> (types):`")
        name, params, results = match.groups()
        self.names: dict[str, ir.Value] = {}
        body = self.region_with_args(params)
        returned = self.ops(body, depth=1, terminator="return")
        body.results = returned
        result_types = tuple(_types(results))
        function = ir.Function(name, body)
        returns, header = (", ".join(map(str, types)) for types in (function.result_types,
                                                                     result_types))
        if returns != header:  # the text, so that weak-ness must agree too
            raise self.fail(f"@{name} returns ({returns}), its header says ({header})")
        return function

    def region_with_args(self, text: str) -> ir.Region:
        declared = _declarations(text)
        region = ir.Region([t for _, t in declared])
        for (name, _), value in zip(declared, region.args, strict=True):
            self.names[name] = value
        return region

    def ops(self, region: ir.Region, depth: int, terminator: str) -> tuple[ir.Value, ...]:
        indent = INDENT * depth
        while True:
            line = self.next_line()
            if not line.startswith(indent) or line[len(indent):len(indent) + 1] in ("", " "):
                self.at -= 1
                raise self.fail("wrong indentation")
            content = line[len(indent):]
            if content == terminator or content.startswith(terminator + " "):
                return tuple(self.value(n) for n in content.split()[1:])
            region.append(self.op(content, depth))

    def op(self, content: str, depth: int) -> ir.Op:
        results, rest = content.split(" = ", 1) if content.startswith("%") else ("", content)
        declared = _declarations(results)
        name, _, rest = rest.partition(" ")
        operand_names = []
        while rest.startswith("%"):
            token, _, rest = rest.partition(" ")
            operand_names.append(token)
        attrs, loc = _Reader.tail(rest, self)
        labels = _region_names(name)
        op_regions = []
        count = len(labels) or None
        while self.at < len(self.lines) and self._region_header(depth):
            header = self.next_line().strip()
            label, _, args = header.partition("(")
            expected = labels[len(op_regions)] if len(op_regions) < len(labels) else \
                f"region{len(op_regions)}"
            if label != expected:
                self.at -= 1
                raise self.fail(f"expected region {expected!r} of `{name}`")
            region = self.region_with_args(args[:-2])
            region.results = self.ops(region, depth + 2, "yield")
            op_regions.append(region)
        if count is not None and len(op_regions) != count:
            raise self.fail(f"`{name}` has {len(op_regions)} regions, not {count}")
        operands = [self.value(n) for n in operand_names]
        op = ir.Op(name, operands, [t for _, t in declared], attrs, op_regions, loc)
        for (value_name, _), value in zip(declared, op.results, strict=True):
            self.names[value_name] = value
        return op

    def _region_header(self, depth: int) -> bool:
        line = self.lines[self.at]
        indent = INDENT * (depth + 1)
        return line.startswith(indent) and not line.startswith(indent + " ") and \
            line.rstrip().endswith("):") and not line.strip().startswith("%")

    def value(self, name: str) -> ir.Value:
        try:
            return self.names[name]
        except KeyError:
            raise self.fail(f"{name} is used before it is defined") from None


def _declarations(text: str) -> list[tuple[str, Type]]:
    """``%3:f64[?], %4:list<i64[]>`` -> [(name, type)]."""
    text = text.strip()
    if not text:
        return []
    starts = [m.start() for m in _VALUE.finditer(text)]
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        item = text[start:end].strip().rstrip(",").strip()
        name, _, type_text = item.partition(":")
        out.append((name, parse_type(type_text)))
    return out


def _types(text: str) -> list[Type]:
    reader = _TypeReader(text)
    out = []
    while reader.rest():
        out.append(reader.type())
        reader.skip(",")
    return out


def parse_type(text: str) -> Type:
    """The type printed as ``text`` (``f64[?,3]``, ``list<f64[]>``, ``(a, b)``, ``rng``, a weak
    ``f64[]~``)."""
    reader = _TypeReader(text)
    result = reader.type()
    if reader.rest():
        raise TextFormError(f"unexpected {reader.rest()!r} after the type {result}")
    return result


class _TypeReader:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def rest(self) -> str:
        return self.text[self.at:].strip()

    def skip(self, token: str) -> None:
        while self.text[self.at:self.at + 1] == " ":
            self.at += 1
        if self.text.startswith(token, self.at):
            self.at += len(token)
        while self.text[self.at:self.at + 1] == " ":
            self.at += 1

    def type(self) -> Type:
        self.skip("")
        text = self.text
        if text.startswith("rng", self.at):
            self.at += 3
            return GeneratorType()
        if text.startswith("list<", self.at):
            self.at += 5
            element = self.type()
            self.skip(">")
            return ListType(element)
        if text.startswith("(", self.at):
            self.at += 1
            elements = []
            while not text.startswith(")", self.at):
                elements.append(self.type())
                self.skip(",")
            self.at += 1
            return TupleType(tuple(elements))
        match = re.compile(r"(\w+)\[([^\]]*)\]").match(text, self.at)
        if match is None or match.group(1) not in _DTYPE_OF_NAME:
            raise TextFormError(f"not a type: {text[self.at:]!r}")
        self.at = match.end()
        weak = text.startswith("~", self.at)
        self.at += weak
        dims = [d for d in match.group(2).split(",") if d]
        try:
            return TensorType(_DTYPE_OF_NAME[match.group(1)],
                              tuple(None if d == "?" else int(d) for d in dims), weak)
        except TypeError as e:  # `~` after a type that cannot be weak
            raise TextFormError(str(e)) from e


class _Reader:
    """Evaluates the attribute and location expressions of one line: literals and the
    constructors of the module docstring, nothing else."""

    @staticmethod
    def tail(text: str, parser: _Parser) -> tuple[dict, ir.Location | None]:
        text = text.strip()
        if not text:
            return {}, None
        try:
            tree = ast.parse(f"[{text}]", mode="eval")
        except SyntaxError as e:
            raise parser.fail(f"cannot read the attributes ({e.msg})") from None
        attrs, loc = {}, None
        for call in tree.body.elts:
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                raise parser.fail("expected attrs(...) or loc(...)")
            if call.func.id == "attrs":
                attrs = {k.arg: _Reader.value(k.value, parser) for k in call.keywords}
            elif call.func.id == "loc":
                filename, lineno, function = (_Reader.value(a, parser) for a in call.args)
                loc = ir.Location(filename, lineno, function)
            else:
                raise parser.fail(f"unknown {call.func.id}(...)")
        return attrs, loc

    @staticmethod
    def value(node: ast.AST, parser: _Parser) -> Any:
        read = lambda n: _Reader.value(n, parser)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(read(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [read(e) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -read(node.operand)
        if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
            return float(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [read(a) for a in node.args]
            maker = _MAKERS.get(node.func.id)
            if maker is not None:
                try:
                    return maker(*args)
                except (TypeError, ValueError, ImportError, AttributeError) as e:
                    raise parser.fail(f"cannot make {node.func.id}(...): {e}") from None
        raise parser.fail(f"not an attribute value: {ast.unparse(node)!r}")


def _array(dtype: str, shape: tuple, values: list) -> np.ndarray:
    array = np.array(values, dtype=_dtype(dtype)).reshape(shape)
    array.setflags(write=False)
    return array


def _dtype(name: str) -> np.dtype:
    return _DTYPE_OF_NAME.get(name) or as_dtype(np.dtype(name))


def _exception(name: str, *args: Any) -> BaseException:
    if ":" in name:  # a class of a module this process has imported (reading imports nothing)
        module, _, qualname = name.partition(":")
        cls: Any = sys.modules.get(module)
        if cls is None:
            raise ImportError(f"module {module} is not imported in this process")
        for part in qualname.split("."):
            cls = getattr(cls, part)
    else:
        cls = getattr(builtins, name)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise TypeError(f"{name} is not an exception class")
    return cls(*args)


_MAKERS = {
    "dtype": _dtype,
    "type": parse_type,
    "array": _array,
    "scalar": lambda dtype, value: _dtype(dtype).type(value),
    "slice": slice,
    "exception": _exception,
    "operand": Operand,
    "complex": complex,
}


__all__ = ["TextFormError", "format_module", "parse", "parse_type"]
