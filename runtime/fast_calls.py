"""The fast path of a staged call: a check-and-run built for one trace and one kind of call.

A repeated call whose arguments are plain arrays or NumPy scalars, given positionally, of the
types, dtypes and ranks (and known sizes: ``static_sizes``) of the trace it ran last, needs none
of the full path's work (binding, flattening, keying, looking up). ``fast_path`` builds a
function for exactly that trace: straight-line Python, one comparison per fact and no loop over
the arguments (a loop over ten of them cost ~2.5 us per call, more than the compiled code's own
call), generated from a template as the converters generate code. It calls the compiled njit
function itself when the runner allows (``_direct``), so that a call is the checks plus Numba's
dispatcher; values a trace reads through objects (a model's weights) are read, checked and passed
after the arguments, as the runner would. Anything the checks do not cover returns ``MISS``,
and the caller takes the full path.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import fp_state, static_sizes
from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.types import TensorType

MISS = object()  # what a fast path returns for arguments it does not cover
_FIRST = operator.itemgetter(0)  # the finish of a single result Numba returns in a tuple

_TEMPLATE = '''\
def fast(given):
    if len(given) != {count} or current() is not accepted[0]:
        return MISS
    {names}, = given
    if {mismatch}:
        return MISS
{run}
'''
_READ_DIRECT = '''\
    implicit = read(given, ())
    if implicit is None:
        return MISS
    {implicit}, = implicit
'''
_RUN_DIRECT = '''\
    try:
        results = dispatcher({passed})
    except Exception as e:
        error = failed(e)
        if error is e:
            raise
        raise error from None
    concrete.used = True
    return {finish}'''
_RUN = '''\
    return concrete.run([{names}], None)'''
_RUN_READ = '''\
    implicit = read(given, ())
    if implicit is None:
        return MISS
    return concrete.run([{names}], implicit)'''


def fast_path(concrete: ConcreteFunction, args: tuple, leaves: list
              ) -> Callable[[tuple], Any] | None:
    """A check-and-run for calls like this one, or None when ``concrete`` has frozen arrays to
    guard or the arguments are not plain arrays or NumPy scalars given positionally. A trace
    that reads values through objects (``captures.reader``: a model's weights) reads and checks
    them as the full path does, then runs. The caller makes sure no global or closure value is
    part of the key (the reads see an empty environment)."""
    if concrete.guards or len(leaves) != len(args) or not args:
        return None
    if not all(leaf is arg and (type(arg) is np.ndarray or isinstance(arg, np.generic))
               for leaf, arg in zip(leaves, args, strict=True)):
        return None
    names = [f"a{i}" for i in range(len(args))]
    scope: dict[str, Any] = {"MISS": MISS, "current": fp_state.current,
                             "accepted": fp_state.accepted, "concrete": concrete}
    tests = []
    for name, part, arg in zip(names, concrete.key[1:], args, strict=False):
        tests += _tests(name, arg, static_sizes.shape(part, arg.ndim), scope)
    direct = _direct(concrete)
    implicit = [] if concrete.read is None else concrete.read(args, ())
    passed = names
    if direct is not None and implicit is not None:
        scope["dispatcher"], scope["failed"], scope["finish"], scalars = direct
        # Values read through objects (a model's weights) follow the arguments, as in the
        # runner; each was checked by ``read`` to be an array or a NumPy scalar.
        extra = [f"i{k}" for k in range(len(implicit))]
        # A 0-d array given for a scalar parameter is passed as its scalar, as the runner does.
        passed = [f"{name}[()]" if i in scalars and type(value) is np.ndarray else name
                  for i, (name, value) in enumerate(zip(names + extra, [*args, *implicit],
                                                        strict=True))]
        run = _RUN_DIRECT
        if extra:
            scope["read"] = concrete.read
            run = _READ_DIRECT.format(implicit=", ".join(extra)) + _RUN_DIRECT
    elif concrete.read is not None:
        scope["read"], run = concrete.read, _RUN_READ
    else:
        run = _RUN
    source = _TEMPLATE.format(count=len(args), names=", ".join(names),
                              mismatch=" or ".join(tests),
                              run=run.format(names=", ".join(names), passed=", ".join(passed),
                                             finish=_finish(concrete, scope)))
    exec(compile(source, f"<autostage fast path of {concrete.function.name}>", "exec"), scope)
    return scope["fast"]


def _tests(name: str, arg: np.ndarray | np.generic, sizes: tuple, scope: dict) -> list[str]:
    """The comparisons that tell an argument unlike ``arg`` (as ``name``), each one true for a
    mismatch; the values they compare with go into ``scope``."""
    scope[f"{name}_type"] = type(arg)
    tests = [f"type({name}) is not {name}_type"]
    if type(arg) is not np.ndarray:  # a NumPy scalar: its type is its dtype
        return tests
    scope[f"{name}_dtype"] = arg.dtype
    tests.append(f"{name}.dtype is not {name}_dtype")
    if all(size is not None for size in sizes):  # the whole shape is known (ranks with it)
        tests.append(f"{name}.shape != {tuple(sizes)!r}")
        return tests
    tests.append(f"{name}.ndim != {arg.ndim}")
    tests += [f"{name}.shape[{axis}] != {size}" for axis, size in enumerate(sizes)
              if size is not None]
    return tests


def _finish(concrete: ConcreteFunction, scope: dict) -> str:
    """The expression a direct run returns: for a single 0-d result, its NumPy scalar made in
    line (what the runner's converter does: Numba returns a Python scalar); else
    ``finish(results)``."""
    (result_type, *more) = concrete.module.main.result_types or (None,)
    outputs = concrete.outputs
    if more or not (outputs.single and outputs.constants[0] is None) or not (
            isinstance(result_type, TensorType) and result_type.ndim == 0):
        # (``results[0]`` in line where finish is that: a call less, ~30 ns)
        return "results[0]" if scope.get("finish") is _FIRST else "finish(results)"
    scope["scalar_type"] = result_type.dtype.type
    return "scalar_type(results[0])"


def _direct(concrete: ConcreteFunction) -> tuple[Callable, Callable[[Exception], Exception],
                                                  Callable[[tuple], Any], frozenset] | None:
    """How to call ``concrete``'s compiled njit function itself (Numba's dispatcher unboxes the
    arguments, and compiles another specialisation for another memory layout): ``(dispatcher,
    failed(e) -> the exception to raise, finish(results) -> the value returned, the positions
    of scalar parameters)``; None when the runner needs more (Variables, Python-typed or
    identity-kept results) or is not compiled."""
    entry = getattr(concrete.prepared_runner(), "entry", None)
    if entry is None or concrete.outputs.python_types is not None:
        return None
    dispatcher, convert, failed, scalars = entry
    outputs = concrete.outputs
    if outputs.single and outputs.constants[0] is None and convert is None:
        return dispatcher, failed, _FIRST, scalars
    build = outputs.build
    if convert is None:
        return dispatcher, failed, build, scalars
    return dispatcher, failed, lambda results: build(convert(results)), scalars
