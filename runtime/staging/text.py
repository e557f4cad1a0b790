"""Strings made from staged values: f-strings, ``str``, ``repr``, ``format`` and ``+`` of them.

``f"loss {loss:.4f}"`` of a staged ``loss`` has no text until the staged function runs, but the
places that use such strings can take them: ``print`` (the print op formats at run time),
``raise E(message)`` and ``assert test, message`` (the message is made when it is raised).
A ``Text`` is the string's template: literal strings and fields (a staged value, its conversion
``!r``/``!s``/``!a`` and its format spec), rendered by ``ops.io.render`` with each value as the
Python type plain code holds (a Python number for a staged size, a NumPy scalar for ``x.sum()``,
an array), so the text is Python's exactly. Any other use (``len``, comparisons, ``str()`` of it
in code autostage does not convert, a dict key) is a ``StagingTypeError`` naming the line.

The converter turns every f-string into ``ag__.fstring(literal, ag__.field(value, conversion,
spec), ...)``, which is the f-string itself on Python values.
"""

from __future__ import annotations

from autostage.runtime import tracing, value_info
from autostage.runtime.operator_hooks import Staged, holds_staged, register_operator_hook
from autostage.runtime.ops.io import CONVERSIONS
from autostage.runtime.staging import errors, values
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import StagingTypeError, Tensor

# How messages name a Text (a staged if or loop cannot carry one: print it where it is made).
DESCRIPTION = "a string made from staged values (print it where it is made)"


class Text(Staged):
    """A string made from staged values: ``parts`` (strings, and ``("format", k, conversion,
    spec, kind)`` fields of ``tensors[k]``) rendered when the op that uses it runs."""

    __slots__ = ("parts", "tensors")

    def __init__(self, parts: tuple, tensors: tuple[Tensor, ...]):
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "tensors", tensors)

    def __add__(self, other: object) -> Text:
        if isinstance(other, str | Text):
            return concatenate((self, other))
        return NotImplemented

    def __radd__(self, other: object) -> Text:
        if isinstance(other, str):
            return concatenate((other, self))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<staged text of {len(self.tensors)} value(s)>"

    def parts_after(self, offset: int) -> tuple:
        """``parts`` with its fields numbered after ``offset`` other operands."""
        return tuple(p if isinstance(p, str) else (p[0], p[1] + offset, *p[2:])
                     for p in self.parts)


def _refuse(self: Text, *args: object, **kwargs: object) -> object:
    loc = tracing.user_location()
    raise StagingTypeError(
        f"{f'{loc}: ' if loc is not None else ''}a string made from a staged value (an f-string, "
        "str() or format() of one) has its text only when the staged function runs: print it, "
        "raise or assert with it, or concatenate it with strings; other uses (len, comparisons, "
        "str methods such as split(), str() in code autostage does not convert) cannot be staged")


for _name in ("str", "format", "len", "iter", "contains", "getitem", "eq", "ne", "lt", "le",
              "gt", "ge", "bool", "mul", "rmul", "mod", "hash", "setattr"):
    setattr(Text, f"__{_name}__", _refuse)
del _name


def _str_method(self: Text, name: str) -> object:
    """A method of ``str`` (``str(arr).split("\\n")`` in filterpy's ``pretty_str``) is refused
    as the other uses are, not an AttributeError of autostage's class; other names are
    missing as usual."""
    if not name.startswith("_") and hasattr(str, name):
        _refuse(self)
    raise AttributeError(f"'str' object has no attribute {name!r}")


Text.__getattr__ = _str_method


def _field_kind(value: Tensor) -> str:
    """How plain code holds ``value``: "python" (a Python number), "scalar" (a NumPy scalar)
    or "array" (an ndarray, 0-d ones included)."""
    if value_info.is_weak(value.value):
        return "python"
    return "array" if value.ndim or value_info.is_array(value.value) else "scalar"


def field(value: object, conversion: str, spec: object) -> str | Text:
    """``{value!conversion:spec}`` of an f-string (hook of ``ag__.field``)."""
    if isinstance(value, values.MaybeUnbound):
        raise value.error()
    if isinstance(spec, Text):
        raise errors.StagingTypeError(f"a format spec made from a staged value{errors.at()} "
                                      "cannot be staged; use a Python value")
    if isinstance(value, TensorList):
        raise errors.StagingTypeError(f"formatting a tensor list{errors.at()} is not supported; "
                                      "format np.stack(lst)")
    if isinstance(value, Text):
        if conversion or spec:
            raise errors.StagingTypeError(f"a conversion or format spec of a string made from a "
                                          f"staged value{errors.at()} cannot be staged")
        return value
    if isinstance(value, tuple | list) and holds_staged(value):
        if conversion not in ("", "s", "r") or spec:
            raise errors.StagingTypeError(f"a format spec or !a of a {type(value).__name__} "
                                          f"holding staged values{errors.at()} is not supported")
        return _container(value)  # (str, repr and format of a tuple or list are its repr)
    if not isinstance(value, Staged) and holds_staged(value):
        raise errors.StagingTypeError(f"formatting a {type(value).__name__} holding staged values"
                                      f"{errors.at()} is not supported; format its items")
    if not isinstance(value, Tensor):  # (a Python value beside a staged format spec)
        return python_text(format(CONVERSIONS[conversion](value) if conversion else value,
                                  spec), value)
    value_info.check_use(value.value)  # (a Python int held as a float would print as one)
    if conversion in ("r", "a"):
        check_repr(value)
    return Text((("format", 0, conversion, spec, _field_kind(value)),), (value,))


def python_text(made: str, value: object, where: str | None = None) -> str:
    """``made``, the text of the Python object ``value`` made while tracing; a clear error where
    code autostage does not convert (a dataclass's ``__repr__``, a class's ``__str__``) put a
    staged value's debugging text in it (``State(pos=<staged Tensor f64[2] ...>)`` was printed
    or returned): that value's text exists only when the staged function runs. ``where``: the
    place named (default: the user's line)."""
    if "<staged " in made:
        where = errors.at() if where is None else where
        raise errors.StagingTypeError(
            f"the text of a {type(value).__name__}{where} holds a staged value, formatted "
            "by code autostage does not convert (its __repr__ or __str__, such as a "
            "dataclass's), where the value has no text yet: print or format the staged values "
            "themselves (`print(s.pos)`), or return the object and print it outside")
    return made


def check_repr(value: Tensor) -> None:
    """The repr of a value that is a Python number on some paths (``value_info.python_path``)
    is Python's there (``0.5``), NumPy's elsewhere (``np.float64(0.5)``); staged code formats
    it as NumPy does, so it raises a clear error where the value is the Python number."""
    path = value_info.python_path(value.value)
    if path is not None:
        value_info.raise_where_python(value.value, errors.StagingTypeError(
            f"repr(){errors.at()} of a value that is a Python {path.kind.__name__} on this "
            "call's path and a NumPy scalar on others: staged code formats it as NumPy does "
            "(np.float64(0.5), where Python's float gives 0.5); use str() or an f-string "
            "without !r, or give it one type on every path"))


def _container(value: tuple | list) -> Text:
    """The repr of a tuple or list holding staged values: each item's repr."""
    pieces: list = ["(" if isinstance(value, tuple) else "["]
    for k, item in enumerate(value):
        pieces.append(", " if k else "")
        pieces.append(field(item, "r", "") if isinstance(item, Staged | tuple | list)
                      else repr(item))
    pieces.append(("," if isinstance(value, tuple) and len(value) == 1 else "")
                  + (")" if isinstance(value, tuple) else "]"))
    return concatenate(tuple(pieces))


def concatenate(pieces: tuple) -> str | Text:
    """The string of ``pieces`` (strings and ``Text``s) one after another (hook of
    ``ag__.fstring``; ``+``)."""
    parts: list = []
    tensors: list[Tensor] = []
    for piece in pieces:
        if isinstance(piece, str):
            if parts and isinstance(parts[-1], str):
                parts[-1] += piece
            elif piece:
                parts.append(piece)
            continue
        if not isinstance(piece, Text):
            raise errors.StagingTypeError(f"an f-string of a {type(piece).__name__}"
                                          f"{errors.at()} is not supported")
        parts += piece.parts_after(len(tensors))
        tensors += piece.tensors
    if not tensors:
        return "".join(parts)
    return Text(tuple(parts), tuple(tensors))


def fstring(*pieces: object) -> str | Text:
    return concatenate(pieces)


def str_(*args: object, **kwargs: object) -> str | Text:
    """``str(x)`` of a staged ``x`` (its other forms, with an encoding, are for bytes)."""
    if len(args) == 1 and not kwargs:
        return field(args[0], "s", "")
    raise errors.StagingTypeError(f"str() of a staged value with arguments{errors.at()} is not "
                                  "supported")


def repr_(x: object) -> str | Text:
    return field(x, "r", "")


def format_(x: object, spec: object = "") -> str | Text:
    return field(x, "", spec)


for _hook in (field, fstring, str_, repr_, format_):
    register_operator_hook(_hook.__name__, _hook)
