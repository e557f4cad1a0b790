"""Helpers shared by generated modules (backends/cpu/shared_helpers.py): one module per helper
source, loaded once and bound by every program that uses it."""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.backends.cpu import module_cache, shared_helpers

import autostage
from autostage import config


def first(a, b):
    return a @ b + 1.0


def second(a, b):
    return np.tanh(a @ b)


def test_free_names():
    text = ("@numba.njit(**JIT)\ndef h(p0, p1):\n    out = np.empty(3)\n"
            "    for i in range(3):\n        out[i] = cpu_err.x + CONST0[i] + p0\n    return out\n")
    assert shared_helpers.free_names(text) == {"cpu_err", "CONST0"}
    assert shared_helpers.free_names("def h(:") is None


def test_only_self_contained_helpers_are_shared():
    text = "@numba.njit(**JIT)\ndef h_x(p0):\n    return cpu_err.f(p0)\n"
    line = "import autostage.runtime.backends.cpu.run_errors as cpu_err  # source 0"
    bound = shared_helpers.reference(text, {"cpu_err": line})
    assert bound.startswith("h_x, = cpu_shared.helpers(('h_x',), (")
    assert repr(line) in bound
    assert shared_helpers.reference(text, {}) is None  # cpu_err is not importable there
    assert shared_helpers.reference(text.replace("cpu_err.f", "CONST0"), {"cpu_err": line}) \
        is None


def test_programs_share_one_compiled_helper():
    a, b = np.ones((3, 4)), np.ones((4, 2))
    helpers = []
    for fn in (first, second):
        with config.STATIC_SIZES.override(0):  # known tiny sizes: the product is inline
            staged = autostage.convert(fn)
            np.testing.assert_allclose(staged(a, b), fn(a, b))
            module = ir.copy_module(staged.get_concrete_function(a, b).module)
        source = cpu_compile.generate(module).source
        assert "cpu_shared.helpers(('h_matmul_" in source
        name = source[source.index("h_matmul_"):source.index(",", source.index("h_matmul_"))]
        loaded = module_cache.load(source)
        helpers.append(getattr(loaded, name))
        module_cache.release(loaded)
    assert helpers[0] is helpers[1]  # one shared module: one dispatcher, compiled once
