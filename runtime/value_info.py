"""Facts about staged values that their types do not say, kept per trace, and weak-ness, which
their types say.

*Weak* values have Python scalar semantics (a dimension from ``x.shape``, a staged ``len``): in
``f32_tensor * n`` a weak ``n`` promotes like a Python int, so the result stays float32 as in
Python. It is the ``weak`` flag of the value's type (``types.TensorType``), so it travels wherever
the type does (staged calls, copies of the IR, its text). *Views* alias another array: function
arguments (registered by the function object with ``mark_argument``) and basic-indexing /
reshape / transpose results of them or of other values. Writing through a view (``x[i] = v``,
``x += 1``) is visible to the caller in Python, which the functional ``setitem`` of the IR cannot
reproduce, so it must be a clear error, never a silent difference. *List elements*: whether a
tensor list's elements are Python numbers or NumPy values (``staging.list_elements``). *0-d
arrays*: 0-d values NumPy would hold as a 0-d ``ndarray`` (``np.zeros_like(s)``,
``x.reshape(())``, a 0-d ndarray argument), not as a NumPy scalar (what ufuncs, reductions and
indexing give): the result comes back as one (``ndarray_results``); one that is a 0-d ndarray
on some paths of a staged ``if`` or loop and not on others is *mixed*: Python's type depends on
the path taken, so asking which it is raises the error recorded with it; a mixed one a staged
loop made may carry a bool value saying which it is at run time (``array_flag``: whether the
loop ran), so that it is returned as Python returns it (``function_outputs``). *Python paths*: a 0-d
value that is a Python number on some paths and a NumPy scalar of the same dtype on others
(``total = 0.0`` before a staged loop adding float64 ``x[i]``, which may run zero times) carries
a bool value saying which it is at run time (``python_numbers``, ``function_outputs``); one that
is a Python number staged code cannot hold there (a Python float where the value is float32)
carries an *other path* flag: an op using it raises a clear error where the flag holds, unless
the op gives the same result either way (``allowing``: ``f32_array + total``). The tables hang
off the ``Trace`` (weakly), so they die with it."""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from autostage.runtime import array_identity, dtype_rules, ir, tracing


@dataclass(slots=True)
class _Facts:
    views: dict  # Value -> the Value it is a view of (or itself, for an argument)
    arguments: dict  # Value -> argument name
    scalars: set  # arguments that are NumPy scalars (immutable: `n += 1` rebinds `n`)
    lists: dict  # list Value -> what its elements are (``tensor_lists.Elements``)
    arrays: set  # 0-d values NumPy holds as 0-d ndarrays (not NumPy scalars)
    shared: dict  # loop values begun from a NumPy array others hold -> the variable's name
    python_paths: dict  # Value -> PythonPath: a Python number where its flag holds
    other_paths: dict  # Value -> OtherPath: a Python number its dtype does not hold, somewhere
    numbers: dict  # weak Value -> the Python number it is, known while tracing (a merge's)
    copies: dict  # Value -> what it is a copy of, where Python's is the object itself (a message)
    mixed: dict  # 0-d Value -> the error to raise where its kind matters (``mark_mixed``)
    array_flags: dict  # mixed 0-d Value -> bool Value: a 0-d ndarray where it holds


_facts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _table() -> _Facts | None:
    trace = tracing.current()
    if trace is None:
        return None
    facts = _facts.get(trace)
    if facts is None:
        facts = _facts[trace] = _Facts({}, {}, set(), {}, set(), {}, {}, {}, {}, {}, {}, {})
    return facts


def mark_weak(value: ir.Value) -> None:
    """Gives ``value`` Python scalar semantics in promotion (it must be a 0-d bool, int64,
    float64 or complex128 value): its type becomes weak.

    Raises:
      TypeError: ``value`` is not such a value.
    """
    value.type = replace(value.type, weak=True)


def is_weak(value: ir.Value) -> bool:
    """Whether ``value`` stands for a Python number (its type is weak)."""
    return getattr(value.type, "weak", False)


@dataclass(frozen=True, slots=True)
class PythonPath:
    """When a strong 0-d value stands for a Python number: where ``flag`` (a 0-d bool value)
    holds at run time, it is the Python ``kind`` (bool, int, float, complex) of its dtype;
    elsewhere the NumPy scalar."""

    flag: ir.Value
    kind: type


def mark_python_path(value: ir.Value, flag: ir.Value, kind: type) -> None:
    """Records that ``value`` is a Python number of ``kind`` where ``flag`` holds."""
    table = _table()
    if table is not None:
        table.python_paths[value] = PythonPath(flag, kind)


def python_path(value: ir.Value) -> PythonPath | None:
    """What ``mark_python_path`` recorded for ``value``; None if it is one type on all paths (a
    weak value is a Python number on every path)."""
    table = _table()
    return None if table is None or is_weak(value) else table.python_paths.get(value)


@dataclass(frozen=True, slots=True)
class OtherPath:
    """Where ``flag`` holds, the value is a Python number of ``kind`` that its dtype does not
    hold (a Python float, float32): an op using it raises ``error`` there, unless that number is
    known while tracing (``python``: the value before a loop the body always changes to a NumPy
    value), which lets an op compute the Python path's own result (``array_api``)."""

    flag: ir.Value
    kind: type
    error: Exception
    python: bool | int | float | complex | None = None


def mark_other_path(value: ir.Value, flag: ir.Value, kind: type, error: Exception,
                    python: object = None) -> None:
    """Records that ``value`` is a Python number of ``kind`` staged code cannot hold where
    ``flag`` holds (``OtherPath``); ``python``: that number, if known while tracing."""
    table = _table()
    if table is not None:
        table.other_paths[value] = OtherPath(flag, kind, error, python)


def mark_number(value: ir.Value, number: object) -> None:
    """Records that the weak ``value`` is the Python ``number`` wherever it is defined (a merge
    of that number with an unassigned variable: an early ``return 0.0``)."""
    table = _table()
    if table is not None:
        table.numbers[value] = number


def known_number(value: ir.Value) -> bool | int | float | complex | None:
    """The Python number the weak ``value`` is, if known while tracing (a constant, or
    ``mark_number``), else None."""
    if not is_weak(value):
        return None
    producer = value.producer
    if isinstance(producer, ir.Op) and producer.name == "constant":
        return dtype_rules.weak_kind(value.type.dtype)(producer.attrs["value"].item())
    table = _table()
    return None if table is None else table.numbers.get(value)


def other_path(value: ir.Value) -> OtherPath | None:
    """What ``mark_other_path`` recorded for ``value``, or None."""
    table = _table()
    return None if table is None else table.other_paths.get(value)


_allowed = threading.local()  # .values: other-path values the op being emitted may use
_PASS_ON = frozenset({"cond", "while", "raise_if"})  # (an if or a loop carries the flag on)


@contextlib.contextmanager
def allowing(values: Iterable[ir.Value]) -> Iterator[None]:
    """While emitting an op that gives the same result whether ``values`` are the Python
    numbers or what their dtype holds (``f32_array + total``): no error for them."""
    outer = getattr(_allowed, "values", frozenset())
    _allowed.values = outer | frozenset(values)
    try:
        yield
    finally:
        _allowed.values = outer


def check_use(value: ir.Value) -> None:
    """A use of ``value`` that Python would make of the Python number where it is one it cannot
    hold (returning it, formatting it): raises its error there (``OtherPath``)."""
    other = other_path(value)
    if other is not None:
        tracing.emit("raise_if", (other.flag,), {"exception": other.error})


def raise_where_python(value: ir.Value, error: Exception) -> None:
    """Raises ``error`` at run time where ``value`` is a Python number on some paths only
    (``python_path``, ``other_path``): a use whose answer staged code gives as NumPy's."""
    for path in (python_path(value), other_path(value)):
        if path is not None:
            tracing.emit("raise_if", (path.flag,), {"exception": error})


def _check_other_paths(name: str, operands: Sequence[ir.Value], trace: object) -> None:
    """An op using a value that is a Python number staged code cannot hold raises its error
    where its flag holds (``OtherPath``)."""
    table = _facts.get(trace)
    if table is None or not table.other_paths or name in _PASS_ON:
        return
    allowed = getattr(_allowed, "values", frozenset())
    for value in operands:
        if value in table.other_paths and value not in allowed:
            check_use(value)


tracing.operand_checks.append(_check_other_paths)


def mark_argument(value: ir.Value, name: str, scalar: bool | None = None) -> None:
    """Records that ``value`` is the caller's array ``name`` (a function parameter).

    ``scalar``: the caller passed a NumPy scalar (``np.float64(1.5)``), which is immutable: an
    in-place operator on it rebinds the name, as in Python. None: assumed for 0-d values (a 0-d
    ndarray argument changed in place is rare; the function object can say exactly).
    """
    table = _table()
    if table is not None:
        table.arguments[value] = name
        table.views[value] = value
        if value.type.ndim == 0 if scalar is None else scalar:
            table.scalars.add(value)


def is_scalar_argument(value: ir.Value) -> bool:
    """True if ``value`` is an argument the caller passed as a NumPy scalar (immutable)."""
    table = _table()
    return table is not None and value in table.scalars


def mark_view(result: ir.Value, base: ir.Value) -> None:
    """Records that ``result`` may share memory with ``base`` (as NumPy's views do)."""
    table = _table()
    array_identity.share(result, base)
    if table is not None and base in table.views:
        table.views[result] = table.views[base]
    elif table is not None:
        table.views[result] = base


_shared = threading.local()  # .stack: the shared arrays of the loops being staged


@contextlib.contextmanager
def shared_arrays(arrays: list) -> Iterator[None]:
    """While a loop operator stages its loop: the NumPy arrays of its state that something
    besides the loop's variable holds (``operators/sole_holder``). A loop value begun from one
    is marked (``mark_shared``), and writing into it is a clear error (``array_shapes``): the
    staged loop would write a copy, and the other holders would not see the write."""
    stack = _shared.__dict__.setdefault("stack", [])
    stack.append(arrays)
    try:
        yield
    finally:
        stack.pop()


def is_shared_array(array: object) -> bool:
    """Whether ``array`` is one of the shared arrays of a loop being staged."""
    return any(array is a for arrays in getattr(_shared, "stack", ()) for a in arrays)


def mark_shared(value: ir.Value, name: str) -> None:
    """Records that loop value ``value`` (variable ``name``) begins as a shared NumPy array."""
    table = _table()
    if table is not None:
        table.shared[value] = name
        table.views[value] = value


def shared_name(value: ir.Value) -> str | None:
    """The variable whose shared NumPy array ``value`` is, or is a view of; None otherwise."""
    table = _table()
    if table is None or value not in table.views:
        return None
    return table.shared.get(table.views[value])


def aliased_argument(value: ir.Value) -> str | None:
    """The argument name ``value`` is, or is a view of; None otherwise."""
    table = _table()
    if table is None or value not in table.views:
        return None
    return table.arguments.get(table.views[value])


def view_base(value: ir.Value) -> ir.Value | None:
    """The value ``value`` is a view of (itself for an argument), or None for a fresh array."""
    table = _table()
    return None if table is None else table.views.get(value)


def set_list_elements(value: ir.Value, elements: object) -> None:
    """Records what the elements of the list value ``value`` are (``tensor_lists.Elements``:
    Python numbers or NumPy values, decided when they were appended)."""
    table = _table()
    if table is not None:
        table.lists[value] = elements


def mark_copied_item(value: ir.Value, what: str) -> None:
    """Records that ``value`` is a copy of an array Python would hand out itself (an item of a
    list of arguments' views, an array item of a list read by a staged index); ``what`` says
    what, for the errors refusing a write into it or returning it (``copied_item``)."""
    table = _table()
    if table is not None:
        table.copies[value] = what


def copied_item(value: ir.Value) -> str | None:
    """What ``mark_copied_item`` recorded for ``value``; None if nothing was."""
    table = _table()
    return None if table is None else table.copies.get(value)


def list_elements(value: ir.Value) -> object | None:
    """What ``set_list_elements`` recorded for ``value``; None if nothing was."""
    table = _table()
    return None if table is None else table.lists.get(value)


def mark_array(value: ir.Value) -> None:
    """Records that the 0-d ``value`` is a 0-d ndarray in NumPy (not a NumPy scalar)."""
    table = _table()
    if table is not None and getattr(value.type, "ndim", None) == 0:
        table.arrays.add(value)


def is_array(value: ir.Value) -> bool:
    """Whether the 0-d ``value`` is a 0-d ndarray in NumPy (``mark_array``).

    Raises:
      StagingTypeError: ``value`` is one on some paths only (``mark_mixed``).
    """
    refuse_mixed(value, f"its use{tracing.at()}")
    table = _table()
    return table is not None and value in table.arrays


def mark_mixed(value: ir.Value, error: Exception) -> None:
    """Records that the 0-d ``value`` is a 0-d ndarray on some paths and a NumPy scalar or a
    Python number on others (a staged ``if`` or loop made it): ``is_array`` of it raises
    ``error``, its message continued by what asked and how to fix it (``refuse_mixed``)."""
    table = _table()
    if table is not None:
        table.mixed[value] = error


def refuse_mixed(value: ir.Value, use: str) -> None:
    """Raises the error ``mark_mixed`` recorded for ``value``, saying that ``use`` (``"returning
    it"``) needs its kind; nothing if it has one kind."""
    error = mixed(value)
    if error is not None:
        raise type(error)(f"{error}; {use} needs to know which. Give it one kind on every path "
                          "(`np.asarray(v)` is a 0-d ndarray, `v[()]` a NumPy scalar)")


def mark_array_where(value: ir.Value, flag: ir.Value) -> None:
    """Records that the mixed 0-d ``value`` (``mark_mixed``) is a 0-d ndarray where the 0-d bool
    ``flag`` holds at run time, and a NumPy scalar elsewhere: returning it follows the flag."""
    table = _table()
    if table is not None:
        table.array_flags[value] = flag


def array_flag(value: ir.Value) -> ir.Value | None:
    """What ``mark_array_where`` recorded for ``value``; None if nothing was."""
    table = _table()
    return None if table is None else table.array_flags.get(value)


def marked_array(value: ir.Value) -> bool:
    """Whether ``mark_array`` marked ``value`` (``is_array`` without refusing a mixed one)."""
    table = _table()
    return table is not None and value in table.arrays


def mixed(value: ir.Value) -> Exception | None:
    """The error ``mark_mixed`` recorded for ``value``; None if it has one kind."""
    table = _table()
    return None if table is None else table.mixed.get(value)


def stands_for_ndarray(value: ir.Value) -> bool:
    """Whether the 0-d, not weak ``value`` is a 0-d ndarray in Python: marked one, or an argument
    the caller did not pass as a NumPy scalar (else it is a NumPy scalar)."""
    return is_array(value) or aliased_argument(value) is not None and not is_scalar_argument(
        value)
