"""Subscript reads and writes, and the in-place operators of augmented subscript assignment.

The slices converter rewrites ``x[i] = v`` to ``x = setitem(x, i, v)`` and ``x[i] op= v`` to
``x = setitem(x, i, <iop>(x[i], v))``, where ``<iop>`` is the ``operator`` module's in-place name
for the operator: iadd (+=), isub (-=), imul (*=), imatmul (@=), itruediv (/=), ifloordiv (//=),
imod (%=), ipow (**=), ilshift (<<=), irshift (>>=), iand (&=), ixor (^=), ior (|=). Each is
exactly ``a op= b`` (``__iop__``, falling back to ``__op__``/``__rop__``), so mutables update in
place. A staged container or index (or, for the in-place operators, either operand) goes to the
runtime under the operator's name.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from autostage.operators import sole_holder
from autostage.runtime import Staged, in_staged_region, stage_operator


def getitem(target: Any, key: Any) -> Any:
    """``target[key]``: the converted form of reads whose key is computed (``x[i]``, ``x[i:j]``).

    Runs Python's ``target[key]`` first, so results and exceptions are Python's and objects that
    take staged keys themselves (tensors, tensor lists, user classes wrapping them) are asked
    first; this also costs no check when nothing is staged. Only when that raised and the
    container or the key (a slice bound, a tuple entry) is staged does the runtime stage it: a
    NumPy array or a list indexed by a staged key (``np.eye(k)[y]``) cannot run it itself.
    """
    try:
        return target[key]
    except Exception:
        if not (isinstance(target, Staged) or _is_staged_key(key)):
            raise
    return stage_operator("getitem", target, key)  # outside the handler: no chained NumPy error


def _is_staged_key(key: Any) -> bool:
    """Whether a key, a slice's bounds or a tuple key's entries (or their bounds) are staged."""
    if isinstance(key, slice):
        return (isinstance(key.start, Staged) or isinstance(key.stop, Staged)
                or isinstance(key.step, Staged))
    if isinstance(key, tuple):
        return any(_is_staged_key(part) for part in key)
    return isinstance(key, Staged)


def setitem(target: Any, key: Any, value: Any) -> Any:
    """``target[key] = value``; returns ``target`` (the same object on the Python path).

    A NumPy array made at trace time (``out = np.zeros((3, 4))``) written with a staged value or
    at a staged index is staged by the runtime, as a copy the converted code's name then holds
    (``x = setitem(x, ...)``), when the user's variable is its only holder
    (``sole_holder``, which follows it through converted loops and branches): then no one
    else could see the write the copy takes. Else the runtime refuses the write.
    """
    # (an array at a staged index first: `counts[labels[i]] = 1.0` was refused as shared)
    if type(target) is np.ndarray and (isinstance(value, Staged) or _is_staged_key(key)
                                       or in_staged_region()):
        # (in a staged branch or loop body, even a write of Python values is staged: done now,
        # at trace time, it would change the array on every path, once)
        only_name = sole_holder.held_by_the_variable_only(target)  # (a statement: no call's
        # arguments on the stack hold it meanwhile)
        return stage_operator("setitem", target, key, value, only_name=only_name)
    if isinstance(target, Staged) or isinstance(key, Staged):
        return stage_operator("setitem", target, key, value)
    target[key] = value
    return target


def setitem_of(target: Any, key: Any, value: Any) -> None:
    """``target[key] = value`` where ``target`` is not a local name (``z[1][2] = v``,
    ``self.w[i] = v``, ``z.T[0] = v``): Python's own assignment, except into a NumPy array with a
    staged value or index, or inside a staged branch or loop, which the runtime refuses (staged
    code writes an array through its name; done at trace time, the write would happen once, on
    every path)."""
    if type(target) is np.ndarray and (isinstance(value, Staged) or _is_staged_key(key)
                                       or in_staged_region()) or (
            isinstance(target, Staged) and not hasattr(target, "__setitem__")):
        stage_operator("setitem_of", target, key, value)
    target[key] = value


def _in_place(name: str, symbol: str) -> Callable[[Any, Any], Any]:
    python_op = getattr(operator, name)

    def in_place_op(a: Any, b: Any, /) -> Any:
        if isinstance(a, Staged) or isinstance(b, Staged):
            return stage_operator(name, a, b)
        if type(a) is np.ndarray and in_staged_region():  # the item x[i] of `x[i] op= v`
            return python_op(a.copy(), b)  # (setitem then stages the write into x)
        return python_op(a, b)

    in_place_op.__name__ = in_place_op.__qualname__ = name
    in_place_op.__module__ = __name__
    in_place_op.__doc__ = f"``a {symbol} b``: returns the new value of ``a``."
    return in_place_op


iadd = _in_place("iadd", "+=")
isub = _in_place("isub", "-=")
imul = _in_place("imul", "*=")
imatmul = _in_place("imatmul", "@=")
itruediv = _in_place("itruediv", "/=")
ifloordiv = _in_place("ifloordiv", "//=")
imod = _in_place("imod", "%=")
ipow = _in_place("ipow", "**=")
ilshift = _in_place("ilshift", "<<=")
irshift = _in_place("irshift", ">>=")
iand = _in_place("iand", "&=")
ixor = _in_place("ixor", "^=")
ior = _in_place("ior", "|=")
