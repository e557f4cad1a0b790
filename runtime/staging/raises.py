"""Exceptions raised inside a staged branch: the ``raise`` op.

When tracing one branch of a staged ``if`` raises (``if x < 0: raise ValueError(...)``), Python
would raise only on the calls where that branch runs. So the branch becomes a region holding a
``raise`` op (``runtime/ops/exceptions.py``: it raises a fresh exception of the same type and
arguments at run time) and
placeholders (``undef``) of the other branch's results, which are never read. Staging errors
(autostage's own) are not caught: they are about the program, not its data.

A staged function whose trace fails with a user exception after ops with effects (a ``print``,
a staged call, a loop...) or writes into its array arguments ends with a ``raise`` op instead
(``finish_with``): Python prints (or writes), then raises, and so does every call of the staged
function.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from autostage.runtime import argument_writes, array_shapes, dtype_rules, ir, tracing
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.ops import exceptions
from autostage.runtime.staging import errors, text, values
from autostage.runtime.staging.tensor_lists import TensorList
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import ListType


def trace_branch(fn: Callable[[], object]) -> tuple[object, BaseException | None]:
    """Runs ``fn`` (a branch being traced); a user exception becomes a ``raise`` op."""
    try:
        return fn(), None
    except tracing.StagingError:
        raise
    except RecursionError as e:
        if not tracing_recursed(e):
            return _staged(e)
        raise tracing.StagingError(
            f"Python's recursion limit was reached while tracing{errors.at()}: a function that "
            "recurses on staged values runs inline here (a method of an object made in the "
            "staged function, or a call with list or dict arguments), so its recursion cannot "
            "end at trace time; pass the object in as an argument (its methods then become "
            "staged calls, which may recurse), or pass arrays instead of lists") from e
    except (Exception, SystemExit) as e:  # the branch raises whenever it runs: stage that
        errors.refuse_read_only_write(e)  # (``sys.exit()`` too: it ended the tracing process)
        return _staged(e)


def _staged(e: BaseException) -> tuple[None, BaseException]:
    loc = tracing.traceback_location(e.__traceback__)
    _shapes_at_run_time(e)
    _check_message(e, loc)
    _emit_raise(e, loc)
    return None, e


def _emit_raise(e: BaseException, loc: ir.Location | None) -> None:
    """Emits the ``raise`` op of ``e``; an argument made from staged values (``ValueError(f"bad
    {n}")``: a ``text.Text``) is rendered when it is raised, from the op's operands (attr
    ``formats``: (argument index, its template)), and is an empty string in ``e`` meanwhile."""
    formats, operands, args = [], [], list(e.args)
    for i, arg in enumerate(e.args):
        if isinstance(arg, text.Text):
            formats.append((i, arg.parts_after(len(operands))))
            operands += [t.value for t in arg.tensors]
            args[i] = ""
    attrs: dict = {"exception": e}
    if formats:
        e.args = tuple(args)
        attrs["formats"] = tuple(formats)
    tracing.emit("raise", operands, attrs, loc=loc)


def tracing_recursed(e: BaseException) -> bool:
    """Whether ``e`` is Python's RecursionError (tracing recursed too deep), not one the
    program raises itself: that one is never staged."""
    return isinstance(e, RecursionError) and str(e).startswith(
        "maximum recursion depth exceeded")


def finish_with(e: BaseException, body: ir.Region) -> bool:
    """Ends the function being traced (``body``, its region) with a ``raise`` op of ``e`` if
    ops with effects or writes into array arguments ran before ``e`` was raised, or if its
    message is made from staged values (``raise ValueError(f"bad {n}")``); False
    (nothing emitted) otherwise, or if ``e`` is a staging error (then it is raised as it is).
    Raises StagingTypeError if ``e`` is made of staged values, whatever ran before: raised as it
    is, it would hand the caller symbolic tensors where Python gives their run-time values
    (``raise ValueError(n)``)."""
    from autostage.runtime.passes.analysis import has_effects

    if isinstance(e, tracing.StagingError) or tracing_recursed(e):
        return False
    _shapes_at_run_time(e)
    _check_message(e, tracing.traceback_location(e.__traceback__))
    rendered_later = any(isinstance(arg, text.Text) for arg in e.args)  # (its text: at run time)
    if not (any(has_effects(op) for op in body.ops) or argument_writes.wrote_any()
            or rendered_later) or tracing.current().region is not body:
        return False
    _emit_raise(e, tracing.traceback_location(e.__traceback__))
    return True


def _shapes_at_run_time(e: BaseException) -> None:
    """NumPy's broadcast error names the operands' shapes: where one is known only at run time
    (``(?,3)`` while tracing), the message becomes a text made when it is raised."""
    operands = e.__dict__.pop(dtype_rules.BROADCAST_OPERANDS, None)
    if operands is None or all(None not in v.type.shape for v in operands):
        return
    pieces: list = [dtype_rules.BROADCAST_ERROR]
    for v in operands:
        dims = [array_shapes.dim(Tensor(v), axis) for axis in range(v.type.ndim)]
        pieces.append("(")
        for axis, d in enumerate(dims):
            pieces.append(str(d) if isinstance(d, int) else text.field(d, "", ""))
            if axis < len(dims) - 1 or len(dims) == 1:
                pieces.append(",")
        pieces.append(") ")
    e.args = (text.fstring(*pieces),)


def _mentions_staged(x: object) -> bool:
    if isinstance(x, text.Text):  # (a message made from staged values: rendered when raised)
        return False
    if isinstance(x, Staged):
        return True
    if isinstance(x, (tuple, list)):
        return any(_mentions_staged(v) for v in x)
    return isinstance(x, str) and "<staged " in x


# How CPython's errors name our Text where a str was needed (a join, write(), str + Text).
_STAGED_TEXT = re.compile(r"\bText found\b|\bnot Text\b|\(not \"Text\"\)|'Text'")


def _check_message(e: BaseException, loc: ir.Location | None) -> None:
    """An exception holding a staged value (``raise ValueError(n)``) would carry a symbolic
    tensor, not the run-time value: an error (a message string made from one is rendered when
    it is raised: ``_emit_raise``). So is a builtin's error about our ``Tensor`` class
    (``bytes(x)``: "cannot convert 'Tensor' object to bytes"): the staged value's doing, which
    would otherwise become a raise at run time where Python returns. Likewise for our ``Text``,
    a string made from staged values (``sys.stdout.write(f"{v:.1f} ")``: "write() argument must
    be str, not Text")."""
    try:
        message = str(e)
    except Exception:  # noqa: BLE001 - a broken __str__ (or a staged text): the arguments
        message = ""
    if _STAGED_TEXT.search(message) and type(e) is TypeError:
        where = f" at {loc}" if loc is not None else ""
        raise errors.StagingTypeError(
            f"a string made from a staged value was given to code autostage does not convert"
            f"{where}, which needs its text now ({type(e).__name__}: {message}); the text "
            "exists only when the staged function runs: print it (`print(s, end='')` for "
            "`sys.stdout.write(s)`), or return it") from None
    if "'Tensor'" in message and type(e) in (TypeError, ValueError, AttributeError):
        where = f" at {loc}" if loc is not None else ""
        raise errors.StagingTypeError(
            f"a staged value was given to code autostage does not convert{where}, which "
            f"cannot take it ({type(e).__name__}: {message}): it was given a staged value "
            "where Python gives it the NumPy value; call it on NumPy values outside the "
            "converted function, or use NumPy functions autostage stages") from None
    if _mentions_staged(e.args) or "<staged " in message:
        where = f" at {loc}" if loc is not None else ""
        raise errors.StagingTypeError(
            f"the {type(e).__name__} raised{where} holds a staged value itself (`raise "
            "ValueError(n)`), which would reach the caller as a symbolic tensor: give it a "
            "message string instead, an f-string of the value if need be (`raise "
            "ValueError(f'{n}')`, made when it is raised)") from e
    staged = [k for k, v in exceptions.attributes(e).items()
              if isinstance(v, text.Text) or _mentions_staged(v)]
    if e.__cause__ is not None and (_mentions_staged(e.__cause__.args) or any(
            isinstance(a, text.Text) for a in e.__cause__.args)):
        staged.append("__cause__")
    if staged:  # (a fresh exception gets these attributes as they are: ops/exceptions.fresh)
        where = f" at {loc}" if loc is not None else ""
        raise errors.StagingTypeError(
            f"the {type(e).__name__} raised{where} has an attribute made from a staged value "
            f"({', '.join(repr(k) for k in staged)}), which would reach the caller as a "
            "symbolic value: keep staged values in its message (an f-string, made when it is "
            "raised), or return them instead of raising") from e


def placeholder(value: object, region: ir.Region) -> object:
    """A stand-in for ``value`` in ``region`` (after a raise there, so never read). A value
    the other path assigns only on some paths (``MaybeUnbound``) is assigned on this one: a path
    that raises never reaches a use, so ``if not done: raise E`` after ``if c: r = x; done =
    True`` leaves ``r`` assigned wherever the code goes on."""
    if isinstance(value, (Tensor, values.MaybeUnbound)):
        with tracing.reopen(region):
            (result,) = tracing.emit("undef", (), {"type": value.type})
        if values.is_weak(value):  # (stands for a Python number as the other path's value)
            values.mark_weak(result)
        return TensorList(result) if isinstance(value.type, ListType) else Tensor(result)
    if isinstance(value, tuple):
        return tuple(placeholder(v, region) for v in value)
    return value
