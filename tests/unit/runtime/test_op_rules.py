"""Every registered op has every rule in its ``OpDef`` (runtime/op_registry.py), or says why it
lacks one; and an op added the way README "How to add an op" shows runs on both targets."""

import numpy as np
import pytest
from autostage.runtime import interpreter, ir, op_registry, printer, tracing, verifier
from autostage.runtime.autodiff import build
from autostage.runtime.autodiff.tape import GradientTape
from autostage.runtime.backends.cpu import codegen
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.op_registry import Effects
from autostage.runtime.passes import dce
from autostage.runtime.tensor import Tensor
from autostage.runtime.types import TensorType
from ops_harness import evaluate, trace

cpu_compile.load_lowerings()  # imports autostage.runtime.ops too: every op and its cpu rule
NAMES = sorted(op_registry.REGISTRY)
EXEMPTIBLE = {"evaluate", "cpu", "vjp"}  # rules an op may lack, saying why in ``exemptions``
WITH_REGIONS = {"cond", "while", "fused"}


@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_every_rule(name):
    op = op_registry.REGISTRY[name]
    assert op.name == name and op.doc
    assert callable(op.infer)
    assert callable(op.evaluate) or op.exemptions.get("evaluate")
    assert isinstance(op.effects, Effects) or callable(op.effects)
    assert "cpu" in op.lowerings or op.exemptions.get("cpu")
    # its reverse-mode derivative, or NO_GRADIENT (runtime/autodiff)
    assert callable(op.vjp) or op.exemptions.get("vjp")
    assert set(op.exemptions) <= EXEMPTIBLE and all(op.exemptions.values())
    if name in WITH_REGIONS:  # the verifier refuses regions an op has no rule for
        assert op.verify is not None and len(op.region_names) >= 1
    if op.elementwise:
        assert len(op.lowerings) >= 1
    # which exceptions it may raise at run time (DCE, try staging): element-wise ops may take
    # the default (broadcast errors), every other op declares them
    assert op.raises is not None or op.elementwise
    assert callable(op.raises) or op.raises is None or all(
        isinstance(e, type) and issubclass(e, BaseException) for e in op.raises)


def test_the_ops_that_never_raise():
    never = {n for n in NAMES if op_registry.REGISTRY[n].raises == ()}
    assert never == {"all", "any", "argsort", "batched_product", "call", "cond", "constant",
                     "copy", "cumprod", "cumsum", "custom_gradient", "dim", "expand_dims",
                     "full_like",
                     "int_overflows", "list_append", "list_length", "list_new", "mean", "print",
                     "prod", "python_arith", "python_math", "size", "sort", "std",
                     "stop_gradient", "sum", "sum_to", "transpose", "tril", "triu", "undef",
                     "var", "while"}  # (a call: its callee's ops may)


def test_the_effects_that_keep_an_op():
    effectful = {n for n in NAMES if op_registry.REGISTRY[n].side_effects}
    assert effectful == {"assert", "call", "print", "py_function", "raise", "raise_if",
                         "random_draw",
                         "var_assign", "var_assign_add", "var_assign_sub", "var_read",
                         "warn", "while"}
    assert op_registry.REGISTRY["print"].effects == Effects(io=True)
    assert not Effects() and Effects(raises=True)


# README "How to add an op": the op module (runtime/ops/softsign.py) ...
def _infer_softsign(operand_types: tuple, attrs: dict) -> tuple:
    (x,) = operand_types
    if not (isinstance(x, TensorType) and x.dtype.kind == "f"):
        raise TypeError(f"softsign needs a float tensor, got {x}")
    return (x,)


def _evaluate_softsign(op, values: tuple, run) -> tuple:
    (x,) = values
    return (np.asarray(x / (x.dtype.type(1) + np.abs(x))),)


def _vjp_softsign(op, cotangents: tuple) -> tuple:
    """d softsign(x) / dx = 1 / (1 + |x|)**2."""
    (x,), (ct,) = op.operands, cotangents
    denominator = build.add(build.constant(1, x.type.dtype), build.op1("absolute", x))
    return (build.div(ct, build.mul(denominator, denominator)),)


def _register_softsign() -> None:
    op_registry.register("softsign", _infer_softsign, _evaluate_softsign,
                         doc="x / (1 + |x|), element-wise; no attrs", raises=(), vjp=_vjp_softsign)

    # ... and the cpu lowering module (runtime/backends/cpu/lower_softsign.py).
    @codegen.lowering("softsign")
    def _softsign(op: ir.Op, em: codegen.Emitter) -> None:
        (x,) = op.operands
        one = f"{codegen.np_dtype(x.type.dtype)}(1)"
        em.line(f"{em.name(op.results[0])} = {em.name(x)} / ({one} + np.abs({em.name(x)}))")


def test_an_op_added_as_the_readme_shows_runs_on_both_targets(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(op_registry, "REGISTRY", dict(op_registry.REGISTRY))  # a temp registry
    _register_softsign()
    body = ir.Region([TensorType("f32", (None,))])
    (y,) = body.append(ir.Op("softsign", body.args, (TensorType("f32", (None,)),), {})).results
    body.results = (y,)
    module = ir.Module("f")
    module.add(ir.Function("f", body))
    verifier.verify(module)
    assert "softsign %0" in printer.format_module(module)
    unused = ir.Module("g")  # pure and unable to fail: removed when its result is unused
    body = ir.Region([TensorType("f32", (None,))])
    body.append(ir.Op("softsign", body.args, (TensorType("f32", (None,)),), {}))
    body.results = body.args
    unused.add(ir.Function("g", body))
    dce.run(unused)
    assert body.ops == []
    x = np.array([-3.0, 0.0, 0.5, 8.0], dtype=np.float32)
    expected = x / (np.float32(1) + np.abs(x))
    (by_interpreter,) = interpreter.run(module, [x])
    (by_cpu,) = cpu_compile.compile_module(module)([x])
    np.testing.assert_array_equal(by_interpreter, expected, strict=True)
    np.testing.assert_array_equal(by_cpu, expected, strict=True)

    def gradient(x):  # its VJP: d/dx sum(softsign(x)), traced with a tape
        with GradientTape() as tape:
            tape.watch(x)
            (y,) = tracing.emit("softsign", [x.value])
            total = Tensor(tracing.emit("sum", [y], {"axis": None, "keepdims": False,
                                                     "dtype": None})[0])
        return tape.gradient(total, x)
    (by_vjp,) = evaluate(trace(gradient, [TensorType("f32", (None,))]), x)
    np.testing.assert_allclose(by_vjp, 1 / (1 + np.abs(x)) ** 2, rtol=1e-6)
