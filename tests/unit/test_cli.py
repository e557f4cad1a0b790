"""The command line: output for a real function, and one-line errors with a non-zero exit."""

import pathlib
import subprocess
import sys

import pytest

from autostage import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "collatz.py"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "autostage", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_analysis_listing_of_the_example(capsys):
    assert cli.main(["--analysis", f"{EXAMPLE}:collatz_steps"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("def collatz_steps(n):")
    assert lines[0].endswith("# defined: n | live: n -> -")
    loop = next(line for line in lines if line.lstrip().startswith("while n != 1:"))
    assert loop.endswith("# defined: n, steps | live: n, steps -> steps")
    update = next(line for line in lines if line.lstrip().startswith("steps += 1"))
    assert update.endswith("# defined: n, steps | live: n, steps -> n, steps")


def test_break_in_loop_listing(capsys):
    assert cli.main(["--analysis", f"{EXAMPLE}:first_above"]) == 0
    out = capsys.readouterr().out
    brk = next(line for line in out.splitlines() if line.strip().startswith("break"))
    assert brk.endswith("live: found -> found")


def test_cfg_dump(capsys):
    assert cli.main(["--cfg", f"{EXAMPLE}:collatz_steps"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {EXAMPLE}:4 collatz_steps")
    assert "while n != 1" in out and "steps += 1" in out


def test_method_and_nested_function_targets(tmp_path, capsys):
    src = tmp_path / "m.py"
    src.write_text("class A:\n    def m(self, x):\n        def inner(y):\n"
                   "            return y + x\n        return inner\n")
    assert cli.main(["--analysis", f"{src}:A.m"]) == 0
    assert capsys.readouterr().out.startswith("def m(self, x):")
    assert cli.main(["--analysis", f"{src}:A.m.inner"]) == 0
    assert capsys.readouterr().out.startswith("def inner(y):")


@pytest.mark.parametrize("target, message", [
    ("nowhere.py:f", "autostage: error: no such file: nowhere.py"),
    ("examples/collatz.py",
     "autostage: error: expected FILE.py:FUNCTION, got 'examples/collatz.py'"),
    ("examples/collatz.py:missing",
     "autostage: error: examples/collatz.py: the file has no function or class named 'missing'"),
    ("", "autostage: error: expected FILE.py:FUNCTION (or --precompile)"),
    ("--precompile examples/collatz.py:collatz_steps",
     "autostage: error: --precompile takes no FILE.py:FUNCTION"),
])
def test_bad_targets_give_one_line_and_exit_2(target, message):
    result = run_cli(*target.split())
    assert result.returncode == 2
    assert result.stderr.strip() == message
    assert "Traceback" not in result.stderr


def test_syntax_error_gives_one_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n")
    result = run_cli(f"{bad}:f")
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"autostage: error: {bad}:1: syntax error:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_class_target_is_rejected(tmp_path):
    src = tmp_path / "c.py"
    src.write_text("class A:\n    pass\n")
    result = run_cli(f"{src}:A")
    assert result.returncode == 2
    assert "is a class, not a function" in result.stderr


def test_help_documents_every_flag():
    result = run_cli("--help")
    assert result.returncode == 0
    for flag in ("--analysis", "--cfg", "--precompile", "FILE.py:FUNCTION"):
        assert flag in result.stdout


def test_default_prints_converted_source():
    result = run_cli(f"{EXAMPLE}:collatz_steps")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def collatz_steps(n):")
    assert "n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps))" in result.stdout


def test_converted_method_and_nested_function(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("class A:\n    def m(self, x):\n        def inner(y):\n"
                   "            return y if y > x else x\n        return inner\n")
    method = run_cli(f"{src}:A.m")
    assert method.returncode == 0, method.stderr
    assert method.stdout.startswith("def m(self, x):")
    inner = run_cli(f"{src}:A.m.inner")
    assert inner.stdout.strip() == (
        "def inner(y):\n    return ag__.if_exp_branch(y > x, lambda: y, lambda: x)()")


def test_private_names_are_shown_mangled_with_the_innermost_class(tmp_path):
    src = tmp_path / "p.py"
    src.write_text("def make():\n    class __B:\n        def m(self, __x):\n"
                   "            def inner():\n                return self.__v + __x\n"
                   "            return inner\n    return __B\n")
    assert run_cli(f"{src}:make.__B.m.inner").stdout.strip() == (
        "def inner():\n    return self._B__v + _B__x")
    assert run_cli(f"{src}:make.__B.m").stdout.startswith("def m(self, _B__x):")
    assert "return __B" in run_cli(f"{src}:make").stdout  # outside any class: not mangled


def test_conversion_and_module_errors_are_one_line(tmp_path):
    gen = tmp_path / "g.py"
    gen.write_text("def g(n):\n    yield n\n")
    result = run_cli(f"{gen}:g")
    assert result.returncode == 2
    assert result.stderr.startswith(f"autostage: error: {gen}:1: generator and coroutine")
    assert len(result.stderr.strip().splitlines()) == 1
    broken = tmp_path / "b.py"
    broken.write_text("import nonexistent_module_xyz\n\ndef f():\n    pass\n")
    result = run_cli(f"{broken}:f")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"autostage: error: {broken}: running the file failed: ModuleNotFoundError: "
        "No module named 'nonexistent_module_xyz'")
