"""Staged recursion (runtime/staged_calls.py, backends/cpu/recursion.py): the IR's recursive
call, the fixpoint over result types, errors, the depth limit on both targets, the cpu
target's self-calls (backends/cpu/self_calls.py) and its disk cache (off for functions calling
each other: Numba's crashes loading them). The reference
programs (fib, merge sort, trees, mutual recursion, ...) are in
tests/reference/staged_programs/recursion.py."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from autostage.runtime import config, tracing
from autostage.runtime.autodiff import GradientError
from autostage.runtime.backends.cpu.recursion import CallCycles

import autostage

TARGETS = ["interpreter", "cpu"]


def _programs():
    """The reference recursion programs (tests/reference/staged_programs/recursion.py)."""
    path = pathlib.Path(__file__).parents[2] / "reference" / "staged_programs" / "recursion.py"
    spec = importlib.util.spec_from_file_location("recursion_programs", path)
    programs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(programs)
    return programs


def countdown(n):
    if n == 0:
        return np.int64(0)
    return countdown(n - 1) + 1


def no_base_case(n):
    return no_base_case(n - 1) + 1


def power(x, n):
    """Recursion on a Python int: unrolled at trace time."""
    if n == 0:
        return np.ones_like(x)
    return x * power(x, n - 1)


def grows(x, n):
    """Base case of one shape, recursive case another: the fixpoint joins them."""
    if n == 0:
        return x
    return np.concatenate([grows(x, n - 1), x])


class Node:
    def __init__(self, values):
        self.values = values

    def total(self, i):
        if i == self.values.shape[0]:
            return 0.0
        return self.values[i] + self.total(i + 1)


def made_inside(values, i):
    return Node(values).total(i)


@pytest.mark.parametrize("target", TARGETS)
def test_a_recursive_function_is_a_call_to_itself_in_the_ir(target):
    f = autostage.convert(countdown, target=target)
    assert f(np.int64(30)) == 30
    text = f.ir(np.int64(30))
    callee = text.split("call @")[1].split()[0]
    body = text.split(f"func @{callee}(")[1]
    assert f"call @{callee}" in body  # the callee calls itself


@pytest.mark.parametrize("target", TARGETS)
def test_recursion_on_python_values_still_unrolls(target):
    f = autostage.convert(power, target=target)
    x = np.array([1.5, -2.0])
    np.testing.assert_array_equal(f(x, 3), power(x, 3))
    module = f.get_concrete_function(x, 3).module
    assert len(module.functions) == 4  # power, and one function per value of n: no cycle
    assert not CallCycles(module).recursive


@pytest.mark.parametrize("target", TARGETS)
def test_result_types_that_differ_between_paths_are_joined(target):
    f = autostage.convert(grows, target=target)
    x = np.array([1.0, 2.0])
    for n in (0, 3):
        np.testing.assert_array_equal(f(x, np.int64(n)), grows(x, n))


def test_a_function_without_a_base_case_is_a_clear_error():
    f = autostage.convert(no_base_case)
    with pytest.raises(tracing.StagingError, match="no_base_case has no path that returns "
                                                   "without calling itself"):
        f(np.int64(3))


@pytest.mark.parametrize("target", TARGETS)
def test_a_runaway_recursion_raises_recursion_error(target):
    f = autostage.convert(countdown, target=target)
    with pytest.raises(RecursionError, match="AUTOSTAGE_RECURSION_LIMIT=1000"):
        f(np.int64(10**6))
    assert f(np.int64(900)) == 900  # deep, within the limit (native and interpreted alike)


@pytest.mark.parametrize("target", TARGETS)
def test_the_recursion_limit_is_configurable(target):
    def shallow(n):
        if n == 0:
            return np.int64(0)
        return shallow(n - 1) + 1

    with config.RECURSION_LIMIT.override(20):
        f = autostage.convert(shallow, target=target)
        assert f(np.int64(15)) == 15
        with pytest.raises(RecursionError, match="AUTOSTAGE_RECURSION_LIMIT=20"):
            f(np.int64(25))


def test_inline_recursion_on_staged_values_is_a_clear_error():
    f = autostage.convert(made_inside)
    with pytest.raises(tracing.StagingError, match="recursion limit was reached while tracing"
                                                   ".*pass the object in as an argument"):
        f(np.arange(4.0), np.int64(0))
    g = autostage.convert(lambda node, i: node.total(i))  # the object passed in: a staged call
    assert g(Node(np.arange(4.0)), np.int64(1)) == 6.0


def nested_sine(x, n):
    if n == 0:
        return x
    return np.sin(nested_sine(x, n - 1)) * x


def tree_loss(left, right, w, values, node):
    """A tiny recursive model: h(node) = tanh(w * (value + h(left) + h(right)))."""
    if node < 0:
        return np.zeros_like(w)
    below = tree_loss(left, right, w, values, left[node]) + \
        tree_loss(left, right, w, values, right[node])
    return np.tanh(w * (values[node] + below))


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("target", TARGETS)
def test_gradients_through_staged_recursion_match_finite_differences(target):
    g = autostage.grad(autostage.convert(nested_sine, target=target))
    assert g(np.float64(0.7), np.int64(3)) == pytest.approx(_numeric(0.7), rel=1e-6)
    assert g(np.float64(0.7), 3) == pytest.approx(_numeric(0.7), rel=1e-6)  # unrolled
    left, right = np.array([1, 3, 5, -1, -1, -1, -1]), np.array([2, 4, 6, -1, -1, -1, -1])
    values = np.linspace(-1.0, 1.0, 7)
    w = np.array([0.3, -0.8])

    def loss(w, values):
        return np.sum(tree_loss(left, right, w, values[:, None] * np.ones(2), np.int64(0)))

    grads = autostage.grad(autostage.convert(loss, target=target), argnums=(0, 1))(w, values)
    np.testing.assert_allclose(grads[0], _central(lambda w: loss(w, values), w), rtol=1e-6)
    np.testing.assert_allclose(grads[1], _central(lambda v: loss(w, v), values), rtol=1e-6)



def test_a_second_derivative_through_staged_recursion_says_so():
    """Refused, as before, but saying why: the message named list arguments the user's
    recursion does not have (its backward function reads the first gradient's tape)."""
    first = autostage.grad(nested_sine)
    with pytest.raises(GradientError, match="second derivatives of a recursion"):
        autostage.grad(lambda x, n: first(x, n) * 1.0)(np.float64(0.7), np.int64(3))

def test_the_gradient_of_merge_sort_matches_finite_differences_away_from_ties():
    merge_sort = _programs().merge_sort

    w = np.random.default_rng(0).standard_normal(7)

    def loss(x):
        return np.sum(merge_sort(x) * w)

    x = np.array([5.0, 1.0, 4.0, 1.5, 3.0, 9.0, 2.0])
    for target in TARGETS:
        g = autostage.grad(autostage.convert(loss, target=target))(x)
        np.testing.assert_allclose(g, _central(loss, x), rtol=1e-6, atol=1e-8)


def test_gradients_through_mutual_recursion():
    def ping(x, n):
        if n == 0:
            return x
        return np.sin(pong(x, n - 1))

    def pong(x, n):
        if n == 0:
            return x * x
        return ping(x, n - 1) * 2.0

    g = autostage.grad(autostage.convert(ping))
    for n in (0, 1, 4, 5):
        expected = _central(lambda x, n=n: ping(x, n), np.array(0.4))
        assert g(np.float64(0.4), np.int64(n)) == pytest.approx(float(expected), rel=1e-6)


def _numeric(x, eps=1e-6):
    return (nested_sine(x + eps, 3) - nested_sine(x - eps, 3)) / (2 * eps)


def test_self_recursion_is_cached_and_mutual_recursion_is_compiled_each_process(tmp_path):
    """A function calling itself calls itself through typed intrinsics (self_calls.py): its
    module is loaded from Numba's disk cache by the second process. Functions calling each
    other are typed by Numba's recursion, whose cached code segfaults when loaded
    (numba#6061): that module is compiled again, and runs."""
    script = textwrap.dedent("""
        import numpy as np, autostage

        @autostage.convert(target="cpu")
        def fib(n):
            if n < 2:
                return n
            return fib(n - 1) + fib(n - 2)

        @autostage.convert(target="cpu")
        def even(n):
            if n == 0:
                return True
            return odd(n - 1)

        @autostage.convert(target="cpu")
        def odd(n):
            if n == 0:
                return False
            return even(n - 1)

        print(fib(np.int64(15)), even(np.int64(9)))
        for f in (fib, even):
            stats = f.concrete_functions[0]._runner.dispatcher.stats
            print(sum(stats.cache_hits.values()))
    """)
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache")}
    program = tmp_path / "fibs.py"
    program.write_text(script)
    outputs = []
    for _ in range(2):
        run = subprocess.run([sys.executable, str(program)], env=env, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.split())
    assert outputs == [["610", "False", "0", "0"], ["610", "False", "1", "0"]]


def raises_its_own(n):
    if n > 2:
        raise RecursionError("the program's own message")
    return n


def calls_one_that_raises(n):
    return raises_its_own(n) + 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_recursion_error_the_program_raises_keeps_its_message(target):
    f = autostage.convert(calls_one_that_raises, target=target)
    assert f(np.int64(1)) == 2
    with pytest.raises(RecursionError) as caught:
        f(np.int64(5))
    assert str(caught.value) == "the program's own message"


def halves(x):
    """Recursion on strided views: the cpu target's entry is compiled for a contiguous array,
    the self-call passes layout 'A' (another specialisation, called through the dispatcher)."""
    n = x.shape[0]
    if n <= 2:
        return np.sum(x) * np.ones(2)
    if n % 2 == 1:
        return halves(x[1:]) + x[0]  # contiguous
    return halves(x[::2]) + 2.0 * halves(x[1::2])


def counts(x, n):
    """The base case returns a folded constant (read-only on the cpu target), which callers
    then write into: each call must get a fresh array, as in Python."""
    if n == 0:
        return np.zeros(3)
    y = counts(x, n - 1)
    y[0] += x
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("program, args", [
    (halves, (np.arange(16.0),)),
    (halves, (np.arange(15.0),)),
    (halves, (np.arange(23.0)[::-1],)),
    (counts, (np.float64(1.5), np.int64(4))),
])
def test_self_calls_pass_views_and_return_fresh_arrays(program, args, target):
    f = autostage.convert(program, target=target)
    for _ in range(2):  # the constant must be the same the second time
        np.testing.assert_array_equal(f(*args), program(*args))


def test_self_calls_go_through_typed_intrinsics_and_cache(tmp_path, monkeypatch):
    from autostage.runtime.backends.cpu import compile as cpu
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))  # compiled here

    def quarters(x):  # halves, under a name no other test compiles (a module of its own)
        n = x.shape[0]
        if n <= 2:
            return np.sum(x) * np.ones(2)
        if n % 2 == 1:
            return quarters(x[1:]) + x[0]
        return quarters(x[::2]) + 2.0 * quarters(x[1::2])

    f = autostage.convert(quarters, target="cpu")
    x = np.arange(35.0)  # more than config.STATIC_SIZES: one function, its size unknown
    assert f(x).tolist() == halves(x).tolist()
    generated = cpu.generate(f.concrete_functions[0].module).source
    assert "recurse_f_quarters_1((" in generated and "returns_f_quarters_1((" in generated
    assert "cache=True" in generated
    namespace = f.concrete_functions[0]._runner.dispatcher.py_func.__globals__
    signatures = namespace["f_quarters_1"].nopython_signatures
    assert sorted(sig.args[0].layout for sig in signatures) == ["A", "C"]  # then strided views


@pytest.mark.parametrize("target", TARGETS)
def test_the_gradient_of_a_self_recursive_call_reads_a_tape(target):
    """d loss / d w of the tree model: a taped forward (f_fwd) then a backward function that
    reads each child's results from the tape and never calls the forward function again, and
    computes the cotangents of the wanted parameter only (not of ``values``, a float
    parameter no gradient is asked for)."""
    left, right = np.array([1, 3, 5, -1, -1, -1, -1]), np.array([2, 4, 6, -1, -1, -1, -1])
    values = np.linspace(-1.0, 1.0, 14).reshape(7, 2)

    def loss(w, values):
        return np.sum(tree_loss(left, right, w, values, np.int64(0)))

    g = autostage.grad(autostage.convert(loss, target=target))
    w = np.array([0.3, -0.8])
    np.testing.assert_allclose(g(w, values), _central(lambda w: loss(w, values), w), rtol=1e-6)
    module = g.concrete_functions[0].module
    names = set(module.functions)
    assert {"tree_loss_fwd", "tree_loss_bwd", "tree_loss_saved"} <= names
    assert not any(name.endswith("_vjp") for name in names)  # nothing recomputes subtrees
    main = module.functions[module.entry]
    called = [op.attrs["callee"] for op in main.body.walk() if op.name == "call"]
    assert set(called) == {"tree_loss_fwd", "tree_loss_bwd"}  # the forward pass is the taped one
    backward = module.functions["tree_loss_bwd"]
    called = {op.attrs["callee"] for op in backward.body.walk() if op.name == "call"}
    assert "tree_loss" not in called and "tree_loss_bwd" in called
    assert backward.result_types == (backward.body.args[2].type,)  # w's cotangent only
    # it takes w's cotangent so far and adds to it: a leaf, which does not use w, passes it on
    # (it returned zeros, which every caller added to its own dense cotangent)
    so_far = backward.body.args[-1]
    assert so_far.type == backward.body.args[2].type
    assert any(so_far in region.results for op in backward.body.walk() for region in op.regions)


_ALIASING = """module @main
func @main(%0:f64[]) -> (i64[], i64[], i64[]):
  %1:list<f64[]> = list_new attrs(element=type('f64[]'))
  %2:list<f64[]> = call %1 %0 attrs(callee='push', result_types=(type('list<f64[]>'),))
  %3:list<f64[]> = call %1 %0 attrs(callee='push', result_types=(type('list<f64[]>'),))
  %4:i64[] = list_length %1
  %5:i64[] = list_length %2
  %6:i64[] = list_length %3
  return %4 %5 %6
func @push(%0:list<f64[]>, %1:f64[]) -> (list<f64[]>):
  %2:list<f64[]> = list_append %0 %1
  return %2
func @peek(%0:list<f64[]>) -> (i64[]):
  %1:i64[] = list_length %0
  return %1
"""


def test_a_list_passed_to_calls_is_copied_only_where_a_callee_may_update_it():
    """The cpu backend updates a list in place when that is its only use (parameters
    included), so a caller passing a list it uses again hands the callee a copy: Python's
    values, not aliasing. A parameter the callee only reads is passed uncopied (the backward
    functions of recursive gradients pass their tape to every call)."""
    from autostage.runtime import ir_text
    from autostage.runtime.backends.cpu import compile as cpu
    from autostage.runtime.backends.cpu import list_params

    module = ir_text.parse(_ALIASING)
    assert list_params.read_only(module) == {
        "main": frozenset(), "push": frozenset(), "peek": frozenset({0})}
    results = cpu.compile_module(module)([np.float64(2.0)])
    assert [int(r) for r in results] == [0, 1, 1]  # the empty list stays empty
    calls = [line.split("= ", 1)[1] for line in cpu.generate(module).source.splitlines()
             if "= f_push(" in line]
    assert len(calls) == 2 and all("cpu_list.copy(" in call for call in calls)


def test_the_backward_function_reads_its_tape_uncopied():
    """The tape is passed to every call of the backward function, which only reads it: no copy
    (a copy per call made the gradient quadratic in the number of calls)."""
    from autostage.runtime.backends.cpu import compile as cpu
    from autostage.runtime.backends.cpu import list_params

    left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    values = np.ones((3, 2))

    def loss(w):
        return np.sum(tree_loss(left, right, w, values, np.int64(0)))

    g = autostage.grad(autostage.convert(loss, target="cpu"))
    w = np.array([0.3, -0.8])
    np.testing.assert_allclose(g(w), _central(loss, w), rtol=1e-6)
    module = g.concrete_functions[0].module
    read_only = list_params.read_only(module)
    n_args = len(module.functions["tree_loss"].body.args)
    lists = len(module.functions["tree_loss_fwd"].body.args) - n_args
    assert read_only["tree_loss_bwd"] == frozenset(range(n_args + 2, n_args + 2 + lists))
    assert read_only["tree_loss_fwd"] == frozenset()  # it appends
    backward = cpu.generate(module).source.split("def f_tree_loss_bwd(", 1)[1]
    calls = [line for line in backward.splitlines() if "lst" in line and "(" in line
             and ("recurse_" in line or "= f_" in line)]
    assert calls and not any("copy(" in line for line in calls)


@pytest.mark.parametrize("target", TARGETS)
def test_a_recursive_function_may_return_a_list(target):
    doublings = _programs().doublings  # a Python list, a tensor list when staged
    f = autostage.convert(doublings, target=target)
    got = f(np.float64(1.5), np.int64(4))
    assert isinstance(got, list)
    assert [float(v) for v in got] == [float(v) for v in doublings(np.float64(1.5), np.int64(4))]
    assert [float(v) for v in f(np.float64(1.0), np.int64(0))] == [1.0]
