"""Helpers for the staging tests: trace a converted function and run it with the interpreter.

``staged(fn, *args)`` converts ``fn`` (``autostage.to_graph``), traces it on the NumPy ``args``
(each staged with its dtype and rank) and returns ``(module, results)`` where ``results`` are
what the reference interpreter computes (a tuple when ``fn`` returns a tuple). ``run(fn, *args)``
returns only the results. No tests live here.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import interpreter, ir, tracing
from autostage.runtime.staging import MaybeUnbound
from autostage.runtime.tensor import Tensor, as_tensor
from autostage.runtime.types import type_of_array

import autostage


def trace(fn, *args):
    """The module of ``fn`` traced on ``args``; also returns whether it returned a tuple."""
    converted = autostage.to_graph(fn)
    module = ir.Module("f")
    current = tracing.Trace(module, "f", [type_of_array(a) for a in args])
    with tracing.tracing(current):
        params = [Tensor(v) for v in current.function.body.args]
        out = converted(*params)
        is_tuple = isinstance(out, tuple)
        results = []
        for value in out if is_tuple else (out,):
            if isinstance(value, MaybeUnbound):
                raise value.error()
            results.append(as_tensor(value).value)
        current.function.body.results = tuple(results)
    current.finished = True
    module.add(current.function)
    return module, is_tuple


def staged(fn, *args):
    module, is_tuple = trace(fn, *args)
    results = interpreter.run(module, [np.asarray(a) if not isinstance(a, np.generic) else a
                                       for a in args])
    return module, (results if is_tuple else results[0])


def run(fn, *args):
    return staged(fn, *args)[1]


def ops(module):
    """The names of every op of the module's entry function, depth first."""
    return [op.name for op in module.main.body.walk()]


def assert_same_outcome(want, got, rtol: float) -> None:
    """``got`` (a staged run's results) is Python's ``want``: the same nesting of tuples, array
    dtypes, Python result types, and values within ``rtol``."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for w, g in zip(want, got, strict=True):
            assert_same_outcome(w, g, rtol)
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype, (got, want)
        np.testing.assert_allclose(got, want, rtol=rtol)
    else:
        assert type(got) is type(want), (got, want)
        assert got == want or abs(got - want) <= rtol * abs(want), (got, want)
