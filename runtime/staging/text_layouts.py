"""``"..." % values`` and ``"...".format(...)`` of staged values, as ``Text`` templates.

Both mini-languages are laid out at trace time into the pieces an f-string makes
(``staging/text.py``): literal text, Python values formatted now, and fields of staged values
formatted when the op that uses the string runs, each by Python itself (``spec % (value,)`` or
``format(value, spec)`` of the value as plain code holds it), so the text and the errors a
value causes (``%d`` of NaN, ``{:d}`` of a float) are Python's. The layout's own errors (too
few arguments, an unknown key, a stray ``}``, mixed field numbering) are found by running the
real ``%`` or ``str.format`` first with every argument replaced by a blank stand-in: they are
Python's exceptions and messages, raised at the line.
"""

from __future__ import annotations

from _string import formatter_field_name_split, formatter_parser

from autostage.runtime.operator_hooks import Staged, holds_staged, register_operator_hook
from autostage.runtime.staging import errors, text


class _Blank:
    """Stands for every argument while Python checks a layout: formats as nothing."""

    def __format__(self, spec: str) -> str:
        return ""

    def __str__(self) -> str:
        return ""

    __repr__ = __str__

    def __getattr__(self, name: str) -> _Blank:
        return self

    def __getitem__(self, key: object) -> _Blank:
        return self


def _check_percent(fmt: str, values: object) -> None:
    """Raises what ``fmt % values`` raises for its layout alone (each value a 0 accepts every
    conversion)."""
    if isinstance(values, tuple):  # (a named tuple too, as Python takes it)
        fmt % tuple(0 for _ in values)
    elif type(values) is dict:
        fmt % dict.fromkeys(values, 0)
    else:
        fmt % 0


def percent_format(fmt: str, values: object) -> str | text.Text:
    """``fmt % values`` with staged values (hook of ``ag__.percent_format``)."""
    _check_percent(fmt, values)
    items = values if isinstance(values, tuple) else (values,)
    mapping = values if type(values) is dict else None
    pieces: list = []
    position = i = 0
    while i < len(fmt):
        start = fmt.find("%", i)
        if start < 0:
            pieces.append(fmt[i:])
            break
        pieces.append(fmt[i:start])
        key, spec, i = _directive(fmt, start + 1)
        if spec.endswith("%"):  # ("%%", and "%5%" too: a literal percent sign)
            pieces.append("%")
            continue
        while "*" in spec:  # a width or precision taken from the arguments: Python ints
            star = items[position]
            position += 1
            if isinstance(star, Staged):
                raise errors.StagingTypeError(f"a '*' width or precision taken from a staged "
                                              f"value{errors.at()} is not supported")
            spec = spec.replace("*", str(int(star)), 1)
        if key is None:
            value = items[position]
            position += 1
        else:
            value = mapping[key]
        pieces.append(_percent_piece(spec, value))
    return text.concatenate(tuple(pieces))


def _directive(fmt: str, i: int) -> tuple[str | None, str, int]:
    """The ``%`` directive starting after the ``%`` at ``i - 1``: its mapping key, the directive
    without the key, and the index after it (the layout was checked: it is well formed)."""
    key = None
    if fmt[i] == "(":
        depth, start = 1, i + 1
        while depth:
            i += 1
            depth += {"(": 1, ")": -1}.get(fmt[i], 0)
        key = fmt[start:i]
        i += 1
    start = i
    while fmt[i] in "-+ #0":
        i += 1
    while fmt[i].isdigit() or fmt[i] in "*.":
        i += 1
    flags_width_precision = fmt[start:i]
    while fmt[i] in "hlL":
        i += 1
    return key, "%" + flags_width_precision + fmt[i], i + 1


def _percent_piece(spec: str, value: object) -> str | text.Text:
    if isinstance(value, text.Text) and spec == "%s":
        return value
    if spec in ("%s", "%r") and isinstance(value, tuple | list):
        return text.field(value, spec[1], "")  # (its items' repr; staged ones when it runs)
    if isinstance(value, Staged) or holds_staged(value):
        return text.field(value, "%", spec)
    return spec % (value,)


def str_format(fmt: str, *args: object, **kwargs: object) -> str | text.Text:
    """``fmt.format(*args, **kwargs)`` with staged values (hook of ``ag__.str_format``)."""
    fmt.format(*(_Blank() for _ in args), **dict.fromkeys(kwargs, _Blank()))
    return _layout(fmt, args, kwargs, [0])


def _layout(fmt: str, args: tuple, kwargs: dict, auto: list[int]) -> str | text.Text:
    """The pieces of ``fmt`` (a checked layout); ``auto`` counts ``{}`` fields, nested specs
    included, as ``str.format`` does."""
    pieces: list = []
    for literal, name, spec, conversion in formatter_parser(fmt):
        pieces.append(literal)
        if name is None:
            continue
        first, rest = formatter_field_name_split(name)
        if first == "":
            first = auto[0]
            auto[0] += 1
        value = args[first] if isinstance(first, int) else kwargs[first]
        for is_attribute, key in rest:
            value = getattr(value, key) if is_attribute else value[key]
        spec = _layout(spec, args, kwargs, auto) if spec else ""
        pieces.append(text.field(value, conversion or "", spec))
    return text.concatenate(tuple(pieces))


for _hook in (percent_format, str_format):
    register_operator_hook(_hook.__name__, _hook)
