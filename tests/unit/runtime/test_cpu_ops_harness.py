"""A small harness for the CPU array-op lowerings: trace a function by hand (ops_harness), emit
its njit source with the CPU codegen's Emitter, load it as the backend loads programs
(``module_cache``), run it and compare with the NumPy reference evaluation (same dtype, shape,
values).

0-d results are wrapped by an extra njit function in ``np.array(r)``, so the dtype Numba really
computed is checked (returning a scalar would box float32 as a Python float and hide it).
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import module_cache
from autostage.runtime.backends.cpu.codegen import Emitter
from autostage.runtime.backends.cpu.compile import load_lowerings
from ops_harness import param_type, stage, trace

load_lowerings()  # every rule, as the backend does (ops may stage checks of other families)


def source_of(function: ir.Function) -> tuple[str, str]:
    """The generated module source and the name of the wrapper to call."""
    module = ir.Module(function.name)
    module.add(function)
    em = Emitter(module)
    body = em.function(function)
    name = em.function_names[function.name]
    params = ", ".join(f"p{i}" for i in range(len(function.body.args)))
    outs = ", ".join(f"np.array(r[{i}])" if t.ndim == 0 else f"r[{i}]"
                     for i, t in enumerate(function.result_types))
    wrapper = ["@numba.njit(**ENTRY)", f"def wrapper({params}):", f"    r = {name}({params})",
               f"    return ({outs},)"]
    source, _ = em.module_source([body, [(text, None) for text in wrapper]])
    return source, "wrapper"


def compile_function(function: ir.Function):
    """The wrapper of ``function``'s generated module, loaded as the backend loads programs
    (``module_cache``: in the cache directory, whose Numba entries are checked against the
    shared helpers they call; a module of its own beside them once reused entries compiled
    against another cache's helpers, and crashed)."""
    source, name = source_of(function)
    return getattr(module_cache.load(source), name), source


def run_cpu(fn, *arrays, known=False, rtol=0.0, atol=0.0):
    """Compiles ``fn`` staged on ``arrays`` and checks it against the NumPy reference.

    Returns the generated source (for tests that look at it)."""
    arrays = [np.asarray(a) for a in arrays]
    types, expected = stage(fn, *arrays, known=known)
    function = trace(fn, [param_type(a, known) for a in arrays])
    compiled, source = compile_function(function)
    with np.errstate(all="ignore"):
        got = compiled(*(a[()] if a.ndim == 0 else a for a in arrays))  # 0-d: native scalars
    assert len(got) == len(expected)
    for t, g, e in zip(types, got, expected, strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == t.dtype == e.dtype, (g.dtype, t.dtype, e.dtype, source)
        assert g.shape == e.shape, (g.shape, e.shape, source)
        if rtol or atol:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)
    return source


def test_harness_compiles_a_reduction():
    source = run_cpu(lambda x: np.max(x, axis=0), np.arange(6.0).reshape(2, 3))
    assert "for " in source
