"""The benchmark scripts run (``--smoke``: tiny sizes, one repetition) and check their results.

Each script exits non-zero when a converted function's result differs from the original's; no
timings are asserted here (benchmarks report ratios, see benchmarks/*.py and the README).
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script, header", [
    ("conversion_time.py", r"^measure\s+value$"),
    ("python_overhead.py", r"^workload\s+original\s+converted\s+ratio$"),
])
def test_benchmark_smoke_run_checks_results(script, header, tmp_path):
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), "--smoke"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(header, result.stdout, re.MULTILINE), result.stdout
    assert "FAILED" not in result.stdout + result.stderr
