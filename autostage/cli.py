"""The ``autostage`` command: show what the compiler makes of a function in a file.

``autostage FILE.py:FUNC`` (or ``Class.method``, ``outer.inner``) prints the converted source of
the function. The file is run as a module (like an import, without ``__main__`` blocks) so that
conversion sees its globals; ``--analysis`` and ``--cfg`` only parse it and print the function's
static-analysis results or its control-flow graph. Bad paths, missing functions, syntax errors
and errors while running the file print one line and exit with status 2.
``autostage --precompile`` compiles the code programs share into the disk cache.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import runpy
import sys
import time
from collections.abc import Sequence

import gast

import autostage
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
        "target", metavar="FILE.py:FUNCTION", nargs="?",
        help="the function to show: a file path, a colon, and a function name; use "
             "Class.method for a method and outer.inner for a nested function")
    parser.add_argument(
        "--precompile", action="store_true",
        help="instead of showing a function, compile the code programs share (products, "
             "vector math, checks, sorts, list operations) into the disk cache, so that a "
             "program's first compile is only its own: once per machine, ~35 s")
    show = parser.add_mutually_exclusive_group()
    show.add_argument(
        "--analysis", action="store_true",
        help="instead of converting, print the function with, for each statement, the symbols "
             "defined on entry and the symbols live before -> after it")
    show.add_argument(
        "--ir", action="store_true",
        help="instead of the converted source, trace the function for the argument types of "
             "--args and print its IR")
    show.add_argument(
        "--backend-source", action="store_true",
        help="trace the function for the argument types of --args and print the Python source "
             "the backend of --target generates (Numba code for cpu, kernels for cuda)")
    show.add_argument(
        "--llvm", action="store_true",
        help="trace the function for the argument types of --args, compile it with the CPU "
             "backend and print Numba's LLVM IR of it")
    show.add_argument(
        "--ptx", metavar="CC",
        help="trace the function for the argument types of --args and print the PTX of its "
             "cuda kernels for compute capability CC (like 9.0); no GPU is needed")
    show.add_argument(
        "--cfg", action="store_true",
        help="instead of converting, print the control-flow graph of the function (and of "
             "functions nested in it)")
    parser.add_argument(
        "--target", dest="backend", default="cpu", choices=("cpu", "cuda"),
        help="with --backend-source: the backend whose source to print (default cpu)")
    parser.add_argument(
        "--args", default="", metavar="TYPES",
        help="with --ir, --backend-source, --llvm: the arguments, comma-separated: types like "
             "f64[?,3] or i64[] (staged), or Python literals like 3 or 'relu' (compile-time "
             "constants)")
    return parser


def _split_args(text: str) -> list[str]:
    """Splits ``f64[?,3],i64[],2`` at the commas outside brackets and quotes."""
    parts, depth, current, quote = [], 0, "", None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def parse_args(text: str) -> list:
    """The example arguments of ``--args``: TensorSpecs for types, values for literals."""
    from autostage.runtime.tensor_spec import TensorSpec

    values = []
    for part in _split_args(text):
        if part.endswith("]") and "[" in part and not part.startswith("["):
            try:
                values.append(TensorSpec.parse(part))
            except ValueError as e:
                raise UsageError(f"--args: {e}") from e
            continue
        try:
            values.append(ast.literal_eval(part))
        except (ValueError, SyntaxError):
            raise UsageError(f"--args: {part!r} is neither a type like f64[?] nor a Python "
                             "literal") from None
    return values


def _run_file(path: pathlib.Path) -> dict:
    sys.path.insert(0, str(path.resolve().parent))  # its own imports resolve as for a script
    try:
        return runpy.run_path(str(path), run_name=f"__autostage_cli__.{path.stem}")
    except SystemExit:
        return {}
    except Exception as e:  # the user's module failed: report it in one line
        raise UsageError(f"{path}: running the file failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)


def _traced(path: pathlib.Path, dotted: str, args_text: str, show: str, backend: str = "cpu",
            cc: str | None = None) -> str:
    """What ``show`` ("ir", "backend_source", "llvm", "ptx") prints for the traced function."""
    from autostage import api
    from autostage.runtime.function import StagedFunction

    args = parse_args(args_text)
    entity: object = _run_file(path)
    for part in dotted.split("."):
        entity = entity.get(part) if isinstance(entity, dict) else getattr(entity, part, None)
        if entity is None:
            raise UsageError(f"{path}: '{dotted}' is not reachable after running the file (a "
                             "nested function cannot be traced from the command line)")
    if isinstance(entity, StagedFunction):
        entity = entity.__wrapped__
    staged = StagedFunction(api.to_graph(entity), name=dotted.rpartition(".")[2])
    try:
        if show == "ir":
            return staged.ir(*args)
        return _backend_text(staged.get_concrete_function(*args).module, show, backend, cc)
    except Exception as e:
        raise UsageError(f"tracing {dotted}({args_text}) failed: {type(e).__name__}: "
                         f"{str(e).splitlines()[0] if str(e) else ''}") from e


def _backend_text(module: object, show: str, backend: str, cc: str | None) -> str:
    from autostage.runtime.targets import backend_text

    if show == "ptx":
        return backend_text(module, "cuda", "ptx", _compute_capability(cc))
    if show == "llvm":
        return backend_text(module, "cpu", "llvm")
    return backend_text(module, backend)


def _compute_capability(text: str) -> tuple[int, int]:
    major, dot, minor = text.partition(".")
    if not (major.isdigit() and minor.isdigit() and dot):
        raise UsageError(f"--ptx: expected a compute capability like 9.0, got '{text}'")
    return int(major), int(minor)


def _owning_class(module: gast.Module, dotted: str) -> str | None:
    """The innermost class around the function ``dotted`` names (private names mangle with it)."""
    scope, owner = module.body, None
    for part in dotted.split(".")[:-1]:
        node = [n for n in scope if isinstance(n, _DEFINITIONS) and n.name == part][-1]
        owner = node.name if isinstance(node, gast.ClassDef) else owner
        scope = node.body
    return owner


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


def _converted_source(path: pathlib.Path, source: str, node: gast.AST, dotted: str) -> str:
    from autostage import conversion  # late: conversion loads the converters and operators

    namespace = _run_file(path)
    owner = _owning_class(gast.parse(source), dotted)
    try:
        return conversion.convert_source(node, source, str(path), namespace, owner)
    except errors.ConversionError as e:
        raise UsageError(str(e).replace("\n", " |")) from e


def _precompile() -> int:
    start = time.perf_counter()
    count = autostage.precompile(lambda line: print(line, flush=True))
    print(f"precompiled {count} functions' shared code in {time.perf_counter() - start:.1f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.precompile:
            if args.target is not None:
                raise UsageError("--precompile takes no FILE.py:FUNCTION")
            return _precompile()
        if args.target is None:
            raise UsageError("expected FILE.py:FUNCTION (or --precompile)")
        path, source, node = load_target(args.target)
        show = next((s for s in ("ir", "backend_source", "llvm", "ptx") if getattr(args, s)),
                    None)
        if show:
            print(_traced(path, args.target.rpartition(":")[2], args.args, show, args.backend,
                          args.ptx))
            return 0
        if args.args:
            raise UsageError("--args is used with --ir, --backend-source, --llvm or --ptx only")
        if not (args.cfg or args.analysis):
            print(_converted_source(path, source, node, args.target.rpartition(":")[2]))
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
