"""A source file edited after import is refused, not converted in its edited form."""

import importlib.util
import sys
import warnings

import pytest

import autostage
from autostage import calls
from autostage.pyct import errors, parser, source_check

ORIGINAL = """\
def step(x):
    if x > 0:
        return x + 1
    return -x


def caller(x):
    return step(x) * 10


double = lambda x: x * 2  # noqa: E731
"""


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def module(tmp_path, request):
    path = tmp_path / f"edited_{request.node.name[:40].strip('[]')}.py"
    path.write_text(ORIGINAL)
    name = path.stem.replace("-", "_")
    yield _import(path, name), path
    sys.modules.pop(name, None)


@pytest.mark.parametrize("edit", [
    lambda s: s.replace("x + 1", "x + 2"),  # a constant
    lambda s: s.replace("x + 1", "x - 1"),  # an operator: same names and constants
    lambda s: s.replace("x > 0", "y > 0"),  # a name
    lambda s: "# a comment above moves every line\n" + s,
    lambda s: s.replace("        return x + 1", "\n        return x + 1"),  # a line inside
    lambda s: s.replace("return -x", "return -x +"),  # the file no longer compiles
])
def test_a_file_edited_after_import_is_a_clear_error(module, edit):
    mod, path = module
    path.write_text(edit(ORIGINAL))
    with pytest.raises(errors.SourceChangedError) as error:
        autostage.to_graph(mod.step)
    message = str(error.value)
    assert f"step ({path}:1)" in message
    assert "changed since the module was imported" in message
    assert "importlib.reload" in message
    assert mod.step(2) == 3  # Python still runs the imported code


def test_lambdas_are_checked_too(module):
    mod, path = module
    path.write_text(ORIGINAL.replace("x * 2", "x * 3"))
    with pytest.raises(errors.SourceChangedError, match=r"<lambda> \(.*:11\)"):
        autostage.to_graph(mod.double)


def test_unchanged_and_edited_elsewhere_files_still_convert(module):
    mod, path = module
    path.write_text(ORIGINAL + "\n\ndef added_below():\n    return 1\n")
    assert autostage.to_graph(mod.step)(2) == 3
    assert autostage.to_graph(mod.step)(-2) == 2
    assert autostage.to_graph(mod.double)(4) == 8


def test_a_stale_callee_runs_as_python_runs_it_after_a_warning(module):
    mod, path = module
    path.write_text(ORIGINAL.replace("x + 1", "x + 2"))
    converted = autostage.to_graph(mod.caller)  # the caller itself is unchanged
    with pytest.warns(calls.AutostageWarning, match="step .*changed since the module"):
        assert converted(2) == 30  # step as imported: (2 + 1) * 10
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert converted(-4) == 40


def test_same_code_compares_bytecode_constants_and_lines():
    def f(x):
        return x + 1

    def g(x):
        return x + 1

    def h(x):
        return x + 1.0

    assert source_check.same_code(f.__code__, f.__code__.replace())
    assert not source_check.same_code(f.__code__, g.__code__)  # another line
    assert not source_check.same_code(f.__code__, h.__code__.replace(
        co_firstlineno=f.__code__.co_firstlineno, co_linetable=f.__code__.co_linetable))


def test_functions_of_pytest_rewritten_modules_with_asserts_still_parse():
    def checked(x):
        assert x > 0, "positive"
        return x

    assert "@py_builtins" in globals()  # this module went through pytest's rewriting
    node, _ = parser.parse_entity(checked)
    assert node.name == "checked"
    assert autostage.to_graph(checked)(2) == 2


ESCAPES = '''\
def escaped(x):
    """A docstring with an invalid escape sequence: a \\| b (nolds' docstrings have them)."""
    return x + len("\\d")
'''


def test_invalid_escapes_neither_warn_again_nor_fail_under_an_error_filter(tmp_path):
    """Python warned about the file's invalid escapes when it compiled the module (a
    DeprecationWarning; a SyntaxWarning from 3.12); reading the file again for conversion must
    not warn a second time, and under ``simplefilter("error")`` (pytest's ``-W error``) the
    warning, raised as a SyntaxError, made conversion report the file as changed since import."""
    path = tmp_path / "escapes_in_docstrings.py"
    path.write_text(ESCAPES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = _import(path, path.stem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert autostage.to_graph(mod.escaped)(1) == 3
    finally:
        sys.modules.pop(path.stem, None)
