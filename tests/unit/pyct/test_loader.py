"""Tests for autostage.pyct.loader."""

import hashlib
import inspect
import os
import stat
import subprocess
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor

import gast
import pytest

from autostage.pyct import errors, loader, parser, templates

SOURCE = "def answer(x):\n    y = x * 2\n    return y + 1\n"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv(loader.ENV_VAR, str(path))
    return path


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_load_source_writes_a_hash_named_file(cache):
    module, filename = loader.load_source(SOURCE)
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:32]
    assert filename == str(cache / f"autostage_gen_{digest}.py")
    assert module.__name__ == f"autostage_gen_{digest}"
    assert module.__file__ == filename
    assert sys.modules[module.__name__] is module
    with open(filename, encoding="utf-8") as f:
        assert f.read() == SOURCE
    assert module.answer(20) == 41


def test_cache_dir_is_private(cache):
    assert not cache.exists()
    assert loader.cache_dir() == str(cache)
    assert _mode(cache) == 0o700
    assert _mode(loader.cache_dir()) == 0o700
    _, filename = loader.load_source(SOURCE)
    assert _mode(filename) == 0o600
    assert os.path.basename(filename) in os.listdir(cache)


def test_default_cache_dir_is_per_user(monkeypatch, tmp_path):
    monkeypatch.delenv(loader.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert loader.cache_dir() == str(tmp_path / "xdg" / "autostage")
    assert _mode(tmp_path / "xdg" / "autostage") == 0o700


def test_env_var_is_respected(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    monkeypatch.setenv(loader.ENV_VAR, str(other))
    module, filename = loader.load_source("VALUE = 'elsewhere'\n")
    assert os.path.dirname(filename) == str(other)
    assert module.VALUE == "elsewhere"


def test_shared_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(loader.ENV_VAR, str(shared))
    with pytest.warns(errors.CacheDirectoryWarning, match="writable by group or others"):
        _, filename = loader.load_source(SOURCE)
    private = os.path.dirname(filename)
    assert private != str(shared) and stat.S_IMODE(os.stat(private).st_mode) == 0o700
    assert os.listdir(shared) == []  # nothing was written into the unsafe directory


def test_same_source_reuses_the_file_and_module(cache):
    module1, filename1 = loader.load_source(SOURCE)
    mtime = os.stat(filename1).st_mtime_ns
    module2, filename2 = loader.load_source(SOURCE)
    assert (module2, filename2) == (module1, filename1)
    assert os.stat(filename1).st_mtime_ns == mtime  # never rewritten
    _, filename3 = loader.load_source(SOURCE + "# changed\n")
    assert filename3 != filename1
    assert len([f for f in os.listdir(cache) if f.endswith(".py")]) == 2


def test_concurrent_writers_produce_one_correct_file(cache):
    source = "X = 7\n"
    path = cache / f"w_{hashlib.sha256(source.encode()).hexdigest()[:32]}.py"
    loader.cache_dir()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: loader._write_once(str(path), source.encode()), range(32)))
    assert path.read_text() == source
    assert [f for f in os.listdir(cache) if f.startswith(".tmp_")] == []


def test_a_corrupted_file_is_replaced(cache):
    _, filename = loader.load_source(SOURCE)
    with open(filename, "w", encoding="utf-8") as f:
        f.write("raise RuntimeError('planted')\n")
    loader._write_once(filename, SOURCE.encode())
    with open(filename, encoding="utf-8") as f:
        assert f.read() == SOURCE


def test_load_ast_and_getsource():
    nodes = parser.parse_str(SOURCE, single_node=False)
    module, source, filename = loader.load_ast(nodes)
    assert source == SOURCE
    assert inspect.getsource(module.answer) == SOURCE
    assert inspect.getsourcefile(module.answer) == filename


def test_traceback_shows_the_generated_line():
    module, filename = loader.load_source("def fail(x):\n    return x / 0  # boom\n")
    with pytest.raises(ZeroDivisionError) as info:
        module.fail(1)
    frame = traceback.extract_tb(info.tb)[-1]
    assert (frame.filename, frame.lineno, frame.name) == (filename, 2, "fail")
    assert frame.line == "return x / 0  # boom"


def test_delete_on_exit(tmp_path):
    script = (
        "from autostage.pyct import loader\n"
        "_, filename = loader.load_source('A = 1\\n', delete_on_exit=True)\n"
        "print(filename)\n")
    env = dict(os.environ, **{loader.ENV_VAR: str(tmp_path / "c2")})
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True, cwd=os.path.dirname(os.path.dirname(
                             os.path.dirname(os.path.dirname(__file__)))))
    filename = out.stdout.strip()
    assert filename.startswith(str(tmp_path / "c2"))
    assert not os.path.exists(filename)


# --- load_function ------------------------------------------------------------------------------

def make_counter():
    count = 0
    step = None  # assigned after conversion below

    def bump(by=1, *, scale=1):
        """Adds to the shared count."""
        nonlocal count
        count += by * scale * step
        return count + LATE_GLOBAL  # noqa: F821 - defined after loading

    def read():
        return count

    def set_step(value):
        nonlocal step
        step = value

    return bump, read, set_step


def _load(fn, **kwargs):
    node, _ = parser.parse_entity(fn)
    return loader.load_function(node, fn.__name__, fn.__globals__, loader.cells_of(fn), **kwargs)


def test_loaded_function_shares_globals_and_cells():
    bump, read, set_step = make_counter()
    loaded = _load(bump, like=bump).function
    assert loaded.__globals__ is bump.__globals__
    assert loaded.__closure__ == bump.__closure__  # the same cell objects
    set_step(10)  # a free variable assigned after loading
    globals()["LATE_GLOBAL"] = 1000  # a global defined after loading
    try:
        assert loaded(2) == 1020
        assert read() == 20  # the nonlocal write is visible to the original
        assert bump(1, scale=3) == 1050
        assert loaded() == 1060
    finally:
        del globals()["LATE_GLOBAL"]


def test_metadata_copied_from_the_original():
    bump, _, _ = make_counter()
    loaded = _load(bump, like=bump)
    fn = loaded.function
    assert (fn.__name__, fn.__qualname__, fn.__module__) == (
        "bump", "make_counter.<locals>.bump", __name__)
    assert fn.__doc__ == "Adds to the shared count."
    assert (fn.__defaults__, fn.__kwdefaults__) == ((1,), {"scale": 1})
    assert fn.__code__.co_qualname == "make_counter.<locals>.bump"


def test_getsource_of_loaded_function_is_the_generated_text():
    bump, _, _ = make_counter()
    loaded = _load(bump, like=bump)
    text = inspect.getsource(loaded.function)
    assert text.startswith("    def bump(by=1, *, scale=1):\n")
    assert "count += by * scale * step" in text
    origin = f'"""Converted from {bump.__code__.co_filename}:{bump.__code__.co_firstlineno}."""'
    assert loaded.source.startswith(f"{origin}\n\ndef autostage_factory(count, step):\n")
    assert text in loaded.source
    assert inspect.getsourcefile(loaded.function) == loaded.filename


def test_loaded_function_traceback_points_at_the_generated_file():
    bump, _, _ = make_counter()
    loaded = _load(bump, like=bump).function  # `step` is still None
    with pytest.raises(TypeError) as info:
        loaded()
    frame = traceback.extract_tb(info.tb)[-1]
    assert frame.filename == inspect.getsourcefile(loaded)
    assert frame.line == "count += by * scale * step"
    assert frame.name == "bump"


def test_extra_bindings_and_defaults_without_original():
    definition = "def scaled(x, k=base * 2, *, kw=base):\n    return helper(x) * k + kw\n"
    loaded = loader.load_function(definition, "scaled", {"base": 5}, None,
                                  {"helper": lambda v: v + 1})
    fn = loaded.function
    assert fn.__code__.co_freevars == ("helper",)
    assert (fn.__defaults__, fn.__kwdefaults__) == ((10,), {"kw": 5})
    assert fn(1) == 25
    assert fn.__qualname__ == "scaled"


def test_recursive_function_reads_its_name_as_a_global():
    loaded = _load(factorial, like=factorial)
    assert "def factorial_def(n):" in loaded.source
    assert loaded.function.__name__ == loaded.function.__code__.co_name == "factorial"
    assert loaded.function(5) == 120


def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


class Base:
    def greet(self):
        return "base"


class Child(Base):
    def greet(self):
        return "child+" + super().greet()


def test_zero_argument_super_uses_the_class_cell():
    loaded = _load(Child.greet, like=Child.greet).function
    assert loaded(Child()) == "child+base"


def test_lambda_and_async_definitions():
    offset = 4
    fn = lambda v: v + offset  # noqa: E731
    node, _ = parser.parse_entity(fn)
    loaded = loader.load_function(node, "<lambda>", globals(), loader.cells_of(fn)).function
    assert loaded.__name__ == "<lambda>"
    assert loaded(1) == 5
    coroutine = loader.load_function("async def co(x):\n    return x\n", "co", {}).function
    assert inspect.iscoroutinefunction(coroutine)


def test_loaded_nodes_keep_annotations_for_source_maps():
    node = parser.parse_str("def f(x):\n    return x")
    node.body[0].custom = "kept"
    loaded = loader.load_function(node, "f", {})
    inner = loaded.nodes.body[0].body[0]
    assert isinstance(inner, gast.FunctionDef) and inner.name == "f"
    assert inner is not node  # the caller's tree is not changed
    assert node.body[0].custom == "kept"


def test_load_function_errors():
    with pytest.raises(ValueError, match="expected a definition of 'g', found 'f'"):
        loader.load_function("def f(): pass", "g", {})
    with pytest.raises(ValueError, match="decorators would not run"):
        loader.load_function("@d\ndef f(): pass", "f", {})
    with pytest.raises(ValueError, match=r"\['a'\] are given both"):
        loader.load_function("def f(): return a", "f", {}, {"a": loader.cells_of(_uses_a)["a"]},
                             {"a": 1})
    with pytest.raises(ValueError, match="one function, found 2 statements"):
        loader.load_function("x = 1\ndef f(): pass", "f", {})
    node = templates.replace("def f(): return 1")[0]
    node.decorator_list = []
    assert loader.load_function(node, "f", {}).function() == 1


def _make_uses_a():
    a = 1

    def uses_a():
        return a
    return uses_a


_uses_a = _make_uses_a()


def test_cells_of():
    assert list(loader.cells_of(_uses_a)) == ["a"]
    assert loader.cells_of(_uses_a)["a"].cell_contents == 1
    assert loader.cells_of(factorial) == {}
    with pytest.raises(errors.SourceUnavailableError):
        loader.cells_of(len)
