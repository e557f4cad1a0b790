"""What one construct of generated code costs Numba to compile (issue 14, goal 5).

The realistic programs' own functions are most of a new program's compile time
(``compile_time.py``); this script prices the constructs autostage's generated code is made of.
Each is compiled in a function with 0 and with ``--copies`` copies of it (the generated module's
flags, the cpu backend's wrapping integers, every callee compiled before), and the difference per
copy is reported in process time (the machine's other work counts less): what a construct costs
whatever else the function holds. Nothing is cached: each function is compiled anew.

    .venv/bin/python benchmarks/construct_compile_cost.py [--smoke] [--copies N] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("AUTOSTAGE_TIERED", "0")

import autostage.runtime.backends.cpu.blas as cpu_blas  # noqa: E402
import autostage.runtime.backends.cpu.checks as cpu_chk  # noqa: E402
import autostage.runtime.backends.cpu.new_arrays as cpu_new  # noqa: E402
import autostage.runtime.backends.cpu.vector_math as cpu_vmath  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402
from autostage.runtime.backends.cpu import int_wrap  # noqa: E402

ENTRY = dict(error_model="numpy", nogil=True, no_cfunc_wrapper=True)  # (no cache: compiled anew)
SITE = np.int64(12345)

# name -> one copy of the construct ({k}: the copy's number), in a function of (a, n, m)
CONSTRUCTS = {
    "int64 a + b": "v{k} = n + {k}\n    s += v{k}",
    "np.int64(a + b)": "v{k} = np.int64(n + {k})\n    s += v{k}",
    "index read a[i, j]": "s += a[n, {k}]",
    "index read, uint64 indices": "s += a[np.uint64(n), np.uint64({k})]",
    "index write a[i, j] = v": "a[n, {k}] = s",
    "shape read": "s += a.shape[0] + a.shape[1]",
    "cpu_chk.check(...)": "cpu_chk.check(n == {k}, SITE, (n, m,))",
    "if ...: raise": "if n == {k}:\n        raise ValueError('bad {k}')",
    "cpu_new.empty((n, m))": "t{k} = cpu_new.empty((n, m,), np.float64)\n    s += t{k}.shape[0]",
    "cpu_blas.any_layout(a)": "t{k} = cpu_blas.any_layout(a)\n    s += t{k}.shape[0]",
    "1-d loop": "for i in range(n):\n        a[i, 0] = a[i, 0] * 2.0 + {k}",
    "2-d loop nest": ("for i in range(n):\n        for j in range(m):\n"
                      "            a[i, j] = a[i, j] * 2.0 + {k}"),
    "2-d loop nest with exp": ("for i in range(n):\n        for j in range(m):\n"
                               "            a[i, j] = cpu_vmath.exp(a[i, j] + {k})"),
}
SMOKE = ("int64 a + b", "1-d loop")


def _function(construct: str, copies: int):
    body = "\n    ".join(CONSTRUCTS[construct].format(k=k) for k in range(copies))
    source = f"def f(a, n, m):\n    s = 0.0\n    {body}\n    return s\n"
    namespace = dict(np=np, cpu_chk=cpu_chk, cpu_blas=cpu_blas, cpu_new=cpu_new,
                     cpu_vmath=cpu_vmath, SITE=SITE)
    exec(compile(source, f"<{construct}>", "exec"), namespace)  # noqa: S102 - our own source
    return numba.njit(**ENTRY)(namespace["f"])


def compile_seconds(construct: str, copies: int) -> float:
    f = _function(construct, copies)
    start = time.process_time()
    with int_wrap.wrapping():
        f.compile((numba.float64[:, ::1], numba.int64, numba.int64))
    return time.process_time() - start


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="two constructs, two copies")
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2, help="compiles per size (the least)")
    args = parser.parse_args(argv)
    names = SMOKE if args.smoke else tuple(CONSTRUCTS)
    copies, repeats = (2, 1) if args.smoke else (args.copies, args.repeats)
    for name in names:  # the callees compile once, before anything is timed
        compile_seconds(name, 1)
    print(f"Numba compile time per copy of each construct ({copies} copies; process time, the "
          f"least of {repeats})")
    print(f"{'construct':32s} {'ms per copy':>12s} {'function of 0 copies ms':>24s}")
    for name in names:
        empty = min(compile_seconds(name, 0) for _ in range(repeats))
        full = min(compile_seconds(name, copies) for _ in range(repeats))
        print(f"{name:32s} {1000 * (full - empty) / copies:12.2f} {1000 * empty:24.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
