"""The user API: to_graph, to_code, convert, do_not_convert."""

import functools
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import autostage
from autostage import conversion


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


class Counter:
    def __init__(self, start):
        self.start = start

    def count_to(self, n):
        total = self.start
        for i in range(n):
            if i % 2:
                total += i
        return total

    @staticmethod
    def twice(x):
        return x * 2 if x > 0 else 0

    @classmethod
    def make(cls, start):
        if start < 0:
            start = 0
        return cls(start)

    def __call__(self, x):
        while x > self.start:
            x -= 1
        return x


class StaticCall:
    __call__ = staticmethod(lambda x: x + 5)


class ClassCall:
    offset = 10

    @classmethod
    def __call__(cls, x):
        return x + cls.offset if x > 0 else cls.offset


class CachedMethod:
    @functools.cache  # noqa: B019 - what users write
    def twice(self, x):
        return x * 2


def make_adder(k):
    def add(xs):
        out = []
        for x in xs:
            out.append(x + k)
        return out

    return add


def test_to_graph_function_behaves_like_the_original():
    converted = autostage.to_graph(collatz)
    assert [converted(n) for n in range(1, 30)] == [collatz(n) for n in range(1, 30)]
    assert converted.__name__ == "collatz"
    assert converted.__doc__ == collatz.__doc__


def test_to_graph_methods_static_class_and_callable_objects():
    counter = Counter(3)
    assert autostage.to_graph(counter.count_to)(6) == counter.count_to(6) == 12
    assert autostage.to_graph(Counter.twice)(4) == 8
    assert autostage.to_graph(Counter.twice)(-4) == 0
    made = autostage.to_graph(Counter.make)(-5)
    assert isinstance(made, Counter) and made.start == 0
    assert autostage.to_graph(counter)(10) == counter(10) == 3


def test_a_static_or_class_call_method_is_bound_as_python_binds_it():
    for obj in (StaticCall(), ClassCall()):
        assert autostage.to_graph(obj)(1) == obj(1) and autostage.convert(obj)(1) == obj(1)
    assert autostage.to_graph(ClassCall())(-1) == 10


@pytest.mark.parametrize("api", [autostage.to_graph, autostage.to_code, autostage.convert])
def test_cached_functions_and_methods_are_refused_clearly(api):
    # (functools.cache's wrapper has no Python code to convert; a bound method of one raised
    # an AttributeError from inside autostage)
    for entity in (functools.cache(collatz), CachedMethod().twice):
        with pytest.raises(TypeError, match="not _lru_cache_wrapper objects"):
            api(entity)


def test_to_graph_closures_and_lambdas():
    add2 = make_adder(2)
    assert autostage.to_graph(add2)([1, 2]) == [3, 4]
    assert autostage.to_graph(make_adder(5))([1]) == [6]  # same code, its own closure
    sign = lambda x: 1 if x > 0 else (-1 if x < 0 else 0)  # noqa: E731
    converted = autostage.to_graph(sign)
    assert [converted(v) for v in (-3, 0, 3)] == [-1, 0, 1]
    assert "ag__.if_exp" in autostage.to_code(sign)


def _make_scaler(factor):
    def scale(x, **options):
        if options.get("negate"):
            return -x * factor
        return x * factor

    return scale


def test_functions_made_by_converted_code_are_converted_already():
    # A converted factory returns a closure whose code is generated code; to_graph of it used to
    # re-parse the generated source and raise "the name 'ag__' is reserved".
    made = autostage.to_graph(_make_scaler)(3)
    assert conversion.is_converted(made)
    again = autostage.to_graph(made)
    assert again(2) == 6 and again(2, negate=True) == -6
    assert again.__autostage_converted__ is made
    assert again.__name__ == "scale"


def test_code_is_converted_once_per_code_object():
    code = make_adder(0).__code__
    conversion._code_cache.pop((code.co_filename, code), None)
    first, second = make_adder(1), make_adder(2)
    autostage.to_graph(first)
    cached = conversion._code_cache[(code.co_filename, first.__code__)]
    autostage.to_graph(second)
    assert conversion._code_cache[(code.co_filename, second.__code__)] is cached
    assert autostage.to_graph(second)([0]) == [2]


def test_to_code_shows_functional_control_flow():
    code = autostage.to_code(collatz)
    assert code.startswith("def collatz(n):")
    assert "ag__.while_stmt(loop_test, loop_body, (n, steps))" in code
    assert "ag__.if_branch(n % 2 == 0, if_body, else_body)(n)" in code


def test_do_not_convert_calls_the_function_as_it_is():
    calls = []

    @autostage.do_not_convert
    def opaque(x):
        calls.append(x)
        return x

    def user(x):
        return opaque(x) + 1

    assert autostage.to_graph(user)(1) == 2
    assert calls == [1]
    assert "ag__.converted(opaque)(x)" in autostage.to_code(user)
    from autostage import calls as calls_module

    assert calls_module.converted(opaque) is opaque


def test_wrapped_functions_convert_the_wrapper():
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args) if args else None

        return wrapper

    @logged
    def hyp(a, b):
        return (a * a + b * b) ** 0.5

    converted = autostage.to_graph(hyp)
    assert converted(3, 4) == 5.0
    assert converted.__name__ == "hyp"


def test_unsupported_entities_are_clear_errors():
    with pytest.raises(TypeError, match="not int objects"):
        autostage.to_graph(3)

    def gen(n):
        yield from range(n)

    with pytest.raises(autostage.ConversionError) as error:
        autostage.to_code(gen)
    assert f"{__file__}:" in str(error.value)
    assert "generator and coroutine functions are not converted" in str(error.value)


def reads_eval(n):
    t = 0
    for _ in range(2):
        t += eval("n")
    return t


def reads_locals(n):
    b = 1
    for i in range(n):
        c = i + b
    return sorted(locals()), c


def lambda_reads_locals(n):
    names = lambda a: sorted(locals())  # noqa: E731 - a lambda is converted with its function
    return names(n)


def eval_with_namespaces(n):
    return eval("n + 1", {}, {"n": n})


def calls_reads_eval(n):
    return reads_eval(n) + 1


@pytest.mark.parametrize("fn, name, line", [(reads_eval, "eval", 'eval("n")'),
                                            (reads_locals, "locals", "sorted(locals())"),
                                            (lambda_reads_locals, "locals", "lambda a:")])
def test_a_function_reading_its_own_frame_is_not_converted(fn, name, line):
    """eval(s), exec(s), locals(), vars() and dir() read the caller's local variables, which
    converted code moves into generated functions (eval('n') in a loop body: NameError)."""
    with pytest.raises(autostage.ConversionError) as error:
        autostage.to_graph(fn)
    message = str(error.value)
    assert f"{__file__}:" in message and line in message
    assert f"{name}() reads the local variables of the function calling it" in message


def test_converted_code_runs_a_function_reading_its_frame_as_written():
    assert autostage.to_graph(eval_with_namespaces)(3) == 4  # its own namespaces: converted
    with pytest.warns(autostage.AutostageWarning, match="could not convert reads_eval"):
        assert autostage.to_graph(calls_reads_eval)(3) == calls_reads_eval(3) == 7


def _drive(coroutine):
    """Runs a coroutine that never suspends, returning its value."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the coroutine suspended")


class Numbers:
    def __init__(self, n):
        self.n = n

    def evens(self):
        for i in range(self.n):
            if i % 2:
                continue
            yield i

    async def total(self, extra):
        return self.n + extra


def test_to_graph_returns_generator_and_coroutine_functions_as_written():
    def gen(n):
        for i in range(n):
            if i % 2:
                yield i
        return "done"

    async def coro(x):
        if x:
            return x + 1
        return 0

    async def agen(n):
        for i in range(n):
            yield i

    assert autostage.to_graph(gen) is gen
    assert list(autostage.to_graph(gen)(5)) == [1, 3]
    assert _drive(autostage.to_graph(coro)(2)) == 3
    assert autostage.to_graph(agen) is agen
    numbers = Numbers(5)
    assert list(autostage.to_graph(numbers.evens)()) == [0, 2, 4]
    assert _drive(autostage.to_graph(numbers.total)(1)) == 6


def test_generators_nested_in_converted_code_run_as_written():
    def branches(x):
        def g(v):
            if v:
                yield 1
            yield 2
        return list(g(x))

    def loops(n):
        def g(v):
            total = 0
            for i in range(v):
                while total < i:
                    total += 1
                    if total > 3:
                        break
                yield total
            return total
        return list(g(n)), [list(it) for it in map(lambda k: (yield k), [7])]

    def lazy(n):
        x = 0
        def g():
            yield x
        it = g()
        for i in range(n):
            x = i
        return next(it)

    def coroutines(v):
        async def add(a):
            if a > 1:
                return a + v
            return -1
        return _drive(add(v)), _drive(add(0))

    converted = autostage.to_graph(branches)
    assert converted(True) == [1, 2] and converted(False) == [2]
    assert autostage.to_graph(loops)(6) == loops(6) == ([0, 1, 2, 3, 4, 5], [[7]])
    assert autostage.to_graph(lazy)(4) == lazy(4) == 3
    assert autostage.to_graph(coroutines)(3) == (6, -1)
    source = autostage.to_code(loops)
    # The generator's body is as written: no functional forms, no flags.
    assert "        for i in range(v):\n            while total < i:\n" in source
    assert "                if total > 3:\n                    break\n" in source


def test_convert_refuses_async_and_generator_functions_at_decoration():
    async def coro(x):
        return x

    def gen(x):
        yield x

    with pytest.raises(autostage.ConversionError) as error:
        autostage.convert(coro)
    message = str(error.value)
    assert f"{__file__}:{coro.__code__.co_firstlineno}:" in message
    assert "coro" in message and "async" in message
    with pytest.raises(autostage.ConversionError, match=r"gen: it is a generator function"):
        autostage.convert(target="interpreter")(gen)


def test_names_reserved_for_generated_code():
    def uses_alias(ag__):
        return ag__

    with pytest.raises(autostage.ConversionError, match="'ag__' is reserved"):
        autostage.to_graph(uses_alias)


def test_generated_code_is_deterministic_across_processes(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import autostage, test_api
        print(autostage.to_code(test_api.collatz))
        print(autostage.to_code(test_api.Counter.count_to))
    """)
    outputs = set()
    for seed in ("1", "2", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed, AUTOSTAGE_CACHE_DIR=str(tmp_path / seed))
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                env=env, check=True)
        outputs.add(result.stdout)
    assert len(outputs) == 1


def _stack_depth():
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def early_return(n):
    if n == 0:
        return _stack_depth()
    return early_return(n - 1)


def if_else(n):
    if n == 0:
        depth = _stack_depth()
    else:
        depth = if_else(n - 1)
    return depth


def ternary(n):
    return _stack_depth() if n == 0 else ternary(n - 1)


@autostage.to_graph
def decorated(n):
    return _stack_depth() if n == 0 else decorated(n - 1)


@pytest.mark.parametrize("fn", [early_return, if_else, ternary])
def test_recursion_through_if_and_ternary_costs_one_extra_frame_per_call(fn):
    converted = autostage.to_graph(fn)
    assert (fn(10) - fn(0)) / 10 == 1
    assert (converted(10) - converted(0)) / 10 == 2


def test_a_to_graph_result_called_from_converted_code_adds_no_frame():
    assert (decorated(10) - decorated(0)) / 10 == 2  # the converted function and its branch


def test_recursion_to_nearly_half_the_limit_runs_converted():
    room = sys.getrecursionlimit() - _stack_depth()
    depth = room // 2 - 10
    converted = autostage.to_graph(ternary)
    base = converted(0)  # first, so that the functions it calls are converted near the top
    assert converted(depth) == base + 2 * depth
    with pytest.raises(RecursionError) as info:
        converted(room)
    assert "in ternary" in info.value.__notes__[-1]
    assert "[Previous line repeated" in info.value.__notes__[-1]
