"""Large shared helpers are called by symbol, not linked into each generated function
(``symbol_links``): the caller's code holds a declaration and the callee's library, its Numba
cache entry names the callees, and an entry whose callees cannot be loaded as they were is a
miss, never an unresolved symbol (which would abort the process in LLVM)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import module_cache, numba_cache, symbol_links

import autostage


def program(x, y):
    return np.sort(x)[::-1] @ y + x.sum()


ARGS = (np.arange(40.0)[::-1].copy(), np.linspace(0.0, 1.0, 40))


class MLP:
    """Weights of known small sizes: products through a small generated helper, which calls
    the BLAS product by symbol (so its callers do too, through its code linked into them)."""

    def __init__(self):
        rng = np.random.default_rng(1)
        self.w1, self.w2 = rng.normal(size=(4, 8)), rng.normal(size=(8, 3))

    def forward(self, x):
        return np.maximum(x @ self.w1, 0.0) @ self.w2


X = np.random.default_rng(2).normal(size=(5, 4))


def libraries(staged) -> list:
    """The code libraries of ``staged``'s compiled entry and everything linked into it (but
    Numba's NRT library, compiled before ``symbol_links.install`` where a test compiled a
    ``numba.njit`` function first in the process)."""
    seen = {}

    def walk(library):
        if id(library) not in seen:
            seen[id(library)] = library
            for linked in library._linking_libraries:
                walk(linked)

    for result in staged.concrete_functions[0]._runner.dispatcher.overloads.values():
        walk(result.library)
    return [library for library in seen.values()
            if isinstance(library, symbol_links.SymbolLinkedLibrary)]


def test_large_shared_callees_are_declared_and_kept_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    staged = autostage.convert(target="cpu")(program)
    assert float(staged(*ARGS)) == program(*ARGS)
    callers = [lib for lib in libraries(staged) if lib._callees]
    names = {c.qualname for lib in callers for c in lib._callees}
    assert "numpy_sort" in names and any(n.startswith("h_pairwise_sum") for n in names)
    checked = []
    for library in callers:
        symbols = {c.symbol for c in library._callees}
        assert library._pins and all(  # the callees' libraries, held instead of linked
            pin not in library._linking_libraries and symbol_links._callees[pin].symbol in
            symbols for pin in library._pins)
        declared = {f.name: f.is_declaration for f in library._final_module.functions}
        if not declared:
            continue  # a shared helper an earlier test's program loaded from the cache: no IR
        checked.append(library.name)
        for callee in library._callees:
            assert declared.get(callee.symbol), (  # no copy of the callee's code
                library.name, callee.qualname, [lib.name for lib in library._linking_libraries])
            assert callee.symbol in library._symbols
    # (compiled here: a new cache directory)
    assert "f_program" in checked


def looping(x, y, b):
    rows = []
    for i in range(x.shape[0]):
        rows.append(x[i] * 2.0)
    return np.tanh(x + y + b).sum(axis=1), np.stack(rows)


def test_helpers_that_are_loops_are_called_by_symbol_at_any_size(tmp_path, monkeypatch):
    """Broadcast copies, pairwise sums and a list's buffer (``symbol_links.LOOPS``: 100-200
    instructions, below ``LARGE``) are called by symbol: no copy of their code in the entry."""
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(3)
    x, y, b = rng.normal(size=(3, 200)), rng.normal(size=(3, 200)), rng.normal(size=200)
    staged = autostage.convert(target="cpu")(looping)
    for got, want in zip(staged(x, y, b), looping(x, y, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    entry = libraries(staged)[0]
    loops = [c for c in entry._callees if c.qualname.startswith(symbol_links.LOOPS)]
    names = {c.qualname for c in loops}
    assert {"h_expand_1", "h_expand_2", "h_buffer_grow", "h_buffer_stack"} <= names, names
    assert any(name.startswith("h_pairwise_sum") for name in names), names
    declared = {f.name: f.is_declaration for f in entry._final_module.functions}
    assert all(declared[c.symbol] for c in loops)
    assert_accounted(staged)


def compiled_sort() -> tuple:
    """The argument types of a signature of ``sorts.numpy_sort``, compiled (it has no Python
    wrapper: compiled code calls it)."""
    from autostage.runtime.backends.cpu import sorts

    argtypes = (numba.types.float64[::1], numba.types.int64)
    sorts.numpy_sort.compile(argtypes)
    return argtypes


def assert_accounted(staged) -> None:
    """Every library's references to shared code it did not link are named in its callees."""
    for library in libraries(staged):
        own = set(library._callees)
        for kept in library._linking_libraries:
            assert set(getattr(kept, "_callees", ())) <= own
        declared = {f.name for f in library._final_module.functions
                    if f.is_declaration and symbol_links._SHARED_SYMBOL.match(f.name)}
        assert declared <= library._symbols


def test_callees_of_linked_code_are_the_callers_too(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    model = MLP()
    staged = autostage.convert(target="cpu")(model.forward)
    np.testing.assert_array_equal(staged(X), model.forward(X))
    entry = libraries(staged)[0]
    # The BLAS product by symbol, through the small product helpers linked here (or, in some
    # processes' histories, that helper itself by symbol: linked with its own copy). Product
    # helpers are typed by dtypes and ranks only (static sizes erased).
    names = {c.qualname for c in entry._callees}
    assert "gemm" in names or {"h_matmul_f64nxn_f64nxn_f64nxn"} <= names, names
    assert_accounted(staged)
    staged_sort = autostage.convert(target="cpu")(program)
    staged_sort(*ARGS)
    assert_accounted(staged_sort)


def test_resolve_loads_callees_and_refuses_another_symbol():
    from autostage.runtime.backends.cpu import sorts

    argtypes = compiled_sort()
    symbol = sorts.numpy_sort.overloads[argtypes].fndesc.mangled_name
    good = symbol_links.Callee(sorts.__name__, "numpy_sort", argtypes, symbol)
    pins = symbol_links.resolve([good], [symbol])
    assert pins == (sorts.numpy_sort.overloads[argtypes].library,)
    assert symbol_links.resolve([good._replace(symbol=symbol + "x")], []) is None
    assert symbol_links.resolve([good], [symbol + "x"]) is None  # a symbol nobody defines
    assert symbol_links.resolve([good._replace(module="stage_0123456789abcdef")], []) is None
    assert symbol_links.resolve([good._replace(qualname="KINDS")], []) is None  # not compiled


def test_a_cache_entry_whose_callee_changed_name_is_a_miss(tmp_path):
    from autostage.runtime.backends.cpu import sorts

    argtypes = compiled_sort()
    callee = symbol_links.Callee(sorts.__name__, "numpy_sort", argtypes, "_ZN3gone")
    data = (("f", symbol_links.KIND, (b"", b"", (callee,), ("_ZN3gone",))), "rest")
    assert not symbol_links.loadable(data)
    cache_file = numba_cache.TiedCacheFile(str(tmp_path), "f-1.py311", ("stamp", 1))
    cache_file.save("key", data)
    assert cache_file.load("key") is None  # compiled again, never loaded
    assert symbol_links.loadable((("f", "object", (b"", b"")), "rest"))
    assert symbol_links.loadable({"not": "numba's"})


CHILD = '''
    import json, numpy as np, autostage
    def program(x, y):
        return np.sort(x)[::-1] @ y + x.sum()
    class MLP:
        def __init__(self):
            rng = np.random.default_rng(1)
            self.w1, self.w2 = rng.normal(size=(4, 8)), rng.normal(size=(8, 3))
        def forward(self, x):
            return np.maximum(x @ self.w1, 0.0) @ self.w2
    x, y = np.arange(40.0)[::-1].copy(), np.linspace(0.0, 1.0, 40)
    staged = autostage.convert(target="cpu")(program)
    value = float(staged(x, y))
    model = MLP()
    inputs = np.random.default_rng(2).normal(size=(5, 4))
    forward = autostage.convert(target="cpu")(model.forward)
    same = bool(np.array_equal(forward(inputs), model.forward(inputs)))
    runners = [f.concrete_functions[0]._runner for f in (staged, forward)]
    print(json.dumps({"value": value, "want": float(program(x, y)), "path": runners[0].path,
                      "same": same,
                      "hits": [sum(r.dispatcher.stats.cache_hits.values()) for r in runners]}))
'''


def run_child(cache: Path) -> dict:
    script = cache.parent / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    env = {**os.environ, "AUTOSTAGE_CACHE_DIR": str(cache), "AUTOSTAGE_TIERED": "0"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_new_processes_load_callers_of_shared_code_by_symbol(tmp_path):
    cache = tmp_path / "cache"
    first = run_child(cache)
    assert first["value"] == first["want"] and first["same"] and first["hits"] == [0, 0]
    again = run_child(cache)  # loaded from the cache, callees first
    assert again["value"] == again["want"] and again["same"] and again["hits"] == [1, 1]


@pytest.mark.slow
def test_callees_compiled_again_under_new_names(tmp_path):
    cache = tmp_path / "cache"
    first = run_child(cache)
    program_files = set(module_cache.numba_cache_files(Path(first["path"])))
    helpers = [p for p in Path(first["path"]).parent.glob("__pycache__/stage_*.nb[ic]")
               if str(p) not in program_files]
    assert helpers
    for path in helpers:  # the shared helpers are compiled again, under new names
        path.unlink()
    last = run_child(cache)  # a miss and a compile, or a hit on equal names; never a crash
    assert last["value"] == last["want"] and last["same"]


def test_unaccounted_references_make_an_entry_that_never_loads(tmp_path, monkeypatch):
    """A library whose bookkeeping missed a callee (a bug) is cached as a certain miss."""
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    model = MLP()
    staged = autostage.convert(target="cpu")(model.forward)
    staged(X)
    entry = libraries(staged)[0]
    assert entry._symbols
    name, kind, data = entry.serialize_using_object_code()
    assert kind == symbol_links.KIND and symbol_links.loadable(((name, kind, data),))
    monkeypatch.setattr(entry, "_callees", ())
    monkeypatch.setattr(entry, "_symbols", frozenset())
    name, kind, data = entry.serialize_using_object_code()
    assert kind == symbol_links.KIND and data[2][-1].module == "<unaccounted>"
    assert not symbol_links.loadable(((name, kind, data),))


def test_autostage_code_is_optimised_by_one_o3_run_and_still_vectorised(tmp_path, monkeypatch):
    """Generated code skips Numba's function passes and its first ("cheap") module run: one O3
    run of the linked module, which still vectorises an element-wise loop; a user's own
    ``numba.njit`` function is optimised as Numba does."""
    from numba.core import codegen

    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))
    numba_runs = []
    for name in ("_optimize_functions", "_optimize_final_module"):
        original = getattr(codegen.CPUCodeLibrary, name)

        def record(library, *args, _original=original, _name=name):
            numba_runs.append((_name, library.name))
            return _original(library, *args)
        monkeypatch.setattr(codegen.CPUCodeLibrary, name, record)

    def scaled(x, y):
        return np.tanh(x) * 2.0 + y

    x, y = np.linspace(-2.0, 2.0, 1000), np.linspace(0.0, 1.0, 1000)
    staged = autostage.convert(target="cpu")(scaled)
    np.testing.assert_allclose(staged(x, y), scaled(x, y), rtol=1e-14, atol=1e-15)  # (4 ulp)
    assert not [run for run in numba_runs if run[1] == "f_scaled"]
    asm = "\n".join(lib.get_asm_str() for lib in libraries(staged) if lib.name == "f_scaled")
    assert "pd\t%ymm" in asm or "pd\t%zmm" in asm  # (packed doubles: the loop is vectorised)

    @numba.njit
    def user_own(a):
        return a.sum()

    assert user_own(x) == pytest.approx(x.sum(), abs=1e-9)  # (Numba sums in order)
    runs = {run for run, library in numba_runs if library.endswith("user_own")}
    assert runs == {"_optimize_functions", "_optimize_final_module"}
