"""Computes the polynomial coefficients of ``runtime/backends/cpu/vector_math.py`` (with mpmath).

Each polynomial is mpmath's Chebyshev fit (``mpmath.chebyfit``: interpolation at Chebyshev nodes,
within a small factor of the minimax polynomial) at 50 digits, of the function the kernel needs
on the interval its argument reduction leaves, printed as float64 literals (``repr`` round-trips)
in ascending order, with the fit's error bound. ``python tools/vector_math_coefficients.py``
prints the tables that vector_math.py holds; ``--check`` exits 1 when they differ from it.

- exp: ``e**r = 1 + r + r**2 * Q(r)`` for ``|r| <= ln(2)/2`` (a hair wider: the reduction's
  rounding), ``Q`` of degree 10.
- log: ``log((1 + s) / (1 - s)) = 2*s + s * z * P(z)``, ``z = s**2``,
  ``|s| <= (sqrt(2) - 1) / (sqrt(2) + 1)`` (mantissas in ``[sqrt(1/2), sqrt(2))``), ``P`` of
  degree 6.

tanh needs no fit of its own: it is computed from exp's reduction and polynomial. The float32
kernels (computing in float32) use the same fits with lower degrees (5 and 3), printed as float32
literals.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import mpmath as mp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULE = ROOT / "runtime" / "backends" / "cpu" / "vector_math.py"
TINY = mp.mpf(10) ** -30


def _q_exp(r):
    if abs(r) < TINY:
        return mp.mpf(1) / 2 + r / 6
    return (mp.exp(r) - 1 - r) / r**2


def _p_log(z):
    if z < TINY:
        return mp.mpf(2) / 3 + 2 * z / 5
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z)


def tables() -> dict[str, tuple[list[str], float]]:
    """name -> (the coefficients in ascending order as literals, the fit's maximum error)."""
    with mp.workdps(50):
        widen = 1 + mp.mpf(2) ** -30
        half_ln2 = mp.log(2) / 2 * widen
        s_max = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
        fits = {
            "EXP_Q": (_q_exp, [-half_ln2, half_ln2], 11),
            "LOG_P": (_p_log, [0, s_max**2 * widen], 7),
            "EXP32_Q": (_q_exp, [-half_ln2, half_ln2], 6),
            "LOG32_P": (_p_log, [0, s_max**2 * widen], 4),
        }
        result = {}
        for name, (function, interval, n) in fits.items():
            poly, error = mp.chebyfit(function, interval, n, error=True, asc=True)
            literal = (lambda c: str(np.float32(c))) if "32" in name else (
                lambda c: repr(float(c)))
            result[name] = ([literal(c) for c in poly], float(error))
    return result


def blocks() -> list[str]:
    """The coefficient tables, each as it appears in vector_math.py."""
    result = []
    for name, (coefficients, error) in tables().items():
        lines = [f"# chebyfit error {error:.1e}", f"{name} = {'_f32(' if '32' in name else '('}"]
        lines += [f"    {c}," for c in coefficients]
        result.append("\n".join(lines) + "\n)\n")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when vector_math.py holds other coefficients")
    args = parser.parse_args()
    tables_ = blocks()
    if args.check:
        module = MODULE.read_text()
        missing = [block for block in tables_ if block not in module]
        for block in missing:
            print("vector_math.py lacks:\n" + block, file=sys.stderr)
        return 1 if missing else 0
    print("".join(tables_), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
