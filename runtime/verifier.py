"""The IR verifier: checks the invariants every pass and backend relies on, after tracing and
after each pass while checks are on.

A module is valid when: its entry function exists and functions are filed under their names; every
op is registered; every operand is defined before its use and visible there (earlier in the same
region, in an enclosing region, or an argument of one of them), and no value is defined twice;
every op's result types are what its type rule gives for its operand types; region results and
function results are visible at the end of their region; and each op with regions (or that refers
to other functions) passes its ``OpDef.verify`` rule, defined beside the op (``ops/control_flow``:
``cond`` branches yield the op's result types, ``while`` has a condition yielding one ``bool[]``
and a body yielding the carried types; ``ops/call``: the callee is a function of the module whose
signature matches; ``ops/fused``). An op with regions and no rule is refused. A value may flow
into a slot whose type
it *fits*: same dtype and rank, and every known size of the slot equal (``f64[3]`` fits
``f64[?]``), which is how branches of different sizes join. Errors name the op as printed and the
user's file and line.
"""

from __future__ import annotations

from collections.abc import Sequence

from autostage.runtime import ir, op_registry, printer
from autostage.runtime.types import TensorType, Type


class VerificationError(ValueError):
    """The IR breaks an invariant: a bug in the code that built or rewrote it (tracing, a pass),
    never in the user's program. The message names the op as printed and its user location.
    """


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


def all_fit(values: Sequence[Type], slots: Sequence[Type]) -> bool:
    """Whether each value type fits its slot (``fits``), and there are as many of each."""
    return len(values) == len(slots) and all(fits(v, s) for v, s in zip(values, slots, strict=True))


def types_text(types: Sequence[Type]) -> str:
    """``(f64[?], i64[])``: types as verifier messages show them."""
    return "(" + ", ".join(str(t) for t in types) + ")"


def check_region_count(op: ir.Op, count: int) -> str | None:
    """The problem with ``op`` if it does not have ``count`` regions, for ``OpDef.verify`` rules."""
    if len(op.regions) != count:
        return f"has {len(op.regions)} regions; {op.name!r} has {count}"
    return None


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
        definition = op_registry.REGISTRY.get(op.name)
        if definition is None:
            raise self._error(op, f"uses op {op.name!r}, which is not registered")
        for i, value in enumerate(op.operands):
            if value not in self.visible:
                raise self._error(op, f"operand {i} ({self._name(value)}) "
                                      f"{self._why_not(value)}")
        self._check_types(op)
        rule = definition.verify
        if rule is None and op.regions:
            raise self._error(op, f"has {len(op.regions)} regions, but the verifier has no rule "
                                  f"for the regions of {op.name!r} (give its OpDef a verify rule)")
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
                                  f"{types_text(operand_types)}: {type(e).__name__}: {e}") from e
        actual = tuple(v.type for v in op.results)
        if actual != expected:
            raise self._error(op, f"has result types {types_text(actual)}, but its type rule "
                                  f"gives {types_text(expected)} for operands "
                                  f"{types_text(operand_types)}")

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
