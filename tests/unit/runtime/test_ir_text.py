"""The exact text form of the IR (runtime/ir_text.py): modules round-trip through ``parse``
(state as the module's table, read back as descriptions that cannot run); bad text is a
TextFormError naming the line, and reading never runs code from the text.

(Every trace of the staged reference suite, as traced and after the cpu passes, is round-tripped
in tests/reference/test_staged.py.)
"""

import numpy as np
import pytest
from autostage.runtime import interpreter, ir, ir_text, state, verifier
from autostage.runtime.targets import optimized
from autostage.runtime.types import TensorType

import autostage


class ModelError(Exception):
    """A user's exception class, written as module:qualname."""


def program(x, n, rng):
    noise = rng.normal(0.0, 1.0, size=3)
    special = x[:3] * np.array([np.nan, -np.inf, -0.0]) + np.array([1 + 2j, 0j, -1j])
    small = x.astype(np.int16) + np.int16(7)
    ys = []
    i = 0
    while i < n:
        if x[i % 3] > 0.5:
            x = x * 2.0 - noise
        else:
            x = np.where(x > 0, x, -x)[::-1]
        ys.append(x[1:])
        i += 1
    if n > 100:
        raise ModelError("too many", 3)
    print("done", n)
    return np.stack(ys), x.sum(), special, small


def modules():
    staged = autostage.convert(program, target="interpreter")
    trace = staged.get_concrete_function(np.ones(3), np.int64(3), np.random.default_rng(0))
    return trace.module, optimized(ir.copy_module(trace.module))


@pytest.mark.parametrize("which", ["traced", "optimized"])
def test_a_module_round_trips(which):
    module = modules()[which == "optimized"]
    text = ir_text.format_module(module)
    parsed = ir.parse(text)
    assert ir_text.format_module(parsed) == text
    for expected in ("test_ir_text:ModelError', 'too many', 3)", "[nan, -inf, -0.0]",
                     "complex(1.0, 2.0)", "dtype('i16')", "random_draw %", "(None, None, -1)"):
        assert expected in text, expected
    # `i += 1` is tested for int64 overflow as traced; the counters pass drops that test.
    assert ("exception('OverflowError'" in text) == (which == "traced")


def test_parsed_modules_run_like_the_original():
    module, _ = modules()
    args = [np.linspace(0.2, 0.9, 3), np.int64(4)]
    from autostage.runtime import interpreter

    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    expected = interpreter.run(module, [*args, rng_a])
    got = interpreter.run(ir.parse(ir_text.format_module(module)), [*args, rng_b])
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(e, g)


@pytest.mark.parametrize("text, message", [
    ("func @f() -> ():\n  return\n", "expected `module @<entry>`"),
    ("module @g\nfunc @f() -> ():\n  return\n", "the entry function @g is not defined"),
    ("module @f\nfunc @f(%0:f64[?]) -> (f64[?]):\n  return %7\n", "%7 is used before"),
    ("module @f\nfunc @f(%0:f64[?]) -> (f64[?]):\n    return %0\n", "wrong indentation"),
    ("module @f\nfunc @f(%0:f64[?]) -> (f64[?]):\n"
     "  %1:f64[?] = negative %0 attrs(x=__import__('os').getcwd())\n  return %1\n",
     "not an attribute value"),
    ("module @f\nfunc @f(%0:q9[?]) -> (f64[?]):\n  return %0\n", "not a type"),
    ("module @f\nfunc @f(%0:f64[?]) -> (f64[?]):\n"
     "  raise attrs(exception=exception('antigravity:X'))\n  return %0\n",
     "module antigravity is not imported"),
])
def test_bad_text_is_a_clear_error(text, message):
    with pytest.raises(ir_text.TextFormError, match=message.replace("(", r"\(")):
        ir.parse(text)


ACC = state.Variable(np.zeros(2), name="acc")
STEPS = state.Variable(np.int64(0), name="it's \"steps\"")


def _bump(x):
    ACC.assign_add(x)
    STEPS.assign_add(1)
    return ACC.read()


def uses_state(x):
    return (_bump(x) + _bump(x * 2.0)) * STEPS.read()


@pytest.mark.parametrize("which", ["traced", "optimized"])
def test_state_is_written_as_the_module_table_and_read_back_as_descriptions(which):
    module = autostage.convert(uses_state, target="interpreter").get_concrete_function(
        np.ones(2)).module
    module = module if which == "traced" else optimized(ir.copy_module(module))
    text = ir_text.format_module(module)
    assert text.startswith("module @uses_state\nstate 0 = variable 'acc' : f64[2]\n"
                           "state 1 = variable 'it\\'s \"steps\"' : i64[]\nfunc @")
    assert "var_assign_add %1 attrs(type=type('i64[]'), var=1)" in text
    parsed = ir.parse(text)
    assert ir_text.format_module(parsed) == text
    assert parsed.state == [ir.UnboundState("acc", TensorType("f64", (2,))),
                            ir.UnboundState("it's \"steps\"", TensorType("i64", ()))]
    verifier.verify(parsed)
    with pytest.raises(ir.UnboundStateError, match="state 0 of module @uses_state .*'acc'.* "
                                                   "cannot run"):
        interpreter.run(parsed, [np.ones(2)])


@pytest.mark.parametrize("line, message", [
    ("state 1 = variable 'v' : f64[]", "expected `state 0 = variable"),
    ("state 0 = variable v : f64[]", "cannot read the state entry"),
    ("state 0 = variable 3 : f64[]", "a state entry's name must be a string"),
    ("state 0 = variable 'v' : f65[]", "cannot read the state entry"),
])
def test_a_bad_state_entry_is_a_clear_error(line, message):
    with pytest.raises(ir_text.TextFormError, match=f"line 2: {message}"):
        ir.parse(f"module @f\n{line}\nfunc @f() -> ():\n  return\n")
