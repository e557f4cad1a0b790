"""The CPU backend's disk cache: a new process reuses compiled code, the directory is private,
damaged entries are recompiled, and an unsafe directory is refused with a warning."""

import os
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from autostage.runtime.backends.cpu import module_cache

PROGRAM = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    import autostage

    def collatz(n):
        total = np.int64(0)
        for i in range(1, n + 1):
            x = i
            while x != 1:
                if x % 2 == 0:
                    x = x // 2
                else:
                    x = 3 * x + 1
                total += 1
        return total

    f = autostage.convert(collatz)
    start = time.perf_counter()
    result = int(f(np.int64(300)))
    runner = f.concrete_functions[0]._runner
    stats = runner.dispatcher.stats
    print(json.dumps({"result": result, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "path": runner.path,
                      "seconds": time.perf_counter() - start}))
''')


def collatz_total(n: int) -> int:
    total = 0
    for i in range(1, n + 1):
        while i != 1:
            i = i // 2 if i % 2 == 0 else 3 * i + 1
            total += 1
    return total


def run_fresh_process(cache: Path, script: Path) -> dict:
    import json

    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    return path


def test_new_process_loads_compiled_code_from_disk(tmp_path, script):
    cache = tmp_path / "cache"
    first = run_fresh_process(cache, script)
    second = run_fresh_process(cache, script)
    assert first["result"] == second["result"] == collatz_total(300)
    assert first["misses"] == 1 and first["hits"] == 0
    assert second["hits"] == 1 and second["misses"] == 0  # no recompilation
    path = Path(second["path"])
    assert path.exists() and path.parent.parent == cache
    assert path.name.startswith("stage_") and path.name == Path(first["path"]).name
    assert module_cache.source_hash(path.read_text()) in path.name
    for folder in (cache, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_damaged_entries_are_recompiled(tmp_path, script):
    cache = tmp_path / "cache"
    path = Path(run_fresh_process(cache, script)["path"])
    # Numba's cache files garbled: loading them fails, so they are purged and compiled again.
    for file in module_cache.numba_cache_files(path):
        Path(file).write_bytes(b"garbage")
    again = run_fresh_process(cache, script)
    assert again["result"] == collatz_total(300) and again["misses"] == 1
    assert run_fresh_process(cache, script)["hits"] == 1  # rewritten and usable
    # The module's file no longer matches its hash: it is replaced, never trusted.
    path.write_text("raise SystemExit('tampered')\n")
    assert run_fresh_process(cache, script)["result"] == collatz_total(300)
    assert "tampered" not in path.read_text()


def test_unsafe_directory_warns_and_uses_a_private_one(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(shared))
    with pytest.warns(module_cache.CacheDirectoryWarning, match="writable by group or others"):
        folder = module_cache.directory()
    assert shared not in folder.parents and stat.S_IMODE(folder.stat().st_mode) == 0o700
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", module_cache.CacheDirectoryWarning)
        module = module_cache.load("ANSWER = 42\n")
    assert module.ANSWER == 42 and Path(module.__file__).parent == folder
    assert not list(shared.rglob("stage_*.py"))


def test_first_writer_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    source = "X = 1\n"
    path = module_cache.write(source)
    mtime = path.stat().st_mtime_ns
    assert module_cache.write(source) == path and path.stat().st_mtime_ns == mtime
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp_")]
