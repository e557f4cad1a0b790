"""Counts the NumPy, ``math`` and builtin calls that real source trees make (by reading their AST).

The survey behind ``docs/numpy_surface.csv``: which NumPy functions, array methods, ``math``
functions and builtins model and numerics code calls most. Usage::

    python tools/numpy_usage.py sklearn=/tmp/sklearn scipy=/path/to/scipy --csv docs/numpy_usage.csv

Each ``label=path`` is one codebase (a folder of ``.py`` files); only files that import NumPy are
read; test folders (``tests``, ``test``,
``testing``), ``test_*.py``/``conftest.py`` and vendored code (``externals``, ``_vendor``) are left
out. What is counted, per file, after resolving its imports (``import numpy as np``,
``from numpy import sum as npsum``, ``from numpy.linalg import norm``, ``import math``,
``from math import sqrt``):

- ``np.X``, ``np.linalg.X``, ``np.fft.X``...: calls of a NumPy function (kind ``numpy``,
  ``linalg``, ``random``, ``fft``...), written as users write them (``np.linalg.solve``).
- ``ndarray.X``: a call ``obj.X(...)`` whose method name is an ``np.ndarray`` method and whose
  receiver is not a module (``x.reshape(...)``, ``w.sum(axis=0)``), and the attributes
  ``.T``/``.shape``/``.ndim``/``.dtype``/``.size`` read on any value. This is syntactic: a list's
  ``.sort()`` or a dict's ``.copy()`` counts too (an over-count for the common names).
- ``math.X``: calls of ``math`` functions; ``operator.@``: the ``@`` operator.
- builtins (``float``, ``int``, ``len``, ``abs``, ``min``, ``max``, ``range``, ``zip``,
  ``enumerate``, ``sum``, ``round``, ``bool``, ``list``, ``tuple``, ``sorted``, ``reversed``,
  ``any``, ``all``, ``pow``, ``divmod``, ``complex``): every call, whatever the argument's
  type (an upper bound for "applied to arrays").

Prints the most used names and, with ``--csv``, writes rows
``name,kind,<label>...,total,share_per_mille``, ranked by ``share_per_mille``: a name's share of
each codebase's counted calls, averaged over the codebases (so that one large codebase does not
decide the order alone).
"""

from __future__ import annotations

import argparse
import ast
import collections
import csv
import pathlib
import sys

import numpy as np

BUILTINS = ("float", "int", "len", "abs", "min", "max", "range", "zip", "enumerate", "sum",
            "round", "bool", "list", "tuple", "sorted", "reversed", "any", "all", "pow",
            "divmod", "complex")
ARRAY_ATTRIBUTES = ("T", "shape", "ndim", "dtype", "size")
ARRAY_METHODS = frozenset(name for name in dir(np.ndarray) if not name.startswith("_"))
SKIPPED_DIRS = frozenset({"tests", "test", "testing", "externals", "_vendor", "vendored"})
SUBMODULE_KINDS = {"linalg": "linalg", "random": "random", "fft": "fft", "ma": "ma",
                   "polynomial": "polynomial", "lib": "numpy", "char": "strings",
                   "strings": "strings", "testing": "testing"}


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"], or None when the root is not a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Counter(ast.NodeVisitor):
    """Counts the calls of one module, resolving its NumPy and ``math`` import aliases."""

    def __init__(self) -> None:
        self.counts: collections.Counter[tuple[str, str]] = collections.Counter()
        self.modules: dict[str, str] = {}   # local name -> "numpy", "numpy.linalg", "math"
        self.imported: dict[str, str] = {}  # local name -> "numpy.linalg.norm", "math.sqrt"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in ("numpy", "math"):
                if alias.asname:
                    self.modules[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    self.modules[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module.split(".")[0] not in ("numpy", "math"):
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            local = alias.asname or alias.name
            if module == "numpy" and alias.name in SUBMODULE_KINDS:
                self.modules[local] = full
            else:
                self.imported[local] = full

    def _resolve(self, parts: list[str]) -> str | None:
        if parts[0] in self.modules:
            return ".".join([self.modules[parts[0]], *parts[1:]])
        if parts[0] in self.imported:
            return ".".join([self.imported[parts[0]], *parts[1:]])
        return None

    def _record(self, name: str, kind: str) -> None:
        self.counts[(name, kind)] += 1

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        parts = _dotted(func)
        full = self._resolve(parts) if parts else None
        if full is not None:
            self._record_module_call(full)
        elif isinstance(func, ast.Name) and func.id in BUILTINS:
            self._record(func.id, "builtin")
        elif isinstance(func, ast.Attribute) and func.attr in ARRAY_METHODS and not (
                parts and parts[0] in self.modules):
            self._record(f"ndarray.{func.attr}", "method")
        self.generic_visit(node)

    def _record_module_call(self, full: str) -> None:
        parts = full.split(".")
        if parts[0] == "math":
            if len(parts) == 2:
                self._record(full, "math")
            return
        if len(parts) == 2:
            self._record(f"np.{parts[1]}", "numpy")
        elif parts[1] in SUBMODULE_KINDS:
            self._record("np." + ".".join(parts[1:]), SUBMODULE_KINDS[parts[1]])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in ARRAY_ATTRIBUTES and isinstance(node.ctx, ast.Load):
            parts = _dotted(node)
            if not (parts and parts[0] in self.modules):
                self._record(f"ndarray.{node.attr}", "attribute")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult):
            self._record("operator.@", "operator")
        self.generic_visit(node)


def source_files(root: pathlib.Path) -> list[pathlib.Path]:
    """The ``.py`` files under ``root``, without tests and vendored code."""
    files = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).parts
        if SKIPPED_DIRS.intersection(relative[:-1]):
            continue
        if path.name.startswith("test_") or path.name == "conftest.py":
            continue
        files.append(path)
    return files


def count_tree(root: pathlib.Path) -> tuple[collections.Counter, int, int]:
    """Counts over one codebase: (counts by (name, kind), files read, files unparsable)."""
    total: collections.Counter = collections.Counter()
    read = failed = 0
    for path in source_files(root):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:  # Python 2 sources: left out, and counted as such
            failed += 1
            continue
        counter = _Counter()
        # Imports first (they may come after a use inside functions), then the calls.
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                counter.visit_Import(node)
            elif isinstance(node, ast.ImportFrom):
                counter.visit_ImportFrom(node)
        names = [*counter.modules.values(), *counter.imported.values()]
        if any(name.split(".")[0] == "numpy" for name in names):
            counter.visit(tree)
            total.update(counter.counts)
        read += 1
    return total, read, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", help="label=path of each codebase")
    parser.add_argument("--csv", type=pathlib.Path, help="write name,kind,<labels>,total here")
    parser.add_argument("--top", type=int, default=60, help="how many names to print")
    args = parser.parse_args(argv)
    labels, per_tree = [], []
    for spec in args.trees:
        label, _, path = spec.partition("=")
        counts, read, failed = count_tree(pathlib.Path(path))
        labels.append(label)
        per_tree.append(counts)
        print(f"{label}: {read} files read, {failed} not parsable (Python 2), "
              f"{sum(counts.values())} calls counted", file=sys.stderr)
    keys = set().union(*per_tree)
    sizes = [max(1, sum(counts.values())) for counts in per_tree]
    rows = []
    for name, kind in keys:
        counts = [c[(name, kind)] for c in per_tree]
        share = sum(n / size for n, size in zip(counts, sizes, strict=True)) / len(sizes)
        rows.append((name, kind, counts, 1000 * share))
    # Ranked by the mean share (per mille) over codebases, so that one large codebase (scipy's
    # internals) does not decide the order alone.
    rows.sort(key=lambda row: (-row[3], row[0]))
    for name, kind, counts, share in rows[:args.top]:
        print(f"{share:7.2f}  {sum(counts):6d}  {name:32s} {kind}")
    if args.csv:
        with args.csv.open("w", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["name", "kind", *labels, "total", "share_per_mille"])
            for name, kind, counts, share in rows:
                writer.writerow([name, kind, *counts, sum(counts), f"{share:.3f}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
