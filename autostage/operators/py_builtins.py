"""Overloads of the builtins that staged code must intercept (``print``, ``len``, ``range``...).

The call-trees converter rewrites a call to one of these builtins (when the name really is the
builtin) to its overload here; ``BUILTINS`` maps each builtin object to its overload for that
converter and for ``converted_call``. An overload forwards its arguments untouched, so on Python
values it *is* the builtin: same accepted signature (shown by ``inspect.signature`` where the
builtin has one), results, output, exception types and messages. If any argument (positional or
keyword) is staged, the call goes to the runtime hook named after the overload (``"len_"``...);
``print_`` is staged whenever a function is being traced.
"""

from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Callable
from typing import Any

from autostage.operators.logical import and_, or_
from autostage.runtime import (
    Staged,
    Standin,
    any_staged,
    holds_staged,
    is_tracing,
    stage_operator,
)

BUILTINS: dict[object, Callable[..., Any]] = {}


def _overload(builtin: Callable[..., Any], items: bool = False) -> Callable[..., Any]:
    """Makes ``<name>_``, the overload of ``builtin``, and records it in ``BUILTINS``;
    ``items``: also staged when a tuple or list argument holds a staged value
    (``min(x.shape)``)."""
    name = builtin.__name__ + "_"
    staged = holds_staged if items else any_staged

    def overload(*args: Any, **kwargs: Any) -> Any:
        if staged(args) or (kwargs and any_staged(kwargs.values())):
            return stage_operator(name, *args, **kwargs)
        return builtin(*args, **kwargs)

    overload.__name__ = overload.__qualname__ = name
    overload.__module__ = __name__
    overload.__doc__ = (f"Overload of builtin ``{builtin.__name__}``: the builtin itself on "
                        "Python values; staged arguments go to the runtime.")
    try:
        overload.__signature__ = inspect.signature(builtin)
    except ValueError:  # builtins such as range, min and max have no introspectable signature
        pass
    BUILTINS[builtin] = overload
    return overload


print_ = _overload(builtins.print)


def _print(*args: Any, **kwargs: Any) -> None:
    # While a function is traced, every print is staged, even one of Python values only: it must
    # run at each call, in program order with the staged prints, not once at trace time.
    if is_tracing() or any_staged(args) or (kwargs and any_staged(kwargs.values())):
        return stage_operator("print_", *args, **kwargs)
    return builtins.print(*args, **kwargs)


_print.__name__ = _print.__qualname__ = "print_"
_print.__doc__ = print_.__doc__
_print.__signature__ = getattr(print_, "__signature__", None)
print_ = BUILTINS[builtins.print] = _print
len_ = _overload(builtins.len)
list_ = _overload(builtins.list)
range_ = _overload(builtins.range)
enumerate_ = _overload(builtins.enumerate)
zip_ = _overload(builtins.zip)
map_ = _overload(builtins.map)
filter_ = _overload(builtins.filter)
int_ = _overload(builtins.int)
float_ = _overload(builtins.float)
bool_ = _overload(builtins.bool)
complex_ = _overload(builtins.complex)
abs_ = _overload(builtins.abs)
_min = _overload(builtins.min, items=True)
_max = _overload(builtins.max, items=True)


def min_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``min``: of an iterator while tracing (``min(a.shape[0] for a in
    arrays)``), of its items, which ``min`` reads all of anyway; staged items pick at run time."""
    return _min(*_items_of_iterator(args), **kwargs)


def max_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``max`` (as ``min_``)."""
    return _max(*_items_of_iterator(args), **kwargs)


def _items_of_iterator(args: tuple) -> tuple:
    """``args`` with a lone iterator (a generator, ``map``...) as the list of its items."""
    if len(args) == 1 and is_tracing() and not isinstance(args[0], Staged):
        try:
            if iter(args[0]) is args[0]:
                return (list(args[0]),)
        except TypeError:
            pass  # (not iterable: the builtin's own error)
    return args
sum_ = _overload(builtins.sum)
isinstance_ = _overload(builtins.isinstance)
_any_array = _overload(builtins.any)
_all_array = _overload(builtins.all)


def any_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``any``: of a staged array, the runtime's; of other items while
    tracing (``any(h < 0 for h in heights)``), Python's short circuit, a staged item deciding
    in a staged ``or`` whether the items after it are evaluated at all."""
    if len(args) != 1 or kwargs or isinstance(args[0], Staged) or not is_tracing():
        return _any_array(*args, **kwargs)  # (the builtin's errors for other calls)
    return _short_circuit(iter(args[0]), True)


def all_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``all`` (as ``any_``, with a staged ``and``)."""
    if len(args) != 1 or kwargs or isinstance(args[0], Staged) or not is_tracing():
        return _all_array(*args, **kwargs)
    return _short_circuit(iter(args[0]), False)


def _short_circuit(items: Any, stop: bool) -> Any:
    """``any`` (``stop`` True) or ``all`` of the rest of ``items``: the first item whose truth
    is ``stop`` ends it, as in Python."""
    for item in items:
        if isinstance(item, Staged):
            rest = functools.partial(_short_circuit, items, stop)
            return (or_ if stop else and_)(bool_(item), rest)
        if builtins.bool(item) is stop:
            return stop
    return not stop


any_.__signature__ = inspect.signature(builtins.any)
all_.__signature__ = inspect.signature(builtins.all)
BUILTINS.update({builtins.any: any_, builtins.all: all_, builtins.min: min_, builtins.max: max_})

callable_ = _overload(builtins.callable)
sorted_ = _overload(builtins.sorted)
reversed_ = _overload(builtins.reversed)


def type_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``type``: the builtin itself on Python values (and its 3-argument
    form); the type of the value a staged tensor or a stand-in object stands for otherwise."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Staged | Standin):
        return stage_operator("type_", args[0])
    return builtins.type(*args, **kwargs)


BUILTINS[builtins.type] = type_


def class_of(x: Any) -> Any:
    """``x.__class__`` (converted): ``type(x)`` of what a staged value stands for
    (``np.ndarray``, ``np.float64``, ``int``...), as ``type_``; the attribute itself otherwise
    (a stand-in's is its user object's class). A staged value's own class is autostage's."""
    if isinstance(x, Staged):
        return stage_operator("type_", x)
    return x.__class__


_CONVERSIONS = {"s": builtins.str, "r": builtins.repr, "a": builtins.ascii}


def field(value: Any, conversion: str, spec: Any) -> Any:
    """A field ``{value!conversion:spec}`` of an f-string (converters/string_formatting.py):
    its text on Python values; staged ones go to the runtime (a template formatted when the
    print, raise or assert using it runs)."""
    if isinstance(spec, Staged) or (is_tracing() and holds_staged(value)):
        return stage_operator("field", value, conversion, spec)
    return format(_CONVERSIONS[conversion](value) if conversion else value, spec)


def str_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``str``: ``str(x)`` is the f-string field ``{x!s}``."""
    if any_staged(args) or (kwargs and any_staged(kwargs.values())):
        return stage_operator("str_", *args, **kwargs)
    if len(args) == 1 and not kwargs:
        return field(args[0], "s", "")  # (a tuple holding staged values)
    return builtins.str(*args, **kwargs)


def repr_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``repr``: the f-string field ``{obj!r}``."""
    if any_staged(args):
        return stage_operator("repr_", *args, **kwargs)
    if len(args) == 1 and not kwargs:
        return field(args[0], "r", "")
    return builtins.repr(*args, **kwargs)


def format_(*args: Any, **kwargs: Any) -> Any:
    """Overload of builtin ``format``: the f-string field ``{value:format_spec}``."""
    if any_staged(args):
        return stage_operator("format_", *args, **kwargs)
    if 1 <= len(args) <= 2 and not kwargs:
        return field(args[0], "", args[1] if len(args) == 2 else "")
    return builtins.format(*args, **kwargs)


for _overload_, _builtin in ((str_, builtins.str), (repr_, builtins.repr),
                             (format_, builtins.format)):
    try:
        _overload_.__signature__ = inspect.signature(_builtin)
    except ValueError:  # (str has none to show)
        pass
BUILTINS.update({builtins.str: str_, builtins.repr: repr_, builtins.format: format_})


def fstring(*pieces: Any) -> Any:
    """An f-string of its ``pieces`` (literal text and ``field`` results), joined."""
    if any_staged(pieces):
        return stage_operator("fstring", *pieces)
    return "".join(pieces)


def percent_format(fmt: str, values: Any) -> Any:
    """``fmt % values`` for a string literal ``fmt`` (converters/string_formatting.py): Python's
    ``%`` on Python values; with staged values a template formatted when it is printed, raised
    or returned (CPython's ``%d`` would replace a staged value's own error with "a real number
    is required")."""
    if is_tracing() and holds_staged(values):
        return stage_operator("percent_format", fmt, values)
    return fmt % values


def str_format(fmt: str, /, *args: Any, **kwargs: Any) -> Any:
    """``fmt.format(*args, **kwargs)`` (a bound ``str.format``, calls.py): with staged values a
    template, as an f-string's."""
    if is_tracing() and (holds_staged(args) or holds_staged(kwargs)):
        return stage_operator("str_format", fmt, *args, **kwargs)
    return fmt.format(*args, **kwargs)
