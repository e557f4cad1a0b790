"""``autostage.py_function``: Python called from staged code at run time, once per execution.

Every test runs the same function as plain Python (``py_function`` calls ``fn`` at once) and
staged on both targets, and compares results, call counts, printed text and error messages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest
from autostage.runtime import interpreter, ir, ir_text
from autostage.runtime.autodiff.backprop import GradientError

import autostage

TARGETS = ["interpreter", "cpu"]
S = autostage.TensorSpec
HERE = os.path.abspath(__file__)


class Recorder:
    """A Python function that records what it receives and returns ``2 * x + i``."""

    def __init__(self):
        self.seen = []

    def __call__(self, x, i):
        self.seen.append((x, i))
        return 2.0 * x + i


def line_of(fn, text: str) -> str:
    """``<this file>:<line>`` of the line of ``fn``'s source that contains ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    (offset,) = [k for k, line in enumerate(lines) if text in line]
    return f"{HERE}:{first + offset}"


def accumulate(record, x, n):
    i = 0
    while i < n:
        x = autostage.py_function(record, [x, i], S((None,), np.float64))
        i += 1
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_a_staged_while_loop_calls_once_per_iteration(target):
    plain, staged = Recorder(), Recorder()
    x = np.array([1.0, -2.0, 0.5])
    expected = accumulate(plain, x, 4)
    got = autostage.convert(accumulate, target=target)(staged, x, np.int64(4))
    np.testing.assert_array_equal(got, expected, strict=True)
    assert len(staged.seen) == len(plain.seen) == 4
    for (xs, i), (xp, ip) in zip(staged.seen, plain.seen, strict=True):
        np.testing.assert_array_equal(xs, xp, strict=True)  # the iteration's own values
        assert type(i) is type(ip) is int and i == ip  # a staged Python int arrives as one
        assert not xs.flags.writeable  # a copy fn may keep, but not write into
    assert [i for _, i in staged.seen] == [0, 1, 2, 3]
    # a second call runs the same trace: four more calls, none at trace time
    autostage.convert(accumulate, target=target)(staged, x, np.int64(2))
    assert len(staged.seen) == 6


def branchy(log, x):
    if np.sum(x) > 0:
        autostage.py_function(log, ["positive", np.sum(x)], None)
        y = x * 2.0
    else:
        autostage.py_function(log, ["negative", np.max(x)], None)
        y = -x
    return y


@pytest.mark.parametrize("target", TARGETS)
def test_only_the_taken_branch_calls(target):
    seen = []

    def log(label, value):
        seen.append((label, value, type(value)))

    f = autostage.convert(branchy, target=target)
    np.testing.assert_array_equal(f(log, np.array([1.0, 2.0])), [2.0, 4.0])
    assert seen == [("positive", 3.0, np.float64)]
    np.testing.assert_array_equal(f(log, np.array([-1.0, -2.0])), [1.0, 2.0])
    assert seen[1:] == [("negative", -1.0, np.float64)]
    assert len(seen) == 2


def moments(x):
    mean, spread = autostage.py_function(lambda v: (np.mean(v), v - np.mean(v)), [x],
                                         (S(()), S((None,))))
    (total,) = autostage.py_function(lambda v: [int(np.sum(v > 0))], [x], [S((), np.int64)])
    scale = autostage.py_function(lambda: 3, [], S((), np.float32))  # Python int: same kind
    return mean, spread, total, scale


@pytest.mark.parametrize("target", TARGETS)
def test_several_results_and_scalars(target):
    x = np.array([1.0, -3.0, 5.0])
    expected = moments(x)
    got = autostage.convert(moments, target=target)(x)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e, strict=True)
    assert type(got[0]) is np.float64 and type(got[2]) is np.int64
    assert type(got[3]) is np.float32 and got[3] == 3.0
    assert type(expected[3]) is np.float32  # plain Python applies the same rule


def wrong_dtype(x):
    return autostage.py_function(lambda v: v.astype(np.float32), [x], S((None,)))


def wrong_shape(x):
    return autostage.py_function(lambda v: np.zeros(5), [x], S((3,)))


def wrong_kind(x):
    return autostage.py_function(lambda v: 1.5, [x], S((), np.int64))


def wrong_count(x):
    return autostage.py_function(lambda v: (v, v), [x], (S((None,)),))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, kind, words", [
    (wrong_dtype, TypeError, "result 0 is a float32 array of shape (3,), but its result_spec "
                             "says f64[?]"),
    (wrong_shape, ValueError, "result 0 is a float64 array of shape (5,), but its result_spec "
                              "says f64[3]"),
    (wrong_kind, TypeError, "result 0 is a Python float (1.5), but its result_spec says i64[]"),
    (wrong_count, ValueError, "returned 2 results, but its result_spec declares 1"),
])
def test_results_that_do_not_fit_the_spec_are_clear_errors(target, fn, kind, words):
    x = np.arange(3.0)
    where = line_of(fn, "py_function")
    with pytest.raises(kind) as plain:
        fn(x)
    with pytest.raises(kind) as staged:
        autostage.convert(fn, target=target)(x)
    assert str(staged.value) == str(plain.value)
    message = str(staged.value)
    assert message.startswith(f"{where}: py_function(")
    assert f"{__name__}.{fn.__name__}.<locals>.<lambda>) {words}" in message


class Boom(Exception):
    pass


def exploding(v):
    raise Boom(f"no {v.size} today")


def calls_exploding(x):
    y = x + 1.0
    return autostage.py_function(exploding, [y], S((None,)))


@pytest.mark.parametrize("target", TARGETS)
def test_an_exception_in_fn_propagates_as_it_is(target):
    with pytest.raises(Boom) as plain:
        calls_exploding(np.arange(4.0))
    with pytest.raises(Boom) as staged:
        autostage.convert(calls_exploding, target=target)(np.arange(4.0))
    assert type(staged.value) is Boom and staged.value.args == plain.value.args == ("no 4 today",)
    frames = [f.name for f in traceback.extract_tb(staged.value.__traceback__)]
    assert frames[-1] == "exploding"  # the user's function raised it
    where = line_of(calls_exploding, "py_function")
    assert any(n.startswith("autostage: error in `") and f"at {where}" in n
               for n in staged.value.__notes__)


def chatty(x, n):
    for i in range(n):
        print("before", i)
        autostage.py_function(lambda k, v: print("inside", k, v), [i, x[i]], None)
        print("after", x[i])
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_prints_of_fn_interleave_with_staged_prints(target, capsys):
    x = np.array([1.5, 2.5, 3.5])
    chatty(x, 2)
    expected = capsys.readouterr().out
    assert expected == ("before 0\ninside 0 1.5\nafter 1.5\n"
                        "before 1\ninside 1 2.5\nafter 2.5\n")
    autostage.convert(chatty, target=target)(x, np.int64(2))
    assert capsys.readouterr().out == expected


def unused_and_repeated(counter, x):
    autostage.py_function(counter, [x], S((None,)))   # result unused: still called
    a = autostage.py_function(counter, [x], S((None,)))
    b = autostage.py_function(counter, [x], S((None,)))  # equal to a's call: not merged
    return a + b


@pytest.mark.parametrize("target", TARGETS)
def test_passes_neither_drop_nor_merge_calls(target):
    calls = []

    def counter(v):
        calls.append(1)
        return v * len(calls)

    got = autostage.convert(unused_and_repeated, target=target)(counter, np.ones(2))
    assert len(calls) == 3
    np.testing.assert_array_equal(got, [5.0, 5.0])  # 2 + 3: the calls ran in program order


def writes_its_argument(x):
    def fn(v):
        v[0] = 0.0
        return v
    return autostage.py_function(fn, [x], S((None,)))


@pytest.mark.parametrize("target", TARGETS)
def test_fn_cannot_write_into_its_arguments(target):
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="read-only"):
        writes_its_argument(x)
    with pytest.raises(ValueError, match="read-only"):
        autostage.convert(writes_its_argument, target=target)(x)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


def passes_an_object(x):
    return autostage.py_function(lambda v, d: v, [x, {"a": 1}], S((None,)))


def test_arguments_other_than_values_are_refused():
    where = line_of(passes_an_object, "py_function")
    message = (f"{where}: argument 1 of py_function({__name__}.passes_an_object.<locals>."
               "<lambda>) is a Python dict ({'a': 1}); pass arrays, NumPy or Python scalars, "
               "strings or None")
    with pytest.raises(TypeError) as plain:
        passes_an_object(np.arange(2.0))
    with pytest.raises(TypeError) as staged:
        autostage.convert(passes_an_object, target="interpreter")(np.arange(2.0))
    assert str(plain.value).startswith(message) and str(staged.value).startswith(message)
    with pytest.raises(TypeError, match="result_spec must be a TensorSpec"):
        autostage.py_function(abs, [1.0], np.float64)


def test_the_text_form_names_the_function_and_parses_unbound():
    f = autostage.convert(moments, target="interpreter")
    module = f.get_concrete_function(np.arange(3.0)).module
    text = ir_text.format_module(module)
    assert text.splitlines()[1:4] == [
        f"callable {i} = '{__name__}.moments.<locals>.<lambda>'" for i in range(3)]
    assert "py_function %0 attrs(args=(0,), fn=0, name=" in text
    assert f"py_function '{__name__}.moments.<locals>.<lambda>' %0" in f.ir(np.arange(3.0))
    parsed = ir_text.parse(text)
    assert ir_text.format_module(parsed) == text
    assert parsed.callables[0] == ir.UnboundCallable(f"{__name__}.moments.<locals>.<lambda>")
    with pytest.raises(ir.UnboundStateError, match="callable 0 of module @moments"):
        interpreter.run(parsed, [np.arange(3.0)])


def differentiated(x):
    y = autostage.py_function(lambda v: 2.0 * v, [x], S((None,)))
    return np.sum(y * x)


def logged_in_branch(x):
    if np.sum(x) > 0:
        autostage.py_function(print, [np.sum(x)], None)
        y = x * 2.0
    else:
        y = x
    return np.sum(y * y)


def stopped(x):
    y = autostage.stop_gradient(autostage.py_function(lambda v: 2.0 * v, [x], S((None,))))
    return np.sum(y * x)


@pytest.mark.parametrize("target", TARGETS)
def test_gradients_through_py_function_are_refused(target):
    x = np.arange(3.0)
    where = line_of(differentiated, "py_function")
    with pytest.raises(GradientError) as error:
        autostage.grad(autostage.convert(differentiated, target=target))(x)
    assert str(error.value).startswith(
        f"autostage cannot differentiate through py_function({__name__}.differentiated."
        f"<locals>.<lambda>) (at {where}): it runs Python at run time")
    # a backward pass would replay the branch, and call the function again
    where = line_of(logged_in_branch, "py_function")
    with pytest.raises(GradientError, match=f"calls Python with py_function .*at {where}"):
        autostage.grad(autostage.convert(logged_in_branch, target=target))(x)
    # no gradient flows through a stopped result: the others are exact
    np.testing.assert_array_equal(
        autostage.grad(autostage.convert(stopped, target=target))(x), 2.0 * x, strict=True)


def test_a_tiered_start_calls_once_per_call_too():
    from autostage.runtime import config

    calls = []
    with config.TIERED.override(True):
        f = autostage.convert(accumulate)
        record = lambda v, i: calls.append(i) or v + i  # noqa: E731
        for _ in range(5):
            np.testing.assert_array_equal(f(record, np.zeros(2), np.int64(3)), [3.0, 3.0])
    assert calls == [0, 1, 2] * 5


PROGRAM = textwrap.dedent('''
    import json, sys
    import numpy as np
    import autostage

    token = float(sys.argv[1])
    seen = []

    def live(v):
        seen.append(token)
        return v * token

    def f(x, n):
        for i in range(n):
            x = autostage.py_function(live, [x], autostage.TensorSpec((None,), np.float64))
        return x + 0.0  # (a new array: the runner is the compiled one, not a wrapper)

    g = autostage.convert(f, target="cpu")
    result = g(np.ones(2), np.int64(3))
    stats = g.concrete_functions[0]._runner.dispatcher.stats
    print(json.dumps({"result": result.tolist(), "seen": seen,
                      "hits": sum(stats.cache_hits.values())}))
''')


def test_a_process_with_a_warm_cache_calls_its_own_live_function(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"), "AUTOSTAGE_TIERED": "0"}

    def run(token: str) -> dict:
        out = subprocess.run([sys.executable, str(script), token], env=env, capture_output=True,
                             text=True, timeout=300, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, second = run("2"), run("3")
    assert first == {"result": [8.0, 8.0], "seen": [2.0] * 3, "hits": 0}
    assert second == {"result": [27.0, 27.0], "seen": [3.0] * 3, "hits": 1}  # from the cache
