"""The exact text form of the IR (runtime/ir_text.py): modules round-trip through ``parse``;
bad text is a TextFormError naming the line, and reading never runs code from the text.

(Every trace of the staged reference suite, as traced and after the cpu passes, is round-tripped
in tests/reference/test_staged.py.)
"""

import numpy as np
import pytest
from autostage.runtime import ir, ir_text, state
from autostage.runtime.targets import optimized

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
    for expected in ("test_ir_text:ModelError', 'too many', 3)", "exception('OverflowError'",
                     "[nan, -inf, -0.0]", "complex(1.0, 2.0)", "dtype('i16')",
                     "random_draw %", "(None, None, -1)"):
        assert expected in text, expected


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


def test_live_state_has_no_text_form_yet():
    v = state.Variable(np.zeros(2), name="w")

    def uses_state(x):
        return x + v.read()

    trace = autostage.convert(uses_state, target="interpreter").get_concrete_function(np.ones(2))
    with pytest.raises(ir_text.TextFormError, match="attribute 'var' of `var_read`"):
        ir_text.format_module(trace.module)
