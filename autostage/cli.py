"""The ``autostage`` command: show what the compiler makes of a function in a file.

``autostage FILE.py:FUNC`` (or ``Class.method``, ``outer.inner``) reads the file without running it
and prints the function with its static-analysis results; ``--cfg`` prints its control-flow graph.
Bad paths, missing functions and syntax errors print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

import gast

from autostage.pyct import cfg
from autostage.pyct.static_analysis import analyze
from autostage.pyct.static_analysis.annotated_listing import listing

_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


class UsageError(Exception):
    """A problem with the command line or the target, reported as one line."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autostage",
        description="Show what autostage makes of a Python function. The file is parsed, "
                    "never executed.")
    parser.add_argument(
        "target", metavar="FILE.py:FUNCTION",
        help="the function to show: a file path, a colon, and a function name; use "
             "Class.method for a method and outer.inner for a nested function")
    show = parser.add_mutually_exclusive_group()
    show.add_argument(
        "--analysis", action="store_true",
        help="print the function with, for each statement, the symbols defined on entry and "
             "the symbols live before -> after it (the default)")
    show.add_argument(
        "--cfg", action="store_true",
        help="print the control-flow graph of the function (and of functions nested in it)")
    return parser


def _find(module: gast.Module, dotted: str) -> gast.AST:
    scope: list[gast.stmt] = module.body
    node = None
    for part in dotted.split("."):
        matches = [n for n in scope if isinstance(n, _DEFINITIONS) and n.name == part]
        if not matches:
            where = f"'{node.name}'" if node is not None else "the file"
            raise UsageError(f"{where} has no function or class named '{part}'")
        node = matches[-1]  # like Python, the last definition of a name wins
        scope = node.body
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise UsageError(f"'{dotted}' is a class, not a function; name a method as Class.method")
    return node


def load_target(target: str) -> tuple[pathlib.Path, gast.AST]:
    """Parses ``FILE.py:FUNC`` and returns the file and the function's AST."""
    path_text, sep, dotted = target.rpartition(":")
    if not sep or not path_text or not dotted:
        raise UsageError(f"expected FILE.py:FUNCTION, got '{target}'")
    path = pathlib.Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    try:
        source = path.read_text()
        module = gast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: syntax error: {e.msg}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {e}") from e
    try:
        return path, _find(module, dotted)
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from e


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        path, node = load_target(args.target)
    except UsageError as e:
        print(f"autostage: error: {e}", file=sys.stderr)
        return 2
    if args.cfg:
        graphs = cfg.build_all(node)
        for fn, graph in graphs.items():
            if isinstance(fn, (gast.FunctionDef, gast.AsyncFunctionDef)):
                print(f"# {path}:{fn.lineno} {fn.name}")
                print(graph)
                print()
        return 0
    analyze(node)
    print(listing(node))
    return 0


if __name__ == "__main__":
    sys.exit(main())
