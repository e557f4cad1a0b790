"""``autostage.save`` / ``autostage.load`` (runtime/export.py): round trips in this process and
in a process without the source, the calling convention (signature choice, constants, input
signatures, Variables), refusals at save time naming the user's line, damaged and foreign files,
the format version, golden archives of format version 1, and that loading runs nothing from the
file.

(Every program of the staged reference suite is round-tripped in
tests/reference/test_export_programs.py.)
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import pathlib
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from autostage.runtime import export, export_schema, ir

import autostage

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "golden" / "export" / "v1"
ACC = autostage.Variable(np.zeros(3), name="acc")


def elementwise(x, y):
    return np.sqrt(np.abs(x)) * y - 1.5


def clipped_sum(x, limit):
    total = 0.0
    for v in x:
        if v > limit:
            total += limit
        else:
            total += v
    return total


def structured(x, scale=2.0, label="run"):
    return {"scaled": x * scale, "parts": [x[0], x[-1]], "label": label, "none": None,
            "n": x.shape[0]}


def accumulate(x):
    ACC.assign_add(x)
    return ACC.read() * 2.0


def _norm(v):
    return np.sqrt(np.sum(v * v))


def normalized(v):
    return v / _norm(v)


def identity_and_view(x):
    return x, x.T


class _Point:
    pass


def returns_object(x):
    return x + 1.0, _Point


class ModelError(Exception):
    pass


def raises_own_error(x):
    if np.sum(x) < 0:
        raise ModelError("negative")
    return x


def _round_trip(fn, tmp_path, *calls, target="interpreter", **convert):
    staged = autostage.convert(fn, target=target, **convert)
    expected = [staged(*args) for args in calls]
    path = tmp_path / f"{fn.__name__}.autostage"
    autostage.save(staged, path)
    loaded = autostage.load(path)
    return staged, loaded, expected, [loaded(*args) for args in calls]


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, np.ndarray | np.generic):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        assert np.array_equal(a, b, equal_nan=True)
    else:
        assert a == b


# -- round trips ----------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_elementwise_round_trip(tmp_path, target):
    x, y = np.array([4.0, -9.0, 0.25]), np.array([1.0, 2.0, 3.0])
    _, loaded, expected, actual = _round_trip(elementwise, tmp_path, (x, y), target=target)
    _same(expected, actual)
    np.testing.assert_array_equal(actual[0], np.sqrt(np.abs(x)) * y - 1.5)
    assert loaded.target == target


def test_loops_branches_and_python_floats(tmp_path):
    x = np.array([0.5, 3.0, -1.0, 7.0])
    _, _, expected, actual = _round_trip(clipped_sum, tmp_path, (x, 2.0), (x, 1.0))
    _same(expected, actual)
    assert actual == [np.float64(0.5 + 2.0 - 1.0 + 2.0), np.float64(0.5 + 1.0 - 1.0 + 1.0)]


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_result_that_is_a_python_number_on_some_paths(tmp_path, target):
    """``clipped_sum``'s total is the Python float 0.0 when its loop runs zero times, else an
    np.float64: the loaded function returns each path's type, as Python does."""
    calls = [(np.array([0.5, 3.0]), 2.0), (np.zeros(0), 2.0)]
    _, _, expected, actual = _round_trip(clipped_sum, tmp_path, *calls, target=target)
    _same(expected, actual)
    assert [type(r) for r in actual] == [type(clipped_sum(*c)) for c in calls] == [
        np.float64, float]


def test_signature_choice_by_constants_dtypes_and_keywords(tmp_path):
    staged = autostage.convert(structured, target="interpreter")
    x64, x32 = np.arange(3.0), np.arange(4, dtype=np.float32)
    calls = [((x64,), {}), ((x64,), {"scale": 3.0}), ((x32,), {"label": "f32"})]
    expected = [staged(*a, **k) for a, k in calls]
    autostage.save(staged, tmp_path / "s.autostage")
    loaded = autostage.load(tmp_path / "s.autostage")
    for (args, kwargs), want in zip(calls, expected, strict=True):
        _same(want, loaded(*args, **kwargs))
    assert loaded(x64, scale=3.0)["scaled"].tolist() == [0.0, 3.0, 6.0]
    assert loaded(x64, 3.0)["label"] == "run"  # positional or keyword: one binding
    assert len(loaded.signatures) == 3
    with pytest.raises(export.NoSavedSignatureError) as info:
        loaded(x64, scale=4.0)
    message = str(info.value)
    assert "structured(x: float64 array of shape (3,), scale == 4.0, label == 'run')" in message
    assert "structured(x: f64[3], scale == 3.0, label == 'run')" in message
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        loaded(x64, bogus=1)


def test_unknown_sizes_serve_every_size(tmp_path):
    staged = autostage.convert(elementwise, target="interpreter",
                               input_signature=[autostage.TensorSpec([None]),
                                                autostage.TensorSpec([None])])
    autostage.save(staged, tmp_path / "e.autostage")  # traced by save: it was never called
    assert staged.trace_count == 1
    loaded = autostage.load(tmp_path / "e.autostage")
    for n in (1, 5, 40):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_array_equal(loaded(x, x), np.sqrt(np.abs(x)) * x - 1.5)
    with pytest.raises(TypeError, match="must be f64"):  # the input signature's own check
        loaded(np.ones(3, np.float32), np.ones(3))


def test_variables_are_the_loaded_functions_own(tmp_path):
    ACC.assign(np.array([1.0, 2.0, 3.0]))
    staged = autostage.convert(accumulate, target="interpreter")
    staged(np.ones(3))  # ACC: [2, 3, 4]
    autostage.save(staged, tmp_path / "acc.autostage")
    loaded = autostage.load(tmp_path / "acc.autostage")
    (variable,) = loaded.variables
    assert variable is not ACC and variable.name == "acc"
    np.testing.assert_array_equal(variable.read(), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(loaded(np.array([1.0, 0.0, -1.0])), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(variable.read(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(ACC.read(), [2.0, 3.0, 4.0])  # the original's: untouched
    second = autostage.load(tmp_path / "acc.autostage")  # each load starts from the file
    np.testing.assert_array_equal(second.variables[0].read(), [2.0, 3.0, 4.0])


def test_a_loaded_function_pickles_with_its_archive_and_variable_values(tmp_path):
    ACC.assign(np.zeros(3))
    staged = autostage.convert(accumulate, target="interpreter")
    staged(np.ones(3))
    autostage.save(staged, tmp_path / "acc.autostage")
    loaded = autostage.load(tmp_path / "acc.autostage")
    loaded(np.ones(3))  # its Variable: [2, 2, 2]
    blob = pickle.dumps(loaded)
    (tmp_path / "acc.autostage").unlink()  # a worker need not have the file
    clone = pickle.loads(blob)
    assert clone.variables[0] is not loaded.variables[0]
    np.testing.assert_array_equal(clone(np.ones(3)), loaded(np.ones(3)))  # [3, 3, 3] * 2


def test_staged_calls_and_argument_identity(tmp_path):
    v = np.array([3.0, 4.0])
    _, _, expected, actual = _round_trip(normalized, tmp_path, (v,))
    _same(expected, actual)
    np.testing.assert_allclose(actual[0], [0.6, 0.8])
    x = np.arange(4.0)
    _, loaded, _, _ = _round_trip(identity_and_view, tmp_path, (x,))
    same, view = loaded(x)
    assert same is x and view is not x and view.base is x  # as Python: x itself, a new view


def test_gradients_round_trip(tmp_path):
    grad = autostage.grad(lambda w, x: np.sum((w * x) ** 2))
    w, x = np.array([1.0, -2.0]), np.array([3.0, 0.5])
    want = grad(w, x)
    autostage.save(grad, tmp_path / "g.autostage")
    loaded = autostage.load(tmp_path / "g.autostage")
    _same(want, loaded(w, x))
    np.testing.assert_allclose(loaded(w, x), 2 * w * x * x)


def test_global_arrays_are_saved_with_their_values(tmp_path):
    module = _module_from_source(tmp_path, "globals_prog", """
        import numpy as np
        W = np.array([1.0, 2.0])
        def affine(x):
            return x * W
    """)
    staged = autostage.convert(module.affine, target="interpreter")
    staged(np.ones(2))
    autostage.save(staged, tmp_path / "a.autostage")
    module.W[:] = [5.0, 5.0]  # the original reads W at each call; the export saved its value
    loaded = autostage.load(tmp_path / "a.autostage")
    np.testing.assert_array_equal(loaded(np.array([3.0, 3.0])), [3.0, 6.0])


def _module_from_source(directory, name, source):
    import importlib.util
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# -- in a process without the source --------------------------------------------------------------

_USER_MODULE = """
import numpy as np
import autostage

STEPS = autostage.Variable(np.int64(0), name="steps")

def model(x, n_iter):
    h = x
    i = 0
    while i < n_iter:
        if np.sum(h) > 10.0:
            h = h * 0.5
        else:
            h = np.tanh(h) + 1.0
        i += 1
    STEPS.assign_add(np.int64(i))
    return {"h": h, "steps": i}
"""

_SAVE = """
import sys, numpy as np, autostage, user_model
f = autostage.convert(user_model.model)
out = f(np.array([1.0, 2.0, 8.0]), np.int64(7))
autostage.save(f, sys.argv[1])
np.save(sys.argv[2], out["h"])
print(out["steps"])
"""

_LOAD = """
import sys, numpy as np, autostage
try:
    import user_model
except ImportError:
    pass
else:
    raise SystemExit("the user's module is importable")
f = autostage.load(sys.argv[1])
out = f(np.array([1.0, 2.0, 8.0]), np.int64(7))
assert np.array_equal(out["h"], np.load(sys.argv[2])), (out, np.load(sys.argv[2]))
print(out["steps"], f.variables[0].read())
assert "user_model" not in sys.modules
"""


def test_load_in_a_process_without_the_source(tmp_path):
    source_dir = tmp_path / "src"
    source_dir.mkdir()
    (source_dir / "user_model.py").write_text(_USER_MODULE)
    archive, expected = tmp_path / "model.autostage", tmp_path / "expected.npy"
    saved = subprocess.run([sys.executable, "-c", _SAVE, str(archive), str(expected)],
                           cwd=source_dir, capture_output=True, text=True, timeout=300)
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.split() == ["7"]
    (source_dir / "user_model.py").unlink()
    loaded = subprocess.run([sys.executable, "-c", _LOAD, str(archive), str(expected)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["7", "14"]  # the saved 7 steps, then 7 more


# -- refused at save time -------------------------------------------------------------------------

def test_nothing_traced_is_refused(tmp_path):
    staged = autostage.convert(elementwise)
    with pytest.raises(autostage.ExportError, match="it has no trace yet; call it once with "
                       "example arguments .* or give it an input_signature"):
        autostage.save(staged, tmp_path / "x.autostage")
    assert not (tmp_path / "x.autostage").exists()


def test_user_objects_are_refused(tmp_path):
    staged = autostage.convert(returns_object, target="interpreter")
    staged(np.ones(2))
    with pytest.raises(autostage.ExportError, match="returns a type .* cannot describe as plain"):
        autostage.save(staged, tmp_path / "x.autostage")
    staged = autostage.convert(structured, target="interpreter")
    staged(np.ones(2), label=_Point())
    with pytest.raises(autostage.ExportError, match="argument 'label' is a .*_Point"):
        autostage.save(staged, tmp_path / "x.autostage")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_user_exception_classes_are_refused_with_the_line(tmp_path):
    staged = autostage.convert(raises_own_error, target="interpreter")
    staged(np.ones(2))
    with pytest.raises(autostage.ExportError) as info:
        autostage.save(staged, tmp_path / "x.autostage")
    line = raises_own_error.__code__.co_firstlineno + 2
    assert "ModelError, an exception class of the user's code" in str(info.value)
    assert f"test_export.py:{line} (in raises_own_error)" in str(info.value)


def _with_op(staged, op):
    concrete = staged.concrete_functions[0]
    concrete.module.main.body.ops.insert(0, op)
    return concrete


@pytest.mark.parametrize("attrs, expected", [
    ({}, "it calls back into Python at run time (py_function)"),
    ({"fn": print}, "attribute 'fn' of `py_function` holds a builtin_function_or_method"),
])
def test_py_function_and_attributes_without_text_are_refused(tmp_path, attrs, expected):
    staged = autostage.convert(elementwise, target="interpreter")
    staged(np.ones(2), np.ones(2))
    loc = ir.Location("/home/me/model.py", 12, "step")
    name = "py_function" if not attrs else "custom"
    if attrs:
        expected = expected.replace("py_function", name)
    _with_op(staged, ir.Op(name, [], [], attrs, (), loc))
    with pytest.raises(autostage.ExportError) as info:
        autostage.save(staged, tmp_path / "x.autostage")
    assert expected in str(info.value)
    assert "at /home/me/model.py:12 (in step)" in str(info.value)
    assert str(tmp_path / "x.autostage") in str(info.value)


# -- damaged and foreign files --------------------------------------------------------------------

@pytest.fixture
def archive(tmp_path):
    staged = autostage.convert(accumulate, target="interpreter")
    staged(np.zeros(3))
    path = tmp_path / "good.autostage"
    autostage.save(staged, path)
    return path


def _rewrite(path, change):
    """The archive with its members changed by ``change(name, data) -> data | None``."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            data = change(name, data)
            if data is not None:
                z.writestr(name, data)


def _manifest_change(edit):
    def change(name, data):
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        edit(manifest)
        return json.dumps(manifest)
    return change


def _fails(path, pattern):
    with pytest.raises(autostage.ExportError) as info:
        autostage.load(path)
    assert str(path) in str(info.value)
    assert pattern in str(info.value), str(info.value)


def test_truncated_archive(archive):
    archive.write_bytes(archive.read_bytes()[:-40])
    _fails(archive, "is not a zip archive (truncated, or not an autostage export)")


def test_altered_bytes(archive):
    data = bytearray(archive.read_bytes())
    start = data.index(b"signatures/")  # a member's local header, then its compressed bytes
    data[start + 40] ^= 0xFF
    archive.write_bytes(bytes(data))
    _fails(archive, "is a damaged zip archive")


def test_altered_member_with_a_valid_zip(archive):
    _rewrite(archive, lambda name, data: data.replace(b"multiply", b"add") if name.endswith(
        ".ir") else data)
    _fails(archive, "has a damaged member 'signatures/0.ir': its SHA-256 is not the one")


def test_missing_member(archive):
    _rewrite(archive, lambda name, data: None if name.startswith("variables/") else data)
    _fails(archive, "is missing the member 'variables/0.npy' its manifest lists")


def test_foreign_zip_and_non_zip(tmp_path):
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("readme.txt", "hello")
    _fails(foreign, "is not an autostage export (a zip archive without manifest.json)")
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "other"}))
    _fails(foreign, "its manifest's format is 'other'")
    text = tmp_path / "notes.autostage"
    text.write_text("just text")
    _fails(text, "is not a zip archive")
    with pytest.raises(FileNotFoundError, match="no such export"):
        autostage.load(tmp_path / "absent.autostage")


def test_saving_where_it_cannot_names_the_path_given(tmp_path):
    staged = autostage.convert(elementwise, target="interpreter")
    staged(np.ones(2), np.ones(2))
    missing = tmp_path / "no_such_dir" / "f.autostage"
    with pytest.raises(FileNotFoundError) as info:  # (it named the temporary file)
        autostage.save(staged, missing)
    assert info.value.filename == str(missing) and str(missing) in str(info.value)
    (tmp_path / "a_dir.autostage").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        autostage.save(staged, tmp_path / "a_dir.autostage")
    assert info.value.filename == str(tmp_path / "a_dir.autostage")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_dir.autostage"]  # nothing left


def test_newer_version(archive):
    _rewrite(archive, _manifest_change(lambda m: m.update(version=2)))
    _fails(archive, "was written by a newer autostage (format version 2, by autostage 0.1.0); "
           "this autostage (0.1.0) reads format version 1: upgrade autostage")


def test_manifest_that_does_not_fit_the_schema(archive):
    good = archive.read_bytes()
    _rewrite(archive, _manifest_change(lambda m: m["signatures"][0].update(module=3)))
    _fails(archive, "does not fit format version 1: $.signatures[0].module: expected string")
    archive.write_bytes(good)
    _rewrite(archive, _manifest_change(lambda m: m.update(extra=True)))
    _fails(archive, "$: unexpected key 'extra'")


def test_schema_check_names_the_place():
    with pytest.raises(ValueError, match=r"\$\.variables\[0\]: missing 'member'"):
        export_schema.check({"format": "autostage-export", "version": 1,
                             "autostage_version": "0", "name": "f", "target": "cpu",
                             "parameters": [], "float_arguments": [], "input_signature": None,
                             "variables": [{"name": "v", "dtype": "<f8", "shape": []}],
                             "signatures": [], "members": {}})


# -- nothing from the file runs -------------------------------------------------------------------

def _replace_member(path, member, change):
    """The archive with ``member`` changed and its digest made to match (a forged file)."""
    with zipfile.ZipFile(path) as z:
        data = change(z.read(member))
    _rewrite(path, lambda name, old: data if name == member else old)
    _rewrite(path, _manifest_change(lambda m: m["members"].update(
        {member: hashlib.sha256(data).hexdigest()})))


def test_loading_executes_nothing_from_the_file(archive, tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"

    def forbidden(*args, **kwargs):
        raise AssertionError("loading unpickled something")

    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    _rewrite(archive, _manifest_change(lambda m: m.update(name=payload)))
    loaded = autostage.load(archive)  # a name is a string, nothing more
    assert loaded.name == payload
    np.testing.assert_array_equal(loaded(np.ones(3)), 2.0 * loaded.variables[0].read())
    good = archive.read_bytes()
    _replace_member(archive, "signatures/0.ir",
                    lambda text: text.replace(b"attrs(", f"attrs(evil={payload}, ".encode(), 1))
    _fails(archive, "not an attribute value: \"__import__('os')")
    archive.write_bytes(good)
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    _replace_member(archive, "variables/0.npy", lambda data: pickled.getvalue())
    _fails(archive, "has a member 'variables/0.npy' that is not a plain .npy array")
    assert not marker.exists()


def test_the_export_modules_use_no_pickle_or_eval():
    root = pathlib.Path(export.__file__).parent
    paths = sorted(root.glob("export*.py"))
    assert len(paths) >= 4
    for path in paths:
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        called = {n.func.id for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert not imported & {"pickle", "marshal", "shelve", "importlib"}, path.name
        assert not called & {"eval", "exec", "compile", "__import__"}, path.name
        assert "allow_pickle=True" not in path.read_text(), path.name


# -- golden archives of format version 1 ----------------------------------------------------------

def test_golden_archives_load_and_compute():
    names = sorted(p.name for p in GOLDEN.glob("*.autostage"))
    assert names == ["dict_output.autostage", "elementwise.autostage",
                     "variable_update.autostage", "while_loop.autostage"]
    f = autostage.load(GOLDEN / "elementwise.autostage", target="interpreter")
    x, y = np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 2.0, -3.0, 0.5])
    np.testing.assert_allclose(f(x, y), np.tanh(x) * 2.0 + y * y - 1.0, rtol=1e-15)
    f = autostage.load(GOLDEN / "while_loop.autostage", target="interpreter")
    root, steps = f(np.float64(2.0), 1e-12)
    assert abs(root - 2.0 ** 0.5) < 1e-12 and steps == 5 and type(steps) is int
    f = autostage.load(GOLDEN / "variable_update.autostage", target="interpreter")
    np.testing.assert_array_equal(f.variables[0].read(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(np.array([1.0, 1.0, 1.0])), [4.0, 6.0, 8.0])
    np.testing.assert_array_equal(f.variables[0].read(), [2.0, 3.0, 4.0])
    f = autostage.load(GOLDEN / "dict_output.autostage")  # the cpu target it was saved for
    x = np.array([1.0, 4.0, 2.5], np.float32)
    out = f(x)
    assert list(out) == ["mean", "max", "centered", "n"]
    assert out["mean"] == np.float32(2.5) and out["max"] == np.float32(4.0)
    np.testing.assert_array_equal(out["centered"], x - np.float32(2.5))
    assert out["n"] == 3 and type(out["n"]) is int


def _log(v):
    return v * 2.0


def calls_python(x):
    y = x + 1.0
    return autostage.py_function(_log, [y], autostage.TensorSpec([None]))


def test_a_real_py_function_is_refused_with_the_users_line(tmp_path):
    staged = autostage.convert(calls_python, target="interpreter")
    np.testing.assert_array_equal(staged(np.ones(2)), [4.0, 4.0])
    with pytest.raises(autostage.ExportError) as info:
        autostage.save(staged, tmp_path / "x.autostage")
    line = calls_python.__code__.co_firstlineno + 2
    assert "it calls back into Python at run time (py_function)" in str(info.value)
    assert f"test_export.py:{line} (in calls_python)" in str(info.value)
    assert not (tmp_path / "x.autostage").exists()


def test_a_loaded_function_called_from_a_staged_one_is_refused_clearly(tmp_path):
    """Its saved compiled code runs on NumPy values: with staged ones it raised its
    NoSavedSignatureError, which the staged caller reported as a `raise` of a staged value."""
    staged = autostage.convert(elementwise)
    x = np.arange(3.0)
    staged(x, x)
    autostage.save(staged, tmp_path / "e.autostage")
    loaded = autostage.load(tmp_path / "e.autostage")
    np.testing.assert_array_equal(loaded(x, x), elementwise(x, x))

    def uses_loaded(x):
        return loaded(x, x) * 2.0

    with pytest.raises(autostage.StagingTypeError, match=r"elementwise \(loaded from .*\) is "
                                                         r"called with staged values at .*"
                                                         r"test_export.py:\d+"):
        autostage.convert(uses_loaded)(x)
