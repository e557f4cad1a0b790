"""Numba's start-up without SciPy (backends/cpu/numba_startup.py): a program whose code needs no
SciPy BLAS compiles without importing ``scipy.linalg``; Numba's probe answers as before, and
Numba's own BLAS code (``np.dot`` under ``numba.njit``) still compiles and runs afterwards."""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from autostage.runtime.backends.cpu import numba_startup

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import autostage

    def affine(x):
        return x * 2.0 + 1.0

    got = autostage.convert(affine, target="cpu")(np.arange(3.0)).tolist()
    scipy_then = "scipy.linalg" in sys.modules
    import numba
    import numba.np.arraymath
    from numba.core import cpu

    @numba.njit
    def dot(a, b):
        return np.dot(a, b)

    print(json.dumps({
        "got": got, "scipy_then": scipy_then,
        "have_blas": numba.np.arraymath._HAVE_BLAS,
        "restored": not hasattr(cpu.CPUContext.load_additional_registries,
                                "deferred_blas_probe"),
        "dot": dot(np.arange(3.0), np.arange(3.0)),
        "scipy_after_dot": "scipy.linalg" in sys.modules,
    }))
""")


def test_a_first_compile_does_not_import_scipy_linalg(tmp_path):
    script = tmp_path / "startup.py"
    script.write_text(_SCRIPT)
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "AUTOSTAGE_TIERED": "0"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report == {"got": [1.0, 3.0, 5.0], "scipy_then": False, "have_blas": True,
                      "restored": True, "dot": 5.0, "scipy_after_dot": True}


def test_the_probe_answers_as_numbas_when_scipy_is_missing(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert numba_startup._scipy_blas_installed() is False
    with pytest.raises(ImportError, match="scipy 0.16\\+ is required"):
        numba_startup._probe()


def test_declarations_without_the_extension_module_are_not_bindings(tmp_path, monkeypatch):
    (tmp_path / "linalg").mkdir()
    (tmp_path / "linalg" / "cython_blas.pxd").write_text("")
    spec = importlib.machinery.ModuleSpec("scipy", None, origin=str(tmp_path / "__init__.py"))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    assert numba_startup._scipy_blas_installed() is False
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "linalg" / f"cython_blas{suffix}").write_text("")
    assert numba_startup._scipy_blas_installed() is True


def test_the_probe_agrees_with_the_import_here():
    import scipy.linalg.cython_blas  # noqa: F401 - SciPy is a dependency: importable here
    assert numba_startup._scipy_blas_installed() is True
