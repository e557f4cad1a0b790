"""converted / converted_call: what is converted, what runs as it is, and the one warning."""

import functools
import json
import types
import warnings
import zlib

import numpy as np
import pytest
from autostage.runtime import tracing
from autostage.runtime.tensor import StagingTypeError

import autostage
from autostage import calls, config, conversion


def helper(x):
    if x > 0:
        return x
    return -x


def test_user_functions_are_converted_and_cached():
    converted = calls.converted(helper)
    assert converted is not helper
    assert conversion.is_converted(converted)
    assert calls.converted(helper) is converted
    assert calls.converted(converted) is converted  # converted code is never converted again
    assert calls.converted_call(helper, -4) == 4


@pytest.mark.parametrize("callee", [len, print, np.sum, json.dumps, functools.reduce, int,
                                    str.upper, dict, np.ndarray])
def test_builtins_numpy_stdlib_and_classes_run_as_they_are(callee):
    target = calls.converted(callee)
    from autostage.operators import BUILTINS

    assert target is BUILTINS.get(callee, callee)


def test_methods_partials_and_callable_objects():
    class Box:
        def __init__(self, v):
            self.v = v

        def get(self, d):
            return self.v if self.v else d

        def __call__(self, x):
            return x if x else self.v

    box = Box(0)
    method = calls.converted(box.get)
    assert isinstance(method, types.MethodType) and conversion.is_converted(method.__func__)
    assert method(7) == 7
    call = calls.converted(box)
    assert conversion.is_converted(call.__func__) and call(0) == 0
    part = calls.converted(functools.partial(helper, -3))
    assert isinstance(part, functools.partial) and conversion.is_converted(part.func)
    assert part() == 3


def test_configured_modules_run_as_they_are(monkeypatch):
    fake = types.ModuleType("thirdparty_lib")
    exec("def f(x):\n    return x\n", fake.__dict__)
    fake.f.__module__ = "thirdparty_lib"
    monkeypatch.setattr(config, "do_not_convert_modules", config.do_not_convert_modules |
                        {"thirdparty_lib"})
    assert calls.converted(fake.f) is fake.f


def test_unconvertible_code_runs_as_is_with_one_warning():
    namespace = {}
    exec("def made_in_exec(x):\n    return x + 1\n", namespace)
    fn = namespace["made_in_exec"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert calls.converted(fn) is fn
        assert calls.converted(fn) is fn
        assert calls.converted_call(fn, 1) == 2
    relevant = [w for w in caught if issubclass(w.category, autostage.AutostageWarning)]
    assert len(relevant) == 1
    message = str(relevant[0].message)
    assert "could not convert made_in_exec" in message
    assert "runs unconverted" in message and "source code is not available" in message


def test_generator_functions_run_as_written_without_warning():
    def gen(n):
        yield from range(n)

    def user(n):
        total = 0
        for v in gen(n):
            total += v
        return total

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert calls.converted(gen) is gen
        assert autostage.to_graph(user)(4) == 6


class _CountingHash:
    """A callable object whose __hash__ counts its calls (Python's call never hashes it)."""

    hashes = 0

    def __hash__(self):
        type(self).hashes += 1
        return 1

    def __call__(self, x):
        return 2 * x


def test_calling_a_callable_object_runs_no_user_hash():
    obj = _CountingHash()
    _CountingHash.hashes = 0
    assert calls.converted_call(obj, 4) == 8
    assert calls.converted_call(obj, 5) == 10
    assert _CountingHash.hashes == 0
    assert calls.converted_call(len, [1, 2]) == 2  # overloaded builtins still are


def _bytes_after_a_staged_if(a):
    if np.isnan(a[-1]):
        raise ValueError("nan")
    return len(bytes(a))


def _builtin_on_a_staged_value(a):
    return zlib.crc32(a)  # a C function reading the array's buffer


@pytest.mark.parametrize("fn", [_bytes_after_a_staged_if, _builtin_on_a_staged_value])
def test_foreign_code_given_a_staged_value_is_a_clear_error(fn):
    """A builtin's or C function's own error about a staged value is autostage's refusal naming
    the line, never a `raise` staged into the code (which raised at run time where Python
    returns a value)."""
    x = np.arange(5.0)
    fn(x)  # Python returns
    with pytest.raises(StagingTypeError, match=r"test_calls.py:\d+.*cannot take it \("):
        autostage.convert(fn)(x)


def _row_into_an_element(x):
    out = np.empty(3)
    out[0] = x[1:]
    return out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_array_of_run_time_size_written_into_an_element_is_a_clear_error(target):
    """(NumPy raises ValueError unless it has one element; the cpu target failed to compile.)"""
    with pytest.raises(tracing.StagingError, match=r"test_calls.py:\d+: this assignment writes "
                                                   r"a 1-d array whose size is known only at run "
                                                   r"time into a single element"):
        autostage.convert(_row_into_an_element, target=target)(np.arange(40.0))


class _Accumulator:
    def __init__(self, n, scale=1.0):
        self.total = np.zeros(n)  # a staged n: staged, since __init__ is converted
        self.scale = scale
        if scale > 1.0:
            self.total = self.total + 1.0

    def add(self, v):
        self.total = self.total + v * self.scale


class _Config:  # (a dataclass's __init__ is made by exec: it runs as it is, without warning)
    pass


_Config = __import__("dataclasses").dataclass(type("_Config", (), {
    "__annotations__": {"lr": float}, "__module__": __name__}))


def _accumulate(x, k):
    acc = _Accumulator(x.shape[0] + k, scale=_Config(0.5).lr + x[0])
    acc.add(x[0])
    return acc.total


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_user_class_made_in_staged_code_runs_its_init_converted(target):
    staged = autostage.convert(_accumulate, target=target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, k in ((np.arange(3.0), 2), (np.arange(30.0) + 1, 0)):
            np.testing.assert_array_equal(staged(x, np.int64(k)), _accumulate(x, np.int64(k)),
                                          strict=True)
