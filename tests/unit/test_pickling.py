"""Pickling ``convert``-ed functions: by reference when importable, by value (cloudpickle, as
Dask and Ray do) otherwise, without converting again; and a Dask LocalCluster running one."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autostage

cloudpickle = pytest.importorskip("cloudpickle")


@autostage.convert
def halve_until_small(x):
    while x.sum() > 1.0:
        x = x / 2.0
    return x


class Model:
    def __init__(self, scale):
        self.scale = scale

    @autostage.convert
    def step(self, x):
        return x * self.scale


def test_an_importable_function_pickles_by_reference():
    blob = pickle.dumps(halve_until_small)
    assert pickle.loads(blob) is halve_until_small
    assert len(blob) < 200  # a reference: module and name, no code
    assert pickle.loads(cloudpickle.dumps(halve_until_small)) is halve_until_small


def test_a_method_pickles_with_its_object():
    model = pickle.loads(pickle.dumps(Model(3.0)))
    np.testing.assert_array_equal(model.step(np.ones(2)), [3.0, 3.0])
    assert pickle.loads(pickle.dumps(Model.step)) is Model.step


def _local_function():
    """A converted function that is not importable, calling a helper with staged control flow
    (a helper that ran unconverted would fail to trace its while on a staged value)."""
    limit, offset = 1.0, np.ones(4)

    def shrink(v):
        while v.sum() > limit:
            v = v / 2.0
        return v

    @autostage.convert
    def f(x):
        return shrink(x) + offset

    return f


def test_a_local_function_pickles_by_value_with_its_converted_code(tmp_path):
    f = _local_function()
    x = np.arange(4.0)
    expected = f(x)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(f)  # plain pickle cannot send a function by value
    (tmp_path / "f.pkl").write_bytes(cloudpickle.dumps(f))
    # A fresh process that cannot convert anything: the code must arrive converted.
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        from autostage import conversion
        def refuse(fn):
            raise AssertionError(f"converted again: {{fn}}")
        conversion._convert = refuse
        with open({str(tmp_path / "f.pkl")!r}, "rb") as blob:
            f = pickle.load(blob)
        print(f(np.arange(4.0)).tolist(), f.trace_count, type(f).__name__)
        try:
            f(np.arange(3.0))
        except Exception as e:
            print(type(e).__name__, e, *getattr(e, "__notes__", []), sep="\\n")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "AUTOSTAGE_TIERED": "0"})
    assert out.returncode == 0, out.stderr
    first, error, *notes = out.stdout.splitlines()
    assert first == f"{expected.tolist()} 1 StagedFunction"
    # The error names the user's line (the source maps came along), not generated code.
    assert error == "ValueError"
    line = _local_function.__code__.co_firstlineno + 12  # return shrink(x) + offset
    assert f"test_pickling.py:{line} (in f)" in "\n".join(notes), out.stdout


SCALE = autostage.Variable(np.full(2, 3.0), name="scale")


def _uses_variables():
    """A converted function (by value: not importable) using a global and a closure Variable."""
    offset = autostage.Variable(np.ones(2), trainable=False, name="offset")

    @autostage.convert
    def f(x):
        offset.assign_add(x)
        return x * SCALE + offset.read()

    return f


def test_a_function_using_variables_pickles_them_by_value(tmp_path):
    f = _uses_variables()
    (tmp_path / "f.pkl").write_bytes(cloudpickle.dumps(f))  # the Variables' values now
    expected = [f(np.arange(2.0)).tolist(), f(np.arange(2.0)).tolist()]
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        with open({str(tmp_path / "f.pkl")!r}, "rb") as blob:
            f = pickle.load(blob)
        print([f(np.arange(2.0)).tolist(), f(np.arange(2.0)).tolist()])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "AUTOSTAGE_TIERED": "0"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(expected)


def test_gradient_functions_copy_and_pickle_by_value(tmp_path):
    import copy

    def loss(w, x):  # local: pickled by value
        return np.sum((x * w) ** 2)

    grad, value_and_grad = autostage.grad(loss), autostage.value_and_grad(loss, argnums=(0, 1))
    w, x = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_array_equal(copy.copy(grad)(w, x), grad(w, x))
    (tmp_path / "g.pkl").write_bytes(cloudpickle.dumps((grad, value_and_grad)))
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        with open({str(tmp_path / "g.pkl")!r}, "rb") as blob:
            grad, value_and_grad = pickle.load(blob)
        w, x = np.array([1.0, 2.0]), np.array([3.0, -1.0])
        value, (dw, dx) = value_and_grad(w, x)
        print(grad(w, x).tolist(), float(value), dw.tolist(), dx.tolist())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "AUTOSTAGE_TIERED": "0"})
    assert out.returncode == 0, out.stderr
    value, (dw, dx) = value_and_grad(w, x)
    assert out.stdout.split() == f"{grad(w, x).tolist()} {float(value)} {dw.tolist()} " \
        f"{dx.tolist()}".split()


def _cache_directory() -> str:
    from autostage import config
    return str(config.CACHE_DIR.value())


def test_a_dask_local_cluster_runs_a_converted_function(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))  # the workers share it
    f = _local_function()
    batches = [np.full(4, float(i)) for i in range(6)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        results = client.gather(client.map(f, batches))
        by_reference = client.gather(client.map(halve_until_small, batches))
        workers = len(client.scheduler_info()["workers"])
        caches = client.run(_cache_directory)
    assert workers == 2
    assert set(caches.values()) == {str(tmp_path / "cache")}  # every worker's
    assert list((tmp_path / "cache").rglob("*.py")), "nothing was compiled into the shared cache"
    for batch, result, halved in zip(batches, results, by_reference, strict=True):
        np.testing.assert_array_equal(result, f.python_function(batch))
        np.testing.assert_array_equal(halved, halve_until_small.python_function(batch))
