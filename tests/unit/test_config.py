"""autostage.config: each option has one name, one AUTOSTAGE_* variable and one context manager;
values come from override, set, the environment (read at each use) and the default, in order."""

import os
import threading

import pytest
from autostage.runtime import config as runtime_config
from autostage.runtime.passes import pass_manager

from autostage import config


@pytest.fixture(autouse=True)
def fresh_options():
    """Each test starts from the environment and defaults (another test may have set an
    option for the process) and leaves the options as it found them."""
    saved = {option: list(option._set) for option in config.OPTIONS}
    for option in config.OPTIONS:
        option.reset()
    yield
    for option, value in saved.items():
        option._set[:] = value


def test_every_option_has_its_variable_and_a_documented_row():
    names = [option.env for option in config.OPTIONS]
    assert len(set(names)) == len(names)
    for option in config.OPTIONS:
        assert option.env == "AUTOSTAGE_" + option.name.upper()
        assert option.env in config.__doc__ and option.doc


def test_value_order_override_set_environment_default(monkeypatch):
    option = config.MAX_TRACES
    monkeypatch.delenv(option.env, raising=False)
    assert option.value() == 32
    monkeypatch.setenv(option.env, "7")
    assert option.value() == 7  # read at each use
    try:
        option.set(5)
        assert option.value() == 5
        with option.override(2):
            assert option.value() == 2
            with option.override(0):
                assert option.value() == 0
            assert option.value() == 2
        assert option.value() == 5
    finally:
        option.reset()
    assert option.value() == 7


def test_overrides_are_per_thread():
    seen = []
    with config.VERIFY.override(True):
        worker = threading.Thread(target=lambda: seen.append(config.VERIFY.value()))
        worker.start()
        worker.join()
        assert config.VERIFY.value() is True
    assert seen == [runtime_config.VERIFY.value()]


def test_malformed_values_are_errors_naming_the_variable(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_MAX_TRACES", "lots")
    with pytest.raises(config.ConfigError, match="AUTOSTAGE_MAX_TRACES='lots'"):
        config.max_traces()
    with pytest.raises(config.ConfigError, match="an int >= 0"):
        config.MAX_TRACES.set(-1)
    with pytest.raises(config.ConfigError, match="one of filtered, full"):
        config.TRACEBACK.override("everything").__enter__()
    monkeypatch.setenv("AUTOSTAGE_TRACEBACK", "everything")  # read while reporting an error
    assert config.traceback_mode() == "filtered"


def test_pass_manager_reads_the_options(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_VERIFY", "0")
    assert not pass_manager.checks_enabled()
    with pass_manager.checks(True):
        assert pass_manager.checks_enabled() and config.VERIFY.value()
    monkeypatch.setenv("AUTOSTAGE_DUMP_AFTER", "cse, fusion")
    assert config.DUMP_AFTER.value() == {"cse", "fusion"}


def test_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "c"))
    assert config.cache_root() == str(tmp_path / "c")
    monkeypatch.delenv("AUTOSTAGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert config.cache_root() == str(tmp_path / "xdg" / "autostage")
    with config.CACHE_DIR.override(tmp_path / "o"):
        assert config.cache_root() == str(tmp_path / "o")


def test_malloc_tuning_reuses_the_memory_of_big_arrays():
    """glibc only: the thresholds are raised once (the first compile of the process did it
    already, unless AUTOSTAGE_MALLOC_TUNING=0); then a 64 MiB block freed and allocated again
    is memory the process has touched: writing it faults in (almost) no new pages."""
    import ctypes
    import platform
    import resource

    from autostage.runtime.backends.cpu import allocator

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc tuning is for glibc")
    assert allocator.tune() is config.MALLOC_TUNING.value()
    if not config.MALLOC_TUNING.value():
        return
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    size = 64 << 20
    for _ in range(2):  # the second block reuses the first one's memory
        block = libc.malloc(size)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        ctypes.memset(block, 1, size)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        libc.free(block)
    assert faults < size // 4096 // 100, faults


def _staged_with_python_only_output():
    """A converted function whose prints show what it runs on: NumPy arrays when eager, staged
    tensors never reach print (staged print shows values) — so ``type(x)`` tells them apart."""
    import numpy as np

    import autostage

    def step(x):
        print(type(x).__name__, x.sum())
        while x.sum() > 1.0:
            x = x / 2.0
        return x

    return autostage.convert(step, target="cpu"), np.arange(4.0)


def test_run_functions_eagerly_runs_python_and_traces_nothing(capsys):
    import numpy as np

    f, x = _staged_with_python_only_output()
    expected = f.python_function(x)
    capsys.readouterr()
    config.run_functions_eagerly(True)
    try:
        assert config.functions_run_eagerly() is True
        np.testing.assert_array_equal(f(x), expected)
        np.testing.assert_array_equal(f(x), expected)
        assert capsys.readouterr().out == "ndarray 6.0\nndarray 6.0\n"
        assert f.trace_count == 0
    finally:
        config.run_functions_eagerly(False)
    assert config.functions_run_eagerly() is False
    np.testing.assert_array_equal(f(x), expected)  # staged again: traced now
    assert f.trace_count == 1


def test_eager_override_is_per_block_and_thread():
    import numpy as np

    f, x = _staged_with_python_only_output()
    seen = []
    with config.EAGER.override(True):
        thread = threading.Thread(target=lambda: seen.append(config.EAGER.value()))
        thread.start()
        thread.join()
        f(x)
        assert f.trace_count == 0
    assert seen == [False]
    f(x)
    assert f.trace_count == 1
    np.testing.assert_array_equal(f(x), f.python_function(x))


def test_eager_calls_still_check_an_input_signature():
    import numpy as np

    import autostage

    f = autostage.convert(lambda x: x + 1, input_signature=[autostage.TensorSpec((None,),
                                                                                  np.float64)])
    with config.EAGER.override(True), pytest.raises(TypeError, match="float64"):
        f(np.arange(3, dtype=np.int32))


def test_eager_leaves_gradients_staged():
    import numpy as np

    import autostage

    f = autostage.convert(lambda x: (x * x).sum())
    with config.EAGER.override(True):
        g = autostage.grad(f)(np.arange(3.0))
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])


def test_eager_environment_variable_is_read_at_import(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "eager_script.py"
    script.write_text("import numpy as np, autostage\n"
                      "f = autostage.convert(lambda x: x * 2)\n"
                      "print(f(np.ones(2)).tolist(), f.trace_count)\n")
    env = {**os.environ, "AUTOSTAGE_EAGER": "1"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out == "[2.0, 2.0] 0\n"
