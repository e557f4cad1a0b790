"""The ``autostage`` command: show what the compiler makes of a function in a file.

``autostage FILE.py:FUNC`` (or ``Class.method``, ``outer.inner``) prints the converted source of
the function. The file is run as a module (like an import, without ``__main__`` blocks) so that
conversion sees its globals; ``--analysis`` and ``--cfg`` only parse it and print the function's
static-analysis results or its control-flow graph. Bad paths, missing functions, syntax errors
and errors while running the file print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import pathlib
import runpy
import sys
from collections.abc import Sequence

import gast

from autostage.pyct import cfg, errors
from autostage.pyct.static_analysis import analyze
from autostage.pyct.static_analysis.annotated_listing import listing

_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


class UsageError(Exception):
    """A problem with the command line or the target, reported as one line."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autostage",
        description="Print the converted source of a Python function (the file is run as a "
                    "module, without its __main__ block, so that conversion sees its globals), "
                    "or its analysis results or control-flow graph (the file is only parsed).")
    parser.add_argument(
        "target", metavar="FILE.py:FUNCTION",
        help="the function to show: a file path, a colon, and a function name; use "
             "Class.method for a method and outer.inner for a nested function")
    show = parser.add_mutually_exclusive_group()
    show.add_argument(
        "--analysis", action="store_true",
        help="instead of converting, print the function with, for each statement, the symbols "
             "defined on entry and the symbols live before -> after it")
    show.add_argument(
        "--cfg", action="store_true",
        help="instead of converting, print the control-flow graph of the function (and of "
             "functions nested in it)")
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


def load_target(target: str) -> tuple[pathlib.Path, str, gast.AST]:
    """Parses ``FILE.py:FUNC`` and returns the file, its text and the function's AST."""
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
        return path, source, _find(module, dotted)
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from e


def _converted_source(path: pathlib.Path, source: str, node: gast.AST) -> str:
    from autostage import conversion  # late: conversion loads the converters and operators

    sys.path.insert(0, str(path.resolve().parent))  # its own imports resolve as for a script
    try:
        namespace = runpy.run_path(str(path), run_name=f"__autostage_cli__.{path.stem}")
    except SystemExit:
        namespace = {}
    except Exception as e:  # the user's module failed: report it in one line
        raise UsageError(f"{path}: running the file failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)
    try:
        return conversion.convert_source(node, source, str(path), namespace)
    except errors.ConversionError as e:
        raise UsageError(str(e).replace("\n", " |")) from e


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        path, source, node = load_target(args.target)
        if not (args.cfg or args.analysis):
            print(_converted_source(path, source, node))
            return 0
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
