"""NumPy's signed integers wrap around in compiled code too (``backends/cpu/int_wrap.py``):
Numba's default ``nsw`` flags let LLVM assume they never overflow, which folded ``(a + 1) > a``
to True, ``(x * 2) // 2`` to ``x`` and ``(300 * s) == 0`` to ``s == 0`` (the division by the
wrapped zero then trapped: SIGFPE)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numba
import numpy as np

import autostage

BIG = np.array([2**63 - 1, 2**62, -(2**63)])


def _compare(fn, *args):
    staged = autostage.convert(fn, target="cpu")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = fn(*args)
        actual = staged(*args)
    assert type(actual) is type(expected)
    np.testing.assert_array_equal(actual, expected)
    return actual


def test_increment_compared_with_itself_wraps():
    def f(x):
        return (x[0] + 1) > x[0]

    assert _compare(f, BIG) == np.False_


def test_array_product_divided_back_wraps():
    def f(x):
        return (x * 2) // 2 == x

    assert not _compare(f, BIG).any()


def test_scalar_product_divided_back_wraps():
    def f(x):
        b = x[0] * 4
        return b // 4

    assert _compare(f, BIG) == np.int64(-1)


def test_loop_count_of_wrapping_increments():
    def f(x):
        n = 0
        for i in range(x.shape[0]):
            if x[i] + 1 > x[i]:
                n += 1
        return n

    assert _compare(f, BIG) == 2


def test_integer_product_in_a_helper_wraps():
    def f(a, b):
        return a @ b  # an integer matmul: the shared product helper's sums wrap

    a = np.array([[2**62, 2**62], [1, 2]])
    assert _compare(f, a, np.array([[2], [2]]))[0, 0] == 0


def test_divisor_that_wraps_to_zero_does_not_trap(tmp_path):
    """In a child process: the bug killed the interpreter with SIGFPE."""
    (tmp_path / "wrapzero.py").write_text(textwrap.dedent("""
        def f(y, s):
            return y[0] // (300 * s)
        """))
    code = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np, autostage, wrapzero
        warnings.simplefilter("ignore")
        g = autostage.convert(wrapzero.f, target="cpu")
        print(repr(g(np.array([-2**63, 5]), np.int64(2**62))))
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "AUTOSTAGE_TIERED": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "np.int64(0)"


def test_the_users_own_numba_functions_keep_their_flags():
    def f(x):
        return (x[0] + 1) > x[0]

    assert _compare(f, BIG) == np.False_  # autostage's compile wraps

    @numba.njit
    def own(a, b):
        return a + b

    own(1, 2)
    assert "add nsw i64" in next(iter(own.inspect_llvm().values()))  # Numba's, unchanged
