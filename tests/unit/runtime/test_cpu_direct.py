"""The direct compile of generated functions (backends/cpu/direct*.py) against Numba's own.

Each case is a function in the style of generated code, written to a module file, compiled by
Numba as it is and through its ``direct`` twin; both must give the same values, the same
exceptions (type, message, the generated line Numba records) and leave no array allocated.
Constructs direct leaves out must be refused (``Unsupported``), not compiled differently.
"""

import importlib.util
import sys
import textwrap

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import direct, int_wrap
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
    "early return": "def f(a):\n    if a > 0:\n        return (a,)\n    return (-a,)\n",
    "lambda": "def f(a):\n    g = lambda v: v\n    return (g(a),)\n",
    "chain of arrays": "def f(a):\n    b = np.zeros(2)\n    return (b is b is b,)\n",
    "item update": "def f(a):\n    b = np.zeros(1)\n    b[0] += a\n    return (b,)\n",
}


@numba.njit
def note(log, i, value):
    """Records ``value`` at ``log[i]``; returns the position it was written at (a call whose
    order of evaluation shows)."""
    log[i] = value * 10 + (log[i - 1] if i else 0)
    return i


def _module(tmp_path, name: str, source: str):
    """Writes ``source`` (defining ``f``) and its direct twin as a module; returns it."""
    text = "import math\nimport numba\nimport numpy as np\n" \
           "from autostage.runtime.backends.cpu import direct as cpu_direct\n" \
           f"from {__name__} import note\n" \
           "ENTRY = dict(error_model='numpy', nogil=True, no_cfunc_wrapper=True)\n" \
           + "\n@numba.njit(**ENTRY)\n" + textwrap.dedent(source) + "\n\n" \
           + "\n".join(direct.wrapper_lines("f", _params(source))) + "\n"
    path = tmp_path / f"direct_case_{abs(hash(name))}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    for dispatcher in (module.f, module.f__direct):
        int_wrap.compile_wrapping(dispatcher)
    return module


def _params(source: str) -> str:
    head = textwrap.dedent(source).strip().splitlines()[0]
    return head[head.index("(") + 1:head.index(")")]


def _same(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(got, tuple):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    else:
        assert_same(got, want)


def _allocated() -> int:
    stats = rtsys.get_allocation_stats()
    return stats.mi_alloc - stats.mi_free


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_compiles_what_numba_compiles(tmp_path, name):
    source, make_args = CASES[name]
    module = _module(tmp_path, name, source)
    want = module.f(*make_args())
    got = module.f__direct(*make_args())
    assert list(module.f__direct.overloads)  # compiled directly, not refused
    _same(got, want)
    del got, want
    args = make_args()
    _nrt_python.memsys_enable_stats()
    try:
        before = _allocated()
        for _ in range(3):
            module.f__direct(*args)
        assert _allocated() == before  # every array the function made was freed
    finally:
        _nrt_python.memsys_disable_stats()


def test_ranges_near_int64_limits_take_pythons_steps(tmp_path):
    """A range's steps are counted first, as Python counts them (Numba's own range, whose count
    overflows here, takes 23 of these steps: code autostage generates ranges over sizes)."""
    module = _module(tmp_path, "ranges", RANGES)
    n = 2**63 - 1
    seen, last = module.f.py_func(n)
    assert seen == 3 + 2 * 10 + 4 * 100 + 4 * 1000  # Python's steps, counted by hand
    got = module.f__direct(np.int64(n))
    assert (int(got[0]), int(got[1])) == (seen, last)


def test_a_raise_is_numbas_raise_at_the_generated_line(tmp_path):
    source, make_args = RAISES
    module = _module(tmp_path, "raises", source)
    errors = []
    for fn in (module.f, module.f__direct):
        with pytest.raises(ValueError, match="n too large") as info:
            fn(np.arange(4.0), np.int64(5))
        errors.append(info)
    lines = [[(entry.path.name, entry.lineno) for entry in e.traceback
              if entry.path.name.startswith("direct_case")][-1] for e in errors]
    assert lines[0] == lines[1]  # the same generated line: run_errors maps it to the op
    _same(module.f__direct(*make_args()), module.f(*make_args()))


def test_code_after_a_loop_without_exit_is_not_emitted_in_a_closed_block(tmp_path):
    module = _module(tmp_path, "always raises", ALWAYS_RAISES)
    for fn in (module.f, module.f__direct):
        with pytest.raises(ValueError, match="positive"):
            fn(np.array([-1.5]))


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.filterwarnings("ignore:Code running in object mode")
def test_constructs_left_out_are_refused(tmp_path, name):
    source = REFUSED[name]
    # codegen gives a function a twin only if its syntax is in the subset ...
    assert (direct.plausible(source) is not None) == (
        name in ("early return", "item update", "chain of arrays"))
    module = _module(tmp_path, name, source)
    with pytest.raises(numba.core.errors.TypingError):  # ... and typing refuses the rest
        module.f__direct(np.float64(2.0))
    assert module.f(np.float64(2.0)) is not None  # Numba's own front end compiles it


def test_entries_compile_directly_and_agree_with_numbas_front_end():
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
    assert runner.dispatcher.py_func.__name__.endswith(direct.SUFFIX)
    plain = autostage.convert(step, target="cpu")
    with config.DIRECT.override(False):
        want = plain(*args)
    assert not plain.concrete_functions[0].prepared_runner().dispatcher.py_func.__name__\
        .endswith(direct.SUFFIX)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
