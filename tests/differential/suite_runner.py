"""Runs an installed package's own test suite in a child pytest, plain or converted.

``run_suite(package, tests, convert=True)`` starts ``python -m pytest`` on the test files
``tests`` (paths relative to the installed package directory), isolated from this repository's
pytest configuration (an empty ini file in a temporary directory), with ``outcome_plugin`` loaded;
it returns the plugin's JSON: per test node id its outcome, failure messages and the conversion
report. Node ids are relative to the package directory, so plain and converted runs compare
directly.
"""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
CHILD_TIME_LIMIT_S = 900  # the converted mpmath "more" suite: ~350 s alone on 2 cores


def package_dir(package: str) -> pathlib.Path:
    return pathlib.Path(importlib.import_module(package).__file__).resolve().parent


def run_suite(package: str, tests: list[str], convert: bool, skip: dict[str, str] | None = None,
              extra_args: tuple[str, ...] = (), lazy: bool = False) -> dict:
    """Outcomes of ``package``'s tests ``tests``; ``convert``: with the package converted."""
    root = package_dir(package)
    with tempfile.TemporaryDirectory(prefix="autostage-diff-") as tmp:
        ini = pathlib.Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\nmarkers =\n    slow: a package's own slow marker\n")
        out = pathlib.Path(tmp) / "outcomes.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
        env["AUTOSTAGE_DIFF_OUT"] = str(out)
        env.pop("AUTOSTAGE_DIFF_CONVERT", None)
        if convert:
            env["AUTOSTAGE_DIFF_CONVERT"] = package
            env["AUTOSTAGE_DIFF_SKIP"] = json.dumps(skip or {})
            env["AUTOSTAGE_DIFF_LAZY"] = "1" if lazy else "0"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "outcome_plugin", "-c", str(ini), "--rootdir", str(root),
                   "-W", "ignore::DeprecationWarning", *extra_args,
                   *(str(root / t) for t in tests)]
        result = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True,
                                timeout=CHILD_TIME_LIMIT_S)
        if not out.exists():
            raise RuntimeError(f"the child pytest wrote no outcomes (exit {result.returncode}):\n"
                               f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        data = json.loads(out.read_text())
        data["exit"] = result.returncode
        data["tail"] = result.stdout[-3000:]
        return data
