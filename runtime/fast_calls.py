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

Where the compiled entry can be called with this call's values (arrays, NumPy scalars, values
read by attribute), ``fast_path`` returns the C level's ``call_slot.Plan`` of the same tests
instead (``_plan``), with the generated function as the fallback it calls where a test fails.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import call_slot, captures, fp_state, pytree, static_sizes
from autostage.runtime.call_slot import MISS
from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.types import TensorType

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
        strict, scope["failed"], scope["finish"], scalars, compiled_entry = direct
        if len(scalars) == len(args) + len(implicit):  # every value passed a scalar
            found = compiled_entry([v[()] for v in (*args, *implicit)])
            if found is not None and not any(found[1]):
                entry = scope["entry"] = found[0]
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
        # (also where nothing is passed: the guards of Python values read through ``self``)
        if concrete.read is not None:
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
            call=call, refused=_REFUSED if entry is None else "",
            finish=_finish_code(_finish(concrete, scope["finish"]), scope))])
    elif concrete.read is not None:
        scope["read"], run = concrete.read, _RUN_READ.format(**filled)
    else:
        run = _RUN.format(**filled)
    mismatch = " or ".join(tests)
    test = (_TEST_SIZES if "len(" in mismatch or ".shape[" in mismatch else _TEST).format(
        mismatch=mismatch)
    source = _TEMPLATE.format(count=len(args), test=test, run=run, **filled)
    exec(compile(source, f"<autostage fast path of {concrete.function.name}>", "exec"), scope)
    fast = scope["fast"]
    fast.source = source  # for inspection
    if direct is not None and call_slot.Plan is not None:
        return _plan(concrete, args, implicit, written, scalars, compiled_entry, scope,
                     fast) or fast
    return fast


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


def _finish(concrete: ConcreteFunction, finish: Callable[[tuple], Any]) -> tuple[int, Any]:
    """How a direct run finishes the tuple the compiled code returns (``finish`` does it in
    general): ``(call_slot.FINISH_*, its value)``. None for a function returning None; the
    argument itself (its position) where the function returns the argument it writes into; for
    a single 0-d result, its NumPy scalar (its type; what the runner's converter does: Numba
    returns a Python scalar); the first result where ``finish`` takes just that."""
    outputs = concrete.outputs
    if outputs.treedef is pytree.LEAF and not outputs.positions and (
            outputs.constants[0] is None):  # (returns None: a kernel writing into its arguments)
        return call_slot.FINISH_NONE, None
    returned = getattr(concrete.prepared_runner(), "returned", ())
    if returned:  # (returns the argument it writes into: the caller's own object)
        ((_, p),) = returned
        return call_slot.FINISH_ARGUMENT, p
    # (the trace's results; the final states of ``writes_back`` follow them)
    (result_type, *more) = concrete.module.main.result_types[:len(outputs.positions)] or (None,)
    if more or not (outputs.single and outputs.constants[0] is None) or not (
            isinstance(result_type, TensorType) and result_type.ndim == 0):
        return ((call_slot.FINISH_FIRST, None) if finish is _FIRST
                else (call_slot.FINISH_CALL, finish))
    return call_slot.FINISH_SCALAR, result_type.dtype.type


def _finish_code(how: tuple[int, Any], scope: dict) -> str:
    """The expression of a generated fast path that finishes as ``how`` says (``_finish``);
    ``results[0]`` in line where that is all (a call less, ~30 ns)."""
    kind, value = how
    if kind == call_slot.FINISH_NONE:
        return "None"
    if kind == call_slot.FINISH_ARGUMENT:
        return f"a{value}"
    if kind == call_slot.FINISH_FIRST:
        return "results[0]"
    if kind == call_slot.FINISH_SCALAR:
        scope["scalar_type"] = value
        return "scalar_type(results[0])"
    return "finish(results)"


def _plan(concrete: ConcreteFunction, args: tuple, implicit: list, written: tuple,
          scalars: frozenset, compiled_entry: Callable[[list], tuple | None], scope: dict,
          fallback: Callable[[tuple], Any]) -> Any:
    """The C level's fast path for calls like this one (``call_slot.Plan``): each argument
    tested for the type, dtype, rank, known sizes and flags of this call's, the arguments the
    function writes into (``written``) for sharing memory with another array argument
    (``np.may_share_memory``'s test), the values read through objects (``implicit``) read and
    tested as the trace's reader does, then the compiled entry point called and its result
    finished in C; where a test fails, ``fallback`` (the Python fast path: other layouts) takes
    the call. None where the entry for
    these values is not compiled, an argument is a NumPy scalar whose type does not tell its
    dtype (datetime64, str_...), or the reader reads or tests what a Plan does not
    (``_read``)."""
    values = [v[()] if i in scalars else v for i, v in enumerate((*args, *implicit))]
    found = compiled_entry(values)
    if found is None:
        return None
    entry, flags = found
    specs = []
    for i, (arg, part) in enumerate(zip(args, concrete.key[1:], strict=False)):
        if type(arg) is not np.ndarray:
            if not isinstance(arg, (np.number, np.bool_)):
                return None
            specs.append(_spec(type(arg)))
            continue
        sizes = static_sizes.shape(part, arg.ndim)
        specs.append(_array_spec(arg.dtype, tuple(-1 if n is None else n for n in sizes),
                                 i in scalars, flags[i]))
    reads = _reads(concrete, len(args), scalars, flags) if concrete.read is not None else ()
    if reads is None:
        return None
    kind, value = _finish(concrete, scope["finish"])
    return call_slot.Plan(
        tuple(specs), reads, written, entry, scope["failed"], concrete, kind,
        value if kind == call_slot.FINISH_ARGUMENT else 0,
        value if kind in (call_slot.FINISH_SCALAR, call_slot.FINISH_CALL) else None,
        fp_state.current, fp_state.accepted, fallback)


def _spec(kind: type, equals: Any = None, contains: tuple = (None, False)) -> tuple:
    """A Plan's test of a value that is not an array: its exact type (and ``== equals``; or, of
    a dict, whether it holds key ``contains[0]``, which must be ``contains[1]``)."""
    return (kind, None, 0, 0, 0, call_slot.PASS_AS_IS, (), equals, *contains)


def _array_spec(dtype: np.dtype, sizes: tuple, as_scalar: bool,
                flags: tuple[int, int] | None) -> tuple:
    """A Plan's test of an array: its dtype, rank, sizes (-1: any) and flags; passed as its
    scalar where the parameter is one (a 0-d array)."""
    mask, wanted = flags or (0, 0)
    return (np.ndarray, dtype, len(sizes), mask, wanted,
            call_slot.PASS_SCALAR if as_scalar else call_slot.PASS_AS_IS, sizes, None, None,
            False)


def _reads(concrete: ConcreteFunction, count: int, scalars: frozenset,
           flags: list) -> tuple | None:
    """The Plan's reads of the trace's reader (``captures.reader``): first each guard (a type,
    a Python value), then each value passed after the ``count`` arguments, in their order; None
    where a path does not start at an argument or a bound object, takes a step other than an
    attribute, or has a check a Plan does not make."""
    captured, checks, _ = concrete.read.inputs
    position = {}
    for k, path in enumerate(captured):
        if type(path) is not captures.Path:
            return None  # (an environment value)
        position[path] = count + k
    guards, passed = [], {}
    for path, path_checks in checks.items():
        root = path.root
        if root.kind not in ("arg", "bound") or any(kind != "attr" for kind, _ in path.steps):
            return None
        start = (None, root.ref) if root.kind == "arg" else (root.ref, 0)
        attributes = tuple(name for _, name in path.steps)
        at = position.get(path)
        for check in path_checks.values():
            found = _read(check, at in scalars, flags[at] if at is not None else None)
            if found is None:
                return None
            more, spec = found
            if at is not None and check[0] in ("array", "scalar"):
                passed[at] = (*start, attributes, spec, True)
            else:
                guards.append((*start, attributes + more, spec, False))
    if len(passed) != len(captured):
        return None
    return (*guards, *[passed[at] for at in sorted(passed)])


def _read(check: tuple, as_scalar: bool, flags: tuple[int, int] | None
          ) -> tuple[tuple, tuple] | None:
    """A Plan's test for one of the reader's checks (``captures._test``): (the attributes read
    from the checked value first, the test), or None."""
    kind = check[0]
    if kind == "array":
        return (), _array_spec(check[1], check[2], as_scalar, flags)
    if kind == "scalar":  # (a NumPy scalar type that tells its dtype)
        return ((), _spec(check[1])) if issubclass(check[1], (np.number, np.bool_)) else None
    if kind == "type":
        return (), _spec(check[1])
    if kind == "value":
        of, value = check[1]
        if value is None or (of in (int, bool, str, float) and type(value) is of):
            return (), _spec(of, value)  # (a float keyed by its hex, -0.0 or nan: None)
    if kind.startswith("class ") and type(check[2]) is types.FunctionType:
        # (the method the trace ran is still the class's: a function compares by identity)
        return ("__class__", check[1]), _spec(types.FunctionType, check[2])
    if kind.startswith("in ") and type(check[1]) is str:  # (no method shadowing it: a key of
        return (), _spec(dict, contains=(check[1], check[2]))  # the object's __dict__)
    return None


def _direct(concrete: ConcreteFunction) -> tuple[
        Callable[[], tuple[Callable, Callable[[], None], type]],
        Callable[[Exception], Exception], Callable[[tuple], Any], frozenset,
        Callable[[list], Callable | None]] | None:
    """How to call ``concrete``'s compiled njit function itself (Numba's dispatcher unboxes the
    arguments): ``(strict() -> (a strict copy of its dispatcher, its catch_up(), the exception
    it raises for arguments of other types), failed(e) -> the exception to raise,
    finish(results) -> the value returned, the positions of scalar parameters,
    compiled_entry(values) -> the compiled entry point for these values' types and what each
    must be, or None)``; None when the
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
    convert, failed, scalars, strict, compiled_entry = entry
    if outputs.single and outputs.constants[0] is None and convert is None:
        finish = _FIRST
    elif convert is None:
        finish = outputs.build
    else:
        build = outputs.build

        def finish(results: tuple) -> Any:
            return build(convert(results))
    return strict, failed, finish, scalars, compiled_entry
