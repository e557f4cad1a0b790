"""Compiles a generated entry function without Numba's front end (issue 14, goal 5).

Numba spends most of a generated function's compile in Python before LLVM sees it: bytecode
analysis, its IR and ~25 passes over it, constraint-based type inference, and lowering one IR
instruction at a time (the GRU encoder's function: ~0.55 s of its 1.1 s). The functions
autostage generates are a small, regular subset of Python, so ``direct_types`` types one in a
walk of its syntax tree and ``direct_lowering`` emits it in a second walk, both asking Numba's
typing and target contexts for each operation, so the compiled code is Numba's own.

The generated module holds, beside the entry function ``f`` (compiled by Numba as before, the
fallback), ``f__direct``: a Numba function of one call, ``DIRECT_f(args)``, an intrinsic
(``body``) whose typing types ``f``'s body and whose code generation emits it in place. Numba
still compiles that one-line wrapper (its CPython wrapper, the call convention, its disk cache,
LLVM), so the result is cached and called exactly as before. ``compile`` picks ``f__direct``
unless ``AUTOSTAGE_DIRECT=0``; a function with a construct the subset leaves out
(``Unsupported``) is compiled by Numba from ``f``.
"""

from __future__ import annotations

import ast
import functools

from autostage.runtime import config
from autostage.runtime.backends.cpu.direct_lowering import Lowering
from autostage.runtime.backends.cpu.direct_types import FunctionTypes, Unsupported
from numba.core import typing
from numba.core.extending import intrinsic

SUFFIX = "__direct"
PREFIX = "DIRECT_"


def enabled() -> bool:
    """Whether entry functions compile through ``direct`` (``config.DIRECT``)."""
    return config.DIRECT.value()


def wrapper_lines(name: str, params: str, options: str = "ENTRY") -> list[str]:
    """The generated module's lines that define ``<name>__direct`` for entry ``name`` (compiled
    with the entry's own ``options``)."""
    return [f"{PREFIX}{name} = cpu_direct.body({name})", "", "",
            f"@numba.njit(**{options})",
            f"def {name}{SUFFIX}({params}):",
            f"    return {PREFIX}{name}({params})"]


def plausible(source: str) -> ast.FunctionDef | None:
    """The syntax tree of a function's source when it uses only constructs ``direct_types``
    handles, else None (a quick syntactic look, so that modules it cannot compile keep their
    source and cache)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # (blocks nested too deep for Python: ``limits`` reports them)
        return None
    allowed = (ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Assign, ast.AugAssign,
               ast.Expr, ast.If, ast.While, ast.For, ast.Break, ast.Continue, ast.Pass,
               ast.Raise, ast.Return, ast.Name, ast.Constant, ast.Attribute, ast.Subscript,
               ast.Slice, ast.Call, ast.keyword, ast.BinOp, ast.UnaryOp, ast.Compare,
               ast.BoolOp, ast.IfExp, ast.Tuple, ast.operator, ast.unaryop, ast.cmpop,
               ast.boolop, ast.expr_context)
    if all(isinstance(node, allowed) and not isinstance(node, ast.Pow)
           for node in ast.walk(tree)):
        return tree.body[0]
    return None


def body(dispatcher) -> object:
    """The intrinsic that types and emits ``dispatcher``'s function in place of a call."""
    function = dispatcher.py_func
    filename = function.__code__.co_filename
    typed_by_arguments: dict[tuple, FunctionTypes] = {}

    def typer(typing_context, *argument_types):
        typed = typed_by_arguments.get(argument_types)
        if typed is None:
            try:  # (the source is parsed only when compiled: not when loaded from the cache)
                tree = _function_tree(filename, function.__name__)
                typed = FunctionTypes(tree, function.__globals__, typing_context,
                                      argument_types)
            except Unsupported:
                raise
            except Exception as e:  # noqa: BLE001 - any typing failure: Numba's front end
                raise Unsupported(f"{type(e).__name__}: {e}") from None
            typed_by_arguments[argument_types] = typed

        def codegen(context, builder, signature, arguments):
            return Lowering(context, builder, typed, list(arguments), filename).finish()

        return typing.signature(typed.return_type, *argument_types), codegen

    # Numba folds a call's arguments by the intrinsic's own signature: name each parameter.
    params = ", ".join(function.__code__.co_varnames[:function.__code__.co_argcount])
    namespace = {"typer": typer}
    exec(f"def {PREFIX}{function.__name__}(typing_context, {params}):\n"  # noqa: S102
         f"    return typer(typing_context, {params})", namespace)
    return intrinsic(namespace[f"{PREFIX}{function.__name__}"])


@functools.lru_cache(maxsize=64)
def _module_tree(filename: str) -> ast.Module:
    with open(filename, encoding="utf-8") as f:
        return ast.parse(f.read(), filename)


def _function_tree(filename: str, name: str) -> ast.FunctionDef:
    for node in _module_tree(filename).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise Unsupported(f"{name} not found in {filename}")

