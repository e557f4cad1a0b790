"""LLVM's work on a compile's helpers runs on a worker thread (``llvm_worker``): the worker's
code is the code the compiling thread would make, it loads as Numba loads cached code, a
failure falls back to the compiling thread, and a helper's code is complete (loaded, pointed at
its environment, saved to the disk cache) before anything runs it."""

import importlib
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import direct, llvm_worker, symbol_links
from forks import assert_child_exits_cleanly
from llvmlite import binding as ll
from numba.core.registry import cpu_target

MODULES = itertools.count(0xA000)
HELPER = '''
import numpy as np

def scaled_sum(x, k):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * k
    return total


def twice(x, k):
    return scaled_sum(x, k) * 2.0
'''


@pytest.fixture
def helper_module(tmp_path, monkeypatch):
    """A module named as autostage's generated ones (its code is autostage's own, which the
    worker takes), imported fresh, its function under ``direct``'s compiler."""
    name = f"stage_{next(MODULES):016x}"  # (a new module each time)
    (tmp_path / f"{name}.py").write_text(HELPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    symbol_links.install()
    module = importlib.import_module(name)
    module.scaled_sum = numba.njit(pipeline_class=direct.Compiler)(module.scaled_sum)
    module.twice = numba.njit(pipeline_class=direct.Compiler)(module.twice)
    yield module.scaled_sum
    sys.modules.pop(name, None)


SIGNATURE = (numba.types.float64[::1], numba.types.float64)
X = np.linspace(-1.0, 2.0, 101)


def compile_as_callee(dispatcher, monkeypatch):
    """Compiles ``dispatcher`` as if a caller's typing asked for it: its library on the
    worker."""
    with monkeypatch.context() as patch:
        patch.setattr(direct, "typing_a_caller", lambda: True)
        dispatcher.compile(SIGNATURE)
    return dispatcher.overloads[SIGNATURE].library


def test_a_callee_compiles_on_the_worker_and_runs_when_called(helper_module, monkeypatch):
    before = llvm_worker.stats["worker"]
    library = compile_as_callee(helper_module, monkeypatch)
    assert llvm_worker.pending(library) and not library._finalized
    # Called from Python before anything completed it: its entry waits for the code.
    assert helper_module(X, 0.5) == helper_module.py_func(X, 0.5)
    assert not llvm_worker.pending(library) and library._finalized
    assert llvm_worker.stats["worker"] == before + 1
    entry = helper_module.overloads[SIGNATURE].entry_point
    assert llvm_worker.resolved(entry) is not entry  # Numba's own entry behind the deferred one
    assert llvm_worker.resolved(entry)(X, 2.0) == helper_module.py_func(X, 2.0)


def body(module) -> list:
    """A module's IR but its name (and the order of the predecessors comments list, which
    follows the order of uses in memory)."""
    return [re.sub(r"\s+; preds = .*$", "", line) for line in str(module).splitlines()
            if not line.startswith(("; ModuleID", "source_filename"))]


def test_the_worker_makes_the_code_the_compiling_thread_makes(helper_module, monkeypatch):
    library = compile_as_callee(helper_module, monkeypatch)
    job = llvm_worker._pending[id(library)]
    job.done.wait()
    optimized, object_code = job.result
    # The same module through the compiling thread's pipeline (symbol_links' one O3 run).
    reference = library._codegen.create_library("reference")
    reference._final_module = ll.parse_bitcode(library._final_module.as_bitcode())
    reference._optimize_final_module()
    assert body(ll.parse_bitcode(optimized)) == body(reference._final_module)
    assert object_code[:4] == b"\x7fELF"
    llvm_worker.complete(library)
    assert library.serialize_using_object_code()[2][0] == object_code  # what the cache keeps


def test_a_caller_of_a_callee_on_the_worker_goes_on_without_waiting(helper_module,
                                                                     monkeypatch):
    """A caller's finalisation does not wait for the code of a callee it links: it is linked
    and handed to the worker once the callee is done (here: held back until released)."""
    release = threading.Event()
    compiled = llvm_worker._compiled

    def held(*args):
        release.wait(timeout=60)
        return compiled(*args)

    monkeypatch.setattr(llvm_worker, "_compiled", held)
    twice = sys.modules[helper_module.py_func.__module__].twice
    caller = compile_as_callee(twice, monkeypatch)  # (types, and so compiles, scaled_sum)
    callee = helper_module.overloads[SIGNATURE].library
    assert callee in caller._linking_libraries
    assert llvm_worker.pending(caller) and llvm_worker.pending(callee)
    assert not llvm_worker._job(caller).started  # waits for the callee's code, not this thread
    release.set()
    assert twice(X, 1.5) == twice.py_func(X, 1.5)
    assert not llvm_worker.pending(caller) and not llvm_worker.pending(callee)


def test_a_failure_on_the_worker_compiles_on_the_calling_thread(helper_module, monkeypatch):
    def broken(*args):
        raise RuntimeError("no")

    monkeypatch.setattr(llvm_worker, "_compiled", broken)
    before = llvm_worker.stats["in_line"]
    library = compile_as_callee(helper_module, monkeypatch)
    llvm_worker.complete(library)
    assert llvm_worker.stats["in_line"] == before + 1 and library._finalized
    assert helper_module(X, 3.0) == helper_module.py_func(X, 3.0)


def test_a_function_called_from_python_or_with_the_option_off_compiles_in_line(
        helper_module, monkeypatch):
    monkeypatch.setattr(direct, "typing_a_caller", lambda: True)
    library_of = lambda: helper_module.overloads[SIGNATURE].library  # noqa: E731
    from autostage.runtime import config

    with config.LLVM_WORKER.override(False):
        helper_module.compile(SIGNATURE)
    assert library_of()._finalized and not llvm_worker.pending(library_of())
    monkeypatch.setattr(direct, "typing_a_caller", lambda: False)
    assert not llvm_worker.deferrable(library_of(), direct.typing_a_caller())


def test_the_worker_has_a_target_machine_of_its_own():
    codegen = cpu_target.target_context.codegen()
    worker = llvm_worker._worker()
    assert worker.machine is not codegen._tm
    assert worker.machine.triple == codegen._tm.triple


def test_a_fork_with_a_callee_on_the_worker_completes_it_in_the_child(helper_module,
                                                                      monkeypatch):
    library = compile_as_callee(helper_module, monkeypatch)
    assert llvm_worker.pending(library)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no worker thread; its code completes there
        try:
            os.write(write, repr(helper_module(X, 0.25)).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    got = os.read(read, 100).decode()
    os.close(read)
    assert status == 0 and float(got) == helper_module.py_func(X, 0.25)
    assert helper_module(X, 0.25) == helper_module.py_func(X, 0.25)



def test_a_fork_while_another_thread_compiles_waits_for_the_compile():
    """``os.fork()`` (a fork-started ``multiprocessing`` pool) while another thread compiles
    (holds Numba's compiler lock): the fork waits for it; the child's first compile waited
    forever for the lock of a thread it does not have."""

    from numba.core.compiler_lock import global_compiler_lock

    holding, release = threading.Event(), threading.Event()

    def compiling():  # (a compile holds the lock throughout)
        with global_compiler_lock:
            holding.set()
            release.wait(timeout=60)

    thread = threading.Thread(target=compiling)
    thread.start()
    holding.wait(timeout=60)
    threading.Timer(0.5, release.set).start()
    pid = os.fork()
    if pid == 0:  # the child: compiles
        ok = False  # (an exception still ends the child here, failed)
        try:
            ok = numba.njit(lambda x: x * 3.0 + 1.0)(2.0) == 7.0
        finally:
            os._exit(0 if ok else 3)
    thread.join()
    assert_child_exits_cleanly(pid)


PROGRAM = '''
import json, sys, numpy as np, autostage
from autostage.runtime.backends.cpu import llvm_worker

def step(h, x, w, u, b):
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w + h @ u + b)
    return h, h.sum(axis=1)

rng = np.random.default_rng(0)
args = (np.zeros((4, 5)), rng.normal(size=(6, 4, 3)), rng.normal(size=(3, 5)),
        rng.normal(size=(5, 5)), rng.normal(size=5))
h, sums = autostage.convert(target="cpu")(step)(*args)
print(json.dumps({"h": h.tolist(), "sums": sums.tolist(), "stats": dict(llvm_worker.stats)}))
'''


def run(cache, prelude="", **env) -> dict:
    script = cache.parent / "program.py"
    script.write_text(prelude + textwrap.dedent(PROGRAM))
    environment = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(cache),
                   "NUMBA_CACHE_DIR": str(cache / "numba"), "AUTOSTAGE_TIERED": "0", **env}
    done = subprocess.run([sys.executable, str(script)], env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def cache_entries(cache) -> list:
    """The disk cache's files, without the hashes in their names (of the data files'
    contents, of the generated modules' keys, which name the cache directory)."""
    names = (str(path.relative_to(cache)) for path in cache.rglob("*") if path.is_file())
    return sorted(re.sub(r"[0-9a-f]{32,}", "#", name) for name in names)


def test_a_program_compiles_the_same_with_and_without_the_worker(tmp_path):
    """In new processes with empty caches: the same results, the helpers' code made on the
    worker, and the same cache entries saved; a third process loads them all."""
    on = run(tmp_path / "on")
    off = run(tmp_path / "off", AUTOSTAGE_LLVM_WORKER="0")
    assert on["h"] == off["h"] and on["sums"] == off["sums"]
    assert on["stats"].get("worker", 0) >= 3 and not on["stats"].get("in_line")
    assert not off["stats"]
    saved = cache_entries(tmp_path / "on")
    assert saved == cache_entries(tmp_path / "off") and any(".nbc" in s for s in saved)
    again = run(tmp_path / "on")
    assert again["h"] == on["h"] and not again["stats"]
    assert cache_entries(tmp_path / "on") == saved  # nothing compiled again


def test_without_its_c_level_helpers_compile_in_line(tmp_path):
    without = run(tmp_path / "without", "import sys\n"
                  "sys.modules['autostage.runtime._llvm_worker'] = None  # (not built)\n")
    with_it = run(tmp_path / "with")
    assert without["h"] == with_it["h"] and not without["stats"] and with_it["stats"]["worker"]
