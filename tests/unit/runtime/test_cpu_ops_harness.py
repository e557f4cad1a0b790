"""A small harness for the CPU array-op lowerings: trace a function by hand (ops_harness), emit
its njit source with the CPU codegen's Emitter, import it from a content-hashed file, run it and
compare with the NumPy reference evaluation (same dtype, shape, values).

0-d results are wrapped by an extra njit function in ``np.array(r)``, so the dtype Numba really
computed is checked (returning a scalar would box float32 as a Python float and hide it).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu.codegen import Emitter
from autostage.runtime.backends.cpu.compile import load_lowerings
from ops_harness import param_type, stage, trace

load_lowerings()  # every rule, as the backend does (ops may stage checks of other families)

_DIR = os.path.join(tempfile.gettempdir(), f"autostage_c2_tests_{os.getuid()}")


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
    source, name = source_of(function)
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    os.makedirs(_DIR, exist_ok=True)
    path = os.path.join(_DIR, f"c2_{digest}.py")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(source)
        os.replace(path + ".tmp", path)
    if _DIR not in sys.path:
        sys.path.insert(0, _DIR)
    return getattr(importlib.import_module(f"c2_{digest}"), name), source


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
