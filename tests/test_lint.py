"""The code base stays `ruff` clean (configuration in pyproject.toml)."""

import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(pathlib.Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
