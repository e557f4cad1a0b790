"""Sizes proven equal (runtime/passes/shape_facts.py) and the fills overwritten before they are
read (runtime/passes/written_prefix.py), with their cpu lowerings.

Soundness: every program, whether a fact is proven or not, gives plain Python's values and
NumPy's errors on both targets, for sizes 0, 1, 2 and 5 (a size 1 broadcasts against anything,
so a wrong "equal" fact would read past an array's end or skip NumPy's error). Effect: the loops
of an ODE step read their operands at the loop index with no broadcast test; the fill of an
array whose first elements are written next covers only the rest.
"""

import numpy as np
import pytest
from autostage.runtime.backends.cpu import compile as cpu_compile
from autostage.runtime.function import optimized
from autostage.runtime.passes import written_prefix
from autostage.runtime.passes.shape_facts import ShapeFacts

import autostage
from autostage import config

TARGETS = ("interpreter", "cpu")
SIZES = (0, 1, 2, 5)


def module_of(fn, *args):
    """The optimized module of ``fn`` for ``args``' dtypes and ranks, sizes unknown: what the
    facts must prove (sizes the trace knows need no proof, ``static_sizes``)."""
    with config.STATIC_SIZES.override(0):
        module = autostage.convert(fn, target="cpu").get_concrete_function(*args).module
    return optimized(module)


def cpu_source(fn, *args) -> str:
    return cpu_compile.generate(module_of(fn, *args)).source


def check(fn, *args, target):
    try:
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    except (ValueError, IndexError) as error:
        with pytest.raises(type(error)) as got:
            autostage.convert(fn, target=target)(*args)
        assert str(error) in str(got.value)
        return
    got = autostage.convert(fn, target=target)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        assert np.asarray(g).dtype == np.asarray(e).dtype


def rhs(y):
    dy = np.zeros_like(y)  # (np.empty_like stages the same; Python's would leave y[2:] unset)
    dy[0] = y[1]
    dy[1] = 5.0 * (1.0 - y[0] * y[0]) * y[1] - y[0]
    return dy


def euler_steps(y, n):
    """Carried ``y`` keeps its size: every loop of the step is proven (``y + h * k``)."""
    i = 0
    while i < n:
        k1 = rhs(y)
        k2 = rhs(y + 0.1 * k1)
        y = y + 0.05 * (k1 + k2)
        i += 1
    return y


def growing(y, n):
    """Carried ``y`` grows: ``y * 2.0`` is proven, ``y + x`` (x keeps its size) is not."""
    x = y.copy()
    i = 0
    while i < n:
        y = np.concatenate((y, y[:1]))
        i += 1
    return y * 2.0 + x


def unrelated(a, b):
    """Two parameters: nothing is known, the broadcast test stays (and raises NumPy's error)."""
    return a * 2.0 + b


def whole_axes(m):
    """A basic index keeps the symbols of the axes it takes whole."""
    col = m[:, 0]
    return m[:, 1] * col + m[:, -1], m[1:] - m[:-1]


def sized_like(x):
    """``np.zeros(x.shape[0])`` has ``x``'s size."""
    return np.zeros(x.shape[0]) + x * 3.0


def partly_written(x):
    z = np.zeros(x.shape[0] + 1)
    z[0] = x[0]
    z[2] = 1.0  # not a prefix: the fill starts at 1
    return z


def read_before_written(x):
    z = np.zeros_like(x)
    z[0] = 1.0
    s = z.sum()  # reads z before z[1] is written: the fill starts at 1
    z[1] = s
    return z


def read_first(x):
    z = np.zeros_like(x)
    s = z.sum() + 1.0  # reads z before any write: all of it is filled
    z[0] = s
    return z


def written_by_index(x, i):
    z = np.zeros_like(x)
    z[i] = 1.0  # a staged index: nothing is known to be written
    z[0] = 2.0
    return z


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [euler_steps, growing], ids=lambda f: f.__name__)
def test_loops_give_pythons_values(fn, target):
    for size in SIZES:
        for n in (0, 1, 3):
            check(fn, np.linspace(0.5, 2.0, size), np.int64(n), target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_unrelated_sizes_keep_numpys_broadcast_and_error(target):
    for a, b in ((2, 2), (1, 3), (3, 1), (2, 3), (0, 1), (0, 2)):
        check(unrelated, np.arange(float(a)), np.ones(b), target=target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [whole_axes, sized_like, partly_written, read_before_written,
                                read_first],
                         ids=lambda f: f.__name__)
def test_other_facts_give_pythons_values(fn, target):
    for size in SIZES:
        x = np.arange(float(size * 3)).reshape(size, 3) if fn is whole_axes else np.arange(
            1.0, size + 1.0)
        check(fn, x, target=target)


@pytest.mark.parametrize("target", TARGETS)
def test_a_staged_index_write_fills_everything(target):
    for i in (0, 1, -1, 3):
        check(written_by_index, np.arange(3.0), np.int64(i), target=target)


def test_symbols_follow_the_program():
    module = module_of(euler_steps, np.zeros(2), np.int64(3))
    main = module.main
    facts = ShapeFacts(main)
    (loop,) = [op for op in main.body.ops if op.name == "while"]
    y_in, y_out = main.body.args[0], loop.results[1]
    assert facts.dims(y_out) == facts.dims(y_in)
    body = loop.regions[1]
    fused = [op for op in body.walk() if op.name == "fused"]
    assert fused and all(facts.dims(op.results[0]) == facts.dims(y_in) for op in fused)

    grown = module_of(growing, np.zeros(2), np.int64(3)).main
    facts = ShapeFacts(grown)
    (loop,) = [op for op in grown.body.ops if op.name == "while"]
    assert facts.dims(loop.results[1]) != facts.dims(grown.body.args[0])

    pair = module_of(unrelated, np.zeros(2), np.zeros(2)).main
    facts = ShapeFacts(pair)
    a, b = pair.body.args
    assert facts.dims(a) != facts.dims(b)
    assert facts.broadcast([a, b], 1) == (None,)


def test_proven_loops_have_no_broadcast_test():
    source = cpu_source(euler_steps, np.zeros(2), np.int64(3))
    body = source[source.index("while True"):]
    assert "step" not in body  # no broadcasting reads (index * step)
    assert "extent" not in body  # no run-time broadcast of the operands' shapes
    assert "* step" in cpu_source(unrelated, np.zeros(2), np.zeros(2))


def test_fills_cover_only_what_is_not_written_first():
    def marks(fn, *args):
        ops = module_of(fn, *args).main.body.walk()
        return [op.attrs.get(written_prefix.MARK, 0) for op in ops
                if op.name in ("full", "full_like")]
    assert marks(rhs, np.zeros(2)) == [2]
    assert marks(partly_written, np.zeros(2)) == [1]
    assert marks(read_before_written, np.zeros(2)) == [1]
    assert marks(read_first, np.zeros(2)) == [0]
    assert marks(written_by_index, np.zeros(2), np.int64(0)) == [0]
    source = cpu_source(rhs, np.zeros(2))
    assert "[...] =" not in source and "range(2, " in source


def columns(t):
    e = np.exp(-t)
    return np.stack([e, t * e], axis=1).T


def test_stack_has_its_parts_symbols_and_a_new_axis():
    main = module_of(columns, np.zeros(2)).main
    facts = ShapeFacts(main)
    (stack,) = [op for op in main.body.walk() if op.name == "stack"]
    (t,) = main.body.args
    assert facts.dims(stack.results[0]) == (facts.dims(t)[0], 2)
    (transposed,) = main.body.results
    assert facts.dims(transposed) == (2, facts.dims(t)[0])
