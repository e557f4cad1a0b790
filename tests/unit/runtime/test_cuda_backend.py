"""The cuda target without a GPU: which ops get kernels, the kernels' source, PTX for sm_80 and
sm_90 assembled by ptxas for every staged reference program, the errors when numba-cuda or a
GPU is missing, and results on the CUDA simulator (in a subprocess: the simulator must be
chosen before numba is imported) equal to the interpreter's.

CI installs the ``gpu`` extra, so these tests fail there (instead of skipping) without it.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import test_passes_batched_products as batched_products_tests
from autostage.runtime import ir
from autostage.runtime.backends.cuda import device
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.types import TensorType

import autostage

if not device.installed():
    if os.environ.get("CI"):
        raise RuntimeError("CI installs the gpu extra (numba-cuda); it is missing")
    pytest.skip("numba-cuda is not installed (pip install 'autostage[gpu]')",
                allow_module_level=True)

from autostage.runtime.backends.cuda import kernels, ptx, scalar_code  # noqa: E402
from autostage.runtime.targets import target_for  # noqa: E402


def _op(name: str, *dtypes, out=None, shape=(None,)):
    region = ir.Region([TensorType(np.dtype(d), shape) for d in dtypes])
    result = TensorType(np.dtype(out or dtypes[0]), shape)
    return ir.Op(name, region.args, [result], {})


@pytest.mark.parametrize("name,dtypes,out,expected", [
    ("add", ("f4", "f4"), None, True),
    ("add", ("i8", "i4"), "i8", True),
    ("add", ("?", "?"), None, False),  # logical or in NumPy
    ("tanh", ("f8",), None, True),
    ("tanh", ("f2",), None, False),  # float16: not a kernel type
    ("floor_divide", ("i8", "i8"), None, False),  # a zero divisor gives 0 in NumPy
    ("less", ("i8", "u8"), "?", False),  # mixed signs compare exactly in NumPy
    ("less", ("f4", "f4"), "?", True),
    ("true_divide", ("i8", "i8"), "f8", True),
    ("exp", ("c16",), None, False),
])
def test_kernel_ops(name, dtypes, out, expected):
    assert scalar_code.supports(_op(name, *dtypes, out=out)) is expected


def test_float_to_int_cast_stays_on_the_host():
    assert not scalar_code.supports(_op("cast", "f8", out="i4"))
    assert scalar_code.supports(_op("cast", "i4", out="f8"))


def test_elementwise_kernel_source_is_readable_and_stable():
    op = _op("multiply", "f4", "f4")
    direct = kernels.elementwise([op], list(op.operands), op.results[0], [1, 0], 1, True)
    assert direct.source == kernels.elementwise(
        [op], list(op.operands), op.results[0], [1, 0], 1, True).source
    assert "v0 = np.float32(e0 * s1)" in direct.source
    assert "out[i] = v0" in direct.source
    wide = kernels.elementwise([op], list(op.operands), op.results[0], [1, 0], 2, False)
    assert "(i1 if a0.shape[0] != 1 else 0)" in wide.source
    assert "out[i0, i1] = v0" in wide.source


def _staged_modules():
    """Each staged reference program's traces for its cases, optimized for the cuda target."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
    try:
        import harness
    finally:
        sys.path.pop(0)
    target = target_for("cuda")
    modules = {}
    for case in harness.collect_staged_cases():
        staged = autostage.convert(case.fn, target="interpreter")
        try:
            module = staged.get_concrete_function(*case.args, **case.kwargs).module
        except Exception:  # noqa: BLE001 - a case that is a clear error when traced
            continue
        modules.setdefault(case.id.split("[")[0], target.optimize(ir.copy_module(module)))
    return modules


def test_every_staged_reference_program_assembles_for_sm80_and_sm90():
    """Each distinct kernel of every staged reference program: PTX from NVVM, then ptxas."""
    modules = _staged_modules()
    assert len(modules) >= 60
    unique = {}
    for module in modules.values():
        for kernel in ptx.module_kernels(module):
            unique.setdefault(kernel.source, kernel)
    assert len(unique) >= 50
    assemble = ptx.ptxas() is not None or os.environ.get("CI")  # (CI has the nvcc wheel)
    failures = []
    for kernel in unique.values():
        for cc in ((8, 0), (9, 0)):
            try:
                code = ptx.compile_ptx(kernel, cc)
                if assemble:
                    ptx.assemble(code, cc)
            except Exception as e:  # noqa: BLE001 - collected and reported together
                failures.append(f"{kernel.name} sm_{cc[0]}{cc[1]}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("kernel", [kernels.reduce_rows, kernels.reduce_all])
def test_float32_sums_run_in_float64_per_thread(kernel):
    """A thread adds a long row's values in order: in float32, 1024 values of 0.1 were 4e-5
    off NumPy's pairwise sum; in float64 it stays within an ulp once rounded."""
    f32, c64 = np.dtype(np.float32), np.dtype(np.complex64)
    source = kernel("sum", f32, f32).source
    assert "acc = np.float64(0)" in source and "np.float32(acc)" in source
    assert "acc = np.complex128(0)" in kernel("sum", c64, c64).source
    assert "acc = np.float64(" not in kernel("max", f32, f32).source
    code = ptx.compile_ptx(kernel("sum", f32, f32), (9, 0))
    assert "add.f64" in code or "add.rn.f64" in code


def test_kernels_round_a_product_and_a_sum_separately_as_numpy():
    """NVVM contracts ``a * b + c`` into one fma by default; NumPy rounds twice."""
    region = ir.Region([TensorType(np.dtype("f8"), (None,))] * 3)
    a, b, c = region.args
    f64 = TensorType(np.dtype("f8"), (None,))
    product = ir.Op("multiply", [a, b], [f64], {})
    total = ir.Op("add", [product.results[0], c], [f64], {})
    kernel = kernels.elementwise([product, total], [a, b, c], total.results[0], [1, 1, 1], 1,
                                 True)
    code = ptx.compile_ptx(kernel, (9, 0))
    assert "mul.rn.f64" in code and "fma" not in code


def test_without_numba_cuda_convert_says_how_to_install(monkeypatch):
    monkeypatch.setattr(device, "installed", lambda: False)
    with pytest.raises(device.CudaUnavailableError, match=r"pip install 'autostage\[gpu\]'"):
        autostage.convert(lambda x: x + 1, target="cuda")


@pytest.mark.skipif(device.simulated(), reason="the simulator is a device")
def test_without_a_gpu_the_call_fails_clearly():
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present")
    f = autostage.convert(lambda x: x + 1, target="cuda")
    with pytest.raises(device.CudaUnavailableError, match="NUMBA_ENABLE_CUDASIM=1"):
        f(np.ones(3))


def test_backend_source_and_ptx_from_the_command_line(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""
        import numpy as np

        def step(x, w):
            h = np.tanh(x @ w)
            return h / np.sum(h)
    """))
    cli = [sys.executable, "-m", "autostage", f"{path}:step", "--args", "f32[?,?],f32[?,?]"]
    shown = subprocess.run([*cli, "--backend-source", "--target", "cuda"], capture_output=True,
                           text=True, check=True).stdout
    assert "def matmul_" in shown and "math.tanh(e0)" in shown and "def sum_all_" in shown
    code = subprocess.run([*cli, "--ptx", "9.0"], capture_output=True, text=True, check=True)
    assert ".target sm_90" in code.stdout
    bad = subprocess.run([*cli, "--ptx", "nine"], capture_output=True, text=True)
    assert bad.returncode == 2 and "compute capability like 9.0" in bad.stderr


_SIMULATED = textwrap.dedent("""
    import json
    import numpy as np
    import autostage

    def rnn(xs, w, u, b):
        h = np.zeros((xs.shape[1], w.shape[1]), dtype=xs.dtype)
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ u + h @ w + b)
        return h

    def newton(a, tol):
        x = np.ones_like(a)
        steps = 0
        while np.max(np.abs(x * x - a)) > tol:
            x = 0.5 * (x + a / x)
            steps += 1
        return x, steps

    def softmax_rows(z):
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True), np.mean(z), z.T.shape

    def branches(x, k):
        if np.sum(x) > 0:
            y = x * k
        else:
            y = -x
        print("min", np.min(y))
        return np.where(y > 1, y, 0.0).reshape(2, -1), np.sum(x > 0)

    def columns(x, i):
        rows = []
        for k in range(x.shape[0]):
            rows.append(x[k, 1:] * 2.0)
        return (np.sum(x, axis=0), np.max(x[i:], axis=0, keepdims=True), np.stack(rows), x[-1],
                np.full_like(x, 0.5) * x, np.zeros((2, x.shape[1]), dtype=np.int32))

    def errors(x, y):
        return x + y

    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    cases = [
        (rnn, (f32(3, 4, 5), f32(6, 6), f32(5, 6), f32(6))),
        (newton, (np.array([2.0, 9.0, 1e4]), 1e-9)),
        (softmax_rows, (rng.standard_normal((3, 5)),)),
        (branches, (np.arange(-2.0, 4.0), 3.0)),
        (branches, (np.arange(-4.0, 2.0), 3)),
        (columns, (rng.standard_normal((4, 3)).astype(np.float32), 1)),
    ]
    out = []
    for fn, args in cases:
        want = autostage.convert(fn, target="interpreter")(*args)
        got = autostage.convert(fn, target="cuda")(*args)
        flat = lambda r: [np.asarray(v) for v in (r if isinstance(r, tuple) else (r,))]
        out.append([fn.__name__, [
            (str(g.dtype), str(w.dtype), g.shape == w.shape,
             float(np.max(np.abs(g - w) / (np.abs(w) + 1e-30))) if g.size else 0.0)
            for g, w in zip(flat(got), flat(want))]])
    from numba import cuda

    def returns_its_argument(x, w):
        return x, x @ w, np.sum(x[1:])

    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    on_gpu = cuda.to_device(x)
    got = autostage.convert(returns_its_argument, target="cuda")(on_gpu, w)
    want = returns_its_argument(x, w)
    out.append(["device inputs", [got[0] is on_gpu, type(got[1]).__name__,
                                  bool(np.allclose(got[1].copy_to_host(), want[1])),
                                  bool(np.isclose(got[2], want[2]))]])
    try:
        autostage.convert(returns_its_argument, target="cpu")(on_gpu, w)
    except TypeError as e:  # a StagingTypeError
        out.append(["refused", [str(e)]])
    try:
        autostage.convert(errors, target="cuda")(np.ones(3), np.ones(4))
    except ValueError as e:
        out.append(["error", [str(e).splitlines()[0], " ".join(getattr(e, "__notes__", []))]])
    print("RESULT", json.dumps(out))
""")


def _on_the_simulator(script, source: str) -> tuple[str, object]:
    """Runs ``source`` (a script printing ``RESULT <json>``) on the CUDA simulator, which must be
    chosen before numba imports: its stdout and the JSON it printed."""
    script.write_text(source)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return done.stdout, json.loads(line[len("RESULT "):])


def test_results_on_the_cuda_simulator_equal_the_interpreter(tmp_path):
    stdout, result = _on_the_simulator(tmp_path / "sim.py", _SIMULATED)
    results = dict((name, rows) for name, rows in result)
    assert stdout.count("min -6.0\n") == 2  # printed on the host, by both targets
    assert results.pop("device inputs") == [True, "FakeCUDAArray", True, True]
    assert "GPU arrays are staged by target='cuda'" in results.pop("refused")[0]
    for name, rows in results.items():
        if name == "error":
            continue
        for got, want, same_shape, error in rows:
            assert (got, same_shape) == (want, True), name
            bound = 1e-5 if got == "float32" else 1e-12  # libdevice vs NumPy, a few ulp
            assert error <= bound, f"{name}: relative error {error}"
    message, notes = results["error"]
    assert "broadcast" in message and "errors" in notes and "sim.py" in notes



_DEVICE_RESULTS = textwrap.dedent("""
    import json
    import numpy as np
    import autostage
    from numba import cuda

    def mixed(x, w):
        # a kernel's result, two host ops' results (no kernels), a 0-d result, a Python number
        return x, np.tanh(x @ w), np.sort(x, axis=-1), np.cumsum(x), np.sum(x), x.shape[0]

    def rows(x):
        out = []
        for k in range(x.shape[0]):
            out.append(x[k] * 2.0)
        return out, x * 2.0, x * 2.0  # a list of arrays; two results CSE makes one array

    def nested(pair):
        a, b = pair
        return a + b

    def described(got, want):
        \"\"\"Per result: its kind and whether its value equals the interpreter's.\"\"\"
        rows = []
        for g, w in zip(got, want):
            if type(g) is list:
                rows.append(described(g, w))
                continue
            kind = ("device" if hasattr(g, "copy_to_host") and np.ndim(g)
                    else type(g).__name__)
            host = g.copy_to_host() if kind == "device" else g
            rows.append([kind, bool(np.allclose(host, w)) and np.shape(host) == np.shape(w)])
        return rows

    rng = np.random.default_rng(0)
    # 1200 elements: sums of two passes (the second pass launches the same kernel again)
    x, w = rng.standard_normal((30, 40)), rng.standard_normal((40, 2))
    want = autostage.convert(mixed, target="interpreter")(x, w)
    staged = autostage.convert(mixed, target="cuda")
    out = {}
    for call in ("first", "later"):  # the same kinds from the first call on
        dx = cuda.to_device(x)
        got = staged(dx, cuda.to_device(w))
        out[f"device {call}"] = [got[0] is dx, described(got[1:], want[1:])]
    dx = cuda.to_device(x)
    got = staged(dx, w)
    out["one device argument"] = [got[0] is dx, described(got[1:], want[1:])]
    got = staged(x, w)
    out["numpy"] = [got[0] is x, described(got[1:], want[1:])]
    x = x[:3, :4].copy()
    got = autostage.convert(rows, target="cuda")(cuda.to_device(x))
    kinds = described(got, rows(x))
    got[1][0, 0] = 99.0  # the two equal results are two arrays, as in Python
    out["rows"] = [kinds, bool(got[2].copy_to_host()[0, 0] == 2 * x[0, 0])]
    got = autostage.convert(nested, target="cuda")((cuda.to_device(x), cuda.to_device(x)))
    out["nested"] = described([got], [x + x])
    print("RESULT", json.dumps(out))
""")


def test_results_of_calls_with_device_arrays_stay_on_the_device(tmp_path):
    """With a GPU argument, array results come back as device arrays (kernel results as they
    are, host results copied there), 0-d ones as NumPy scalars and Python numbers, an argument
    as itself; with NumPy arguments, as NumPy values."""
    _, out = _on_the_simulator(tmp_path / "device_results.py", _DEVICE_RESULTS)
    on_device = [["device", True]] * 3 + [["float64", True], ["int", True]]
    assert out["device first"] == [True, on_device]
    assert out["device later"] == [True, on_device]
    assert out["one device argument"] == [True, on_device]
    assert out["numpy"] == [True, [["ndarray", True]] * 3 + [["float64", True], ["int", True]]]
    assert out["rows"] == [[[["device", True]] * 3, ["device", True], ["device", True]], True]
    assert out["nested"] == [["device", True]]


def test_the_library_of_the_first_gpu_argument_holds_the_results(monkeypatch):
    """CuPy arguments: CuPy results (a view of the device array, no copy); others: numba's."""
    import types

    from autostage.runtime.backends.cuda import executor

    cupy = types.ModuleType("cupy")
    cupy.asarray = lambda array: ("cupy view of", array)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    interface = {"shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3}
    from_cupy = type("ndarray", (), {"__module__": "cupy._core.core",
                                     "__cuda_array_interface__": interface})()
    from_numba = _DeviceArrayLike()
    transfers = executor._Transfers(cuda=None)
    placed = executor._Placement.of([np.ones(2), from_cupy, from_numba], transfers)
    assert placed.returned(from_numba) == ("cupy view of", from_numba)
    placed = executor._Placement.of([from_numba, from_cupy], transfers)
    assert placed.returned(from_cupy) is from_cupy
    assert executor._Placement.of([np.ones(2), 1.0], transfers) is None



class _DeviceArrayLike:
    """Stands for a CuPy / numba.cuda array: staged by the cuda target only."""

    __cuda_array_interface__ = {"shape": (3,), "typestr": "<f8", "data": (0, False),
                                "version": 3}

    def __mul__(self, other):
        return 2.0


class _DlpackArrayLike:
    """Stands for a PyTorch / JAX array: an array autostage does not stage."""

    def __dlpack__(self, stream=None):
        raise NotImplementedError

    def __mul__(self, other):
        return 2.0


@pytest.mark.parametrize("target,value", [("cpu", _DeviceArrayLike()),
                                          ("cpu", _DlpackArrayLike()),
                                          ("cuda", _DlpackArrayLike())])
def test_arrays_of_other_libraries_are_refused_not_frozen(target, value):
    def f(x):
        return x * 2

    with pytest.raises(StagingTypeError, match=r"argument 'x' is a .*ArrayLike, an array of"):
        autostage.convert(f, target=target)(value)


def test_backend_source_of_a_staged_function():
    def step(x, w):
        return np.tanh(x @ w) * 2.0

    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 4), np.float32)
    shown = autostage.convert(step, target="cuda").backend_source(x, w)
    assert "def matmul_" in shown and "v1 = np.float32(v0 * s1)" in shown
    assert "tanh" in autostage.convert(step, target="cpu").backend_source(x, w)
    assert "matmul" in autostage.convert(step, target="interpreter").backend_source(x, w)


@pytest.mark.slow
def test_staged_reference_suite_on_the_cuda_simulator():
    """Every staged reference program on the simulator (about 20 minutes on 2 cores): the
    tests of ``tests/reference/test_staged.py`` for the cuda target, in a subprocess."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "AUTOSTAGE_REFERENCE_TARGETS": "cuda",
           "AUTOSTAGE_REFERENCE_TIME_SCALE": "10"}  # the simulator runs a thread per element
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "tests/reference/test_staged.py", "-k", "cuda and not text_round_trip"],
        cwd=root, env=env, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-4000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


_SIMULATED_RNN = textwrap.dedent("""
    import json
    import numpy as np
    import autostage
    from autostage import config

    rng = np.random.default_rng(0)
    xs = rng.standard_normal((20, 5, 18)).astype(np.float32)
    h0 = np.zeros((5, 17), np.float32)
    w = (rng.standard_normal((18, 17)) * 0.3).astype(np.float32)
    u = (rng.standard_normal((17, 17)) * 0.2).astype(np.float32)
    b = np.zeros(17, np.float32)
    with config.STATIC_SIZES.override(0):
        got = autostage.convert(rnn, target="cuda")(xs, h0, w, u, b)
    print("RESULT", json.dumps(float(np.abs(got - rnn(xs, h0, w, u, b)).max())))
""")


def test_an_rnn_with_batched_input_products_on_the_cuda_simulator(tmp_path):
    """The cuda pipeline batches ``xs[t] @ w`` too (passes/batched_products): its guard, the
    big product and the per-step choice run on the cuda target."""
    source = inspect.getsource(batched_products_tests.rnn) + _SIMULATED_RNN  # the same program
    _, error = _on_the_simulator(tmp_path / "rnn.py", "import numpy as np\n" + source)
    assert error < 1e-5, error
