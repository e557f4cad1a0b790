"""``raise``: raises, at run time, an exception like one raised while tracing.

A staged branch (or a function whose trace raised after ops with effects) that raised a user
exception while it was traced must raise it whenever it runs, in program order; the staging
helpers that emit this op live in ``runtime/staging/raises.py``. attrs: ``exception`` (the
instance raised while tracing); a new exception like it (``fresh``: its type, arguments and
attributes) is raised each time, and ``formats`` (optional): the arguments made from staged
values, ``(index, template)``, each rendered from the op's operands (``io.render``) when it is
raised.
"""

from __future__ import annotations

from autostage.runtime import op_registry
from autostage.runtime.ops.io import render


def arguments(op, values: tuple) -> tuple:
    """The arguments of the exception ``op`` raises, given its operands' ``values``."""
    args = list(op.attrs["exception"].args)
    for index, template in op.attrs.get("formats", ()):
        args[index] = render(template, values)
    return tuple(args)


def fresh(exc: BaseException, args: tuple) -> BaseException:
    """A new exception like ``exc`` (the one raised while tracing), with arguments ``args``.

    An exception class with its own ``__init__`` is not called again with ``exc.args``: those
    are what its ``__init__`` passed on, not what it was given (``BadInput("negative",
    code=3)`` whose ``__init__`` calls ``super().__init__(f"[E{code}] {msg}")`` would become
    ``BadInput("[E3] negative")``: another message, ``code`` 1, or a TypeError for a required
    parameter). So it is made as that ``__init__`` left ``exc``: its arguments and attributes,
    and the cause of ``raise ... from cause`` (a fresh one too) or the ``from None``. Notes
    (autostage's, added while tracing) are not copied.
    """
    kind = type(exc)
    if _init_is_builtin(kind):
        new = kind(*args)
    else:
        new = kind.__new__(kind, *args)
        new.args = args
    for name, value in attributes(exc).items():
        setattr(new, name, value)
    if exc.__cause__ is not None:
        new.__cause__ = fresh(exc.__cause__, exc.__cause__.args)
    new.__suppress_context__ = exc.__suppress_context__
    return new


def made_by_its_arguments(exc: BaseException) -> bool:
    """Whether ``type(exc)(*exc.args)`` is ``exc`` again: no attributes, no ``from``."""
    return not attributes(exc) and exc.__cause__ is None and not exc.__suppress_context__


def attributes(exc: BaseException) -> dict:
    """The attributes of ``exc`` a fresh one like it gets: the program's (not its notes, nor the
    failing op's location, which autostage adds when the new one is raised), in its
    ``__dict__`` and in the slots of its classes (NumPy's ``AxisError`` keeps ``axis``, which
    its message is made from, in one)."""
    found = {k: v for k, v in vars(exc).items() if k not in _ADDED}
    for kind in type(exc).__mro__:
        slots = vars(kind).get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            name = f"_{kind.__name__.lstrip('_')}{slot}" if slot.startswith("__") and not (
                slot.endswith("__")) else slot  # (a private name, as Python mangles it)
            if name not in found and slot not in ("__dict__", "__weakref__") and hasattr(
                    exc, name):
                found[name] = getattr(exc, name)
    return found


_ADDED = frozenset({"__notes__", "__autostage_location__"})


def _init_is_builtin(kind: type) -> bool:
    """Whether the ``__init__`` of exception class ``kind`` is a builtin exception's."""
    owner = next(k for k in kind.__mro__ if "__init__" in vars(k))
    return owner.__module__ == "builtins"


def _infer_raise(operand_types: tuple, attrs: dict) -> tuple:
    return ()


def _evaluate_raise(op, values: tuple, run) -> tuple:
    raise fresh(op.attrs["exception"], arguments(op, values))


op_registry.register(
    "raise", _infer_raise, _evaluate_raise, effects=op_registry.Effects(raises=True),
    raises=lambda op: (type(op.attrs["exception"]),), vjp=op_registry.NO_GRADIENT,
    doc="operands: the values of its formatted arguments; attrs: exception (the instance "
        "raised while tracing), formats (optional); raises a new one like it at run time")
