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
    conversion._code_cache.pop(make_adder(0).__code__, None)
    first, second = make_adder(1), make_adder(2)
    autostage.to_graph(first)
    cached = conversion._code_cache[first.__code__]
    autostage.to_graph(second)
    assert conversion._code_cache[second.__code__] is cached
    assert autostage.to_graph(second)([0]) == [2]


def test_to_code_shows_functional_control_flow():
    code = autostage.to_code(collatz)
    assert code.startswith("def collatz(n):")
    assert "ag__.while_stmt(loop_test, loop_body, (n, steps))" in code
    assert "ag__.if_stmt(n % 2 == 0, if_body, else_body, (n,))" in code


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
        autostage.to_graph(gen)
    assert f"{__file__}:" in str(error.value)
    assert "generator and coroutine functions are not converted" in str(error.value)


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
