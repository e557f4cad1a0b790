"""Golden tests of the IR printer: names in order of definition, short types, sorted attributes,
abbreviated constants, indented regions with ``yield``, ``return``, and basename locations.

The printed form is part of the API: a change here is a change users see.
"""

import textwrap

import numpy as np
import pytest
from autostage.runtime import ir, op_registry, printer
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.types import ListType, TensorType, scalar

I64, F32, BOOL = scalar("i64"), scalar("f32"), scalar("bool")


def _same_type(types, attrs):
    return (types[0],)


TEST_OPS = {
    "t_ne": (lambda types, attrs: (TensorType("bool", types[0].shape),), None),
    "t_add": (_same_type, None),
    "t_sum": (lambda types, attrs: (scalar(types[0].dtype),), None),
    "t_print": (lambda types, attrs: (), None),
    "t_list": (lambda types, attrs: (ListType(types[0]),), None),
}
STANDIN_OPS = {  # used while the owners' ops are not registered
    "while": (lambda types, attrs: tuple(types), None),
    "cond": (lambda types, attrs: attrs["result_types"], None),
    "call": (lambda types, attrs: attrs["result_types"], None),
}


@pytest.fixture(autouse=True, scope="module")
def test_ops():
    with pytest.MonkeyPatch.context() as patch:
        for name, (infer, evaluate) in {**STANDIN_OPS, **TEST_OPS}.items():
            if name in TEST_OPS or name not in op_registry.REGISTRY:
                patch.setitem(op_registry.REGISTRY, name, op_registry.OpDef(name, infer, evaluate))
        yield


def emit(region, name, *operands, loc=None, regions=(), **attrs):
    types = op_registry.result_types(name, [v.type for v in operands], attrs)
    return region.append(ir.Op(name, operands, types, attrs, regions, loc)).results


def const(region, value, dtype=None, loc=None):
    return emit(region, "constant", value=as_constant_array(value, dtype), loc=loc)[0]


def at(line):
    return ir.Location("/home/me/project/collatz.py", line, "collatz")


def function(name, param_types, build):
    body = ir.Region(param_types)
    body.results = tuple(build(body, *body.args))
    return ir.Function(name, body)


def collatz():
    """Counts the Collatz steps of n (the loop only; the step is a stand-in add)."""
    def build(body, n):
        steps = const(body, 0, loc=at(5))
        cond = ir.Region([I64, I64])
        cond.results = emit(cond, "t_ne", cond.args[0], const(cond, 1, loc=at(6)), loc=at(6))
        loop = ir.Region([I64, I64])
        b_n, b_steps = loop.args
        then, orelse = ir.Region(), ir.Region()
        then.results = emit(then, "t_add", b_n, b_n, loc=at(8))
        orelse.results = (b_n,)
        even = emit(loop, "t_ne", b_n, b_steps, loc=at(7))[0]
        (new_n,) = emit(loop, "cond", even, regions=(then, orelse), result_types=(I64,),
                        loc=at(7))
        loop.results = (new_n, emit(loop, "t_add", b_steps, const(loop, 1), loc=at(10))[0])
        return [emit(body, "while", n, steps, regions=(cond, loop), loc=at(6))[1]]
    return function("collatz", [I64], build)


def golden(text):
    return textwrap.dedent(text).strip("\n")


def test_golden_function_with_while_and_cond():
    assert printer.format_function(collatz()) == golden("""
        func @collatz(%0:i64[]) -> (i64[]):
          %1:i64[] = constant 0                 # collatz.py:5
          %2:i64[], %3:i64[] = while %0 %1      # collatz.py:6
            cond(%4:i64[], %5:i64[]):
              %6:i64[] = constant 1             # collatz.py:6
              %7:bool[] = t_ne %4 %6            # collatz.py:6
              yield %7
            body(%8:i64[], %9:i64[]):
              %10:bool[] = t_ne %8 %9           # collatz.py:7
              %11:i64[] = cond %10              # collatz.py:7
                then:
                  %12:i64[] = t_add %8 %8       # collatz.py:8
                  yield %12
                else:
                  yield %8
              %13:i64[] = constant 1
              %14:i64[] = t_add %9 %13          # collatz.py:10
              yield %11, %14
          return %3
        """)


def test_golden_module_prints_the_entry_function_first_then_the_others_in_order():
    module = ir.Module("main")
    module.add(function("helper", [F32], lambda body, x: [emit(body, "t_add", x, x)[0]]))
    module.add(function("main", [TensorType("f32", (None, 256))], lambda body, x: emit(
        body, "call", x, callee="helper", result_types=(F32,))))
    module.add(function("unused", [], lambda body: []))
    assert printer.format_module(module) == golden("""
        func @main(%0:f32[?,256]) -> (f32[]):
          %1:f32[] = call @helper %0
          return %1

        func @helper(%0:f32[]) -> (f32[]):
          %1:f32[] = t_add %0 %0
          return %1

        func @unused() -> ():
          return
        """)


@pytest.mark.parametrize("value, dtype, text", [
    (0, None, "0"),
    (-2.5, None, "-2.5"),
    (0.1, np.float32, "0.1"),  # shortest repr of the float32, not 0.10000000149011612
    (True, None, "True"),
    (1 + 2j, None, "(1+2j)"),
    (np.nan, None, "nan"),
    ([1, 2, 3], None, "[1, 2, 3]"),
    ([[1.0, 2.0], [3.0, 4.0]], None, "[[1.0, 2.0], [3.0, 4.0]]"),
    (np.arange(8), None, "[0, 1, 2, 3, 4, 5, 6, 7]"),
    (np.arange(1000.0), None, "[0.0, 1.0, 2.0, ..., 999.0]"),
    (np.arange(12).reshape(3, 4), None, "[0, 1, 2, ..., 11]"),
    (np.zeros((0, 3)), None, "[]"),
])
def test_constants_print_short_and_big_ones_abbreviated(value, dtype, text):
    body = ir.Region()
    const(body, value, dtype)
    assert printer.format_op(body.ops[0], printer.value_names(function("f", [], lambda b: []))
                             ).endswith(f"= constant {text}")
    assert printer.format_attribute(as_constant_array(value, dtype)) == text


@pytest.mark.parametrize("value, text", [
    (3, "3"), (-1.5, "-1.5"), ("mean", "'mean'"), (None, "None"), (False, "False"),
    ((0, 1), "(0, 1)"), ((2,), "(2,)"), ([1, "a"], "[1, 'a']"), (np.dtype("float32"), "f32"),
    (slice(1, None), "1:"), (slice(None, 5, 2), ":5:2"), (I64, "i64[]"),
    (np.float64(0.5), "0.5"),
])
def test_attribute_values(value, text):
    assert printer.format_attribute(value) == text


def test_attributes_are_sorted_after_the_operands():
    body = ir.Region([TensorType("f64", (None, 3))])
    emit(body, "t_sum", body.args[0], keepdims=False, axis=(0, 1), dtype=np.dtype("f8"))
    body.results = body.ops[0].results
    assert printer.format_function(ir.Function("f", body)).splitlines()[1] == (
        "  %1:f64[] = t_sum %0 {axis=(0, 1), dtype=f64, keepdims=False}")


def test_ops_without_results_and_with_several_results():
    body = ir.Region([I64])
    emit(body, "t_print", body.args[0], body.args[0], format="{} {}")
    emit(body, "while", body.args[0], body.args[0], regions=(ir.Region(), ir.Region()))
    assert printer.format_function(ir.Function("f", body)) == golden("""
        func @f(%0:i64[]) -> ():
          t_print %0 %0 {format='{} {}'}
          %1:i64[], %2:i64[] = while %0 %0
            cond:
              yield
            body:
              yield
          return
        """)


def test_list_types_and_unnamed_regions():
    body = ir.Region([F32])
    inner = ir.Region([F32])
    inner.results = inner.args
    emit(body, "t_list", body.args[0], regions=(inner,))
    body.results = body.ops[0].results
    assert printer.format_function(ir.Function("f", body)) == golden("""
        func @f(%0:f32[]) -> (list<f32[]>):
          %1:list<f32[]> = t_list %0
            region0(%2:f32[]):
              yield %2
          return %1
        """)


def test_values_not_defined_in_the_function_print_as_unknown():
    other = ir.Region([I64])
    body = ir.Region([I64])
    emit(body, "t_add", body.args[0], other.args[0])
    body.results = (other.args[0],)
    assert printer.format_function(ir.Function("f", body)) == golden("""
        func @f(%0:i64[]) -> ():
          %1:i64[] = t_add %0 %?
          return %?
        """).replace("-> ()", "-> (i64[])")


def test_format_op_without_names_and_result_types_shown_once():
    body = ir.Region([I64])
    op = body.append(ir.Op("call", body.args, [I64], {"callee": "g", "result_types": (I64,)}))
    assert printer.format_op(op) == "%?:i64[] = call @g %?"
    assert printer.format_op(op, printer.value_names(ir.Function("f", body))) == (
        "%1:i64[] = call @g %0")
    op.attrs["result_types"] = (F32,)  # not what the line shows: printed
    assert printer.format_op(op).endswith("{result_types=(f32[],)}")


def test_locations_are_basenames_and_long_lines_keep_two_spaces():
    body = ir.Region([TensorType("f64", (None, None, None))] * 3)
    loc = ir.Location("/a/b/model.py", 123)
    emit(body, "t_add", body.args[0], body.args[1], loc=loc)
    emit(body, "t_add", body.args[0], body.args[1], loc=loc, why="an attribute")
    lines = printer.format_function(ir.Function("f", body)).splitlines()
    assert lines[1] == "  %3:f64[?,?,?] = t_add %0 %1           # model.py:123"
    assert lines[2] == "  %4:f64[?,?,?] = t_add %0 %1 {why='an attribute'}  # model.py:123"
    assert printer.format_location(loc) == "model.py:123"
    assert printer.format_location(None) == ""


def test_names_are_per_function_and_follow_definition_order():
    fn = collatz()
    names = printer.value_names(fn)
    assert list(names.values()) == [f"%{i}" for i in range(15)]
    assert names[fn.body.args[0]] == "%0"
    while_op = fn.body.ops[1]
    assert [names[v] for v in while_op.results] == ["%2", "%3"]
    assert [names[v] for v in while_op.regions[1].args] == ["%8", "%9"]
