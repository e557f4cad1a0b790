"""The CPU lowering of ``fused``: generated loops give the interpreter's results (dtypes equal,
floats within a few ulps for sums), broadcasting included. Compiles with Numba (a few seconds)."""

import importlib.util
import re

import numpy as np
import pytest
from autostage.runtime import interpreter
from autostage.runtime.passes import optimize
from test_passes_support import staged

numba = pytest.importorskip("numba")
codegen = pytest.importorskip("autostage.runtime.backends.cpu.codegen")
checks = pytest.importorskip("autostage.runtime.backends.cpu.checks")
pytest.importorskip("autostage.runtime.backends.cpu.lower_fused")

X = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
Y = np.linspace(1, 3, 3, dtype=np.float32)


def program(x, y):
    a = x * 2.0 + y
    return np.sum(np.tanh(a) * y), np.max(a * a, axis=-1), np.sqrt(np.abs(a)) - x


def _compile(module, tmp_path):
    emitter = codegen.Emitter(module)
    source, _ = emitter.module_source([emitter.function(f) for f in module.functions.values()])
    path = tmp_path / "fused_generated.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("fused_generated", path)
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    return getattr(generated, emitter.function_names[module.entry]), source


def test_fused_loops_match_the_interpreter(tmp_path):
    module = optimize(staged(program, X, Y), verify=True)
    compiled, source = _compile(module, tmp_path)
    # The loop shape is computed inline (np.broadcast_shapes costs ~60 ns per call in Numba).
    assert "np.broadcast_shapes" not in source and "extent" in source and "tanh" in source
    for args in ((X, Y), (X[:, :1], Y), (X, Y[:1])):
        expected = interpreter.run(module, list(args))
        got = compiled(*args)
        for e, g in zip(expected, got, strict=True):
            np.testing.assert_allclose(np.float32(g) if np.ndim(g) == 0 else g, e, rtol=1e-6)
            assert np.asarray(g).dtype == np.asarray(e).dtype or np.ndim(g) == 0


def test_empty_max_raises_numpys_error(tmp_path):
    module = optimize(staged(program, X, Y), verify=True)
    compiled, _ = _compile(module, tmp_path)
    # (called directly, compiled code raises SiteFailure; the runner raises the site's error)
    with pytest.raises(checks.SiteFailure):
        compiled(np.zeros((2, 0), np.float32), np.zeros(0, np.float32))
    error = checks.site_error()
    assert isinstance(error, ValueError) and "zero-size array" in str(error)


def test_operands_of_the_loop_shape_are_read_at_the_loop_index(tmp_path):
    module = optimize(staged(lambda x, y: np.tanh(x + y), X, Y), verify=True)
    compiled, source = _compile(module, tmp_path)
    # One loop nest for every case: an axis of unknown size is read at index * step, the step
    # 0 when that axis is broadcast (size 1 at run time); no second, clamped copy of the loop.
    # (x's first axis is the loop's extent itself: read at the index, no step)
    assert re.findall(r"step\d+ = np\.int64\((a\d+\.shape\[[01]\]) != 1\)", source) == [
        "a1.shape[1]", "a2.shape[0]"]
    assert re.search(r"= a1\[i\d+, i\d+ \* step\d+\]", source)
    assert re.search(r"= a2\[i\d+ \* step\d+\]", source)
    assert source.count("for ") == 2 and "min(" not in source
    for args in ((X, Y), (X[:1], Y), (X, Y[:1]), (X[:, :1], Y[:1])):
        expected = interpreter.run(module, list(args))
        np.testing.assert_allclose(compiled(*args)[0], expected[0], rtol=1e-6)


def test_three_broadcastable_inner_axes_read_broadcast_copies_in_one_loop(tmp_path):
    """Three steps along the innermost axis are more than LLVM versions a loop on
    (``INNER_STEPS``): each operand that may be broadcast is read from ``h_expand_<rank>`` of
    it (itself unless it is broadcast), and one loop reads them all at the index (no second
    copy of the loop, no steps)."""
    b = np.linspace(0, 1, 3, dtype=np.float32)
    module = optimize(staged(lambda x, y, z: np.tanh(x + y + z), X, X, b), verify=True)
    compiled, source = _compile(module, tmp_path)
    copies = re.findall(r"(b\d+) = h_expand_(\d)\((a\d), ", source)
    assert sorted(rank + name for _, rank, name in copies) == ["1a3", "2a1", "2a2"]
    entry = source.split("def f_")[1]
    assert "step" not in entry and entry.count("for ") == 2
    for copy, _, _ in copies:
        assert re.search(rf"= {copy}\[i\d+(, i\d+)?\]", source)
    for args in ((X, X, b), (X[:1], X, b), (X, X[:, :1], b[:1]), (X[:1, :1], X[:, :1], b)):
        expected = interpreter.run(module, list(args))
        np.testing.assert_allclose(compiled(*args)[0], expected[0], rtol=1e-6)


def three(a, b, c):
    return np.tanh(a * b + c) - a


SHAPES = [((3,), (1,), (3,)), ((1,), (1,), (4,)), ((0,), (1,), (1,)), ((1,), (0,), (0,)),
          ((1,), (1,), (1,)), ((2, 1), (1, 3), (3,)), ((2, 0), (1,), (2, 1)), ((1, 1), (1,), (0,))]


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_fused_loop_shape_is_numpys_broadcast(target):
    """The inline loop extents (first size other than 1 per axis) give NumPy's broadcast shape,
    size 0 against 1 included, and NumPy's values."""
    import autostage

    staged_three = autostage.convert(three, target=target)
    for shapes in SHAPES:
        args = [np.linspace(-1, 1, int(np.prod(s))).reshape(s) for s in shapes]
        got, expected = staged_three(*args), three(*args)
        assert got.shape == expected.shape, shapes
        if target == "interpreter":
            np.testing.assert_array_equal(got, expected)
        else:  # tanh is the cpu kernel's: within a few ulp of NumPy's (then minus a)
            np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)


def four(a, b, c, d):
    return np.tanh(a + b * c) - d


FOUR = [((20, 17), (20, 17), (20, 17), (20, 17)), ((20, 17), (1, 17), (20, 1), (1, 1)),
        ((20, 1), (1, 17), (20, 17), (20, 1)), ((1, 17), (20, 1), (1, 1), (20, 17)),
        ((20, 17), (20, 1), (20, 17), (1, 17)), ((1, 1), (1, 1), (1, 1), (1, 1))]


def test_operands_broadcast_along_the_inner_axis_give_numpys_values():
    """Four operands of unknown sizes (more inner steps than one loop vectorises): each one
    broadcast at run time is read from its broadcast copy; NumPy's values and shapes, strided
    and read-only operands included."""
    import autostage

    staged_four = autostage.convert(four)
    rng = np.random.default_rng(3)
    for shapes in FOUR:
        args = [rng.standard_normal(s) for s in shapes]
        args[0] = np.repeat(args[0], 2, axis=-1)[..., ::2]  # not contiguous
        args[1].flags.writeable = False
        got, expected = staged_four(*args), four(*args)
        assert got.shape == expected.shape, shapes
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)
