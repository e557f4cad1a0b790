"""The typed IR: SSA values, ops with regions, functions and modules.

An ``Op`` has a name (its ``OpDef`` in ``op_registry`` gives its type rule and NumPy reference),
operands and results (``Value``s), attributes (plain, hashable Python data) and regions. A
``Region`` is one block: arguments, a list of ops, and the values it yields. Ops inside a region
may use values defined earlier in any enclosing region (implicit capture), which is what tracing
Python closures produces. Control flow is structured: ``cond`` has two regions, ``while`` a
condition and a body region over loop-carried values; there are no jumps. Every op carries the
user's file and line it came from. State (a ``Variable``) is not an attribute: a module keeps a
table of the state its functions use (``Module.state``), and an op names an entry by its index
(``var=0``), so attributes stay plain data with an exact text form. The Python functions that
``py_function`` ops call at run time are kept the same way (``Module.callables``, ``fn=0``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from autostage.runtime.types import Type


@dataclass(frozen=True, slots=True)
class Location:
    """Where in the user's code an op came from."""

    filename: str
    lineno: int
    function: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class Value:
    """An SSA value: the result of an op, or an argument of a region."""

    __slots__ = ("type", "producer", "index", "region")

    def __init__(self, type_: Type, producer: Op | Region, index: int):
        self.type = type_
        self.producer = producer  # the Op that computes it, or the Region it is an argument of
        self.index = index
        # The region it is defined in (set when its op is appended): visible there and inside.
        self.region = producer if isinstance(producer, Region) else None

    @property
    def loc(self) -> Location | None:
        return self.producer.loc if isinstance(self.producer, Op) else None

    def __repr__(self) -> str:
        return f"<Value {self.type}>"


class Op:
    """One operation; ``results`` are created from the types its type rule gives."""

    __slots__ = ("name", "operands", "results", "attrs", "regions", "loc")

    def __init__(self, name: str, operands: Sequence[Value], result_types: Sequence[Type],
                 attrs: dict[str, Any] | None = None, regions: Sequence[Region] = (),
                 loc: Location | None = None):
        self.name = name
        self.operands = tuple(operands)
        self.results = tuple(Value(t, self, i) for i, t in enumerate(result_types))
        self.attrs = dict(attrs or {})
        self.regions = tuple(regions)
        self.loc = loc

    def __repr__(self) -> str:
        return f"<Op {self.name} at {self.loc}>"


class Region:
    """A single-block region: arguments, ops in order, and the values it yields."""

    __slots__ = ("args", "ops", "results")

    def __init__(self, arg_types: Sequence[Type] = ()):
        self.args = tuple(Value(t, self, i) for i, t in enumerate(arg_types))
        self.ops: list[Op] = []
        self.results: tuple[Value, ...] = ()

    @property
    def result_types(self) -> tuple[Type, ...]:
        return tuple(v.type for v in self.results)

    def append(self, op: Op) -> Op:
        self.ops.append(op)
        for value in op.results:
            value.region = self
        return op

    def raises(self) -> bool:
        """Whether a ``raise`` op ends this region (a staged path that raises): what it yields,
        placeholders, is never read."""
        return any(op.name == "raise" for op in self.ops)

    def walk(self) -> Iterator[Op]:
        """Every op in this region and, depth first, in the regions of its ops."""
        for op in self.ops:
            yield op
            for region in op.regions:
                yield from region.walk()


class Function:
    """A staged function: its body's arguments are the parameters, its results the outputs.

    ``writes_back``: (parameter index, result index, argument name) of each array argument the
    function writes into, whose final state is that result (``argument_writes``)."""

    __slots__ = ("name", "body", "writes_back")

    def __init__(self, name: str, body: Region, writes_back: tuple = ()):
        self.name = name
        self.body = body
        self.writes_back = writes_back

    @property
    def param_types(self) -> tuple[Type, ...]:
        return tuple(v.type for v in self.body.args)

    @property
    def result_types(self) -> tuple[Type, ...]:
        return self.body.result_types


@dataclass(frozen=True, slots=True)
class UnboundState:
    """A state table entry that is a description only: the name and type of a Variable, as a
    module read from text (``ir_text.parse``) has them, bound to no storage."""

    name: str
    type: Type


@dataclass(frozen=True, slots=True)
class UnboundCallable:
    """A callables table entry that is a description only: the qualified name of the Python
    function a ``py_function`` op calls, as a module read from text has it."""

    name: str


class UnboundStateError(RuntimeError):
    """A module whose state is not bound to live storage was asked to run.

    Example: ``interpreter.run(ir.parse(text), args)`` where the text uses a Variable: the text
    describes the Variable (name and type), not its value. Fix: run the module the trace made
    (``f.get_concrete_function(...).module``), which holds the live Variables.
    """


class Module:
    """The functions of one trace: an entry function and the functions it calls (by name), and
    the state they use (``state``: live Variables, or ``UnboundState`` for a parsed module),
    one table for all of them, so that a state index means the same in every function; and the
    Python functions their ``py_function`` ops call (``callables``: live callables, or
    ``UnboundCallable`` for a parsed module)."""

    __slots__ = ("functions", "entry", "state", "callables", "__weakref__")

    def __init__(self, entry: str):
        self.functions: dict[str, Function] = {}
        self.entry = entry
        self.state: list[Any] = []
        self.callables: list[Any] = []

    def unique_name(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``...: the first that names no function yet."""
        name, n = base, 0
        while name in self.functions:
            n += 1
            name = f"{base}_{n}"
        return name

    def state_index(self, entry: object) -> int:
        """The index of ``entry`` in the state table, added at the end if it is not there yet;
        by identity: two Variables holding equal values are different state."""
        return _index_by_identity(self.state, entry)

    def live_state(self, index: int) -> Any:
        """The live state at ``index`` (what an op with ``var=index`` reads or writes).

        Raises:
          UnboundStateError: the entry is a description only (a module read from text).
        """
        entry = self.state[index]
        if isinstance(entry, UnboundState):
            raise UnboundStateError(
                f"state {index} of module @{self.entry} (variable {entry.name!r}: {entry.type}) "
                "is a description read from text, bound to no storage: a parsed module cannot "
                "run; run the module its trace made")
        return entry

    def callable_index(self, fn: object) -> int:
        """The index of ``fn`` in the callables table, added at the end if it is not there yet
        (by identity, as ``state_index``)."""
        return _index_by_identity(self.callables, fn)

    def live_callable(self, index: int) -> Any:
        """The Python function at ``index`` of the callables table (what ``fn=index`` calls).

        Raises:
          UnboundStateError: the entry is a description only (a module read from text).
        """
        entry = self.callables[index]
        if isinstance(entry, UnboundCallable):
            raise UnboundStateError(
                f"callable {index} of module @{self.entry} ({entry.name}) is a description read "
                "from text, bound to no Python function: a parsed module cannot run; run the "
                "module its trace made")
        return entry

    def add(self, function: Function) -> Function:
        if function.name in self.functions:
            raise ValueError(f"the module already has a function named {function.name!r}")
        self.functions[function.name] = function
        return function

    @property
    def main(self) -> Function:
        return self.functions[self.entry]


def _index_by_identity(table: list, entry: object) -> int:
    """The index of ``entry`` in ``table`` (by ``is``), appended first if it is not there."""
    for i, known in enumerate(table):
        if known is entry:
            return i
    table.append(entry)
    return len(table) - 1


def copy_op(op: Op, copies: dict[Value, Value]) -> Op:
    """A copy of ``op`` (regions included) reading ``copies[v]`` for each value ``v`` it reads;
    its results (and its regions' values) are added to ``copies``."""
    regions = tuple(copy_region(r, copies) for r in op.regions)
    new = Op(op.name, [copies.get(v, v) for v in op.operands], [v.type for v in op.results],
             dict(op.attrs), regions, loc=op.loc)
    copies.update(zip(op.results, new.results, strict=True))
    return new


def copy_region(region: Region, copies: dict[Value, Value]) -> Region:
    """A copy of ``region``: new arguments, copies of its ops, the copies of its yields."""
    new = Region([v.type for v in region.args])
    copies.update(zip(region.args, new.args, strict=True))
    for op in region.ops:
        new.append(copy_op(op, copies))
    new.results = tuple(copies.get(v, v) for v in region.results)
    return new


def copy_module(module: Module) -> Module:
    """A copy of ``module`` that passes may rewrite while the original (a cached trace, which
    ``f.ir()`` prints) stays as it was traced. Its state table lists the same entries: the
    state is live, and both modules read and write the same Variables (and call the same
    Python functions)."""
    new = Module(module.entry)
    new.state = list(module.state)
    new.callables = list(module.callables)
    for function in module.functions.values():
        new.add(Function(function.name, copy_region(function.body, {}), function.writes_back))
    return new


def parse(text: str) -> Module:
    """The module an exact text describes (``runtime/ir_text.py``); ``ir_text.format_module``
    of the result is ``text`` again."""
    from autostage.runtime import ir_text  # deferred: the text form reads the op registry

    return ir_text.parse(text)
