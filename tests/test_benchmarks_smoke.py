"""The benchmark scripts run (``--smoke``: tiny sizes, one repetition) and check their results.

Each script exits non-zero when a converted or staged function's result differs from the
original's (or from NumPy eager's); no timings are asserted here (benchmarks report ratios, see
benchmarks/*.py and the README). The workload scripts stage with ``target="cpu"`` when the CPU
backend compiles in this checkout, else with ``target="interpreter"``.
"""

import functools
import os
import pathlib
import re
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
COMBINED_HEADER = (r"^workload\s+autostage ms\s+numba ms\s+numpy ms\s+jax ms\s+best peer\s+ratio"
                   r"\s+goal\s+met$")


@functools.cache
def workload_target() -> str:
    """"cpu" if a tiny ``convert(target="cpu")`` compiles without falling back, else "interpreter".

    Asked in a fresh process: the fallback warning is given once per process.
    """
    probe = "import harness; print('cpu' if harness.cpu_target_available() else 'interpreter')"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120, cwd=BENCHMARKS)
    return result.stdout.strip().splitlines()[-1] if result.returncode == 0 else "interpreter"


def run_script(script: str, *args: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, str(BENCHMARKS / script), "--smoke", *args],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize("script, header", [
    ("conversion_time.py", r"^measure\s+value$"),
    ("python_overhead.py", r"^workload\s+original\s+converted\s+ratio$"),
])
def test_benchmark_smoke_run_checks_results(script, header, tmp_path):
    result = run_script(script, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(header, result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr


@pytest.mark.parametrize("script, variant_header", [
    ("matmul_many.py", r"^variant\s+median ms\s+vs numba$"),
    ("dynamic_rnn.py", r"^variant\s+median ms\s+sequences/s\s+vs numba$"),
    ("sgd.py", r"^variant\s+median ms\s+steps/s\s+vs numba$"),
    ("collatz.py", r"^variant\s+median ms\s+vs numba$"),
    ("inplace.py", r"^variant\s+median ms\s+vs numba$"),
    ("call_overhead.py", r"^variant\s+median us\s+vs numba$"),
    ("first_call.py",
     r"^variant\s+imports\s+cold\s+compiled\s+from cache\s+compiled\s+cold process$"),
])
def test_workload_benchmark_smoke_run_checks_every_variant(script, variant_header, tmp_path):
    result = run_script(script, "--target", workload_target(), tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(variant_header, result.stdout, re.MULTILINE), result.stdout
    assert re.search(COMBINED_HEADER, result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr


def test_compile_time_smoke_run_times_the_same_code_under_numba(tmp_path):
    result = run_script("compile_time.py", "--target", workload_target(), tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    header = (r"^program\s+empty cache\s+precompiled\s+new program\s+cached$"
              if workload_target() == "cpu" else r"^program\s+empty cache\s+new program\s+cached$")
    assert re.search(header, result.stdout, re.MULTILINE), result.stdout
    # the first scenario Numba compiles unchanged, with its cold compile in ms
    assert re.search(r"^training_loop\s+\d+\.\d\s", result.stdout, re.MULTILINE), result.stdout
    assert re.search(COMBINED_HEADER, result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr


def test_gradient_benchmark_smoke_run_checks_every_variant(tmp_path):
    """On the interpreter: its cpu compiles (six gradient programs, cold) take minutes under load;
    the cpu gradients are tested in tests/unit/runtime."""
    result = run_script("gradients.py", "--target", "interpreter", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^variant\s+median ms\s+steps/s\s+vs autostage hand$", result.stdout,
                     re.MULTILINE), result.stdout
    assert re.search(COMBINED_HEADER, result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr


def test_treelstm_benchmark_smoke_run_checks_against_pytorch(tmp_path):
    """On the interpreter: the cpu target's first compile of the recursive gradient takes
    minutes (README, "Staged recursion"). Losses, gradients and the weights after the epoch are
    checked against PyTorch's where torch is installed (the ``bench`` extra)."""
    result = run_script("treelstm.py", "--target", "interpreter", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^variant\s+median ms\s+steps/s\s+vs (pytorch eager|numpy forward)$",
                     result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr


def test_run_all_prints_the_combined_table(tmp_path):
    result = run_script("run_all.py", "--target", workload_target(), "--only", "call_overhead",
                        "collatz", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^== all workloads ==$", result.stdout, re.MULTILINE), result.stdout
    assert re.search(COMBINED_HEADER, result.stdout, re.MULTILINE), result.stdout
    assert re.search(r"^call_overhead x\+1 \(0-d f32\)\s", result.stdout, re.MULTILINE)
    assert re.search(r"^collatz 1\.\.30\s", result.stdout, re.MULTILINE)


def test_construct_compile_cost_smoke_run_prices_each_construct(tmp_path):
    result = run_script("construct_compile_cost.py", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()[2:]]
    assert [row[:-2] for row in rows] == [["int64", "a", "+", "b"], ["1-d", "loop"]]
    assert all(float(row[-1]) > 0 for row in rows)  # (a compile of an empty function)
