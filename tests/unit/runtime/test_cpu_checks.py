"""Compiled checks of generated code (``runtime/backends/cpu/checks.py``): one call per shape
check instead of inline branches (Numba's compile time grows with the branches), bounds checks
inline (hot loops), the errors and notes of the inline form, and no helper called with a
literal int (Numba compiles a callee once per literal value)."""

from __future__ import annotations

import ast
import re

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import checks
from autostage.runtime.backends.cpu import compile as cpu_compile

import autostage
from autostage import config


def pick(xs, i, j):
    return xs[i] + xs[j]


def grid(x, i):
    return x[i, 1]


def bias(x, b):
    return np.tanh(x + b)


def stacked(a, b):
    return np.stack([a, b])


def rows_stacked(x, n):
    rows = []
    for i in range(n):
        rows.append(x[i] * 2.0)
    return np.stack(rows)


def source_of(fn, *args) -> str:
    with config.STATIC_SIZES.override(0):
        concrete = autostage.convert(fn, target="interpreter").get_concrete_function(*args)
    return cpu_compile.generate(concrete.module).source


def cpu(fn):
    return autostage.convert(fn, target="cpu")


def test_an_index_check_stays_inline():
    """A bounds check runs per element in hot loops: inline, not a call (``checks.py``)."""
    source = source_of(pick, np.zeros(5), np.int64(1), np.int64(-1))
    assert source.count("if not at") == 2 and "cpu_chk.position" not in source
    # the cold branch enters Python through the compiled checks' own failure function
    assert source.count("cpu_chk.fail_site(SITE_") == 2
    # (the site's key a module constant: an np.int64 call per site is typed and lowered)
    assert len(re.findall(r"^SITE_[0-9a-f]+ = np\.int64\(\d+\)$", source, re.M)) == 2


@pytest.mark.parametrize("i, j", [(0, 4), (-5, -1), (2, -3)])
def test_positions_count_negative_indices_from_the_end(i, j):
    xs = np.arange(5.0) * 10
    assert cpu(pick)(xs, np.int64(i), np.int64(j)) == pick(xs, i, j)
    assert cpu(pick)(xs, np.uint8(i % 5), np.int32(j)) == pick(xs, i % 5, j)


@pytest.mark.parametrize("i", [5, -6, 2**40])
def test_an_index_out_of_bounds_raises_numpys_error_with_the_note(i):
    with pytest.raises(IndexError) as info:
        cpu(pick)(np.arange(5.0), np.int64(i), np.int64(0))
    assert str(info.value) == f"index {i} is out of bounds for axis 0 with size 5"
    notes = "\n".join(info.value.__notes__)
    assert "test_cpu_checks.py:" in notes and "getitem" in notes
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
        cpu(pick)(np.arange(5.0), np.uint16(9), np.int64(0))


def test_a_constant_index_is_checked_against_an_unknown_size():
    assert cpu(grid)(np.arange(6.0).reshape(3, 2), np.int64(-1)) == 5.0
    with pytest.raises(IndexError, match="index 1 is out of bounds for axis 1 with size 1"):
        with config.STATIC_SIZES.override(0):
            cpu(grid)(np.zeros((3, 1)), np.int64(0))


def test_a_broadcast_check_is_one_call_without_branches():
    source = source_of(bias, np.zeros((3, 4)), np.zeros(4))
    calls = re.findall(r".*cpu_chk\..*", source)
    site = calls[0].split("(")[1].split(",")[0] if calls else ""
    # once: the loop's extents (the second axis shared with b, the first x's own), and the test
    assert [call.strip() for call in calls] == [
        f"extent4, sizes5 = cpu_chk.broadcast_shape_2({site}, (a1.shape[1], a2.shape[0], "
        "cpu_chk.ONE, cpu_chk.ONE,), (a1.shape[0], cpu_chk.ONE, cpu_chk.ONE, cpu_chk.ONE,))"
    ], source  # (padded to 4: the lengths autostage --precompile compiled)
    assert re.search(rf"^{site} = np\.int64\(\d+\)$", source, re.M)
    assert " and " not in source and " or " not in source and " if " not in source
    assert "raise" not in source
    x, b = np.linspace(-1, 1, 12).reshape(3, 4), np.arange(4.0)
    # (the vectorised tanh: within 4 ulp of NumPy's, vector_math.py)
    np.testing.assert_array_max_ulp(cpu(bias)(x, b), bias(x, b), maxulp=4)
    np.testing.assert_array_max_ulp(cpu(bias)(x, b[:1]), bias(x, b[:1]), maxulp=4)  # broadcast
    with pytest.raises(ValueError, match=re.escape(
            "operands could not be broadcast together with shapes (3,4) (3,)")):
        cpu(bias)(x, b[:3])


def test_a_check_without_sizes():
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        with config.STATIC_SIZES.override(0):
            cpu(stacked)(np.zeros(3), np.zeros(2))
    np.testing.assert_array_equal(cpu(stacked)(np.ones(2), np.zeros(2)), [[1, 1], [0, 0]])


def literal_arguments(source: str) -> list[str]:
    """The calls of compiled helpers (``h_...``, ``cpu_<module>.<function>``) in ``source``
    with an int or bool constant among their arguments (Numba compiles a function once per
    literal value it is called with)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.startswith("@numba.njit")):  # a shared helper's source
            found += literal_arguments(node.value)
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        helper = isinstance(f, ast.Name) and f.id.startswith("h_") or isinstance(
            f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id.startswith("cpu_")
        if helper and any(isinstance(a, ast.Constant) and type(a.value) in (int, bool)
                          for a in node.args):
            found.append(ast.unparse(node))
    return found


def test_literal_arguments_are_found():
    assert literal_arguments("x = h_sum(buf, np.int64(0), 10)\ny = cpu_blas.gemv(a, b, True)"
                             "\nz = h_sum(buf, np.int64(0), np.int64(10))\n"
                             "w = cpu_blas.gemv(a, b, np.bool_(True))") == [
        "h_sum(buf, np.int64(0), 10)", "cpu_blas.gemv(a, b, True)"]


@pytest.mark.parametrize("fn, args", [
    (pick, (np.zeros(5), np.int64(1), np.int64(-1))),
    (bias, (np.zeros((3, 4)), np.zeros(4))),
    (lambda x: x.sum() + x[1:].mean(), (np.zeros(300),)),
    (lambda x: (x * 2).sum(axis=1), (np.zeros((4, 10)),)),
    (lambda x: np.exp(x - x.max()).sum(), (np.zeros(10),)),  # a block of a known size
    (lambda a, x: (a @ x, x @ a), (np.ones((40, 40)), np.ones(40))),  # gemv, both ways
    (rows_stacked, (np.ones((4, 3)), np.int64(3))),  # a list built into one buffer
])
def test_no_compiled_helper_is_called_with_a_literal(fn, args):
    with config.STATIC_SIZES.override(64):
        concrete = autostage.convert(fn, target="cpu").get_concrete_function(*args)
    source = cpu_compile.generate(concrete.module).source
    assert "h_pairwise_sum" in source or "cpu_" in source  # helpers are called
    assert literal_arguments(source) == []


def scaled_sum(a, b):
    return a * 2.0 + b


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 4), (4,)), ((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), (3,)), ((2, 3), (3, 3)),
    ((0, 4), (4,)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (2, 4)),
    ((2, 1, 4), (5, 1)), ((5,), (4,)), ((1,), (6,)),
    # (two axes of one run-time size each, besides a shared one: the pairwise differences
    # `x[:, None] - c[None, :]`; their sizes were once tested against each other)
    ((60, 1, 2), (1, 4, 2)), ((5, 1, 2), (1, 3, 2)), ((5, 1, 2), (1, 3, 3)), ((5, 1, 2), (3, 2)),
    ((1, 5, 1, 2), (3, 1, 4, 2))])
def test_broadcast_extents_and_their_error_are_numpys(a_shape, b_shape):
    """One call computes the extents and raises NumPy's message with the operands' shapes."""
    a, b = np.ones(a_shape), np.arange(float(np.prod(b_shape))).reshape(b_shape)
    with config.STATIC_SIZES.override(0):
        f = cpu(scaled_sum)
        try:
            want = scaled_sum(a, b)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                f(a, b)
            return
        np.testing.assert_array_equal(f(a, b), want)


def gated(a, b, c):
    return np.tanh(a + b) * c


@pytest.mark.parametrize("shapes", [
    ((3, 4), (3,), (3, 4)), ((2, 3), (3, 3), (3,)), ((3, 4), (4,), (3,)),
    ((2, 3, 4), (2, 4), (4,)), ((3, 1), (1, 5), (4, 1))])
def test_a_fused_loops_error_names_the_operation_numpy_fails_at(shapes):
    """The loop tests all its operands at once; its message is NumPy's: the shapes of the first
    operation whose operands do not broadcast (``a + b``, not ``c``'s)."""
    a, b, c = (np.ones(shape) for shape in shapes)
    with pytest.raises(ValueError) as numpy_error:
        gated(a, b, c)
    with config.STATIC_SIZES.override(0):
        with pytest.raises(ValueError) as error:
            cpu(gated)(a, b, c)
    assert str(error.value) == str(numpy_error.value)
    assert "test_cpu_checks.py" in "\n".join(error.value.__notes__)


def normal_equations(t, y):
    """Gauss-Newton's step: the Jacobian's columns are computed from ``t`` (one size), so
    ``np.stack`` and both products of ``jac.T`` cannot disagree; ``y`` against ``t`` can."""
    e = np.exp(-t)
    jac = np.stack([e, t * e], axis=1)
    return np.linalg.solve(jac.T @ jac, jac.T @ (y - e))


def test_sizes_proven_equal_are_not_tested():
    t, y = np.linspace(0.0, 1.0, 30), np.linspace(1.0, 2.0, 30)  # sizes unknown
    f = autostage.convert(normal_equations)
    source = f.backend_source(t, y)
    # y's size against t's (with its extent: one call), and solve's operands
    assert source.count("cpu_chk.broadcast_shape_1(") == source.count("cpu_chk.check(") == 1
    np.testing.assert_allclose(f(t, y), normal_equations(t, y), rtol=1e-10)
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        f(t, y[:25])


def stacked_from_two(a, b):
    return np.stack([a * 2.0, b], axis=0).T @ np.ones(2)


def test_sizes_not_proven_equal_are_still_tested():
    f = autostage.convert(stacked_from_two)
    a, b = np.arange(20.0), np.ones(20)  # sizes unknown to the trace
    np.testing.assert_array_equal(f(a, b), stacked_from_two(a, b))
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        f(a, np.ones(21))


@pytest.mark.parametrize("sizes", [(1, 3, 1, 3), (3, 1), (1, 1), (0, 1), (1, 0, 0), (5,) * 9,
                                   (1, 3, 1, 4), (3, 0), (0, 3, 1), (2, 2, 2, 1, 7)])
def test_broadcast_extent_is_numpys_or_minus_one(sizes):
    try:
        want = np.broadcast_shapes(*((n,) for n in sizes))[0]
    except ValueError:
        want = -1
    assert _extent_of(tuple(np.int64(n) for n in sizes)) == want


@numba.njit
def _extent_of(sizes):  # (broadcast_extent has no wrapper for Python: called from compiled code)
    return checks.broadcast_extent(sizes)


def three(a, b, c):
    return a * b + c


def test_operands_that_do_not_broadcast_raise_numpys_error_wherever_they_differ():
    f = cpu(three)
    for shapes in [((3,), (1,), (4,)), ((1,), (3,), (4,)), ((2, 3), (1, 3), (2, 1)),
                   ((2, 3), (1, 4), (2, 1)), ((0,), (1,), (3,))]:
        args = [np.ones(s) for s in shapes]
        try:
            want = three(*args)
        except ValueError:  # (NumPy names the two shapes of its failing step; a fused loop
            # names its operands': "shapes (1,) (3,) (4,)")
            with pytest.raises(ValueError, match="operands could not be broadcast together"):
                f(*args)
        else:
            np.testing.assert_array_equal(f(*args), want)


def pairwise_squared_distances(x, c):
    return ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)


def test_pairwise_differences_of_unknown_sizes_broadcast_as_numpys():
    f = autostage.convert(pairwise_squared_distances)
    rng = np.random.default_rng(0)
    for n, k in [(20, 3), (60, 4), (5, 3), (3, 5), (4, 4), (1, 3)]:  # (a second trace, unsized)
        x, c = rng.standard_normal((n, 2)), rng.standard_normal((k, 2))
        np.testing.assert_array_equal(f(x, c), pairwise_squared_distances(x, c))
    with pytest.raises(ValueError, match=re.escape(
            "operands could not be broadcast together with shapes (60,1,2) (1,4,3)")):
        f(np.ones((60, 2)), np.ones((4, 3)))


def test_threads_failing_sites_at_once_each_get_their_own_sizes():
    """A failed site's sizes are recorded per thread (``checks.site_error``): compiled code
    runs without the GIL, and two threads failing at once must not see each other's."""
    import threading

    g = cpu(pick)
    xs = np.arange(5.0)
    g(xs, np.int64(0), np.int64(1))
    wrong: list[str] = []

    def fail(index: int) -> None:
        for _ in range(300):
            try:
                g(xs, np.int64(index), np.int64(0))
            except IndexError as e:
                if str(e) != f"index {index} is out of bounds for axis 0 with size 5":
                    wrong.append(str(e))
            else:
                wrong.append("no error")

    threads = [threading.Thread(target=fail, args=(index,)) for index in (7, 9, -6, 11)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_failed_site_records_its_sizes_and_raises_site_failure():
    """``fail_site`` compiles without entering Python (no objmode block: ``direct`` compiles
    it) and records the key and sizes in the thread for the runner's ``site_error``."""
    import numba
    from autostage.runtime.backends.cpu import direct

    fail = numba.njit(error_model="numpy", pipeline_class=direct.Compiler)(
        checks.fail_site.py_func)
    for sizes in ((), (np.int64(4),), (np.int64(2), np.int64(-7), np.int64(1))):
        with pytest.raises(checks.SiteFailure):
            fail(np.int64(12345), sizes)
        assert checks._FAILED.site == (12345, tuple(int(s) for s in sizes))
    assert [c.metadata[direct.METADATA_KEY] for c in fail.overloads.values()] == [True] * 3


def test_a_failed_site_is_reported_in_line(monkeypatch):
    """``check`` (compiled by ``direct``) lowers ``fail_site`` in its own code: no function of
    its own per length of the sizes (``direct_types.in_line``)."""
    import numba
    from autostage.runtime.backends.cpu import direct
    from test_cpu_direct import lowered_calls

    lowered = lowered_calls(monkeypatch, "_call_in_line")
    check = numba.njit(error_model="numpy", pipeline_class=direct.Compiler)(checks.check.py_func)
    check(False, np.int64(1), (np.int64(3), np.int64(4)))
    with pytest.raises(checks.SiteFailure):
        check(True, np.int64(5), (np.int64(3), np.int64(-4)))
    assert lowered == ["fail_site"] and checks._FAILED.site == (5, (3, -4))
