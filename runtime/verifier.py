"""The IR verifier: checks the invariants every pass and backend relies on, after tracing and
after each pass while checks are on.

A module is valid when: its entry function exists and functions are filed under their names; every
op is registered; every operand is defined before its use and visible there (earlier in the same
region, in an enclosing region, or an argument of one of them), and no value is defined twice;
every op's result types are what its type rule gives for its operand types; region results and
function results are visible at the end of their region; and each op with regions (or that refers
to other functions) passes its rule in ``OP_RULES``: ``cond`` branches yield the op's result types,
``while`` has a condition yielding one ``bool[]`` and a body yielding the carried types, ``call``
names a function of the module whose signature matches. A value may flow into a slot whose type
it *fits*: same dtype and rank, and every known size of the slot equal (``f64[3]`` fits
``f64[?]``), which is how branches of different sizes join. Errors name the op as printed and the
user's file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from autostage.runtime import ir, op_registry, printer
from autostage.runtime.types import TensorType, Type, scalar

BOOL_SCALAR = scalar("bool")


class VerificationError(ValueError):
    """The IR breaks an invariant: a bug in the code that built or rewrote it (tracing, a pass),
    never in the user's program. The message names the op as printed and its user location.
    """


# An op rule checks what the generic checks cannot (regions, callees): it returns a problem
# description, or None when the op is fine. Register one per op name with regions or callees.
OpRule = Callable[[ir.Op, ir.Module], "str | None"]
OP_RULES: dict[str, OpRule] = {}


def fits(value_type: Type, slot_type: Type) -> bool:
    """Whether a value of ``value_type`` may be used where ``slot_type`` is declared."""
    if value_type == slot_type:
        return True
    if not (isinstance(value_type, TensorType) and isinstance(slot_type, TensorType)):
        return False
    if value_type.dtype != slot_type.dtype or value_type.ndim != slot_type.ndim:
        return False
    return all(s is None or s == v
               for v, s in zip(value_type.shape, slot_type.shape, strict=True))


def _all_fit(values: Sequence[Type], slots: Sequence[Type]) -> bool:
    return len(values) == len(slots) and all(fits(v, s) for v, s in zip(values, slots, strict=True))


def _types(types: Sequence[Type]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def verify(module: ir.Module) -> None:
    """Checks every function of ``module``.

    Raises:
      VerificationError: the first broken invariant, naming the op and its location.
    """
    if module.entry not in module.functions:
        raise VerificationError(f"the module's entry function @{module.entry} is not in it")
    for name, function in module.functions.items():
        if function.name != name:
            raise VerificationError(
                f"function @{function.name} is filed in the module under the name {name!r}")
        _FunctionVerifier(module, function).run()


class _FunctionVerifier:
    """Walks one function in order, tracking which values are visible at each point."""

    def __init__(self, module: ir.Module, function: ir.Function):
        self.module = module
        self.function = function
        self.names = printer.value_names(function)  # every value the function defines
        self.visible: set[ir.Value] = set()
        self.defined: set[ir.Value] = set()  # ever defined so far (visible or in a closed region)

    def run(self) -> None:
        self._region(self.function.body, None)

    def _region(self, region: ir.Region, owner: ir.Op | None) -> None:
        scope = list(region.args)
        self._define(region.args, owner)
        for op in region.ops:
            self._op(op)
            scope += op.results
        for value in region.results:
            if value not in self.visible:
                what = (f"in function @{self.function.name}, a region of op "
                        f"`{self._line(owner)}`{self._at(owner)} yields" if owner
                        else f"function @{self.function.name} returns")
                raise VerificationError(f"{what} {self._name(value)}, which "
                                        f"{self._why_not(value)}")
        self.visible.difference_update(scope)

    def _define(self, values: Sequence[ir.Value], op: ir.Op | None) -> None:
        for value in values:
            if value in self.defined:
                raise self._error(op, f"defines {self._name(value)} a second time "
                                      "(the same op or region appears twice in the IR)")
            self.defined.add(value)
            self.visible.add(value)

    def _op(self, op: ir.Op) -> None:
        if op.name not in op_registry.REGISTRY:
            raise self._error(op, f"uses op {op.name!r}, which is not registered")
        for i, value in enumerate(op.operands):
            if value not in self.visible:
                raise self._error(op, f"operand {i} ({self._name(value)}) "
                                      f"{self._why_not(value)}")
        self._check_types(op)
        rule = OP_RULES.get(op.name)
        if rule is None and op.regions:
            raise self._error(op, f"has {len(op.regions)} regions, but the verifier has no rule "
                                  f"for the regions of {op.name!r} (add one to OP_RULES)")
        problem = rule(op, self.module) if rule is not None else None
        if problem:
            raise self._error(op, problem)
        for region in op.regions:
            self._region(region, op)
        self._define(op.results, op)

    def _check_types(self, op: ir.Op) -> None:
        operand_types = [v.type for v in op.operands]
        try:
            expected = op_registry.result_types(op.name, operand_types, op.attrs)
        except Exception as e:  # any failure of the type rule is the finding
            raise self._error(op, f"is rejected by its type rule for operands "
                                  f"{_types(operand_types)}: {type(e).__name__}: {e}") from e
        actual = tuple(v.type for v in op.results)
        if actual != expected:
            raise self._error(op, f"has result types {_types(actual)}, but its type rule gives "
                                  f"{_types(expected)} for operands {_types(operand_types)}")

    def _why_not(self, value: ir.Value) -> str:
        if value in self.defined:
            return "is not visible here (it is defined inside the region of another op)"
        if value in self.names:
            return "is used before it is defined"
        return f"is not defined in function @{self.function.name}"

    def _name(self, value: ir.Value) -> str:
        return f"{self.names.get(value, '%?')}:{value.type}"

    def _line(self, op: ir.Op) -> str:
        return printer.format_op(op, self.names)

    @staticmethod
    def _at(op: ir.Op | None) -> str:
        return f" at {op.loc}" if op is not None and op.loc is not None else ""

    def _error(self, op: ir.Op | None, problem: str) -> VerificationError:
        if op is None:  # a region argument of the function itself
            return VerificationError(f"function @{self.function.name} {problem}")
        return VerificationError(
            f"in function @{self.function.name}, op `{self._line(op)}`{self._at(op)} {problem}")


def _check_region_count(op: ir.Op, count: int) -> str | None:
    if len(op.regions) != count:
        return f"has {len(op.regions)} regions; {op.name!r} has {count}"
    return None


def _check_cond(op: ir.Op, module: ir.Module) -> str | None:
    """``cond pred [operands...]``: regions then/else over the operands after the predicate
    (usually none: branches capture values), each yielding values that fit the op's results."""
    problem = _check_region_count(op, 2)
    if problem:
        return problem
    if not op.operands or op.operands[0].type != BOOL_SCALAR:
        return "needs a bool[] predicate as its first operand"
    passed = tuple(v.type for v in op.operands[1:])
    result_types = tuple(v.type for v in op.results)
    for label, region in zip(("then", "else"), op.regions, strict=True):
        arg_types = tuple(v.type for v in region.args)
        if not _all_fit(passed, arg_types):
            return f"passes {_types(passed)} to its {label} region, which takes {_types(arg_types)}"
        if not _all_fit(region.result_types, result_types):
            return (f"has results {_types(result_types)}, but its {label} region yields "
                    f"{_types(region.result_types)}")
    return None


def _check_while(op: ir.Op, module: ir.Module) -> str | None:
    """``while init...``: a cond region and a body region, both over the carried values (the op's
    result types); cond yields one bool[], body yields the next carried values."""
    problem = _check_region_count(op, 2)
    if problem:
        return problem
    carried = tuple(v.type for v in op.results)
    initial = tuple(v.type for v in op.operands)
    if not _all_fit(initial, carried):
        return f"carries {_types(carried)}, but its initial values are {_types(initial)}"
    for label, region in zip(("cond", "body"), op.regions, strict=True):
        arg_types = tuple(v.type for v in region.args)
        if arg_types != carried:
            return f"carries {_types(carried)}, but its {label} region takes {_types(arg_types)}"
    cond, body = op.regions
    if cond.result_types != (BOOL_SCALAR,):
        return f"has a cond region that yields {_types(cond.result_types)} instead of (bool[])"
    if not _all_fit(body.result_types, carried):
        return f"carries {_types(carried)}, but its body yields {_types(body.result_types)}"
    return None


def _check_call(op: ir.Op, module: ir.Module) -> str | None:
    """``call @callee args...``: the callee is a function of the module taking the arguments and
    returning the op's result types."""
    problem = _check_region_count(op, 0)
    if problem:
        return problem
    callee = module.functions.get(op.attrs.get("callee"))
    if callee is None:
        return f"calls @{op.attrs.get('callee')}, which is not a function of the module"
    arg_types = tuple(v.type for v in op.operands)
    if not _all_fit(arg_types, callee.param_types):
        return (f"passes {_types(arg_types)} to @{callee.name}, which takes "
                f"{_types(callee.param_types)}")
    result_types = tuple(v.type for v in op.results)
    if result_types != callee.result_types:
        return (f"has results {_types(result_types)}, but @{callee.name} returns "
                f"{_types(callee.result_types)}")
    return None


OP_RULES.update({"cond": _check_cond, "while": _check_while, "call": _check_call})
