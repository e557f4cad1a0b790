"""The fast path of a staged call: a check-and-run built for one trace and one kind of call.

A repeated call whose arguments are plain arrays or NumPy scalars, given positionally, of the
types, dtypes and ranks (and known sizes: ``static_sizes``) of the trace it ran last, needs none
of the full path's work (binding, flattening, keying, looking up). ``fast_path`` builds a
function for exactly that trace: straight-line Python, one comparison per fact and no loop over
the arguments (a loop over ten of them cost ~2.5 us per call, more than the compiled code's own
call), generated from a template as the converters generate code. It calls the compiled njit
function itself when the runner allows (``_direct``), through a copy of its dispatcher that
never compiles (``strict_dispatch``), so that a call is Numba's own argument typing plus the
tests it does not make (an array's type and known sizes; a scalar's dtype); values a trace
reads through objects (a model's weights) are read, checked and passed after the arguments, as
the runner would. A function writing into its array arguments (``argument_writes``) has its
aliasing tested in line too (a written argument read-only or sharing memory with another:
``MISS``, and the full path runs the call as Python). Anything the checks do not cover returns
``MISS``, and the caller takes the full path.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import captures, fp_state, pytree, static_sizes
from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.types import TensorType

MISS = object()  # what a fast path returns for arguments it does not cover
_FIRST = operator.itemgetter(0)  # the finish of a single result Numba returns in a tuple

_TEMPLATE = '''\
def fast(leaves):
    if len(leaves) != {count} or current() is not accepted[0]:
        return MISS
    {names}, = leaves
{test}
{run}
'''
_TEST = '''\
    if {mismatch}:
        return MISS'''
_TEST_SIZES = '''\
    try:
        if {mismatch}:
            return MISS
    except (TypeError, IndexError):  # len() or shape[k] of a rank the trace does not have
        return MISS'''
_RUN_DIRECT = '''\
    try:
        results = {call}
{refused}    except Exception as e:
        error = failed(e)
        if error is e:
            raise
        raise error from None
    concrete.used = True
    return {finish}'''
_CALL_STRICT = "dispatcher({passed})"
_REFUSED = '''\
    except Refused:  # another dtype, rank, layout or writability: the full path
        catch_up()  # (a layout it compiles is called directly next time)
        return MISS
'''
_CALL_ENTRY = "entry({passed})  # (compiled code: the types are tested above)"
_RUN = '''\
    return concrete.run([{names}], None)'''
_RUN_READ = '''\
    implicit = read(leaves, ())
    if implicit is None:
        return MISS
    return concrete.run([{names}], implicit)'''


def fast_path(concrete: ConcreteFunction, args: tuple, leaves: list
              ) -> Callable[[tuple], Any] | None:
    """A check-and-run for calls like this one, or None when ``concrete`` has frozen arrays to
    guard or the arguments are not plain arrays or NumPy scalars given positionally. A trace
    that reads values through objects (``captures.reader``: a model's weights) reads and checks
    them as the full path does (in line, when it calls the compiled code), then runs. The
    caller makes sure no global or closure value is part of the key (the reads see an empty
    environment)."""
    written = tuple(p for p, _, _ in concrete.function.writes_back)
    if concrete.guards or len(leaves) != len(args) or not args or (
            written and concrete.read is not None):  # (the full path checks their aliasing)
        return None
    if not all(leaf is arg and (type(arg) is np.ndarray or isinstance(arg, np.generic))
               for leaf, arg in zip(leaves, args, strict=True)):
        return None
    names = [f"a{i}" for i in range(len(args))]
    scope: dict[str, Any] = {"MISS": MISS, "current": fp_state.current,
                             "accepted": fp_state.accepted, "concrete": concrete}
    implicit = [] if concrete.read is None else concrete.read(args, ())
    # (the tests below leave dtypes and ranks to the strict dispatcher only where it is called)
    direct = _direct(concrete) if implicit is not None else None
    scalars, entry = frozenset(), None
    if direct is not None:
        strict, scope["failed"], scope["finish"], scalars, scalar_entry = direct
        if len(scalars) == len(args) + len(implicit):  # every value passed a scalar
            entry = scope["entry"] = scalar_entry([v[()] for v in (*args, *implicit)])
        if entry is None:
            scope["dispatcher"], scope["catch_up"], scope["Refused"] = strict()
    tests = []
    for i, (name, part, arg) in enumerate(zip(names, concrete.key[1:], args, strict=False)):
        # Called directly, the strict dispatcher tests an array's dtype and rank itself (the
        # compiled entry nothing: each argument's type, dtype and rank are tested here).
        passed_as = (None if direct is None or entry is not None
                     else "scalar" if i in scalars else "array")
        tests += _tests(name, arg, static_sizes.shape(part, arg.ndim), passed_as, scope)
    tests += _aliasing_tests(names, args, written, scope)
    filled = {"names": ", ".join(names)}
    if direct is not None:
        # Values read through objects (a model's weights) follow the arguments, as in the
        # runner, read and checked in line (``captures.read_code``).
        lines, extra = [], []
        if implicit:
            lines, consts, extra = captures.read_code(*concrete.read.inputs, "MISS", trusted={
                k: "scalar" if len(args) + k in scalars else "array"
                for k in range(len(implicit))})
            scope.update(consts)
        # A 0-d array given for a scalar parameter is passed as its scalar, as the runner does
        # (``read_code`` reads a value's scalar itself).
        passed = [f"{name}[()]" if i in scalars and type(arg) is np.ndarray else name
                  for i, (name, arg) in enumerate(zip(names, args, strict=True))] + extra
        call = (_CALL_STRICT if entry is None else _CALL_ENTRY).format(passed=", ".join(passed))
        run = "\n".join([*lines, _RUN_DIRECT.format(
            call=call, refused=_REFUSED if entry is None else "", finish=_finish(concrete, scope))])
    elif concrete.read is not None:
        scope["read"], run = concrete.read, _RUN_READ.format(**filled)
    else:
        run = _RUN.format(**filled)
    mismatch = " or ".join(tests)
    test = (_TEST_SIZES if "len(" in mismatch or ".shape[" in mismatch else _TEST).format(
        mismatch=mismatch)
    source = _TEMPLATE.format(count=len(args), test=test, run=run, **filled)
    exec(compile(source, f"<autostage fast path of {concrete.function.name}>", "exec"), scope)
    scope["fast"].source = source  # for inspection
    return scope["fast"]


def _tests(name: str, arg: np.ndarray | np.generic, sizes: tuple, passed_as: str | None,
           scope: dict) -> list[str]:
    """The comparisons that tell an argument unlike ``arg`` (as ``name``), each one true for a
    mismatch; the values they compare with go into ``scope``. ``passed_as``: None for the
    runner; "array", or "scalar" (a 0-d array's scalar), for a strict dispatcher, which tests
    an array's dtype and rank itself (and refuses an array for a scalar)."""
    scope[f"{name}_type"] = type(arg)
    tests = [f"type({name}) is not {name}_type"]
    if type(arg) is not np.ndarray:  # a NumPy scalar: its type is its dtype
        return tests
    dtype = f"{name}.dtype is not {name}_dtype"
    known = [f"{name}.shape[{axis}] != {size}" for axis, size in enumerate(sizes)
             if size is not None]
    whole = f"{name}.shape != {tuple(sizes)!r}" if len(known) == len(sizes) else None
    if passed_as != "array":  # (the dispatcher would convert a scalar of another dtype)
        scope[f"{name}_dtype"] = arg.dtype
        tests.append(dtype)
    if passed_as == "scalar":  # (the [()] of an array of rank > 0 is an array)
        return tests
    if passed_as is None:  # the rank too: ranks go with the whole shape
        return [*tests, whole] if whole else [*tests, f"{name}.ndim != {arg.ndim}", *known]
    if len(sizes) == 1 and known:
        return [*tests, f"len({name}) != {sizes[0]}"]  # (~20 ns less than the shape)
    return [*tests, whole] if whole and sizes else tests + known


def _aliasing_tests(names: list[str], args: tuple, written: tuple[int, ...], scope: dict
                    ) -> list[str]:
    """For a function writing into arguments ``written``: one true when such an argument is
    read-only or may share memory with another array argument (the full path runs those calls
    as Python: ``argument_writes.writing_back``)."""
    scope["shares"] = np.may_share_memory
    arrays = [k for k, arg in enumerate(args) if type(arg) is np.ndarray]
    tests = []
    for p in written:
        tests.append(f"not {names[p]}.flags.writeable")
        tests += [f"shares({names[p]}, {names[k]})" for k in arrays
                  if k != p and not (k in written and k < p)]  # (each pair once)
    return tests


def _finish(concrete: ConcreteFunction, scope: dict) -> str:
    """The expression a direct run returns: None for a function returning None; the argument
    itself where the function returns the argument it writes into; for a single 0-d result,
    its NumPy scalar made in line (what the runner's converter does: Numba returns a Python
    scalar); else ``finish(results)``."""
    outputs = concrete.outputs
    if outputs.treedef is pytree.LEAF and not outputs.positions and (
            outputs.constants[0] is None):  # (returns None: a kernel writing into its arguments)
        return "None"
    returned = getattr(concrete.prepared_runner(), "returned", ())
    if returned:  # (returns the argument it writes into: the caller's own object)
        ((_, p),) = returned
        return f"a{p}"
    # (the trace's results; the final states of ``writes_back`` follow them)
    (result_type, *more) = concrete.module.main.result_types[:len(outputs.positions)] or (None,)
    if more or not (outputs.single and outputs.constants[0] is None) or not (
            isinstance(result_type, TensorType) and result_type.ndim == 0):
        # (``results[0]`` in line where finish is that: a call less, ~30 ns)
        return "results[0]" if scope.get("finish") is _FIRST else "finish(results)"
    scope["scalar_type"] = result_type.dtype.type
    return "scalar_type(results[0])"


def _direct(concrete: ConcreteFunction) -> tuple[
        Callable[[], tuple[Callable, Callable[[], None], type]],
        Callable[[Exception], Exception], Callable[[tuple], Any], frozenset,
        Callable[[list], Callable | None]] | None:
    """How to call ``concrete``'s compiled njit function itself (Numba's dispatcher unboxes the
    arguments): ``(strict() -> (a strict copy of its dispatcher, its catch_up(), the exception
    it raises for arguments of other types), failed(e) -> the exception to raise,
    finish(results) -> the value returned, the positions of scalar parameters, scalar_entry(values)
    -> the compiled entry point for scalars of these values' types, or None)``; None when the
    runner needs more (Variables, Python-typed or identity-kept results) or is not compiled."""
    runner, outputs = concrete.prepared_runner(), concrete.outputs
    writes_back = concrete.function.writes_back
    if writes_back:  # the runner that writes back: the one it calls (``_finish`` returns the
        returned = getattr(runner, "returned", ())  # argument a single result is)
        if returned and not (outputs.single and len(returned) == 1):
            return None
        runner = getattr(runner, "inner", None)
    entry = getattr(runner, "entry", None)
    if entry is None or outputs.python_types is not None:
        return None
    convert, failed, scalars, strict, scalar_entry = entry
    if outputs.single and outputs.constants[0] is None and convert is None:
        finish = _FIRST
    elif convert is None:
        finish = outputs.build
    else:
        build = outputs.build

        def finish(results: tuple) -> Any:
            return build(convert(results))
    return strict, failed, finish, scalars, scalar_entry
