"""The NumPy reference interpreter: results and their dtypes, regions, calls, argument checks,
error notes with the user's location, and ops whose NumPy reference disagrees with their type rule.

IR is built by hand (or with ``tracing.emit``) from ``constant`` and small test-only ops; the
``cond``/``while``/``call`` ops get test versions while their owners' versions are not registered.
"""

import numpy as np
import pytest
from autostage.runtime import interpreter, ir, op_registry, tracing
from autostage.runtime.ops.constant import as_constant_array
from autostage.runtime.types import TensorType, join_dims, scalar

I64, F64, BOOL = scalar("i64"), scalar("f64"), scalar("bool")
F64_VEC = TensorType("f64", (None,))


def _binary(ufunc, compare=False):
    def infer(types, attrs):
        a, b = types
        if a.dtype != b.dtype or a.ndim != b.ndim:
            raise TypeError(f"test op: {a} and {b} differ")
        shape = tuple(join_dims(x, y) for x, y in zip(a.shape, b.shape, strict=True))
        return (TensorType("bool" if compare else a.dtype, shape),)
    return infer, lambda op, values, run: (ufunc(*values),)


def _while(op, values, run):
    cond, body = op.regions
    while run(cond, values)[0]:
        values = run(body, values)
    return values


def _cond(op, values, run):
    return run(op.regions[0] if values[0] else op.regions[1], values[1:])


TEST_OPS = {
    "t_add": _binary(np.add), "t_mul": _binary(np.multiply), "t_sub": _binary(np.subtract),
    "t_floordiv": _binary(np.floor_divide), "t_mod": _binary(np.mod),
    "t_ne": _binary(np.not_equal, True), "t_le": _binary(np.less_equal, True),
    "t_eq": _binary(np.equal, True),
    "t_getitem": (lambda types, attrs: (scalar(types[0].dtype),),
                  lambda op, values, run: (values[0][values[1]],)),
    "t_as_f32": (lambda types, attrs: (types[0],),  # wrong on purpose: computes float32
                 lambda op, values, run: (values[0].astype(np.float32),)),
    "t_pyint": (lambda types, attrs: (I64,), lambda op, values, run: (3,)),
    "t_two": (lambda types, attrs: (I64,), lambda op, values, run: (np.int64(1), np.int64(2))),
}
STANDIN_OPS = {  # used while the owners' ops are not registered
    "while": (lambda types, attrs: tuple(types), _while),
    "cond": (lambda types, attrs: attrs["result_types"], _cond),
    "call": (lambda types, attrs: attrs["result_types"],
             lambda op, values, run: run.call(op.attrs["callee"], values)),
}


@pytest.fixture(autouse=True, scope="module")
def test_ops():
    with pytest.MonkeyPatch.context() as patch:
        for name, (infer, evaluate) in {**STANDIN_OPS, **TEST_OPS}.items():
            if name in TEST_OPS or name not in op_registry.REGISTRY:
                patch.setitem(op_registry.REGISTRY, name, op_registry.OpDef(name, infer, evaluate))
        yield


def emit(region, name, *operands, loc=None, regions=(), **attrs):
    """Appends an op to ``region`` (results typed by its type rule) and returns its results."""
    types = op_registry.result_types(name, [v.type for v in operands], attrs)
    return region.append(ir.Op(name, operands, types, attrs, regions, loc)).results


def const(region, value, dtype=None):
    return emit(region, "constant", value=as_constant_array(value, dtype))[0]


def add_function(module, name, param_types, build):
    body = ir.Region(param_types)
    body.results = tuple(build(body, *body.args))
    return module.add(ir.Function(name, body))


def one_function(param_types, build):
    module = ir.Module("f")
    add_function(module, "f", param_types, build)
    return module


# Results and dtypes ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, dtype, expected_type", [
    (3, "int64", np.int64), (2.5, "float32", np.float32), (True, None, np.bool_),
    (1 + 2j, "complex128", np.complex128),
])
def test_0d_results_are_numpy_scalars_of_the_right_dtype(value, dtype, expected_type):
    module = one_function([], lambda body: [const(body, value, dtype)])
    (result,) = interpreter.run(module, [])
    assert type(result) is expected_type
    assert result == value


def test_array_constants_come_back_as_writable_copies():
    module = one_function([], lambda body: [const(body, [1.0, 2.0])])
    (first,) = interpreter.run(module, [])
    first[0] = 99.0
    (second,) = interpreter.run(module, [])
    assert type(second) is np.ndarray and second.flags.writeable
    np.testing.assert_array_equal(second, [1.0, 2.0])


def test_parameters_are_bound_and_ops_run_in_order():
    module = one_function([F64_VEC, F64_VEC], lambda body, x, y: [
        emit(body, "t_mul", emit(body, "t_add", x, y)[0], y)[0]])
    (result,) = interpreter.run(module, [np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    np.testing.assert_array_equal(result, [12.0, 24.0])
    assert result.dtype == np.float64


@pytest.mark.parametrize("arg", [np.float64(1.5), np.array(1.5)])
def test_0d_arguments_give_scalar_results(arg):
    module = one_function([F64], lambda body, x: [emit(body, "t_add", x, x)[0]])
    (result,) = interpreter.run(module, [arg])
    assert type(result) is np.float64 and result == 3.0


def test_returning_a_parameter_returns_the_callers_array_as_python_would():
    x = np.arange(3.0)
    module = one_function([F64_VEC], lambda body, x: [x, x])
    first, second = interpreter.run(module, [x])
    assert first is x and second is x


def test_results_come_back_in_order_with_several_results():
    module = one_function([], lambda body: [const(body, 1), const(body, 2.0), const(body, [3])])
    a, b, c = interpreter.run(module, [])
    assert (type(a), type(b), type(c)) == (np.int64, np.float64, np.ndarray)
    assert (a, b, c.tolist()) == (1, 2.0, [3])


# Regions --------------------------------------------------------------------------------------

def collatz_steps_module():
    """steps = 0; while n != 1: n = n // 2 if n % 2 == 0 else 3 * n + 1; steps += 1."""
    def build(body, n):
        steps = const(body, 0)
        cond = ir.Region([I64, I64])
        c_n, _ = cond.args
        cond.results = emit(cond, "t_ne", c_n, const(cond, 1))
        loop = ir.Region([I64, I64])
        b_n, b_steps = loop.args
        even = emit(loop, "t_eq", emit(loop, "t_mod", b_n, const(loop, 2))[0], const(loop, 0))[0]
        then, orelse = ir.Region(), ir.Region()
        then.results = emit(then, "t_floordiv", b_n, const(then, 2))  # captures b_n
        tripled = emit(orelse, "t_mul", b_n, const(orelse, 3))[0]
        orelse.results = emit(orelse, "t_add", tripled, const(orelse, 1))
        (new_n,) = emit(loop, "cond", even, regions=(then, orelse), result_types=(I64,))
        loop.results = (new_n, emit(loop, "t_add", b_steps, const(loop, 1))[0])
        return [emit(body, "while", n, steps, regions=(cond, loop))[1]]
    return one_function([I64], build)


@pytest.mark.parametrize("n, steps", [(1, 0), (2, 1), (6, 8), (27, 111)])
def test_while_and_cond_regions_see_enclosing_values(n, steps):
    (result,) = interpreter.run(collatz_steps_module(), [np.int64(n)])
    assert type(result) is np.int64 and result == steps


def test_ops_built_by_tracing_run():
    module = ir.Module("double")
    trace = tracing.Trace(module, "double", [F64_VEC])
    with tracing.tracing(trace):
        (x,) = trace.function.body.args
        (two,) = tracing.emit("constant", (), {"value": as_constant_array([2.0])})
        (result,) = tracing.emit("t_mul", (x, two))
    trace.function.body.results = (result,)
    module.add(trace.function)
    (out,) = interpreter.run(module, [np.array([1.0, 5.0])])
    np.testing.assert_array_equal(out, [2.0, 10.0])


# Calls ----------------------------------------------------------------------------------------

def factorial_module():
    """fact(n) = 1 if n <= 1 else n * fact(n - 1), staged as a recursive call."""
    module = ir.Module("main")

    def fact(body, n):
        small = emit(body, "t_le", n, const(body, 1))[0]
        base, step = ir.Region(), ir.Region()
        base.results = (const(base, 1),)
        (rest,) = emit(step, "call", emit(step, "t_sub", n, const(step, 1))[0],
                       callee="fact", result_types=(I64,))
        step.results = emit(step, "t_mul", n, rest)
        return emit(body, "cond", small, regions=(base, step), result_types=(I64,))

    add_function(module, "main", [I64], lambda body, n: emit(
        body, "call", n, callee="fact", result_types=(I64,)))
    add_function(module, "fact", [I64], fact)
    return module


@pytest.mark.parametrize("n, expected", [(0, 1), (1, 1), (5, 120), (20, 2432902008176640000)])
def test_recursive_calls_get_their_own_frames(n, expected):
    (result,) = interpreter.run(factorial_module(), [np.int64(n)])
    assert type(result) is np.int64 and result == expected


def test_a_named_function_runs_instead_of_the_entry():
    (result,) = interpreter.run(factorial_module(), [np.int64(4)], function="fact")
    assert result == 24


def test_an_unknown_function_name_is_a_key_error():
    with pytest.raises(KeyError, match="no function named 'nope'; it has main, fact"):
        interpreter.run(factorial_module(), [np.int64(4)], function="nope")


# Argument checks ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, error, message", [
    ([], TypeError, "takes 1 arguments (0 given)"),
    ([np.arange(3.0), np.arange(3.0)], TypeError, "takes 1 arguments (2 given)"),
    ([np.arange(3)], TypeError, "argument 0 of @f has dtype int64 and rank 1; the function was "
                                "staged for f64[3]"),
    ([np.zeros((3, 1))], TypeError, "rank 2"),
    ([[1.0, 2.0, 3.0]], TypeError, "must be a NumPy array or scalar of type f64[3], not list"),
    ([np.zeros(4)], ValueError, "argument 0 of @f has shape (4,); the function was staged for "
                                "f64[3]"),
])
def test_arguments_must_match_the_parameters(args, error, message):
    module = one_function([TensorType("f64", (3,))], lambda body, x: [x])
    with pytest.raises(error) as info:
        interpreter.run(module, args)
    assert message in str(info.value)


# Errors while running -------------------------------------------------------------------------

def test_a_failing_op_keeps_its_error_type_and_gets_a_note_with_the_user_location():
    loc = ir.Location("/home/me/model.py", 12, "step")
    module = one_function([F64_VEC, F64_VEC], lambda body, x, y: emit(
        body, "t_add", x, y, loc=loc))
    with pytest.raises(ValueError, match="could not be broadcast") as info:
        interpreter.run(module, [np.zeros(3), np.zeros(4)])
    assert info.value.__notes__ == [
        "autostage: error in `%2:f64[?] = t_add %0 %1` at /home/me/model.py:12 (in step)"]


def test_the_note_of_an_error_inside_a_region_names_the_inner_op_only():
    def build(body, x, i):
        loop = ir.Region([I64])
        loop.results = (emit(loop, "t_add", emit(loop, "t_getitem", x, i,
                                                 loc=ir.Location("m.py", 5))[0],
                             loop.args[0])[0],)
        cond = ir.Region([I64])
        cond.results = emit(cond, "t_ne", cond.args[0], const(cond, 0))
        return emit(body, "while", i, regions=(cond, loop), loc=ir.Location("m.py", 4))
    module = one_function([TensorType("i64", (None,)), I64], build)
    with pytest.raises(IndexError) as info:
        interpreter.run(module, [np.arange(3), np.int64(7)])
    assert info.value.__notes__ == ["autostage: error in `%7:i64[] = t_getitem %0 %1` at m.py:5"]


def test_errors_in_a_callee_note_where_it_was_called_from():
    module = ir.Module("main")
    add_function(module, "main", [F64_VEC], lambda body, x: emit(
        body, "call", x, x, callee="g", result_types=(F64,), loc=ir.Location("main.py", 3, "main")))
    add_function(module, "g", [F64_VEC, F64_VEC], lambda body, a, b: emit(
        body, "t_getitem", a, const(body, 10), loc=ir.Location("g.py", 8, "g")))
    with pytest.raises(IndexError) as info:
        interpreter.run(module, [np.zeros(3)])
    assert info.value.__notes__ == [
        "autostage: error in `%3:f64[] = t_getitem %0 %2` at g.py:8 (in g)",
        "autostage: called from `%1:f64[] = call @g %0 %0` at "
        "main.py:3 (in main)"]


def test_the_note_uses_the_location_tracing_recorded():
    module = ir.Module("f")
    trace = tracing.Trace(module, "f", [F64_VEC, F64_VEC])
    with tracing.tracing(trace):
        x, y = trace.function.body.args
        (result,) = tracing.emit("t_add", (x, y))
    line = trace.function.body.ops[0].loc.lineno
    trace.function.body.results = (result,)
    module.add(trace.function)
    with pytest.raises(ValueError) as info:
        interpreter.run(module, [np.zeros(2), np.zeros(5)])
    assert info.value.__notes__[0].endswith(
        f"at {__file__}:{line} (in test_the_note_uses_the_location_tracing_recorded)")


@pytest.mark.parametrize("name, message", [
    ("t_as_f32", "op 't_as_f32' computed a float32 value of shape (2,), but its type rule says "
                 "f64[?]"),
    ("t_pyint", "op 't_pyint' computed a Python int, but its type rule says i64[]"),
    ("t_two", "op 't_two' computed 2 results, its type rule gives 1"),
])
def test_an_op_whose_reference_disagrees_with_its_type_rule_fails_loudly(name, message):
    module = one_function([F64_VEC], lambda body, x: emit(body, name, x))
    with pytest.raises(interpreter.TypeRuleMismatchError) as info:
        interpreter.run(module, [np.zeros(2)])
    assert message in str(info.value)
    assert isinstance(info.value, TypeError)
    assert info.value.__notes__[0].startswith("autostage: error in `%1:")
