"""Weak (Python-number) types: ``TensorType.weak`` is part of the type but not of its equality;
it prints as ``~``, round-trips through the IR text, and travels across staged calls in the
callee's parameter and result types."""

import numpy as np
import pytest
from autostage.runtime import array_shapes, ir, ir_text, printer, value_info
from autostage.runtime.types import TensorType, strong
from ops_harness import trace

import autostage

TARGETS = ("interpreter", "cpu")
WEAK_F64 = TensorType("f64", (), weak=True)


def test_weak_is_not_compared_or_hashed():
    assert WEAK_F64 == TensorType("f64", ()) and hash(WEAK_F64) == hash(TensorType("f64", ()))
    assert {WEAK_F64: 1}[TensorType("f64", ())] == 1
    assert str(WEAK_F64) == "f64[]~" and str(strong(WEAK_F64)) == "f64[]"
    assert strong(WEAK_F64).weak is False and strong(WEAK_F64) == WEAK_F64


@pytest.mark.parametrize("dtype, shape", [("f64", (3,)), ("f64", (None,)), ("f32", ()),
                                          ("i32", ())])
def test_only_python_number_types_may_be_weak(dtype, shape):
    with pytest.raises(TypeError, match="may be weak"):
        TensorType(dtype, shape, weak=True)


def test_mark_weak_sets_the_type_flag_outside_a_trace_too():
    body = ir.Region([TensorType("i64", ())])
    (value,) = body.args
    assert not value_info.is_weak(value)
    value_info.mark_weak(value)
    assert value_info.is_weak(value) and value.type == TensorType("i64", ())
    with pytest.raises(TypeError):
        value_info.mark_weak(ir.Region([TensorType("f64", (None,))]).args[0])


MODULE = """\
module @main
func @main(%0:f32[?], %1:i64[]~) -> (f32[?], f64[]~):
  %2:f64[]~ = call %1 attrs(callee='half', result_types=(type('f64[]~'),))
  %3:f32[] = cast %2 attrs(dtype=dtype('f32'))
  %4:f32[?] = multiply %0 %3
  return %4 %2
func @half(%0:i64[]~) -> (f64[]~):
  %1:f64[] = cast %0 attrs(dtype=dtype('f64'))
  %2:f64[] = constant attrs(value=array('f64', (), [0.5]))
  %3:f64[]~ = multiply %1 %2
  return %3
"""


def test_the_text_form_round_trips_weak_types():
    module = ir_text.parse(MODULE)
    assert ir_text.format_module(module) == MODULE
    assert ir_text.format_module(ir.copy_module(module)) == MODULE  # copies keep weak
    call = module.main.body.ops[0]
    assert call.attrs["result_types"][0].weak and call.results[0].type.weak
    assert module.functions["half"].param_types[0].weak and not module.main.param_types[0].weak
    assert ir_text.parse_type("list<f64[]~>").element.weak
    assert printer.format_module(module).splitlines()[:2] == [
        "func @main(%0:f32[?], %1:i64[]~) -> (f32[?], f64[]~):",
        "  %2:f64[]~ = call @half %1"]


@pytest.mark.parametrize("old, new, message", [
    ("-> (f32[?], f64[]~)", "-> (f32[?], f64[])",
     r"@main returns \(f32\[\?\], f64\[\]~\), its header says \(f32\[\?\], f64\[\]\)"),
    ("%4:f32[?] =", "%4:f32[?]~ =", "may be weak"),
    ("%3:f32[] =", "%3:f32[]~ =", "may be weak")])
def test_the_text_form_rejects_inconsistent_weak_types(old, new, message):
    with pytest.raises(ir_text.TextFormError, match=message):
        ir_text.parse(MODULE.replace(old, new, 1))


def test_messages_for_users_say_python_number_not_tilde():
    def fn(x):
        n = x.shape[0] * 0.5
        assert repr(n).startswith("<staged Tensor f64[] (a Python number)")
        assert repr(x) == "<staged Tensor f32[?]>"
        with pytest.raises(TypeError, match=r"must be an integer, not a staged f64\[\]$"):
            array_shapes.size_operands(n)
        return x
    trace(fn, [TensorType("f32", (None,))])


@pytest.mark.parametrize("target", TARGETS)
def test_an_op_result_is_weak_only_where_staging_says(target):
    def fn(x):
        n = x.shape[0]
        # np.copy's type rule passes n's type through, but a copy is a NumPy int64
        return np.copy(n) * x, n * x

    x = np.ones(3, np.float32)
    got = autostage.convert(fn, target=target)(x)
    assert [r.dtype for r in got] == [r.dtype for r in fn(x)] == [np.float64, np.float32]


@autostage.convert
def scale(x, n):
    return x * n


def outer(x):
    n = x.shape[0]  # a Python int: weak
    return scale(x, n * 0.5)  # a Python float: the result stays float32


def half(n):
    return n * 0.5  # called with a Python int: returns a Python float


def uses_half(x):
    return half(x.shape[0]) * x


def weak_and_strong(x):
    # one callee with a Python float and with a NumPy float64: two traces
    return scale(x, x.shape[0] * 0.5), scale(x, np.float64(x.shape[0]) * 0.5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [outer, uses_half, weak_and_strong], ids=lambda f: f.__name__)
def test_weak_values_cross_staged_calls(fn, target):
    x = np.arange(1, 5, dtype=np.float32)
    staged = autostage.convert(fn, target=target)
    got, expected = staged(x), fn(x)
    got, expected = (r if isinstance(r, tuple) else (r,) for r in (got, expected))
    assert [r.dtype for r in expected] == [np.float32] + [np.float64] * (len(expected) - 1)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and np.array_equal(g, e)
    assert " = call @" in staged.ir(x)  # a staged call, not inlined


def test_the_callee_of_a_weak_argument_takes_and_returns_weak_types():
    text = autostage.convert(uses_half).ir(np.ones(4, np.float32))
    assert "func @half(%0:i64[]~) -> (f64[]~):" in text
    assert "= call @half" in text
    text = autostage.convert(weak_and_strong).ir(np.ones(4, np.float32))
    assert "func @scale(%0:f32[4], %1:f64[]~) -> (f32[4]):" in text  # its size is known
    assert "func @scale_1(%0:f32[4], %1:f64[]) -> (f64[4]):" in text


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_asarray_of_a_python_number_is_a_strong_numpy_value(target):
    def f(x):
        n = x.shape[0]  # a weak int
        return np.asarray(n) * x, np.asarray(n * 0.5) * x, np.asarray(n)

    x = np.ones(3, np.float32)
    expected = f(x)
    got = autostage.convert(f, target=target)(x)
    for e, g in zip(expected, got, strict=True):
        assert type(g) is type(e) and g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


def _numpy_of_python_numbers(x):
    n, total = x.shape[-1], float(x.sum())
    return (x / np.sqrt(n), x + np.abs(n), np.sqrt(total), np.add(n, 1), np.maximum(n, 2),
            np.isfinite(total), np.round(total), np.where(total > 0, n, 0), n + 1, abs(n),
            np.size(x), np.ndim(x), np.allclose(x, 1.0))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x", [np.ones((2, 4), np.float32), np.full(100, 100, np.int8)],
                         ids=["f32", "i8"])
def test_numpy_functions_of_python_numbers_give_numpy_values(target, x):
    """``np.sqrt(n)`` of a Python int ``n`` (a staged size, ``float(t)``) is an ``np.float64``
    in NumPy, whose dtype counts in promotion: ``f32 / np.sqrt(n)`` is float64 and ``i8 +
    np.abs(n)`` int64 (staged as Python numbers, they were float32 and an int8 that wrapped).
    Python's own operators and NumPy's shape functions still give Python numbers."""
    got = autostage.convert(_numpy_of_python_numbers, target=target)(x)
    want = _numpy_of_python_numbers(x)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
