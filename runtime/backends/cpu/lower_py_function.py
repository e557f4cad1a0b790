"""CPU lowering of ``py_function``: a call back into Python through ``numba.objmode``.

Compiled code cannot hold a Python function, and one generated module serves every trace with
its source, in every process (it is cached on disk by content), so the source never names the
function. Instead, the runner binds its module's live callables table (``ir.Module.callables``)
for the time of each run (``running``: a per-thread stack, since ``fn`` may itself run staged
code), and the generated callback names its *site*: a key derived from the op's plain data
(table index, argument template, result types, name, line), the same in every process, under
which lowering registers what the call needs (``SITES``). The callback is an njit helper per
site, as ``lower_io``'s, which keeps objmode out of the caller's loops and branches (bound from a
shared module, ``shared_helpers``, as every self-contained helper is)::

    @numba.njit(**JIT_IO)
    def h_py_function_5d41402abc4b2a76(a0):
        # py_function(model.log_step) at /home/me/model.py:12
        with numba.objmode(r0="float64[::1]"):
            r0, = cpu_pyfn.call('5d41402abc4b2a76', (np.float64(a0),))
        return r0

Values cross boxed (0-d ones as Python scalars), so the call re-wraps each 0-d operand in its
dtype first, and the results come back as the spec's exact types (``ops/py_function.py``). An
error leaving the call gets the interpreter's note naming the op and the user's line.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import (
    Emitter,
    is_scalar,
    lowering,
    np_dtype,
    objmode_type,
)
from autostage.runtime.ops import py_function as py_function_op

_IMPORT = "import autostage.runtime.backends.cpu.lower_py_function as cpu_pyfn"
_bound = threading.local()  # .tables: the callables tables of the runs in progress, innermost last


class Site(NamedTuple):
    """What one ``py_function`` op's callback needs besides the live function."""

    index: int        # into the bound callables table
    template: tuple   # the op's ``args``
    types: tuple      # its ``result_types``
    sequence: bool
    name: str
    where: str        # the user's file and line
    loc: ir.Location | None
    note: str         # the interpreter's note for an error in the op


SITES: dict[str, Site] = {}


def running(table: list, run: Callable[[list], tuple], args: list) -> tuple:
    """``run(args)`` with ``table`` as the callables its ``py_function`` ops call."""
    tables = _tables()
    tables.append(table)
    try:
        return run(args)
    finally:
        tables.pop()


def _tables() -> list[list]:
    tables = getattr(_bound, "tables", None)
    if tables is None:
        tables = _bound.tables = []
    return tables


def call(site: str, values: tuple) -> tuple:
    """Runs the ``py_function`` op of ``site`` on its operands' values (the callback)."""
    s = SITES[site]
    tables = _tables()
    if not tables:
        raise RuntimeError(f"{s.where}: py_function({s.name}) ran outside a run of its compiled "
                           "function, with no Python functions bound (a bug in autostage)")
    try:
        return py_function_op.call(tables[-1][s.index], s.template, values, s.types, s.sequence,
                                   s.name, s.where, lambda: s.note)
    except Exception as e:  # results that do not fit (fn's own errors are noted already)
        if not getattr(e, "__notes__", None):
            e.add_note(s.note)
            setattr(e, run_errors.LOCATION_ATTR, s.loc)
        raise


@lowering("py_function")
def _py_function(op: ir.Op, em: Emitter) -> None:
    attrs = op.attrs
    site = Site(attrs["fn"], attrs["args"], attrs["result_types"], attrs["sequence"],
                attrs["name"], str(op.loc) if op.loc is not None else "<unknown location>",
                op.loc, run_errors.note_for(op, em.value_names()))
    key = hashlib.sha256(repr(site).encode()).hexdigest()[:16]
    if SITES.setdefault(key, site) != site:  # pragma: no cover - a 64-bit hash collision
        raise AssertionError(f"two py_function sites share the key {key}")
    em.module_line("cpu_pyfn", _IMPORT)
    em.use_objmode()
    params = [f"a{i}" for i in range(len(op.operands))]
    retyped = [_retyped(p, v.type) for p, v in zip(params, op.operands, strict=True)]
    values = f"({', '.join(retyped)}{',' * (len(retyped) == 1)})"
    outs = [f"r{i}" for i in range(len(op.results))]
    declared = ", ".join(f'{r}={objmode_type(v.type)}' for r, v in zip(
        outs, op.results, strict=True))
    callback = f"cpu_pyfn.call({key!r}, {values})"
    body = f"        {', '.join(outs)}, = {callback}\n" if outs else f"        {callback}\n"
    returned = f"    return {', '.join(outs)}\n" if outs else ""
    helper = em.helper(f"py_function_{key}", (
        f"@numba.njit(**JIT_IO)\ndef {{name}}({', '.join(params)}):\n"
        f"    # py_function({_braced(site.name)}) at {_braced(site.where)}\n"
        f"    with numba.objmode({declared}):\n" + body + returned))
    called = f"{helper}({', '.join(em.name(v) for v in op.operands)})"
    if not outs:
        em.line(called)
    else:
        em.line(f"{', '.join(em.name(v) for v in op.results)} = {called}")


def _braced(text: str) -> str:
    """``text`` for a helper's source, which ``Emitter.helper`` formats."""
    return text.replace("{", "{{").replace("}", "}}")


def _retyped(param: str, type_: object) -> str:
    """A 0-d operand re-wrapped in its dtype (objmode hands it over as a Python scalar)."""
    if is_scalar(type_):
        return f"np.bool_({param})" if type_.dtype == np.bool_ else \
            f"{np_dtype(type_.dtype)}({param})"
    return param
