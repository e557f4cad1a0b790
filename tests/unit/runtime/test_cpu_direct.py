"""The direct compile (backends/cpu/direct*.py) against Numba's own.

Each case is a function in the style of autostage's generated code and helpers, written to a
module file twice: compiled by Numba's own pipeline (``f_numba``) and by ``direct.Compiler``
(``f``); both must give the same values, the same exceptions (type, message, the line Numba
records) and leave no array allocated, and ``f`` must have compiled directly. Constructs direct
leaves out must be refused (Numba's pipeline compiles them), not compiled differently.
"""

import collections
import importlib.util
import re
import sys
import textwrap

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import (
    direct,
    direct_lowering,
    direct_types,
    int_wrap,
    vector_math,
)
from numba.core.runtime import _nrt_python, rtsys
from ops_harness import assert_same

import autostage
from autostage import config

CASES = {
    "loops": ("""
def f(a, n):
    total = 0.0
    for i in range(n):
        total += a[i]
    for i in range(n - 1, -1, -2):
        total = total * 0.5 + a[i]
    k = 0
    while True:
        k += 1
        if k > 3:
            break
        if k == 2:
            continue
        total -= k
    return (total, k, i)
""", lambda: (np.arange(5.0), np.int64(5))),
    "arrays": ("""
def f(a, b):
    out = np.empty((a.shape[0], b.shape[0]), np.float64)
    for i in range(a.shape[0]):
        row = out[i]
        for j in range(b.shape[0]):
            row[j] = a[i] * b[j] if a[i] > b[j] else -1.0
    tail = out[1:, ::-1].copy()
    shape = out.shape[1:]
    same = shape == (b.shape[0],)
    return (out, tail, same, out.T[0, 1])
""", lambda: (np.arange(3.0), np.array([2.0, 0.5]))),
    "conditions": ("""
def f(x, xs):
    hit = 0
    if 0 <= x < 3 and x != 1 or x in (7, 8):
        hit = 1
    if not (x is None):
        hit += 10
    if x not in (4,):
        hit += 100
    a, b = x, hit
    a, b = b, a
    pair = (a, b)
    c, d = pair
    return (hit, a, b, c + d, len(xs), xs[-1], xs.sum() if xs.size else 0.0)
""", lambda: (np.int64(2), np.arange(4.0))),
    "evaluation order": ("""
def f(a):
    log = np.zeros(4, np.int64)
    n = 0
    log[note(log, n, 1)] = note(log, n + 1, 2)
    n = 2
    t = (note(log, n, 3), note(log, n + 1, 4))
    return (log, t)
""", lambda: (np.zeros(1),)),
    "casts and calls": ("""
def f(a, k):
    m = np.int64(k) // 3
    r = np.float32(a[0]) / np.float32(3.0)
    u = a[np.uint64(1)]
    s = np.sum(a) + math.sqrt(abs(a[0]))
    b = a.astype(np.float32)
    z = np.zeros(3, dtype=np.int64)
    z[1] = m
    return (m, r, u, s, b, z, np.float64(-0.0) == 0.0, a[..., 1:].shape)
""", lambda: (np.array([4.0, -1.0, 2.5]), np.int64(-7))),
    "early returns": ("""
def f(a, n):
    '''A docstring.'''
    if n < 0:
        return -1.0
    total = 1.0
    for i in range(n):
        if a[i] > 2.0:
            return total
        total += a[i]
    while True:
        if total > 100.0:
            return total
        total *= 2.0
""", lambda: (np.arange(5.0), np.int64(2))),
    "returns nothing": ("""
def f(out, v):
    if v < 0:
        return
    for i in range(out.shape[0]):
        out[i] = v
""", lambda: (np.zeros(3), np.float64(1.5))),
    "iteration": ("""
def f(a, sizes):
    extent = 1
    for size in sizes:
        if size != 1:
            if extent != 1 and size != extent:
                return -1, 0.0
            extent = size
    total = 0.0
    for row in a:
        for x in row:
            total += x
    for x in (1.5, 2.5):
        total += x
    return extent, total
""", lambda: (np.arange(6.0).reshape(2, 3), (np.int64(1), np.int64(4), np.int64(4)))),
    "unpacking into items": ("""
def f(a):
    starts = np.zeros(4, np.int64)
    sizes = np.zeros(4, np.int64)
    starts[0], sizes[0] = 3, a.shape[0]
    starts[1], sizes[1] = sizes[0], starts[0]
    pair = (7, 8)
    starts[2], sizes[2] = pair
    return starts, sizes, max(1, sizes[0], starts[2]), min(2.5, 1)
""", lambda: (np.zeros(5),)),
    "rows": ("""
def f(a, c, i):
    r = a[1]
    last = a[-1]
    a = a * 2.0
    kept = r[0] + a[1][2]  # (r still a view of the first a)
    plane = c[np.uint64(i)]
    corner = plane[-1][1:]
    temporary = (c + 1.0)[0]
    f_order = a.T[2]
    total = 0.0
    for j in range(plane.shape[0]):
        total += plane[j][0] + r[j % 3]
    r = r[1:]
    return (r, last, kept, plane, corner, temporary, f_order, total, c[i - 2][0, 0])
""", lambda: (np.arange(12.0).reshape(3, 4), np.arange(24.0).reshape(2, 3, 4), np.int64(1))),
    "calls of compiled functions": ("""
def f(a, k):
    x, even, tail = pick(a, k)
    y = maybe(a, k)
    z = maybe(a, k - 1)
    return (x, even, tail, 0.0 if y is None else y, z is None)
""", lambda: (np.arange(4.0), np.int64(1))),
    "calls lowered in line": ("""
def f(a, n):
    total = 0.0
    for j in range(n):
        part = spread(a, j)
        total += part.sum() + part.shape[0]
    return (total, spread(a * 1000.0, np.int64(1)), spread(a, n)[n:])
""", lambda: (np.arange(4.0), np.int64(3))),
    "a None default": ("""
def f(a, out=None):
    if out is None:
        return a.sum()
    out[0] = a.sum()
    return out[0] * 2.0
""", lambda: (np.arange(4.0),)),
    "updates and chains": ("""
def f(a, step):
    b = np.zeros(4)
    b[0] += a[1]
    b[np.int64(1)] -= a[2]
    i = j = 2
    b[i] = b[j + 1] = 7.0
    (p, q), r = (i, 1.5), j
    t = ((1, 2), 3)
    (u, v), w = t
    count = 0
    if a.size and b.size:
        count += 1
    if a.size == 0 or b.size:
        count += 10
    for k in range(9, -3, step):
        count += k
    for k in range(-3, 9, -step):
        count += 100 * k
    return b, i, j, p, q, r, u + v + w, count
""", lambda: (np.array([1.0, 2.0, 3.0]), np.int64(-4))),
    "elements and attributes": ("""
def f(a, m, t, flags, small):
    total = 0.0
    for i in range(-a.shape[0], a.shape[0]):
        total += a[i] * (i + 1)
    total += a[np.uint64(2)] + a[np.int32(-1)] + a[np.uint8(1)]
    v = m[::2, ::-1]
    w = m.T
    for i in range(v.shape[0]):
        for j in range(-v.shape[1], 0):
            total += v[i, j] * 0.5 + w[j, i] * 0.25
    t[1, -1, 0] = 7.5
    t[-1, 0, np.uint16(1)] += a[0]
    flags[-1] = a[1] > a[0]
    small[0] = 300.7
    small[1] = -1.9
    small[-1] = flags[0]
    k = t.size + m.shape[1] * 100 + w.strides[0] + v.strides[1] * 1000
    return (total, t, flags, small, k, t.shape, w.strides, flags[-1], small[2])
""", lambda: (np.array([1.5, -2.0, 4.0, 0.25]), np.arange(12.0).reshape(3, 4),
              np.zeros((2, 3, 2), np.float32), np.array([True, False, False]),
              np.zeros(3, np.int8))),
}

RANGES = """
def f(n):
    seen = 0
    for i in range(n - 5, n, 2):
        seen += 1
    for i in range(-n - 1, -n + 4, 3):
        seen += 10
    for i in range(-n, n, 4611686018427387904):
        seen += 100
    for i in range(n, -n - 1, -4611686018427387904):
        seen += 1000
    for i in range(5, 5):
        seen += 10000
    return (seen, i)
"""

RAISES = ("""
def f(a, n):
    if n > 2:
        raise ValueError("n too large")
    out = np.empty(n, np.float64)
    for i in range(n):
        out[i] = a[i]
    return (out,)
""", lambda: (np.arange(4.0), np.int64(2)))

ALWAYS_RAISES = """
def f(a):
    while True:
        if a[0] > 0:
            raise ValueError("positive")
        a[0] = a[0] + 1.0
    return (a,)
"""

REFUSED = {
    "power": "def f(a):\n    return (a ** 2,)\n",
    "objmode": "def f(a):\n    with numba.objmode():\n        pass\n    return (a,)\n",
    "types changing": "def f(a):\n    x = 1\n    y = x // 2\n    x = a\n    return (x, y)\n",
    "lambda": "def f(a):\n    g = lambda v: v\n    return (g(a),)\n",
    # (Numba's raise with run-time values leaks ~0.8 KB per raise: not emitted by autostage)
    "raise of a value": "def f(a):\n    if a > 3.0:\n        raise ValueError(a)\n"
                        "    return (a,)\n",
    "chain of arrays": "def f(a):\n    b = np.zeros(2)\n    return (b is b is b,)\n",
}


@numba.njit
def note(log, i, value):
    """Records ``value`` at ``log[i]``; returns the position it was written at (a call whose
    order of evaluation shows)."""
    log[i] = value * 10 + (log[i - 1] if i else 0)
    return i


@numba.njit(pipeline_class=direct.Compiler)
def pick(a, k):
    """A compiled callee of the cases: a tuple holding a boolean (whose stored form differs from
    its value's) and an array, or one of its own exceptions."""
    if k < 0:
        raise ValueError("a negative position")
    if k >= a.shape[0]:
        raise IndexError("past the end", k)
    return (a[k], k % 2 == 0, a[k:])


@direct_types.in_line
@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def spread(a, k):
    """A callee lowered in line: an array of its own (a variable, in a loop of the caller), an
    early return from a loop, an exception of its own."""
    if k < 0:
        raise ValueError("a negative spread")
    out = np.zeros(a.shape[0] + k)
    for i in range(a.shape[0]):
        out[i + k] = a[i]
        if out[i + k] > 100.0:
            return out[:i + k + 1]
    return out


@direct_types.in_line
@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def ratio(a, b):
    """A callee lowered in line only where the caller's error model is NumPy's."""
    return a / b


@numba.njit(pipeline_class=direct.Compiler)
def python_ratio(a, b):
    return ratio(a, b)


@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def numpy_ratio(a, b):
    return ratio(a, b)


@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def squash(a, out):
    """A loop whose body is a kernel lowered in line (``vector_math.tanh``)."""
    for i in range(a.shape[0]):
        out[i] = vector_math.tanh(a[i])


@numba.njit
def maybe(a, k):
    """An Optional result (the status of its call says None)."""
    if k > 0:
        return a[k]
    return None


Pair = collections.namedtuple("Pair", "x k")  # (a class a wrapper boxes results with)


def _module(tmp_path, name: str, source: str, options: str = ""):
    """Writes ``source`` (defining ``f``) as a module twice: ``f`` compiled by ``direct``,
    ``f_numba`` by Numba's own pipeline (both with Numba's ``options`` besides autostage's);
    returns the module."""
    source = textwrap.dedent(source).strip("\n")
    numba_source = re.sub(r"\bf\(", "f_numba(", source)
    text = "import math\nimport numba\nimport numpy as np\n" \
           "from autostage.runtime.backends.cpu import direct as cpu_direct\n" \
           f"from {__name__} import maybe, note, pick, spread\n" \
           f"ENTRY = dict(error_model='numpy', nogil=True, no_cfunc_wrapper=True{options})\n" \
           "\n\n@numba.njit(**ENTRY, pipeline_class=cpu_direct.Compiler)\n" + source \
           + "\n\n\n@numba.njit(**ENTRY)\n" + numba_source + "\n"
    path = tmp_path / f"direct_case_{abs(hash(name))}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    for dispatcher in (module.f, module.f_numba):
        int_wrap.compile_wrapping(dispatcher)
    return module


def _direct(dispatcher) -> list[bool]:
    """For each signature ``dispatcher`` compiled: whether ``direct`` compiled it."""
    return [bool((c.metadata or {}).get(direct.METADATA_KEY))  # (None: loaded from a cache)
            for c in dispatcher.overloads.values()]


def _same(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(got, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    elif got is None:
        assert want is None
    else:
        assert_same(got, want)


def _allocated() -> int:
    stats = rtsys.get_allocation_stats()
    return stats.mi_alloc - stats.mi_free


def _frees_what_it_allocates(call) -> None:
    """Calls ``call()`` three times (an exception it raises caught): no array is left
    allocated, neither one the function made nor a reference to an argument."""
    _nrt_python.memsys_enable_stats()
    try:
        before = _allocated()
        for _ in range(3):
            try:
                call()
            except ValueError:
                pass
        assert _allocated() == before
    finally:
        _nrt_python.memsys_disable_stats()


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_compiles_what_numba_compiles(tmp_path, name):
    source, make_args = CASES[name]
    module = _module(tmp_path, name, source)
    want_args, got_args = make_args(), make_args()
    want = module.f_numba(*want_args)
    got = module.f(*got_args)
    assert _direct(module.f) == [True]  # compiled directly, not refused
    _same(got, want)
    _same(got_args, want_args)  # (what the function wrote into its arguments)
    del got, want
    args = make_args()
    _frees_what_it_allocates(lambda: module.f(*args))


def test_exceptions_of_a_callee_are_its_own(tmp_path):
    module = _module(tmp_path, "calls of compiled functions",
                     CASES["calls of compiled functions"][0])
    a = np.arange(4.0)
    _same(module.f(a, np.int64(2)), module.f_numba(a, np.int64(2)))
    for k, error, message in ((-1, ValueError, "a negative position"),
                              (4, IndexError, "('past the end', 4)")):
        for fn in (module.f, module.f_numba):
            with pytest.raises(error) as raised:
                fn(a, np.int64(k))
            assert str(raised.value) == message
    assert _direct(module.f) == [True]


# The callee's name, from the arguments of the ``direct_lowering.Lowering`` method calling it.
_CALLEE_NAMES = {"_call_compiled": lambda compiled, args: compiled.fndesc.qualname,
                 "_call_in_line": lambda node, callee: callee.func.__name__}


def lowered_calls(monkeypatch, method: str) -> list[str]:
    """The names of the callees ``direct_lowering.Lowering.<method>`` (``_call_compiled``,
    ``_call_in_line``) lowers from now on, in order."""
    names = []
    original = getattr(direct_lowering.Lowering, method)

    def recording(lowering, *args):
        names.append(_CALLEE_NAMES[method](*args))
        return original(lowering, *args)

    monkeypatch.setattr(direct_lowering.Lowering, method, recording)
    return names


def test_a_compiled_callee_with_a_plain_result_is_called_by_directs_own_sequence(
        tmp_path, monkeypatch):
    """``pick`` (a tuple result) is called by ``direct``'s own call sequence, ``maybe`` (an
    Optional result, whose status may say None) by Numba's."""
    called = lowered_calls(monkeypatch, "_call_compiled")
    module = _module(tmp_path, "calls in line", CASES["calls of compiled functions"][0])
    a = np.arange(4.0)
    _same(module.f(a, np.int64(1)), module.f_numba(a, np.int64(1)))
    assert called == ["pick"]


def test_a_callee_marked_in_line_is_lowered_in_the_caller(tmp_path, monkeypatch):
    """``spread`` is lowered in place of each of ``f``'s three calls (its exception, raised
    there, is its own), and compiled only for ``f_numba``, which Numba's pipeline compiles."""
    lowered = lowered_calls(monkeypatch, "_call_in_line")
    module = _module(tmp_path, "in line", CASES["calls lowered in line"][0])
    a = np.arange(4.0)
    compiled_before = set(spread.signatures)
    got = module.f(a, np.int64(2))
    assert lowered == ["spread"] * 3 and set(spread.signatures) == compiled_before
    _same(got, module.f_numba(a, np.int64(2)))
    for fn in (module.f, module.f_numba):
        with pytest.raises(ValueError, match="^a negative spread$"):
            fn(a, np.int64(-1))
    assert _direct(module.f) == [True]


def test_a_callee_is_lowered_in_line_only_under_its_own_error_model(monkeypatch):
    """``ratio`` (NumPy's error model: x / 0 is inf) is called, compiled, from a caller under
    Python's (whose division raises), and lowered in line in one under NumPy's."""
    lowered = lowered_calls(monkeypatch, "_call_in_line")
    assert python_ratio(1.0, 0.0) == np.inf and lowered == []
    assert numpy_ratio(-1.0, 0.0) == -np.inf and lowered == ["ratio"]
    assert _direct(python_ratio) == _direct(numpy_ratio) == [True]


def test_a_loop_holding_a_kernel_lowered_in_line_keeps_one_scalar_copy(monkeypatch):
    """LLVM vectorises ``squash``'s loop; its scalar remainder (fewer iterations than one
    vector step) is not unrolled at run time (``loop_hints.NO_RUNTIME_UNROLL``): one scalar
    copy of ``tanh``'s polynomial, not four. Every remainder length gives NumPy's values."""
    lowered = lowered_calls(monkeypatch, "_call_in_line")
    fresh = numba.njit(error_model="numpy", pipeline_class=direct.Compiler)(squash.py_func)
    for n in range(20):
        a = np.linspace(-3.0, 3.0, n)
        out = np.empty(n)
        fresh(a, out)
        np.testing.assert_allclose(out, np.tanh(a), rtol=1e-15, atol=1e-16)
    assert lowered[0] == "tanh"  # (and what it calls)
    code = fresh.inspect_llvm(fresh.signatures[0])
    vector, scalar = code.count("@llvm.fmuladd.v"), code.count("@llvm.fmuladd.f64(")
    assert vector > 0 and scalar == vector  # (unrolled, the remainder held three more copies)


def test_early_returns_take_each_path(tmp_path):
    module = _module(tmp_path, "early returns", CASES["early returns"][0])
    a = np.array([1.0, 2.0, 3.0, 0.5])
    for n in (-1, 0, 2, 4):
        assert module.f(a, np.int64(n)) == module.f_numba(a, np.int64(n)) \
            == module.f.py_func(a, n)
    assert _direct(module.f) == [True]


def test_a_none_default_prunes_as_numba_does(tmp_path):
    """``out is None`` with ``out`` left out is known at compile time: the other branch is
    neither typed nor emitted (typed, ``out[0] = ...`` of None would not compile)."""
    module = _module(tmp_path, "a None default", CASES["a None default"][0])
    a = np.arange(4.0)
    out = np.zeros(1)
    assert module.f(a, out) == module.f_numba(a, out.copy()) == 12.0
    assert module.f(a) == module.f_numba(a) == 6.0
    assert _direct(module.f) == [True, True]


def test_ranges_near_int64_limits_take_pythons_steps(tmp_path):
    """A range's steps are counted first, as Python counts them (Numba's own range, whose count
    overflows here, takes 23 of these steps: code autostage generates ranges over sizes)."""
    module = _module(tmp_path, "ranges", RANGES)
    n = 2**63 - 1
    seen, last = module.f.py_func(n)
    assert seen == 3 + 2 * 10 + 4 * 100 + 4 * 1000  # Python's steps, counted by hand
    got = module.f(np.int64(n))
    assert (int(got[0]), int(got[1])) == (seen, last)
    assert _direct(module.f) == [True]


def test_a_raise_is_numbas_raise_at_the_same_line(tmp_path):
    source, make_args = RAISES
    module = _module(tmp_path, "raises", source)
    errors = []
    for fn in (module.f, module.f_numba):
        with pytest.raises(ValueError, match="n too large") as info:
            fn(np.arange(4.0), np.int64(5))
        errors.append(info)
    lines = [[entry.lineno - entry.frame.code.firstlineno for entry in e.traceback
              if entry.path.name.startswith("direct_case")][-1] for e in errors]
    assert lines[0] == lines[1]  # the same line of the function: run_errors maps it to the op
    _same(module.f(*make_args()), module.f_numba(*make_args()))
    assert _direct(module.f) == [True]
    a = np.arange(4.0)  # (a raise released the argument's reference only from the 34th session)
    _frees_what_it_allocates(lambda: module.f(a, np.int64(5)))


def test_code_after_a_loop_without_exit_is_not_emitted_in_a_closed_block(tmp_path):
    module = _module(tmp_path, "always raises", ALWAYS_RAISES)
    for fn in (module.f, module.f_numba):
        with pytest.raises(ValueError, match="positive"):
            fn(np.array([-1.5]))
    assert _direct(module.f) == [True]


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.filterwarnings("ignore:Code running in object mode")
def test_constructs_left_out_are_refused(tmp_path, name):
    module = _module(tmp_path, name, REFUSED[name])
    _same(module.f(np.float64(2.0)), module.f_numba(np.float64(2.0)))
    assert _direct(module.f) == [False]  # Numba's own pipeline compiled it


def test_a_break_out_of_an_iteration_releases_each_item_once(tmp_path):
    """Rows of an array are views holding a reference to it: a break leaving the loop must not
    release the last row's again (the array would be freed while returned)."""
    module = _module(tmp_path, "rows", """
def f(a):
    b = a * 2.0
    total = 0.0
    for row in b:
        total += row[0]
        if total > 3.0:
            break
    return b, total
""")
    a = np.arange(8.0).reshape(4, 2)
    _same(module.f(a), module.f_numba(a))
    _nrt_python.memsys_enable_stats()
    try:
        before = _allocated()
        kept = module.f(a)
        assert _allocated() == before + 1  # ``b``, alive in ``kept``
        np.testing.assert_array_equal(kept[0], a * 2.0)
        del kept
        assert _allocated() == before
    finally:
        _nrt_python.memsys_disable_stats()
    assert _direct(module.f) == [True]


def test_elements_are_bounds_checked_as_numba_checks_them(tmp_path):
    module = _module(tmp_path, "bounds checked", """
def f(m, i, j):
    m[i, j] = 2.0
    return m[i, -j]
""", options=", boundscheck=True")
    m = np.zeros((2, 3))
    assert module.f(m, np.int64(1), np.int64(2)) == module.f_numba(m, np.int64(1), np.int64(2))
    for i, j in ((2, 0), (0, 3), (-3, 0)):
        for fn in (module.f, module.f_numba):
            with pytest.raises(IndexError, match="index is out of bounds"):
                fn(m, np.int64(i), np.int64(j))
    assert _direct(module.f) == [True]


def test_rows_are_bounds_checked_as_numba_checks_them(tmp_path):
    module = _module(tmp_path, "rows checked", """
def f(m, i):
    return m[i][1]
""", options=", boundscheck=True")
    m = np.arange(6.0).reshape(2, 3)
    for i in (0, 1, -1, -2):
        assert module.f(m, np.int64(i)) == module.f_numba(m, np.int64(i)) == m[i][1]
    for i in (2, -3):
        for fn in (module.f, module.f_numba):
            with pytest.raises(IndexError, match="index is out of bounds"):
                fn(m, np.int64(i))
    assert _direct(module.f) == [True]


def test_elements_and_references_emit_no_copies_of_an_array(tmp_path, monkeypatch):
    """Element reads and writes, shapes and reference counts read the fields they need from
    the array's value (``direct_arrays``, ``Lowering._references``): no stack copy of the array
    per use, no read of every field per reference count; the IR LLVM starts from is less than
    half Numba's for the same function."""
    from numba.core import codegen

    module = _module(tmp_path, "element loop", """
def f(a, b):
    c = a
    total = 0.0
    for i in range(a.shape[0]):
        d = b
        for j in range(a.shape[1]):
            c[i, j] = c[i, j] + d[j, i]
            total += a[i, -j] * b.shape[0]
    return (total, c)
""")
    sizes = {}
    original = codegen.CPUCodeLibrary.add_ir_module

    def add_ir_module(library, ir_module):
        text = str(ir_module)
        if library.name in ("f", "f_numba"):
            sizes.setdefault(library.name, (text.count("\n  "), text.count("alloca {")))
        return original(library, ir_module)

    monkeypatch.setattr(codegen.CPUCodeLibrary, "add_ir_module", add_ir_module)
    a = np.arange(6.0).reshape(2, 3)
    b = np.ones((3, 2))
    want = module.f_numba(a.copy(), b)
    _same(module.f(a, b), want)
    assert _direct(module.f) == [True]
    (direct_lines, direct_slots), (numba_lines, _) = sizes["f"], sizes["f_numba"]
    assert direct_lines < numba_lines / 2, sizes
    # one stack slot per array variable the body assigns, c and d (a and b, parameters it
    # never assigns, are read as the arguments)
    assert direct_slots == 2, sizes


def test_a_range_step_of_zero_raises_pythons_error(tmp_path):
    module = _module(tmp_path, "zero step", """
def f(n, step):
    total = 0
    for i in range(n, 0, step):
        total += i
    return total
""")
    assert module.f(np.int64(5), np.int64(-2)) == module.f.py_func(5, -2) == 9
    for fn in (module.f, module.f_numba, module.f.py_func):
        with pytest.raises(ValueError, match="range\\(\\) arg 3 must not be zero"):
            fn(np.int64(5), np.int64(0))
    assert _direct(module.f) == [True]


def test_assignments_of_different_types_are_refused_not_unified(tmp_path):
    """``x = 1; y = x // 2; x = a``: one unified float type would make ``y`` 0.0; Numba types
    each assignment's version of ``x`` (and Python's ``y`` is the int 0)."""
    module = _module(tmp_path, "types changing", REFUSED["types changing"])
    x, y = module.f(np.float64(2.5))
    assert (x, y) == module.f.py_func(2.5) and isinstance(y, int)


def test_recursion_is_compiled_by_numba(tmp_path):
    module = _module(tmp_path, "recursion", """
def f(n):
    if n <= 1:
        return 1
    return n * f(n - 1)
""")
    assert module.f(np.int64(10)) == module.f_numba(np.int64(10)) == 3628800
    assert False in _direct(module.f)


def test_the_runtimes_own_functions_compile_through_direct():
    from autostage.runtime.backends.cpu import checks, numba_cache, vector_math

    for dispatcher in (checks.check, checks.broadcast_extent, vector_math.tanh):
        assert dispatcher._compiler.pipeline_class is direct.Compiler
        stamp = dispatcher._cache._cache_file._source_stamp
        assert isinstance(dispatcher._cache._cache_file, numba_cache.TiedCacheFile)
        assert direct.stamp() in stamp  # (a changed direct compiles them again)


@pytest.mark.parametrize("name", ["numpy_sort", "numpy_argsort"])
def test_the_sorts_of_real_lanes_compile_directly(name, monkeypatch):
    """np.sort/np.argsort's functions are plain functions (complex lanes have their own), not
    overloads choosing by dtype, whose implementations Numba's pipeline compiled (0.3-0.5 s
    more per dtype): Numba's pipeline compiles only the dtype code's one-line overload."""
    from autostage.runtime.backends.cpu import sorts
    from numba.core import compiler

    by_numba = []
    original = compiler.CompilerBase._compile_bytecode

    def compile_bytecode(self):
        by_numba.append(self.state.func_id.func_qualname)
        return original(self)

    monkeypatch.setattr(compiler.CompilerBase, "_compile_bytecode", compile_bytecode)
    fresh = numba.njit(error_model="numpy", no_cfunc_wrapper=True,
                       pipeline_class=direct.Compiler)(getattr(sorts, name).py_func)
    lane = np.array([2.0, -0.0, 0.0, np.nan, 1.0, 0.0])
    got = fresh(lane, np.int64(sorts.QUICKSORT))
    want = np.sort(lane) if name == "numpy_sort" else np.argsort(lane)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert _direct(fresh) == [True]
    assert set(by_numba) <= {"_dtype_code_typed.<locals>.<lambda>"}, by_numba


def test_off_and_the_cache_stamp():
    stamp = direct.stamp()
    with config.DIRECT.override(False):
        assert direct.stamp() == "direct-off" != stamp
        assert not direct.enabled()


def test_entries_compile_directly_and_agree_with_numbas_front_end(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_CACHE_DIR", str(tmp_path / "cache"))  # (compiled here)

    def step(x, w):
        h = np.tanh(x @ w)
        total = 0.0
        for i in range(h.shape[0]):
            if h[i, 0] > 0:
                total += h[i, 0]
        return h, total

    args = (np.linspace(-1, 1, 12).reshape(4, 3), np.linspace(0.5, -0.5, 6).reshape(3, 2))
    f = autostage.convert(step, target="cpu")
    got = f(*args)
    runner = f.concrete_functions[0].prepared_runner()
    assert _direct(runner.dispatcher) == [True]
    plain = autostage.convert(step, target="cpu")
    with config.DIRECT.override(False):
        want = plain(*args)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_a_wrapper_unpickles_the_objects_it_embeds_once(tmp_path):
    """The class of each array (and namedtuple) a wrapper returns is embedded pickled; the
    wrapper reads it through a getter that unpickles it at the first call only
    (wrapper_objects), and each use keeps ``numba_unpickle``'s reference contract: the
    namedtuple's class, which the boxing releases, keeps its count over many calls."""
    module = _module(tmp_path, "wrapper objects", """
def f(a, pair):
    return (a + 1.0, pair)
""")
    a, pair = np.arange(3.0), Pair(1.5, 2)
    got, want = module.f(a, pair), module.f_numba(a, pair)
    assert _direct(module.f) == [True]
    _same(got, want)
    before = sys.getrefcount(Pair)
    for _ in range(200):
        result = module.f(a, pair)
    assert type(result[0]) is np.ndarray and type(result[1]) is Pair and result[1] == pair
    del result
    assert sys.getrefcount(Pair) == before
    (compiled,) = module.f.overloads.values()  # (each class kept in a global of the module)
    kept = re.findall(r"@\.const\.picklebuf\.\w+\.object = internal",
                      compiled.library.get_llvm_str())
    assert len(kept) == 2
