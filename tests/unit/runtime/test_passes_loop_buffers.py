"""Buffer reuse of loop temporaries (runtime/passes/loop_buffers.py) and its cpu lowering.

Soundness: a temporary that outlives its iteration (carried, appended to a list, a view of it
appended, returned through a call or a branch, returned by the function) is never marked, and
every program gives plain Python's result on both targets. Effect: the temporaries of an ODE
step are marked and live in buffers made at the function's start.
"""

import numpy as np
import pytest
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.call_slot import Plan
from autostage.runtime.function import optimized
from autostage.runtime.passes import loop_buffers

import autostage
from autostage import config

TARGETS = ("interpreter", "cpu")


def reused(fn, *args):
    """For each allocating op, in program order: (op name, marked for reuse); sizes unknown
    (with known ones, a small ``zeros_like`` is a constant: nothing to allocate)."""
    with config.STATIC_SIZES.override(0):
        module = autostage.convert(fn, target="cpu").get_concrete_function(*args).module
    module = optimized(module)
    return [(op.name, bool(op.attrs.get(loop_buffers.MARK)))
            for op in module.main.body.walk() if op.name in loop_buffers.ALLOCATING]


def check(fn, *args, target):
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = autostage.convert(fn, target=target)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


# -- temporaries of one iteration: marked --------------------------------------------------------

def iteration_temporaries(x, n):
    total = 0.0
    for i in range(n):
        t = x * i + 1.0
        z = np.zeros_like(x)
        z[0] = t[0]
        total += np.sum(t) + np.sum(z)
    return total


def growing_temporaries(n):
    total = 0.0
    for i in range(n):
        t = np.ones(i + 1) * i  # a new shape every iteration: the buffer is made again
        total += np.sum(t * t)
    return total


# -- temporaries that outlive the iteration: never marked ----------------------------------------

def carried(x, n):
    for _ in range(n):
        x = x * 2.0 + 1.0
    return x


def appended(x, n):
    out = []
    for i in range(n):
        out.append(x + i)
    return np.stack(out)


def view_appended(x, n):
    out = []
    for i in range(n):
        t = x + i
        out.append(t[1:])
    return np.stack(out)


def kept_by_branch(x, n):
    keep = x.copy()
    for i in range(n):
        t = x * i
        if i % 2 == 0:
            keep = t
    return keep


def appended_in_branch(x, n):
    out = [x]
    for i in range(n):
        t = x - i
        if i > 1:
            out.append(t)
    return np.stack(out)


def last_temp_after_loop(x, n):
    t = x
    i = 0
    while i < n:
        t = np.full(x.shape, 1.0 * i)
        i += 1
    return t


def _pass_through(v):
    return v


def returned_by_call(x, n):
    out = []
    for i in range(n):
        out.append(_pass_through(x + i))
    return np.stack(out)


SOUND = [
    (carried, [("fused", False)]),
    (appended, [("fused", False)]),
    (view_appended, [("fused", False)]),
    (kept_by_branch, [("fused", False)]),
    (appended_in_branch, [("fused", False)]),
    (last_temp_after_loop, [("full", False)]),
    (returned_by_call, [("fused", False)]),
]


@pytest.mark.parametrize("fn,expected", SOUND, ids=[f.__name__ for f, _ in SOUND])
def test_values_that_outlive_the_iteration_are_not_marked(fn, expected):
    args = (np.arange(4.0), np.int64(5))
    assert reused(fn, *args) == expected


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [f for f, _ in SOUND] + [iteration_temporaries],
                         ids=lambda f: f.__name__)
def test_results_are_pythons(fn, target):
    check(fn, np.arange(4.0), np.int64(5), target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_buffer_whose_shape_changes_is_made_again(target):
    check(growing_temporaries, np.int64(6), target=target)
    # np.ones(i + 1) reuses its buffer; `* i`, read twice by `t * t`, fuses into the sum, which
    # allocates nothing
    assert reused(growing_temporaries, np.int64(6)) == [("full", True), ("fused", False)]


def test_temporaries_of_an_iteration_are_marked():
    marks = reused(iteration_temporaries, np.arange(4.0), np.int64(5))
    assert ("fused", True) in marks and ("full_like", True) in marks, marks
    assert all(mark for _name, mark in marks), marks


def test_allocations_outside_loops_are_not_marked():
    def once(x):
        t = x * 2.0 + 1.0
        return np.sum(t)

    assert reused(once, np.arange(3.0)) == [("fused", False)]


def test_cpu_code_makes_the_buffer_once_and_again_only_on_a_new_shape():
    fn = autostage.convert(iteration_temporaries, target="cpu")
    module = optimized(fn.get_concrete_function(np.arange(4.0), np.int64(5)).module)
    source = cpu_compile.generate(module).source
    body = source[source.index("def f_iteration_temporaries"):]
    prologue = body.splitlines()[1]
    assert "= cpu_new.empty((np.int64(0),), np.float64)" in prologue
    assert ".shape[0] != " in body


def test_the_pass_clears_a_stale_mark():
    module = optimized(autostage.convert(carried, target="cpu").get_concrete_function(
        np.arange(3.0), np.int64(2)).module)
    fused = next(op for op in module.main.body.walk() if op.name == "fused")
    fused.attrs[loop_buffers.MARK] = True
    assert loop_buffers.run(module) is True
    assert loop_buffers.MARK not in fused.attrs
    assert loop_buffers.run(module) is False


# -- results carried to the next iteration: the buffer of an operand that dies with the op -----

def recycled(fn, *args):
    """For each allocating op, in program order: (op name, ``recycle_buffer`` mark or None);
    sizes known to the trace (a 2x2 product is computed inline)."""
    module = optimized(autostage.convert(fn, target="cpu").get_concrete_function(*args).module)
    return [(op.name, op.attrs.get(loop_buffers.RECYCLE))
            for op in module.main.body.walk() if op.name in loop_buffers.ALLOCATING]


def chained_products(a):
    x = a
    for _ in range(100):  # staged: a loop of 100 products, from the parameter
        x = x @ a
    return x


def halving(x):
    for _ in range(50):
        x = x * 0.5 + 1.0
    return x


def read_after_the_product_dropped(a):
    x = a @ a  # the loop's own buffer from the start
    for _ in range(30):
        x = x @ a
    return x


def read_after_the_product(a):
    x = a @ a
    total = 0.0
    for _ in range(30):
        y = x @ a
        total += np.sum(x)
        x = y
    return x, total


def kept_in_a_list(a):
    x = a @ a
    out = []
    for _ in range(30):
        out.append(x)
        x = x @ a
    return x, np.stack(out)


def carried_parameter(x, a, n):
    i = 0
    while i < n:
        x = x @ a
        i += 1
    return x


def reused_through_a_branch(x, n):
    # t keeps one buffer (reuse_buffer) and reaches u through a branch: recycling u's buffer
    # would let the next iteration's np.full overwrite the carried x
    x = x + 0.0
    total = 0.0
    for i in range(n):
        t = np.full(x.shape, 1.0 * i)
        if i % 2 == 0:
            u = t
        else:
            u = t * 2.0 + 1.0
        y = (u + x) * 1.0
        total += np.sum(x)
        x = y
    return x, total


MATRIX = np.array([[0.6, -0.8], [0.8, 0.6]], dtype=np.float32)  # a rotation: products stay ~1


def loop_marks(fn, *args):
    """The ``fresh_after_first`` marks of the ``while`` ops, in program order."""
    module = optimized(autostage.convert(fn, target="cpu").get_concrete_function(*args).module)
    return [op.attrs.get(loop_buffers.FRESH_AFTER_FIRST)
            for op in module.main.body.walk() if op.name == "while"]


def test_a_carried_product_recycles_its_dead_operand():
    assert recycled(read_after_the_product_dropped, MATRIX) == [("matmul", None),
                                                               ("matmul", (0,))]
    assert loop_marks(read_after_the_product_dropped, MATRIX) == [None]  # the loop owns x


@pytest.mark.parametrize("fn,args", [
    (chained_products, (MATRIX,)), (halving, (np.arange(3.0),)),
    (carried_parameter, (MATRIX, MATRIX, np.int64(4)))], ids=lambda v: getattr(
        v, "__name__", ""))
def test_a_loop_from_a_parameter_recycles_after_its_first_iteration(fn, args):
    """The carried value starts as the caller's array, never written: the op's own results are
    recycled from the second iteration on (the loop's flag, ``fresh_after_first``)."""
    with config.STATIC_SIZES.override(8):
        assert [mark for _name, mark in recycled(fn, *args)] == [(0,)]
        assert loop_marks(fn, *args) == [(1,)]  # the loop's index is carried first


@pytest.mark.parametrize("fn,args", [
    (read_after_the_product, (MATRIX,)), (kept_in_a_list, (MATRIX,)),
    (reused_through_a_branch, (np.arange(3.0), np.int64(6)))], ids=lambda v: getattr(
        v, "__name__", ""))
def test_a_live_shared_or_reused_buffer_is_never_recycled(fn, args):
    with config.STATIC_SIZES.override(0 if fn is reused_through_a_branch else 8):
        marks = recycled(fn, *args)
    assert all(mark is None for _name, mark in marks), marks


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args", [
    (chained_products, (MATRIX,)), (halving, (np.arange(3.0),)),
    (read_after_the_product, (MATRIX,)), (kept_in_a_list, (MATRIX,)),
    (carried_parameter, (MATRIX, MATRIX, np.int64(4))),
    (reused_through_a_branch, (np.arange(3.0), np.int64(6)))], ids=lambda v: getattr(
        v, "__name__", ""))
def test_recycling_programs_give_pythons_results(fn, args, target):
    if fn not in (halving, reused_through_a_branch):
        # float32 products: the loops sum in order, NumPy's BLAS may not (the last bits)
        expected = fn(*args)
        got = autostage.convert(fn, target=target)(*args)
        for g, e in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, expected)),
                        strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        return
    check(fn, *args, target=target)


def test_chained_products_run_in_two_buffers():
    """Each tiny product writes into a buffer the function makes (``h_matmul_into_``)."""
    fn = autostage.convert(chained_products, target="cpu")
    module = optimized(fn.get_concrete_function(MATRIX).module)
    source = cpu_compile.generate(module).source
    loop = source[source.index("while True:"):]
    assert "= h_matmul" not in loop and "h_matmul_into_" in loop, source
    # in the loop, an array is made in the first iteration (the operand is the caller's) and
    # when the spare buffer's shape is not the product's
    lines = [line.strip() for line in loop.splitlines()]
    made = [i for i, line in enumerate(lines) if "cpu_new.empty(" in line]
    assert len(made) == 2 and lines[made[0] - 1].startswith("if spare"), loop
    assert lines[made[1] - 1] == "else:" and lines[made[0] - 2].startswith("if later"), loop
    a, expected = MATRIX, MATRIX
    for _ in range(100):  # each sum in order, in float32
        expected = np.array([[np.float32(0) + expected[i, 0] * a[0, j] + expected[i, 1] * a[1, j]
                              for j in range(2)] for i in range(2)], np.float32)
    np.testing.assert_array_equal(fn(a), expected)
    # the loop runs (a Python range), so its result is a new array, never the argument: the
    # call needs no identity fix and takes the direct fast path
    for _ in range(3):
        assert fn(a) is not a
    assert isinstance(fn._fast, Plan)  # the compiled entry, called from C


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_and_strided_parameters_are_never_written(target):
    """The first iteration reads the caller's array (its own Numba type: read-only, strided or
    Fortran-ordered) and allocates; later ones recycle the loop's own buffers."""
    read_only = MATRIX.copy()
    read_only.flags.writeable = False
    wide = np.zeros((2, 4), np.float32)
    wide[:, ::2] = MATRIX
    vectors = np.arange(10.0)
    vectors.flags.writeable = False
    for fn, arg in ((chained_products, read_only), (chained_products, wide[:, ::2]),
                    (chained_products, np.asfortranarray(MATRIX)), (halving, vectors),
                    (halving, np.arange(20.0)[::2])):
        before = arg.copy()
        got = autostage.convert(fn, target=target)(arg)
        np.testing.assert_allclose(got, fn(arg), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(arg, before)
