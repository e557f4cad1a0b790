"""autostage.convert: decorator forms, targets, staging through the public API, CLI --ir."""

import textwrap
import warnings

import numpy as np
import pytest

import autostage
from autostage import cli


def clip_sum(x, limit=None):
    total = x.sum()
    return total if limit is None else np.minimum(total, limit)


def test_decorator_forms_return_staged_functions():
    @autostage.convert
    def plain(x):
        return -x if x < 0 else x

    @autostage.convert()
    def empty_call(x):
        return x * 2

    staged = autostage.convert(clip_sum, target="interpreter",
                               input_signature=[autostage.TensorSpec([None])])
    for f in (plain, empty_call, staged):
        assert isinstance(f, autostage.StagedFunction)
    assert plain(-3) == 3 and plain.target == "cpu" and plain.backend == "cpu"
    assert empty_call(np.arange(3)).tolist() == [0, 2, 4]
    assert staged(np.arange(4.0)) == 6.0 and staged.trace_count == 1
    assert staged.input_signature == (autostage.TensorSpec([None]),)
    assert staged.__name__ == "clip_sum" and staged.__wrapped__ is not None


def test_targets():
    with pytest.raises(ValueError, match="unknown target 'gpu'"):
        autostage.convert(target="gpu")
    from autostage import api

    assert api.TARGETS == ("cpu", "interpreter", "cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the cpu target is real now: no fallback warning
        assert autostage.convert(clip_sum).backend == "cpu"
        assert autostage.convert(clip_sum, target="interpreter").backend == "interpreter"


def test_staged_result_matches_python():
    staged = autostage.convert(clip_sum, target="interpreter")
    for x, limit in [(np.arange(5.0), None), (np.arange(5.0), 3.0), (np.ones(2), 7.0)]:
        assert staged(x, limit) == clip_sum(x, limit)


def test_run_time_errors_carry_user_frames():
    @autostage.convert(target="interpreter")
    def bad_index(x):
        return x[10]

    with pytest.raises(Exception) as info:
        bad_index(np.zeros(3))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "test_convert.py" in notes


def test_cli_ir_prints_the_trace(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""\
        import numpy as np

        def step(x, n, scale=2.0):
            return x * scale + n
        """))
    assert cli.main([f"{source}:step", "--ir", "--args", "f64[?],i64[],3.0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("func @step(%0:f64[?], %1:i64[]) -> (f64[?]):")
    assert "multiply" in out and "add" in out and "model.py:4" in out


def test_cli_ir_of_a_decorated_function_calling_another(tmp_path, capsys):
    """The file's own @convert wrappers are not converted again (their try would be staged)."""
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""\
        import autostage

        @autostage.convert
        def inner(x):
            return x * 2.0

        @autostage.convert
        def outer(x):
            return inner(x) + 1.0
        """))
    assert cli.main([f"{source}:outer", "--ir", "--args", "f64[?]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("func @outer(%0:f64[?]) -> (f64[?]):")
    assert "call @inner %0" in out and "func @inner(%0:f64[?])" in out
    once = autostage.to_graph(lambda x: x + 1)
    assert autostage.to_graph(once) is once  # a to_graph result is converted already


@pytest.mark.parametrize("args, message", [
    ("f64[?", "neither a type"), ("q64[?]", "expected a type like"),
])
def test_cli_ir_bad_args(tmp_path, capsys, args, message):
    source = tmp_path / "model.py"
    source.write_text("def step(x):\n    return x\n")
    assert cli.main([f"{source}:step", "--ir", "--args", args]) == 2
    assert message in capsys.readouterr().err


def test_cli_splits_arguments_outside_brackets():
    assert cli._split_args("f64[?,3], i64[], (1, 2), 'a,b'") == [
        "f64[?,3]", "i64[]", "(1, 2)", "'a,b'"]
    assert cli.parse_args("f32[2,?],7") == [autostage.TensorSpec((2, None), "f32"), 7]


def _several_kinds(a, b, c=1.0, *, d, e=2.0):
    return a


def _positional_only(a, /, b, *xs, k=1, **kw):
    return a


@pytest.mark.parametrize("fn, args, kwargs", [
    (_several_kinds, (1.0,), {"d": 1.0}), (_several_kinds, (1.0, 2.0, 3.0, 4.0), {"d": 1.0}),
    (_several_kinds, (1.0, 2.0), {}), (_several_kinds, (1.0, 2.0), {"d": 1.0, "z": 2.0}),
    (_several_kinds, (1.0,), {"a": 1.0, "b": 2.0, "d": 3.0}), (_positional_only, (), {}),
])
def test_calls_that_do_not_bind_raise_pythons_type_error(fn, args, kwargs):
    """The same TypeError and message as the Python call (inspect's named no function)."""
    with pytest.raises(TypeError) as python:
        fn(*args, **kwargs)
    with pytest.raises(TypeError) as staged:
        autostage.convert(fn)(*args, **kwargs)
    assert str(staged.value) == str(python.value)
