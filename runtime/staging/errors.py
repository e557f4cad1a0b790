"""Staging errors: what went wrong while staging control flow, named in the user's terms.

Every message names the variable (or construct) and the user's file and line, found with
``tracing.user_location()`` (converted branch and loop functions run inside the user's lines, so
the innermost user frame is the statement being staged). Each class also subclasses the builtin
exception it refines, so ``except TypeError`` in user code still catches a staging type error.
"""

from __future__ import annotations

import dis
from collections.abc import Callable

from autostage.runtime import ir, tracing
from autostage.runtime.staging import python_state
from autostage.runtime.tensor import StagingTypeError

__all__ = [
    "StagingError", "StagingTypeError", "StagingValueError", "StagingUnboundError",
    "PythonSideEffectError", "location", "at", "param_names", "describe",
]

StagingError = tracing.StagingError


class StagingValueError(StagingError, ValueError):
    """A staged value cannot be used the way the code uses it.

    Example: ``while x:`` where ``x`` is a staged ``f32[?]`` vector (Python's truth value of an
    array with several elements is ambiguous). Fix: ``while np.any(x):`` or ``while x[0] > 0:``.
    """


class AlwaysRaisesError(StagingValueError):
    """Both branches of a staged ``if`` (or both operands of a staged conditional expression)
    raise while tracing: the values after it have no type. Fix: raise after the ``if``. A trace
    that knows argument sizes (``static_sizes``) traces again without them instead, since the
    sizes alone may make both raise (an index out of range in code the call never runs)."""


class StagingUnboundError(StagingError, UnboundLocalError):
    """A variable is assigned on some paths of staged control flow only, and used after it.

    Example: ``if x > 0: y = 1`` then ``return y`` with ``x`` staged: at run time ``y`` may not
    exist. Fix: assign ``y`` on every path (``y = 0`` before the ``if``, or an ``else:``).
    """


class PythonSideEffectError(StagingError, RuntimeError):
    """Python code inside a staged branch or loop body changed a Python object.

    Both branches of a staged ``if`` (and a loop body, once or a few times) run at trace time,
    not at run time, so the change would happen regardless of the data. Example:
    ``if x > 0: seen.extend([x])``. Fix: use a list assigned before the ``if`` and ``append``
    to it (it becomes a tensor list), or compute the value with ``np.where``.
    """


class IrreversibleSideEffectError(PythonSideEffectError):
    """An iterator that cannot be put back (a generator, ``itertools.count``...) moved while a
    staged branch or loop was traced. Unlike other refusals of an attempt to stage a loop, this
    one is not followed by running the loop as Python: the items it read are gone."""


def refuse_read_only_write(e: BaseException) -> None:
    """Raises a ``PythonSideEffectError`` for ``e``, NumPy's error for a write into an array
    that a staged branch or loop body being traced reaches (``python_state.recording`` makes
    them read-only): the write would happen once, at trace time."""
    names = python_state.read_only_write(e)
    if names is None:
        return
    shown = ", ".join(f"'{n}'" for n in names[:3]) + (", ..." if len(names) > 3 else "")
    raise PythonSideEffectError(
        f"an array that exists before a staged branch or loop ({shown}) is written in place "
        f"inside it{at(tracing.traceback_location(e.__traceback__))} by code that is not "
        "staged (an item or attribute target such as `d['a'][0] += 1` or `self.a[i] = v`, a "
        "view, a NumPy `out=`): it would run once, when the branch or loop is traced, whatever "
        "the data. Compute the new array in the function (np.where, or a copy written with "
        "`b = a.copy()` then `b[i] = v` inside the loop) and store it after the branch or "
        "loop, or make the array in the function and write it through its own variable") from None


def location() -> ir.Location | None:
    """The user's file and line being staged now."""
    return tracing.user_location()


at = tracing.at  # `` at file:line`` for messages (empty when no user frame is known)


def param_names(fn: Callable | None, skip: int = 0) -> tuple[str, ...]:
    """The parameter names of a converted branch/loop function: the names of its state."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    return tuple(code.co_varnames[skip:code.co_argcount])


def output_names(fn: Callable | None, n: int) -> tuple[str, ...] | None:
    """The names a converted branch function returns (``return (x, y)``), read from its
    bytecode: a branch of a statement whose variables are not inputs takes no parameters, yet
    returns them. None when they cannot be read."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    loads: list[str] = []
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK", "LOAD_CLOSURE"):
            loads.append(ins.argval)
        elif ins.opname == "BUILD_TUPLE" and ins.argval == n and len(loads) >= n:
            return tuple(loads[-n:])
        elif ins.opname in ("RETURN_CONST",) and n == 0:
            return ()
        else:
            loads = [] if ins.opname not in ("NOP", "CACHE") else loads
    return None


def describe(name: str) -> str:
    """How a message refers to a state variable (the return lowering's flag has no user name)."""
    if name.startswith("retval_"):
        return "the return value"
    if name.startswith("do_return"):
        return "the 'return happened' flag"
    return f"variable {name!r}"
