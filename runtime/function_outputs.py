"""How a traced function's results map back to the structure it returned (result marshalling).

``collect_outputs`` makes the staged leaves of what traced code returned the results of the IR
function and records the rest (Python constants, list markers); ``Outputs.build`` turns a run's
results back into that structure on each call. A callee's tensor list stays a list value for its
caller (``ListResult``); one returned to Python comes back as a Python list.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    argument_writes,
    array_identity,
    captures,
    dtype_rules,
    pytree,
    result_identity,
    shared_constants,
    tracing,
    value_info,
    view_writes,
)
from autostage.runtime.ops.io import render
from autostage.runtime.staging import text
from autostage.runtime.tensor import Tensor


class Outputs:
    """How a traced function's results map back to the structure it returned.

    Staged tensors become results of the IR function; Python constants in the output are returned
    as they are (NumPy arrays computed at trace time are copied on each call, as Python would
    build a new one each time). A result that stands for a Python number (a weak value:
    ``x.shape[0]``, ``len(lst)``, their arithmetic) comes back as the Python int/float/bool/complex
    the plain function returns (``python_types``, decided per result when tracing; None when no
    result is one, so that the call path tests one attribute).
    """

    __slots__ = ("treedef", "constants", "positions", "single", "flat", "python_types",
                 "identity", "argument_containers", "shared")

    def __init__(self, treedef: pytree.TreeDef, constants: list, positions: tuple[int, ...],
                 python_types: tuple | None = None):
        self.treedef = treedef
        self.constants = constants  # the output leaves, with None where a result goes
        self.positions = positions  # leaf position of result i
        self.single = treedef is pytree.LEAF and bool(positions)
        # a tuple of results and nothing else (``return a, b``): the results as they come
        self.flat = (treedef == (tuple, (pytree.LEAF,) * len(constants))
                     and all(c is None for c in constants)
                     and positions == tuple(range(len(constants))))
        # (result index, Python type: int, float, bool or complex) of each weak result, and
        # (result index, np.asarray of its dtype) of each 0-d ndarray one; None if there is none
        self.python_types = tuple((i, kind) for i, kind in enumerate(python_types or ())
                                  if kind is not None) or None
        # what Python's identity of each result is (``result_identity.plan``)
        self.identity: tuple = ()
        # (path in the result, path in the arguments) of each list or dict argument the function
        # returns as it is: Python returns the caller's object (``with_argument_containers``)
        self.argument_containers: tuple = ()
        # the arrays made at trace time that share memory with another result (``return a, a``)
        self.shared: shared_constants.SharedCopies | None = None

    def with_argument_containers(self, result: Any, arguments: tuple) -> Any:
        """``result`` holding the caller's own list and dict arguments where the function
        returns them as they are (staged code cannot change them: ``check_escapes``)."""
        for out_path, arg_path in self.argument_containers:
            result = pytree.replaced(result, out_path, pytree.at_path(arguments, arg_path))
        return result

    def as_python(self, results: tuple) -> list:
        """The results of a run with each weak one as the Python number it stands for (and
        each 0-d ndarray one as an ndarray; each ``PythonIf`` or ``ArrayIf`` one where its flag
        holds)."""
        results = list(results)
        for i, kind in self.python_types:
            if type(kind) is ArrayIf:
                if results[kind.flag]:  # (np.asarray of an argument's ndarray: itself)
                    results[i] = np.asarray(results[i], dtype=kind.dtype)
                    continue
                kind = kind.otherwise
            if kind is None:
                continue
            if type(kind) is not PythonIf:
                results[i] = kind(results[i])
            elif results[kind.flag]:
                results[i] = kind.kind(results[i]) if kind.number is None else kind.number
        del results[len(self.positions):]  # the flags
        return results

    def mark_python_paths(self, results: tuple) -> tuple:
        """A call's results in its caller's trace: each ``PythonIf`` one marked with its flag
        (``value_info.python_path``), each ``ArrayIf`` one with its (``value_info.array_flag``);
        the flags dropped."""
        for i, kind in self.python_types or ():
            if type(kind) is ArrayIf:
                if kind.error is not None:
                    value_info.mark_mixed(results[i], kind.error)
                value_info.mark_array_where(results[i], results[kind.flag])
                kind = kind.otherwise
            if type(kind) is PythonIf and kind.number is None:
                value_info.mark_python_path(results[i], results[kind.flag], kind.kind)
            elif type(kind) is PythonIf:
                value_info.mark_other_path(results[i], results[kind.flag], kind.kind,
                                           kind.error, kind.number)
        return results[:len(self.positions)]

    def build(self, results: tuple) -> Any:
        if self.single and self.constants[0] is None:
            return results[0]
        if self.flat:
            return tuple(results)
        leaves = [c.copy() if type(c) in (np.ndarray, list) else c for c in self.constants]
        if self.shared is not None:
            self.shared.fill(leaves)
        texts: dict[int, list] = {}
        for position, value in zip(self.positions, results, strict=True):
            marker = leaves[position]
            if isinstance(marker, TextResult):  # one of the values of a string's fields
                texts.setdefault(position, []).append(value)
                continue
            if isinstance(marker, ListResult):  # a callee's list, in its caller's trace
                value = marker.rebuild(value)
            elif marker is _AS_LIST:
                value = list(value)
            elif marker is _AS_PYTHON_LIST:  # a NumPy array here; a tensor in a caller's trace
                value = value.tolist() if type(value) is np.ndarray else list(value)
            leaves[position] = value
        for position, values in texts.items():
            leaves[position] = leaves[position].rebuild(values)
        return pytree.unflatten(self.treedef, leaves)


def collect_outputs(trace: tracing.Trace, output: Any, callee: bool = False) -> Outputs:
    """Makes the staged leaves of ``output`` the results of the traced function.

    A tensor list returned by a ``callee`` (a staged call's function) stays a list value, so
    that its caller gets a tensor list back (to iterate, index, append to or ``np.stack``); one
    returned to Python comes back as a Python list of the rows of its stack.
    """
    from autostage.runtime.staging import list_elements, tensor_lists
    from autostage.runtime.staging import values as staged_values

    leaves, treedef = pytree.flatten(output)
    constants, positions, values, python_types, flags = [], [], [], [], []
    arrays = {}  # output position -> a NumPy array made at trace time
    for position, leaf in enumerate(leaves):
        if isinstance(leaf, staged_values.MaybeUnbound):  # (the caller's line is no use)
            raise leaf.error(f"returned by {trace.function.name}")
        if not callee and isinstance(leaf, Tensor | tensor_lists.TensorList):
            list_elements.refuse_copied_views(trace.function.name, leaf)
        if isinstance(leaf, tensor_lists.TensorList):
            if leaf.value is None:  # never appended to: Python returns the empty list
                constants.append([])
                continue
            if callee:
                tracing.check_visible(leaf.value, "a returned list")
                constants.append(ListResult(leaf.elements))
                positions.append(position)
                values.append(leaf.value)
                python_types.append(None)
                continue
            # It comes back as a list of the rows of its stack (empty if it stays empty), as
            # Python numbers if every element put in it is one (``list_elements``).
            python = list_elements.returned_as_python(leaf.value, leaf.element.dtype,
                                                      trace.function.name)
            (stacked,) = tracing.emit("list_stack", (leaf.value,), {"empty_ok": True},
                                      loc=leaf.value.loc)  # (the list's line, not the caller's)
            leaf = Tensor(stacked)
            constants.append(_AS_PYTHON_LIST if python else _AS_LIST)
        elif isinstance(leaf, text.Text):  # its fields' values are results, rendered after
            constants.append(TextResult(leaf.parts))
            for tensor in leaf.tensors:
                tracing.check_visible(tensor.value, "a returned string's value")
                positions.append(position)
                values.append(tensor.value)
                python_types.append(None)
            continue
        elif isinstance(leaf, Tensor):
            constants.append(None)
        else:
            _reject_staged_output(leaf)
            if isinstance(leaf, str):  # (`repr(state)` by a dataclass's __repr__)
                text.python_text(leaf, leaf, f" returned by {trace.function.name}")
            leaf = captures.unwrap(leaf)
            # A NumPy array the traced code made is returned as a fresh copy at each call; the
            # trace keeps its own, so the one the code wrote into (a guard of the trace, if
            # constants were made from it while it was being written) is not kept alive.
            constants.append(leaf.copy() if type(leaf) is np.ndarray else leaf)
            if type(leaf) is np.ndarray:
                arrays[position] = leaf
            continue
        tracing.check_visible(leaf.value, "a returned tensor")
        array_identity.check_use(leaf.value)
        positions.append(position)
        values.append(leaf.value)
        path = value_info.python_path(leaf.value)
        other = value_info.other_path(leaf.value)
        if path is None and other is not None and other.python is not None:
            flags.append(other.flag)  # a Python number its dtype does not hold, known: it
            python_types.append(PythonIf(other.kind, len(flags) - 1, other.python, other.error))
            continue
        value_info.check_use(leaf.value)  # a Python number its dtype does not hold, there
        if path is not None:  # its flag is a result too, after the values
            flags.append(path.flag)
            kind = PythonIf(path.kind, len(flags) - 1)
        else:
            kind = _python_type(leaf)
        array = value_info.array_flag(leaf.value) if leaf.ndim == 0 else None
        if array is not None:  # a 0-d ndarray where its flag (a result too) holds
            flags.append(array)
            kind = ArrayIf(len(flags) - 1, leaf.dtype, value_info.mixed(leaf.value), kind)
        python_types.append(kind)
    view_writes.check_written_back()
    for kind in python_types:
        for part in (kind, getattr(kind, "otherwise", None)):
            if type(part) in (PythonIf, ArrayIf):
                part.flag += len(values)
    count = len(values) + len(flags)
    written = argument_writes.finals(trace.function)  # (a callee's: its call's results too)
    trace.function.writes_back = tuple((p, count + k, name)
                                       for k, (p, _, name) in enumerate(written))
    trace.function.body.results = (*values, *flags, *[final for _, final, _ in written])
    shared = shared_constants.plan(arrays)  # (those sharing memory: copied together)
    for position in shared.views if shared is not None else ():
        constants[position] = _SHARED
    outputs = Outputs(treedef, constants, tuple(positions), tuple(python_types))
    outputs.shared = shared
    outputs.identity = result_identity.plan(trace.function.body.args, values,
                                            argument_writes.result_params(trace.function), flags)
    arguments = getattr(trace, "argument_containers", {})
    if arguments and not callee:
        returned = [(path, arguments[id(node)]) for path, node in pytree.mutable_nodes(output)
                    if id(node) in arguments]
        outputs.argument_containers = tuple(  # (the outermost of nested ones)
            (out, arg) for i, (out, arg) in enumerate(returned)
            if not any(out[:len(o)] == o for o, _ in returned[:i]))
    return outputs


def _python_type(leaf: Tensor) -> Callable | None:
    """The Python number type a returned 0-d weak value stands for, or how a 0-d ndarray result
    comes back (``ndarray_results``); None for NumPy values (backends give NumPy scalars)."""
    if leaf.ndim == 0 and value_info.is_weak(leaf.value):
        return dtype_rules.weak_kind(leaf.dtype)
    if leaf.ndim == 0 and value_info.array_flag(leaf.value) is not None:
        return None  # (a 0-d ndarray where its flag holds: ``ArrayIf``)
    if leaf.ndim == 0:  # (a 0-d ndarray on some paths only, not known at run time: an error)
        value_info.refuse_mixed(leaf.value, "returning it")
    if leaf.ndim == 0 and value_info.is_array(leaf.value):
        return functools.partial(np.asarray, dtype=leaf.dtype)  # an argument: itself
    return None


class PythonIf:
    """A result that is a Python number of ``kind`` where the result ``flag`` (an index) holds,
    and a NumPy scalar elsewhere (``value_info.python_path``); ``number``: that number, known
    while tracing, where the result's dtype does not hold it (``value_info.other_path``, whose
    ``error`` a caller's trace keeps)."""

    __slots__ = ("kind", "flag", "number", "error")

    def __init__(self, kind: type, flag: int, number: object = None,
                 error: Exception | None = None):
        self.kind, self.flag, self.number, self.error = kind, flag, number, error


class ArrayIf:
    """A 0-d result that is a 0-d ndarray of ``dtype`` where the result ``flag`` (an index)
    holds, and as ``otherwise`` (None, a ``PythonIf``) says elsewhere
    (``value_info.array_flag``: a variable a staged loop that may run zero times makes the
    other kind); ``error``: what its uses in a caller's trace raise (``value_info.mixed``)."""

    __slots__ = ("flag", "dtype", "error", "otherwise")

    def __init__(self, flag: int, dtype: np.dtype, error: Exception | None,
                 otherwise: PythonIf | None = None):
        self.flag, self.dtype, self.error, self.otherwise = flag, dtype, error, otherwise


class TextResult:
    """Marks a result that is a string made from staged values (``staging.text``): the values
    of its fields are results, and the string is made from them after a run (in a caller's
    trace, a ``Text`` again)."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple):
        self.parts = parts

    def rebuild(self, values: list) -> Any:
        if values and isinstance(values[0], Tensor):
            return text.Text(self.parts, tuple(values))
        return render(self.parts, tuple(values))


class ListResult:
    """Marks a callee's result that is a tensor list, with what its elements are
    (``list_elements``: Python numbers or NumPy values), which its caller's list keeps."""

    __slots__ = ("elements",)

    def __init__(self, elements: Any):
        self.elements = elements

    def rebuild(self, value: Tensor) -> Any:
        from autostage.runtime.staging import list_elements, tensor_lists
        list_elements.record(value.value, self.elements)
        return tensor_lists.TensorList(value.value)


_AS_LIST = object()  # marks an output that was a tensor list: returned as a Python list
_SHARED = object()  # ... an array made at trace time sharing memory with another (``shared``)
_AS_PYTHON_LIST = object()  # ... of Python numbers (``tolist()`` of its stack)


def _reject_staged_output(leaf: object) -> None:
    from autostage.runtime.operator_hooks import Staged

    if isinstance(leaf, Staged):
        raise tracing.StagingError(
            f"a staged function returned a {type(leaf).__name__}, which cannot leave staged code; "
            "return tensors or lists of tensors instead")
    if type(leaf) is np.ndarray and leaf.dtype.hasobject and any(
            isinstance(item, Staged) for item in leaf.flat):
        raise tracing.StagingError(
            "a staged function returned a NumPy object array holding staged values (put in at "
            "trace time, where they have no value yet); build the array with NumPy functions "
            "of staged values (np.stack, np.array of a list of them)")
