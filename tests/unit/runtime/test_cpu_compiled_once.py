"""What generated code calls instead of Numba's own implementations, so that they are not
compiled in each process: new arrays (backends/cpu/new_arrays.py, written in line) and typed-list
operations (backends/cpu/typed_lists.py, compiled once per machine). A second program using the
same operations compiles only its own function; the typed-list operations raise Python's
errors."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from compile_events import RECORDER
from numba.core.runtime import _nrt_python, rtsys

import autostage

_PROGRAMS = textwrap.dedent("""
    import json, sys, numpy as np
    from numba.core import event
    import autostage
""") + RECORDER + textwrap.dedent("""
    def first(x, n):
        rows = []
        for i in range(n):
            rows.append(x[i] * 2.0)
        rows[0] = rows[-1] + 1.0
        last = rows.pop()
        total = np.zeros((2, x.shape[1]))
        for r in rows:
            total[0] += r
        flat = x.T.reshape(-1)
        return total, last, len(rows), flat.sum() - flat.max(), x.T.astype(np.int32)

    def second(x, n):  # the same operations in another program
        rows = []
        for i in range(n):
            rows.append(x[i] - 1.0)
        rows[1] = rows[0] * 3.0
        last = rows.pop()
        total = np.zeros((2, x.shape[1]))
        for r in rows:
            total[1] -= r
        return total, last, len(rows), x.T.reshape(-1).max()

    fn = {"first": first, "second": second}[sys.argv[1]]
    x = np.arange(12.0).reshape(4, 3)
    with event.install_listener("numba:compile", Recorder()):
        got = autostage.convert(fn, target="cpu")(x, np.int64(3))
    want = fn(x, np.int64(3))
    print(json.dumps([names, [np.asarray(v).tolist() for v in got],
                      [np.asarray(v).tolist() for v in want]]))
""")


def test_a_second_program_compiles_only_its_own_function(tmp_path):
    """In fresh processes sharing a cache: the first program compiles the list functions (and
    Numba's implementations inside them); the second, only itself."""
    script = tmp_path / "programs.py"
    script.write_text(_PROGRAMS)
    env = {"AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"), "AUTOSTAGE_TIERED": "0",
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PATH": "/usr/bin:/bin"}
    compiled = {}
    for name in ("first", "second"):
        out = subprocess.run([sys.executable, str(script), name], capture_output=True,
                             text=True, timeout=600, env=env)
        assert out.returncode == 0, out.stderr
        compiled[name], got, want = json.loads(out.stdout.strip().splitlines()[-1])
        assert got == want
    first = set(compiled["first"])
    assert {"new", "append", "put", "pop_last"} <= first and "length" not in first
    # the list operations call Numba's C list functions: none of its overloads is compiled
    assert not [name for name in first if name.startswith(("impl_", "handle_index"))], first
    assert "typedlist_empty.<locals>.impl" not in first
    # new arrays are written in line (new_arrays' intrinsics): nothing of Numba's compiled
    assert not {"empty", "contiguous", "ol_np_empty.<locals>.impl",
                "array_ascontiguousarray.<locals>.impl", "_call_allocator",
                "_ol_array_allocate.<locals>.impl"} & first, sorted(first)  # (+ astype's)
    assert compiled["second"] == ["f_second"], compiled


def _get(xs, i):
    items = [x * 1.0 for x in xs]
    items.append(xs[0])
    return items[i]


def _put(xs, i):
    items = [x * 1.0 for x in xs]
    items.append(xs[0])
    items[i] = xs[1]
    return items[0] + items[-1]


def _pop(xs, i):
    items = [x * 1.0 for x in xs]
    items.append(xs[0])
    return items.pop(i) + items[0]


def _pop_all(xs, n):
    items = [x * 1.0 for x in xs]
    items.append(xs[0])
    total = items[0]
    for _ in range(n):
        total = total + items.pop()
    return total


@pytest.mark.parametrize("fn", [_get, _put, _pop, _pop_all], ids=lambda f: f.__name__)
@pytest.mark.parametrize("index", [0, 2, -3, 3, -4, 7])
@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_list_operations_raise_pythons_errors(fn, index, target):
    xs = np.arange(2.0)  # three items after the append
    staged = autostage.convert(fn, target=target)
    try:
        want = fn(xs, np.int64(index))
    except IndexError as error:
        with pytest.raises(IndexError, match=f"^{error}\n"):  # (then autostage's note)
            staged(xs, np.int64(index))
    else:
        assert staged(xs, np.int64(index)) == want


def _every_operation(x, n):
    rows = []
    for i in range(n):
        rows.append(x[i] * 2.0)
    rows[0] = rows[-1] + 1.0
    rows[-2] = rows[0] * 3.0
    last = rows.pop()
    first = rows.pop(0)
    before = rows.pop(-1)
    more = rows[:]
    more.append(last)
    total = 0.0
    for row in more:
        total += row.sum()
    return total + first.sum() + before.sum(), len(more), len(rows)


def test_list_operations_release_what_they_hold():
    """Lists of arrays built, written, popped and copied: the values are Python's, and every
    array the calls allocate is freed (the list functions count their items' references
    through the list's own method table, as Numba's implementations do)."""
    x = np.arange(40.0).reshape(10, 4)
    staged = autostage.convert(_every_operation, target="cpu")
    assert staged(x, np.int64(8)) == _every_operation(x, np.int64(8))
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(3):
            staged(x, np.int64(8))
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    assert after.mi_alloc - before.mi_alloc == 3 * 13  # (as many as with Numba's own list code)
    assert after.mi_free - before.mi_free == after.mi_alloc - before.mi_alloc


def _median(x):
    return np.median(x)


def test_a_helper_reading_a_shipped_module_is_shared_with_its_import():
    """The median helper's text reads ``cpu_sort``: the generated module imports it, and the
    helper is bound from the module shared by every program (codegen.HASHED_IMPORTS)."""
    x = np.array([3.0, 1.0, 2.0, 7.0])
    staged = autostage.convert(_median, target="cpu")
    assert staged(x) == np.median(x)
    source = staged.backend_source(x)
    assert "import autostage.runtime.backends.cpu.sorts as cpu_sort" in source
    assert "= cpu_shared.helpers(('h_median_" in source


def test_flat_view_is_the_c_contiguous_array_as_1d():
    import numba
    from autostage.runtime.backends.cpu import new_arrays

    @numba.njit
    def flat_then_write(x):
        flat = new_arrays.flat_view(x)
        flat[flat.size - 1] = -1.0
        return flat

    x = np.arange(12.0).reshape(2, 3, 2)
    flat = flat_then_write(x)
    assert flat.shape == (12,) and flat.flags.c_contiguous and x[1, 2, 1] == -1.0
    assert np.shares_memory(flat, x) and flat[:11].tolist() == list(range(11))
    del x
    assert flat[0] == 0.0 and flat.base is not None  # the view keeps the data alive


def sum_rows(x):
    return x.sum(axis=1)


def test_an_axis_sum_reads_its_operand_flat_without_numbas_reshape():
    x = np.linspace(-1, 1, 900).reshape(3, 300)  # NumPy's pairwise sums of each row
    f = autostage.convert(sum_rows, target="cpu")
    body = f.backend_source(x).split("def f_sum_rows")[1]
    assert "cpu_new.flat_view(cpu_new.contiguous(a1))" in body and ".reshape(" not in body, body
    np.testing.assert_array_equal(f(x), sum_rows(x))
    fortran = np.asfortranarray(x)  # not C-contiguous: the flat view of its C-ordered copy
    np.testing.assert_allclose(f(fortran), sum_rows(x), rtol=1e-14)
