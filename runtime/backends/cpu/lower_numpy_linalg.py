"""CPU lowering of ``numpy_linalg``: NumPy's own function, called through ``numba.objmode``.

Numba's ``np.linalg`` is not NumPy's: it calls LAPACK through SciPy, and on random matrices its
``inv``, ``pinv`` and (from 8x8) ``solve``, ``det``, ``cholesky`` differed from NumPy's in the
last bits, and a 200x200 ``svd`` in the last bits of every factor; ``eig`` of a real matrix
raises where NumPy returns complex eigenvalues. So each op is one call of a small njit helper
that enters Python (objmode), runs the NumPy function on the operands and returns its arrays as
C-contiguous arrays of the inferred types (0-d results as scalars): the values, and the errors
(``LinAlgError('Singular matrix')``, NumPy's shape errors) are NumPy's. A call costs 1.5-3 us
more than NumPy's own (3x3 ``solve`` in a staged loop: 5.7 us, NumPy from Python 4.1 us, Numba's
inexact one 1.0 us; 200x200: 290 us against 287 us), objmode's boxing of arguments and results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import Emitter, lowering, objmode_type
from autostage.runtime.ops import numpy_linalg as linalg_op

_IMPORT = "import autostage.runtime.backends.cpu.lower_numpy_linalg as cpu_linalg"


@dataclass(frozen=True)
class Site:
    """A call site: NumPy's function and keyword arguments, the dtypes of the 0-d operands (which
    arrive from compiled code as Python numbers), and the note and location of its errors (added
    here as the interpreter adds them, see ``checks.fail``)."""

    function: Callable
    kwargs: dict
    scalars: tuple[tuple[int, np.dtype], ...]
    quiet: bool  # may warn (float overflow in a product, a division): run it with errors ignored
    note: str
    loc: ir.Location | None


# key -> Site, filled when a module's source is generated (in every process, also when the
# compiled code then comes from Numba's cache); the key is a hash of the content, the same in
# every process (kwargs may hold values without a literal: inf, nan).
CALLS: dict[int, Site] = {}
# The functions that evaluate their errors under their own np.errstate (never warn).
_SILENT = frozenset(("linalg.solve", "linalg.inv", "linalg.det", "linalg.slogdet",
                     "linalg.cholesky", "linalg.qr", "linalg.eigh", "linalg.eigvalsh",
                     "linalg.eig", "linalg.eigvals", "linalg.svd", "linalg.svdvals",
                     "linalg.lstsq"))


def call(key: int, operands: tuple) -> tuple:
    """Runs from compiled code (in objmode): NumPy's function of call site ``key`` on
    ``operands``, errors ignored (compiled code never warns); its arrays C-contiguous, its 0-d
    results NumPy scalars. NumPy's exception gets the site's note."""
    site = CALLS[key]
    if site.scalars:
        operands = list(operands)
        for i, dtype in site.scalars:
            operands[i] = np.asarray(operands[i], dtype)
    try:
        if site.quiet:
            with np.errstate(all="ignore"):
                found = site.function(*operands, **site.kwargs)
        else:
            found = site.function(*operands, **site.kwargs)
    except Exception as error:
        error.add_note(site.note)
        setattr(error, run_errors.LOCATION_ATTR, site.loc)
        raise
    if not isinstance(found, tuple):
        return (np.ascontiguousarray(found) if type(found) is np.ndarray and found.ndim
                else np.asarray(found)[()],)
    return tuple(np.ascontiguousarray(v) if np.ndim(v) else np.asarray(v)[()] for v in found)


@lowering("numpy_linalg")
def lower_numpy_linalg(op: ir.Op, em: Emitter) -> None:
    emit_call(op, em, op.attrs["function"], op.attrs["kwargs"])


def emit_call(op: ir.Op, em: Emitter, function: str, kwargs: tuple) -> None:
    """Emits ``op``'s results as NumPy's ``function`` (a key of ``ops.numpy_linalg.FUNCTIONS``)
    with ``kwargs`` (``(name, value)`` pairs) on its operands, called through objmode."""
    em.module_line("cpu_linalg", _IMPORT)
    em.use_objmode()
    params = [f"a{i}" for i in range(len(op.operands))]
    outs = [f"r{i}" for i in range(len(op.results))]
    declared = ", ".join(f"{r}={objmode_type(v.type)}" for r, v in zip(
        outs, op.results, strict=True))
    packed = "(" + "".join(f"{p}, " for p in params) + ")"
    ranks = repr((function, kwargs, [(v.type.dtype.name, v.type.ndim)
                                     for v in op.operands + op.results]))
    note = run_errors.note_for(op, em.value_names())
    # The helper is shared by the calls of the same function, arguments and types; the site's
    # key is an int64 argument (a literal would compile a helper per site).
    site = int(hashlib.sha256(f"{ranks}|{note}".encode()).hexdigest()[:15], 16)
    CALLS[site] = Site(linalg_op.FUNCTIONS[function][0], dict(kwargs),
                       tuple((i, v.type.dtype) for i, v in enumerate(op.operands)
                             if v.type.ndim == 0), function not in _SILENT, note, op.loc)
    helper = em.helper(f"linalg_{hashlib.sha256(ranks.encode()).hexdigest()[:16]}", (
        f"@numba.njit(**JIT_IO)\ndef {{name}}(site, {', '.join(params)}):\n"
        f"    with numba.objmode({declared}):\n"
        f"        {', '.join(outs)}, = cpu_linalg.call(site, {packed})\n"
        f"    return {', '.join(outs)},\n"))
    results = [em.name(v) for v in op.results]
    args = "".join(f", {em.name(v)}" for v in op.operands)
    em.line(f"{', '.join(results)}, = {helper}(np.int64({site}){args})")
