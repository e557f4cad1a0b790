"""The IR verifier: valid modules pass, and every broken invariant is reported with the op as
printed and its location.

IR is built by hand; ``cond``/``while``/``call`` get test versions while their owners' versions
are not registered (same operand and region layout).
"""

import dataclasses

import numpy as np
import pytest
from autostage.runtime import ir, op_registry, verifier
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.types import ListType, TensorType, TupleType, scalar
from autostage.runtime.verifier import VerificationError, fits

I64, F64, BOOL = scalar("i64"), scalar("f64"), scalar("bool")
F64_VEC = TensorType("f64", (None,))
LOC = ir.Location("/src/model.py", 12, "step")


def _same_types(types, attrs):
    if len(set(types)) > 1:
        raise TypeError("operands differ")
    return (types[0],)


TEST_OPS = {
    "t_add": _same_types,
    "t_ne": lambda types, attrs: (BOOL,),
    "t_regions": lambda types, attrs: (),
}
STANDIN_OPS = {  # used while the owners' ops are not registered
    "while": lambda types, attrs: tuple(types),
    "cond": lambda types, attrs: tuple(attrs["result_types"]),
    "call": lambda types, attrs: tuple(attrs["result_types"]),
}


@pytest.fixture(autouse=True, scope="module")
def test_ops():
    with pytest.MonkeyPatch.context() as patch:
        for name, infer in {**STANDIN_OPS, **TEST_OPS}.items():
            if name in TEST_OPS or name not in op_registry.REGISTRY:
                patch.setitem(op_registry.REGISTRY, name, op_registry.OpDef(name, infer, None))
        yield


def emit(region, name, *operands, loc=None, regions=(), types=None, **attrs):
    """Appends an op; its result types come from its type rule unless ``types`` says otherwise."""
    if types is None:
        types = op_registry.result_types(name, [v.type for v in operands], attrs)
    return region.append(ir.Op(name, operands, types, attrs, regions, loc)).results


def const(region, value):
    return emit(region, "constant", value=as_constant_array(value))[0]


def module_of(*functions, entry=None):
    module = ir.Module(entry or functions[0].name)
    for function in functions:
        module.add(function)
    return module


def function(name, param_types, build):
    body = ir.Region(param_types)
    body.results = tuple(build(body, *body.args))
    return ir.Function(name, body)


def fails(module, message):
    with pytest.raises(VerificationError) as info:
        verifier.verify(module)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def region(arg_types, build):
    inner = ir.Region(arg_types)
    inner.results = tuple(build(inner, *inner.args))
    return inner


def counter_loop(cond_yields=None, body_yields=None, cond_args=(I64,), body_args=(I64,),
                 init=None):
    """while i != 10: i = i + 1, with parts replaceable by broken ones."""
    def build(body, n):
        start = init(body) if init else const(body, 0)
        cond = region(cond_args, cond_yields or (lambda r, i: emit(r, "t_ne", i, n)))
        step = region(body_args, body_yields or (lambda r, i: emit(r, "t_add", i, const(r, 1))))
        return emit(body, "while", start, regions=(cond, step), loc=LOC)
    return module_of(function("f", [I64], build))


def choose(then_yields, else_yields, result_types=(F64_VEC,), pred=None, then_args=()):
    def build(body, x, y, p):
        then = region(then_args, then_yields(x, y))
        orelse = region((), else_yields(x, y))
        return emit(body, "cond", pred(body) if pred else p, regions=(then, orelse),
                    result_types=result_types, loc=LOC)
    return module_of(function("f", [F64_VEC, TensorType("f64", (3,)), BOOL], build))


# Valid modules --------------------------------------------------------------------------------

def test_valid_loop_passes():
    verifier.verify(counter_loop())


def test_branches_of_different_sizes_join_into_an_unknown_size():
    module = choose(lambda x, y: lambda r: [y], lambda x, y: lambda r: [x])
    verifier.verify(module)


def test_valid_recursive_call_passes():
    def fact(body, n):
        (rest,) = emit(body, "call", n, callee="fact", result_types=(I64,))
        return [emit(body, "t_add", n, rest)[0]]
    main = function("main", [I64], lambda body, n: emit(
        body, "call", n, callee="fact", result_types=(I64,)))
    verifier.verify(module_of(main, function("fact", [I64], fact)))


def test_arguments_with_known_sizes_fit_parameters_with_unknown_ones():
    callee = function("g", [F64_VEC], lambda body, x: [x])
    main = function("main", [TensorType("f64", (3,))], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(F64_VEC,)))
    verifier.verify(module_of(main, callee))


def test_regions_see_values_of_enclosing_regions_and_earlier_ops():
    def build(body, x, y, p):
        z = emit(body, "t_add", x, x)[0]
        inner = region((), lambda r: [z])
        then = region((), lambda r: emit(r, "cond", p, regions=(
            inner, region((), lambda r2: [x])), result_types=(F64_VEC,)))
        return emit(body, "cond", p, regions=(then, region((), lambda r: [y])),
                    result_types=(F64_VEC,))
    verifier.verify(module_of(function("f", [F64_VEC, TensorType("f64", (3,)), BOOL], build)))


@pytest.mark.parametrize("value, slot, expected", [
    (F64, F64, True), (TensorType("f64", (3,)), F64_VEC, True),
    (F64_VEC, TensorType("f64", (3,)), False), (I64, F64, False), (F64_VEC, F64, False),
    (ListType(F64), ListType(F64), True), (ListType(F64), F64, False),
    (TupleType((F64,)), TupleType((F64,)), True),
])
def test_fits(value, slot, expected):
    assert fits(value, slot) is expected


# Module-level errors --------------------------------------------------------------------------

def test_missing_entry_function():
    module = module_of(function("f", [], lambda body: []), entry="main")
    fails(module, "the module's entry function @main is not in it")


def test_function_filed_under_another_name():
    module = ir.Module("f")
    module.functions["f"] = function("g", [], lambda body: [])
    fails(module, "function @g is filed in the module under the name 'f'")


# Definitions and visibility -------------------------------------------------------------------

def test_unregistered_op():
    module = module_of(function("f", [I64], lambda body, x: emit(
        body, "no_such_op", x, types=[I64], loc=LOC)))
    fails(module, "in function @f, op `%1:i64[] = no_such_op %0` at /src/model.py:12 uses op "
                  "'no_such_op', which is not registered")


def test_operand_used_before_it_is_defined():
    def build(body, x):
        (y,) = emit(body, "t_add", x, x)
        first = emit(body, "t_add", y, x, loc=LOC)
        body.ops.reverse()
        return first
    fails(module_of(function("f", [I64], build)),
          "in function @f, op `%1:i64[] = t_add %2 %0` at /src/model.py:12 operand 0 "
          "(%2:i64[]) is used before it is defined")


def test_operand_defined_inside_another_ops_region_is_not_visible():
    def build(body, x, y, p):
        then = region((), lambda r: emit(r, "t_add", x, x))
        emit(body, "cond", p, regions=(then, region((), lambda r: [x])),
             result_types=(F64_VEC,))
        return emit(body, "t_add", then.results[0], x, loc=LOC)
    fails(module_of(function("f", [F64_VEC, TensorType("f64", (3,)), BOOL], build)),
          "in function @f, op `%5:f64[?] = t_add %4 %0` at /src/model.py:12 operand 0 "
          "(%4:f64[?]) is not visible here (it is defined inside the region of another op)")


def test_operand_of_another_function():
    other = function("g", [I64], lambda body, x: [x])
    main = function("f", [I64], lambda body, x: emit(
        body, "t_add", x, other.body.args[0], loc=LOC))
    fails(module_of(main, other),
          "in function @f, op `%1:i64[] = t_add %0 %?` at /src/model.py:12 operand 1 "
          "(%?:i64[]) is not defined in function @f")


def test_value_defined_twice():
    def build(body, x):
        (y,) = emit(body, "t_add", x, x)
        body.append(body.ops[0])
        return [y]
    fails(module_of(function("f", [I64], build)),
          "in function @f, op `%1:i64[] = t_add %0 %0` defines %1:i64[] a second time "
          "(the same op or region appears twice in the IR)")


def test_function_returns_a_value_it_does_not_define():
    other = ir.Region([I64])
    fails(module_of(function("f", [I64], lambda body, x: [other.args[0]])),
          "function @f returns %?:i64[], which is not defined in function @f")


def test_region_yields_a_value_that_is_not_visible():
    def build(body, x, y, p):
        hidden = region((), lambda r: emit(r, "t_add", x, x))
        emit(body, "cond", p, regions=(hidden, region((), lambda r: [x])),
             result_types=(F64_VEC,))
        leaky = region((), lambda r: hidden.results)
        return emit(body, "cond", p, regions=(leaky, region((), lambda r: [x])),
                    result_types=(F64_VEC,), loc=LOC)
    fails(module_of(function("f", [F64_VEC, TensorType("f64", (3,)), BOOL], build)),
          "in function @f, a region of op `%5:f64[?] = cond %2` at /src/model.py:12 yields "
          "%4:f64[?], which is not visible here (it is defined inside the region of another op)")


# Types ----------------------------------------------------------------------------------------

def test_result_types_must_be_what_the_type_rule_gives():
    module = module_of(function("f", [I64], lambda body, x: emit(
        body, "t_add", x, x, types=[F64], loc=LOC)))
    fails(module, "in function @f, op `%1:f64[] = t_add %0 %0` at /src/model.py:12 has result "
                  "types (f64[]), but its type rule gives (i64[]) for operands (i64[], i64[])")


def test_operands_the_type_rule_rejects():
    module = module_of(function("f", [I64, F64], lambda body, x, y: emit(
        body, "t_add", x, y, types=[I64])))
    fails(module, "in function @f, op `%2:i64[] = t_add %0 %1` is rejected by its type rule "
                  "for operands (i64[], f64[]): TypeError: operands differ")


def test_constant_result_type_is_rechecked():
    body = ir.Region()
    body.append(ir.Op("constant", (), [I64], {"value": as_constant_array(np.arange(3))}))
    body.results = body.ops[0].results
    fails(module_of(ir.Function("f", body)),
          "in function @f, op `%0:i64[] = constant [0, 1, 2]` has result types (i64[]), but "
          "its type rule gives (i64[3]) for operands ()")


# Region rules ---------------------------------------------------------------------------------

def test_ops_with_regions_need_a_rule():
    module = module_of(function("f", [], lambda body: emit(
        body, "t_regions", regions=(region((), lambda r: []),), loc=LOC)))
    fails(module, "in function @f, op `t_regions` at /src/model.py:12 has 1 regions, but the "
                  "verifier has no rule for the regions of 't_regions' (give its OpDef a verify "
                  "rule)")


def test_rules_plug_in_per_op_definition(monkeypatch):
    monkeypatch.setattr(op_registry.REGISTRY["t_regions"], "verify",
                        lambda op, module: None if len(op.regions) == 1 else "needs one region")
    verifier.verify(module_of(function("f", [], lambda body: emit(
        body, "t_regions", regions=(region((), lambda r: []),)))))
    fails(module_of(function("f", [], lambda body: emit(body, "t_regions"))),
          "in function @f, op `t_regions` needs one region")


@pytest.mark.parametrize("build_loop, problem", [
    (lambda: counter_loop(cond_yields=lambda r, i: [i]),
     "has a cond region that yields (i64[]) instead of (bool[])"),
    (lambda: counter_loop(cond_yields=lambda r, i: [emit(r, "t_ne", i, i)[0]] * 2),
     "has a cond region that yields (bool[], bool[]) instead of (bool[])"),
    (lambda: counter_loop(body_yields=lambda r, i: [const(r, 1.5)]),
     "carries (i64[]), but its body yields (f64[])"),
    (lambda: counter_loop(body_yields=lambda r, i: []),
     "carries (i64[]), but its body yields ()"),
    (lambda: counter_loop(cond_args=(F64,), cond_yields=lambda r, i: [const(r, True)]),
     "carries (i64[]), but its cond region takes (f64[])"),
    (lambda: counter_loop(body_args=(I64, I64), body_yields=lambda r, i, j: [i]),
     "carries (i64[]), but its body region takes (i64[], i64[])"),
])
def test_while_regions(build_loop, problem):
    fails(build_loop(), "in function @f, op `%2:i64[] = while %1` at /src/model.py:12 " + problem)


def test_while_initial_values_must_fit_the_carried_types(monkeypatch):
    # A while whose type rule generalises the carried types (here: declared in an attribute).
    monkeypatch.setitem(op_registry.REGISTRY, "while", dataclasses.replace(
        op_registry.REGISTRY["while"], infer=lambda types, attrs: attrs["carried"]))

    def build(body, x):
        start = emit(body, "constant", value=as_constant_array([1, 2]))[0]
        cond = region((F64_VEC,), lambda r, i: [const(r, True)])
        step = region((F64_VEC,), lambda r, i: [i])
        return emit(body, "while", start, regions=(cond, step), carried=(F64_VEC,))
    fails(module_of(function("f", [I64], build)),
          "in function @f, op `%2:f64[?] = while %1 {carried=(f64[?],)}` carries (f64[?]), but "
          "its initial values are (i64[2])")


def test_while_with_the_wrong_number_of_regions():
    module = module_of(function("f", [I64], lambda body, n: emit(
        body, "while", n, regions=(region((I64,), lambda r, i: [const(r, True)]),))))
    fails(module, "in function @f, op `%1:i64[] = while %0` has 1 regions; 'while' has 2")


@pytest.mark.parametrize("module, message", [
    (lambda: choose(lambda x, y: lambda r: [y], lambda x, y: lambda r: [const(r, 1)]),
     "`%3:f64[?] = cond %2` at /src/model.py:12 has results (f64[?]), but its else region "
     "yields (i64[])"),
    (lambda: choose(lambda x, y: lambda r: [], lambda x, y: lambda r: [x]),
     "`%3:f64[?] = cond %2` at /src/model.py:12 has results (f64[?]), but its then region "
     "yields ()"),
    (lambda: choose(lambda x, y: lambda r: [x], lambda x, y: lambda r: [y],
                    result_types=(TensorType("f64", (3,)),)),
     "`%3:f64[3] = cond %2` at /src/model.py:12 has results (f64[3]), but its then region "
     "yields (f64[?])"),
    (lambda: choose(lambda x, y: lambda r, a: [x], lambda x, y: lambda r: [x],
                    then_args=(F64,)),
     "`%3:f64[?] = cond %2` at /src/model.py:12 passes () to its then region, which takes "
     "(f64[])"),
])
def test_cond_regions(module, message):
    fails(module(), "in function @f, op " + message)


def test_cond_needs_two_regions():
    def build(body, p):
        return emit(body, "cond", p, regions=(region((), lambda r: [p]),), result_types=(BOOL,))
    fails(module_of(function("f", [BOOL], build)),
          "in function @f, op `%1:bool[] = cond %0` has 1 regions; 'cond' has 2")


def test_cond_needs_a_bool_predicate(monkeypatch):
    # The real cond's type rule rejects it first; the region rule is the second line of defence.
    monkeypatch.setitem(op_registry.REGISTRY, "cond", dataclasses.replace(
        op_registry.REGISTRY["cond"], infer=STANDIN_OPS["cond"]))
    module = choose(lambda x, y: lambda r: [x], lambda x, y: lambda r: [x],
                    pred=lambda body: const(body, 1))
    fails(module, "in function @f, op `%4:f64[?] = cond %3` at /src/model.py:12 needs a bool[] "
                  "predicate as its first operand")


def test_call_of_a_missing_function():
    module = module_of(function("f", [I64], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(I64,), loc=LOC)))
    fails(module, "in function @f, op `%1:i64[] = call @g %0` at /src/model.py:12 calls @g, "
                  "which is not a function of the module")


def test_call_with_arguments_that_do_not_fit():
    callee = function("g", [TensorType("f64", (3,))], lambda body, x: [x])
    main = function("f", [F64_VEC], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(TensorType("f64", (3,)),)))
    fails(module_of(main, callee), "in function @f, op `%1:f64[3] = call @g %0` passes (f64[?]) "
                                   "to @g, which takes (f64[3])")


def test_call_with_the_wrong_result_types():
    callee = function("g", [I64], lambda body, x: [x])
    main = function("f", [I64], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(I64, I64)))
    fails(module_of(main, callee), "in function @f, op `%1:i64[], %2:i64[] = call @g %0` has "
                                   "results (i64[], i64[]), but @g returns (i64[])")


def test_call_with_regions():
    callee = function("g", [I64], lambda body, x: [x])
    main = function("f", [I64], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(I64,), regions=(ir.Region(),)))
    fails(module_of(main, callee), "in function @f, op `%1:i64[] = call @g %0` has 1 regions; "
                                   "'call' has 0")


def test_errors_inside_called_functions_name_that_function():
    callee = function("g", [I64], lambda body, x: emit(body, "t_add", x, x, types=[F64]))
    main = function("f", [I64], lambda body, x: emit(
        body, "call", x, callee="g", result_types=(F64,)))
    fails(module_of(main, callee), "in function @g, op `%1:f64[] = t_add %0 %0` has result "
                                   "types (f64[]), but its type rule gives (i64[]) for operands "
                                   "(i64[], i64[])")
