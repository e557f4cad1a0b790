"""Random numbers in staged code (runtime/staging/random_draws.py, runtime/ops/random.py and the
CPU lowering): fresh draws every call and loop iteration, exactly NumPy's numbers after the same
seed (global state and Generators passed as arguments, globals, closures or ``self.rng``), the
user's generator advanced as in Python, and clear errors instead of frozen constants."""

import functools
import inspect
import random

import numpy as np
import pytest
from autostage.runtime.staging.random_draws import RandomStagingError

import autostage

TARGETS = ["interpreter", "cpu"]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def assert_same(staged, plain):
    if isinstance(plain, tuple):
        assert len(staged) == len(plain)
        for s, p in zip(staged, plain, strict=True):
            assert_same(s, p)
        return
    np.testing.assert_array_equal(np.asarray(staged), np.asarray(plain))
    assert np.asarray(staged).dtype == np.asarray(plain).dtype


def global_draws(x):
    a = x + np.random.rand(3)
    b = np.random.normal(0.0, 2.0, size=(2, 3))
    c = np.random.randint(0, 10, size=4)
    d = np.random.uniform(-1, 1)
    e = np.random.choice(5, 3)
    f = np.random.permutation(4)
    g = np.random.randn(2)
    h = np.random.random((2, 2))
    i = np.random.standard_normal(3) + np.random.exponential(2.0, 3)
    return a, b, c, d, e, f, g, h, i


@pytest.mark.parametrize("target", TARGETS)
def test_global_functions_give_pythons_numbers_and_fresh_draws(target):
    staged = autostage.convert(target=target)(global_draws)
    x = np.zeros(3)
    np.random.seed(123)
    first, second = staged(x), staged(x)
    after = np.random.random()
    np.random.seed(123)
    plain_first, plain_second = global_draws(x), global_draws(x)
    assert_same(first, plain_first)
    assert_same(second, plain_second)
    assert not np.array_equal(first[0], second[0])  # not frozen at trace time
    assert after == np.random.random()  # the global state advanced exactly as in Python
    assert staged.trace_count == 1


def loop_draws(x, n):
    total = x
    for _ in range(n):  # a staged loop when n is staged
        total = total + np.random.rand(2)
    k = 0
    while total[0] < 100.0 and k < 3:
        total = total + np.random.normal(size=2)
        k += 1
    return total


@pytest.mark.parametrize("target", TARGETS)
def test_loop_iterations_draw_fresh_numbers(target):
    staged = autostage.convert(target=target)(loop_draws)
    x = np.zeros(2)
    np.random.seed(7)
    got = staged(x, np.int64(5))
    np.random.seed(7)
    expected = loop_draws(x, 5)
    np.testing.assert_array_equal(got, expected)
    np.random.seed(7)
    once = x + np.random.rand(2)
    assert not np.allclose(got, x + 5 * once)  # iterations differ


def generator_draws(x, rng):
    a = x + rng.random(3)
    b = rng.normal(1.0, 2.0, size=3)
    c = rng.uniform(-1.0, 1.0, (2, 2))
    d = rng.integers(0, 10, size=5)
    e = rng.standard_normal(3, dtype=np.float32)
    f = rng.exponential(2.0, 3) + rng.standard_exponential(3)
    g = rng.choice(np.arange(10.0), 4)
    h = rng.permutation(5)
    i = rng.integers(3, 9)
    j = rng.normal()
    k = rng.poisson(3.0, 4) + rng.binomial(10, 0.5, 4)
    m = rng.gamma(2.0, size=2) + rng.beta(2.0, 3.0, size=2)
    return a, b, c, d, e, f, g, h, i, j, k, m


@pytest.mark.parametrize("target", TARGETS)
def test_generator_argument_gives_pythons_numbers_and_advances_its_state(target):
    staged = autostage.convert(target=target)(generator_draws)
    x = np.zeros(3)
    rng, plain_rng = np.random.default_rng(42), np.random.default_rng(42)
    for _ in range(2):
        assert_same(staged(x, rng), generator_draws(x, plain_rng))
        assert rng.bit_generator.state == plain_rng.bit_generator.state
    # A new Generator each call is read at the call: same trace, its own numbers.
    assert_same(staged(x, np.random.default_rng(5)), generator_draws(x, np.random.default_rng(5)))
    assert staged.trace_count == 1


def draws_with_staged_arguments(rng, mu, loc, n):
    a = rng.normal(mu, 2.0)            # scalar staged parameter
    b = rng.normal(loc, 1.0)           # array parameter (shape from it)
    c = rng.random(n)                  # staged size
    d = rng.integers(0, n, size=(n, 2))
    e = np.random.normal(loc, mu)      # global, staged parameters
    f = np.random.rand(n, 2)
    return a, b, c, d, e, f


@pytest.mark.parametrize("target", TARGETS)
def test_staged_parameters_and_sizes(target):
    staged = autostage.convert(target=target)(draws_with_staged_arguments)
    args = (np.float64(3.0), np.arange(4.0), np.int64(3))
    np.random.seed(1)
    got = staged(np.random.default_rng(9), *args)
    np.random.seed(1)
    expected = draws_with_staged_arguments(np.random.default_rng(9), *args)
    assert_same(got, expected)


def choice_of_staged_sizes(rng, x, k, weights):
    n = x.shape[0]                         # a staged Python int
    a = rng.choice(n, size=n, p=weights)   # systematic resampling's index draw
    b = rng.choice(n)                      # a Python int, as in NumPy
    c = rng.choice(k, size=2)              # an np.int64 argument
    d = np.random.choice(n, 3)             # the global state
    return a, b, c, d


@pytest.mark.parametrize("target", TARGETS)
def test_choice_of_a_staged_size_draws_from_its_range(target):
    """A 0-d staged population is a size n, as in NumPy (it used to be refused as a
    "multi-dimensional population")."""
    staged = autostage.convert(target=target)(choice_of_staged_sizes)
    args = (np.arange(4.0), np.int64(7), np.array([0.1, 0.2, 0.3, 0.4]))
    np.random.seed(2)
    got = staged(np.random.default_rng(4), *args)
    np.random.seed(2)
    expected = choice_of_staged_sizes(np.random.default_rng(4), *args)
    assert_same(got, expected)
    assert type(got[1]) is type(expected[1]) is int


def choice_of_ranges(rng, p, n):
    out = []
    for _ in range(n):  # min-char-rnn's sampling loop
        out.append(np.random.choice(range(p.shape[0]), p=p))
    return out, rng.choice(range(2, 12, 2), size=2, p=p), rng.permutation(range(4))


@pytest.mark.parametrize("target", TARGETS)
def test_a_range_argument_is_the_array_numpy_makes_of_it(target):
    """``np.random.choice(range(V), p=p)`` was refused ("the argument range(0, 5) cannot be used
    in a staged random call"); NumPy draws from ``np.array(range(V))``."""
    staged = autostage.convert(target=target)(choice_of_ranges)
    p = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
    np.random.seed(5)
    got = staged(np.random.default_rng(6), p, np.int64(4))
    after = np.random.random()
    np.random.seed(5)
    expected = choice_of_ranges(np.random.default_rng(6), p, 4)
    assert [type(v) for v in got[0]] == [type(v) for v in expected[0]] == [np.int64] * 4
    assert got[0] == expected[0]
    assert_same(got[1:], expected[1:])
    assert after == np.random.random()


RNG = np.random.default_rng(0)


def from_global(x):
    return x + RNG.normal(size=2)


def make_closure(rng):
    def from_closure(x):
        return x + rng.uniform(size=2)
    return from_closure


class Model:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def noisy(self, x):
        return x + self.rng.normal(size=2)


@pytest.mark.parametrize("target", TARGETS)
def test_generator_global_is_read_at_each_call(target):
    global RNG
    staged = autostage.convert(target=target)(from_global)
    x = np.zeros(2)
    RNG = np.random.default_rng(3)
    first = staged(x)
    RNG = np.random.default_rng(3)  # rebound: the new one is used, from its own state
    assert_same(staged(x), first)
    expected = np.random.default_rng(3)
    expected.normal(size=2)
    assert_same(staged(x), x + expected.normal(size=2))  # the state advanced
    assert staged.trace_count == 1


@pytest.mark.parametrize("target", TARGETS)
def test_generator_closure_and_attribute_are_read_at_each_call(target):
    x = np.zeros(2)
    closure = autostage.convert(target=target)(make_closure(np.random.default_rng(4)))
    assert_same(closure(x), x + np.random.default_rng(4).uniform(size=2))
    model = Model(11)
    noisy = autostage.convert(target=target)(model.noisy)
    plain = Model(11)
    assert_same(noisy(x), plain.noisy(x))
    assert_same(noisy(x), plain.noisy(x))
    model.rng = np.random.default_rng(12)  # replaced: the new generator is used
    assert_same(noisy(x), x + np.random.default_rng(12).normal(size=2))


@pytest.mark.parametrize("target", TARGETS)
def test_unused_draw_still_advances_the_state(target):
    def f(x):
        np.random.rand()            # result unused: Python still draws
        return x + np.random.rand()
    staged = autostage.convert(target=target)(f)
    np.random.seed(5)
    got = staged(np.float64(0.0))
    np.random.seed(5)
    assert got == f(np.float64(0.0))


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_draws_are_weak_like_python_scalars(target):
    def g(x, rng):
        return x + np.random.rand(), x * rng.random(dtype=np.float32) * 2.0
    staged = autostage.convert(target=target)(g)
    x = np.ones(2, np.float32)
    np.random.seed(2)
    got = staged(x, np.random.default_rng(1))
    np.random.seed(2)
    assert_same(got, g(x, np.random.default_rng(1)))
    assert got[0].dtype == np.float32


@pytest.mark.parametrize("target", TARGETS)
def test_distributions_are_sane(target):
    def f(rng):
        return np.random.normal(2.0, 3.0, 20000), rng.uniform(-1.0, 1.0, 20000)

    normal, uniform = autostage.convert(target=target)(f)(np.random.default_rng(0))
    assert abs(normal.mean() - 2.0) < 0.1 and abs(normal.std() - 3.0) < 0.1
    assert abs(uniform.mean()) < 0.03 and uniform.min() >= -1.0 and uniform.max() < 1.0


def unsupported_global(x):
    return x + np.random.lognormal(size=2)


def unsupported_method(x, rng):
    return x + rng.lognormal(size=2)


def random_state(x):
    rs = np.random.RandomState(0)
    return x + rs.normal(size=2)


def created_inside(x):
    rng = np.random.default_rng(0)
    return x + rng.normal(size=2)


def in_place_shuffle(x):
    y = x * 1.0
    np.random.shuffle(y)
    return y


@autostage.do_not_convert
def noise_helper(n):
    return np.random.rand(n)


def through_unconverted_code(x):
    return x + noise_helper(2)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, words, line", [
    (unsupported_global, ["np.random.lognormal", "not supported"], "lognormal"),
    (unsupported_method, ["Generator.lognormal", "not supported"], "lognormal"),
    (random_state, ["RandomState.normal", "default_rng"], "rs.normal"),
    (created_inside, ["Generator", "create it outside"], "rng.normal"),
    (in_place_shuffle, ["np.random.shuffle", "not supported"], "np.random.shuffle("),
])
def test_unsupported_random_calls_are_clear_errors(target, fn, words, line):
    staged = autostage.convert(target=target)(fn)
    args = (np.zeros(2),) + ((np.random.default_rng(0),) if "rng" in
                             inspect.signature(fn).parameters else ())
    with pytest.raises(RandomStagingError) as info:
        staged(*args)
    message = str(info.value)
    for word in words:
        assert word in message
    assert line_of(fn, line) in message


@pytest.mark.parametrize("target", TARGETS)
def test_draws_at_trace_time_in_unconverted_code_are_an_error(target):
    staged = autostage.convert(target=target)(through_unconverted_code)
    with pytest.raises(RandomStagingError, match="global random state changed while "
                                                 "through_unconverted_code was traced"):
        staged(np.zeros(2))


def test_the_draw_is_an_effectful_op_in_the_ir():
    def f(x, rng):
        rng.normal()
        return x + np.random.rand(2)

    staged = autostage.convert(target="cpu")(f)
    text = staged.ir(np.zeros(2), np.random.default_rng(0))
    assert "%1:rng" in text
    assert text.count("random_draw") == 2
    # Both draws survive the CPU pass pipeline (the first one's result is unused).
    from autostage.runtime.function import optimized
    module = optimized(staged.get_concrete_function(np.zeros(2), np.random.default_rng(0)).module)
    assert sum(op.name == "random_draw" for op in module.main.body.walk()) == 2


@pytest.mark.parametrize("target", TARGETS)
def test_seeding_inside_staged_code_runs_every_call(target):
    def f(x):
        np.random.seed(4)
        return x + np.random.rand(2)

    staged = autostage.convert(target=target)(f)
    expected = f(np.zeros(2))
    np.random.seed(0)
    assert_same(staged(np.zeros(2)), expected)
    assert_same(staged(np.zeros(2)), expected)  # reseeded at run time, not at trace time


# -- Python's random module: not staged, refused where it is written ---------------------------

PY_RNG = random.Random(0)


def stdlib_random(x):
    return x + random.random()


def stdlib_gauss(x):
    return x + random.gauss(0.0, 1.0)


def stdlib_choice(x):
    return x + random.choice([1.0, 2.0, 3.0])


def stdlib_partial(x):
    draw = functools.partial(random.uniform, 0.0)
    return x + draw(1.0)


def stdlib_global_instance(x):
    return x + PY_RNG.random()


def stdlib_argument(x, py_rng):
    return x + py_rng.normalvariate(0.0, 1.0)


def stdlib_system(x):
    return x + random.SystemRandom().random()


def stdlib_seed(x):
    random.seed(3)
    return x + 1.0


class PyNoise:
    def __init__(self):
        self.py_rng = random.Random(1)

    def __call__(self, x):
        return x + self.py_rng.uniform(0.0, 1.0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, words, line", [
    (stdlib_random, ["random.random()", "tracing stdlib_random"], "random.random()"),
    (stdlib_gauss, ["random.gauss()"], "random.gauss("),
    (stdlib_choice, ["random.choice()"], "random.choice("),
    (stdlib_partial, ["random.uniform()"], "draw(1.0)"),
    (stdlib_global_instance, ["Random.random()", "global variable 'PY_RNG'"], "PY_RNG.random"),
    (stdlib_argument, ["Random.normalvariate()", "argument 'py_rng'"], "py_rng.normalvariate"),
    (stdlib_system, ["SystemRandom.random()"], "SystemRandom().random"),
    (stdlib_seed, ["random.seed()"], "random.seed("),
    (PyNoise(), ["Random.uniform()", "self.py_rng", "tracing __call__"], "self.py_rng.uniform"),
])
def test_pythons_random_module_is_refused_where_it_is_called(target, fn, words, line):
    staged = autostage.convert(target=target)(fn)
    args = (np.zeros(2),) + ((random.Random(0),) if fn is stdlib_argument else ())
    state = random.getstate()
    with pytest.raises(RandomStagingError) as info:
        staged(*args)
    message = str(info.value)
    for word in [*words, "Python's random module is not staged", "np.random.Generator"]:
        assert word in message
    code = fn if inspect.isfunction(fn) else type(fn).__call__
    assert line_of(code, line) in message
    assert random.getstate() == state  # refused before anything was drawn


def test_pythons_random_module_runs_as_python_outside_tracing():
    py_rng = random.Random(5)
    random.seed(5)
    expected = [random.random(), random.gauss(0.0, 1.0), py_rng.random()]
    random.seed(5)
    py_rng = random.Random(5)
    got = autostage.to_graph(lambda: [random.random(), random.gauss(0.0, 1.0),
                                      py_rng.random()])()
    assert got == expected


def _integers_below(rng, x, n):
    return (rng.integers(len(x)), rng.integers(2**40, size=n), rng.integers(5, size=(2, 3)),
            rng.integers(x.shape[0], size=3))


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_integers_of_one_bound_draws_numpys_numbers(target):
    # (rng.integers(n) was an internal compile error on cpu: Numba's takes low and high)
    x = np.arange(7.0)
    want = _integers_below(np.random.default_rng(3), x, 4)
    got = autostage.convert(_integers_below, target=target)(np.random.default_rng(3), x, 4)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w, strict=True)
