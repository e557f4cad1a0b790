"""Types of a function's variables and expressions, found with Numba's typing context.

``direct`` compiles autostage's Numba functions (generated entries, shared helpers, the
runtime's own modules) without Numba's front end (bytecode analysis, its IR, its passes, its
constraint solver): their source is a small, regular subset of Python, so one walk over the
syntax tree types it. Every type and every signature comes from Numba's own typing context,
asked the question Numba's type inference would ask for the same expression
(``resolve_function_type(operator.add, (int64, float64))``, ``resolve_getattr``, ...), so the
code that runs is the code Numba would have compiled. A variable's type is the unification of
the types assigned to it, iterated until it no longer changes (loops carry types around), as
Numba's inference does; its assignments must all be of one kind (``same_kind``: Numba types
each version of a variable on its own), and so must the returns.

Control flow is Numba's: statements after one that never continues (a return, raise, break,
continue, or an ``if`` whose branches all end so) are dead and left untyped, as Numba's control
flow graph drops them; a test known without running it (a constant, a None-typed parameter
compared with None) takes its branch only, as Numba's branch pruning does.

Anything outside the subset raises ``Unsupported``: Numba's own pipeline compiles the function
instead. The subset: assignments (chained, to names, subscripts and tuples of them), augmented
assignments of names and subscripts; ``if``, ``while``, ``for`` over ``range`` (int64 bounds and
step) or any iterable Numba iterates; ``break``, ``continue``, ``raise`` of an exception with
constant arguments, ``return``; names, constants, attributes, subscripts and slices, calls
(positional, keyword and ``*args`` parameters, defaults), operators but ``**``, comparisons
(chains of numbers and booleans, ``in``, ``is``), ``not``, ``and``/``or`` (of booleans, or of
anything in a test), conditional expressions and tuples. Left out: ``with`` (objmode blocks),
``**``, lambdas, comprehensions, closures, ``try``, recursion.

A call of a small runtime function marked ``in_line`` is typed here from its source and lowered
in the caller's own function (``IN_LINE``), where the caller's error model and math flags are
the callee's.
"""

from __future__ import annotations

import ast
import builtins
import functools
import operator
import types as pytypes
from typing import NamedTuple

from numba.core import errors, types

BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
          ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
          ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
          ast.MatMult: operator.matmul}
INPLACE = {ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
           ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod,
           ast.Pow: operator.ipow, ast.BitAnd: operator.iand, ast.BitOr: operator.ior,
           ast.BitXor: operator.ixor, ast.LShift: operator.ilshift, ast.RShift: operator.irshift,
           ast.MatMult: operator.imatmul}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
         ast.Not: operator.not_}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
           ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Is: operator.is_, ast.IsNot: operator.is_not}
_MAX_ROUNDS = 8  # a variable's type settles in two or three rounds in generated code


def constant_int(node: ast.expr) -> int | None:
    """The value of an int constant (``3``, ``-2``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = constant_int(node.operand)
        return None if value is None else -value
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def same_kind(a: types.Type, b: types.Type) -> bool:
    """Whether values of types ``a`` and ``b`` are the same values to Python: the same type but
    for literal-ness, arrays of one dtype and rank (layouts may differ), tuples of such."""
    a, b = types.unliteral(a), types.unliteral(b)
    if a == b:
        return True
    if isinstance(a, types.Array) and isinstance(b, types.Array):
        return a.dtype == b.dtype and a.ndim == b.ndim
    if isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple):
        return len(a) == len(b) and all(same_kind(x, y) for x, y in zip(a, b, strict=True))
    return False


def _docstring(tree: ast.FunctionDef) -> bool:
    first = tree.body[0] if tree.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)


def function_tree(func) -> ast.FunctionDef:
    """The syntax tree of ``func``: a function at the top of its module's file, whose first
    line (its first decorator's) is the one its code object names (else the file changed since
    it was imported, or the function is not one of the module's own)."""
    code = func.__code__
    if code.co_freevars:
        raise Unsupported("a closure")
    for node in _module_tree(code.co_filename).body:
        if isinstance(node, ast.FunctionDef) and node.name == func.__name__:
            first = min([node.lineno, *[d.lineno for d in node.decorator_list]])
            if first == code.co_firstlineno and node.name == code.co_name:
                return node
    raise Unsupported(f"{func.__qualname__}: its source is not at the top of its file")


@functools.lru_cache(maxsize=64)
def _module_tree(filename: str) -> ast.Module:
    with open(filename, encoding="utf-8") as f:
        return ast.parse(f.read(), filename)


# -- calls lowered in line --------------------------------------------------------------------

_IN_LINE: set = set()  # the Python functions of the compiled functions marked ``in_line``
IN_LINE = "in line"  # ``calls[node][0]`` of a call lowered in line; ``[1]`` its ``InLine``


def in_line(dispatcher):
    """Marks a small compiled function of autostage's runtime (a vector-math kernel, a BLAS
    layout test) whose calls, in code ``direct`` compiles, are lowered in the caller's function:
    it then needs no code library of its own to optimise, compile to machine code and cache
    (10-30 ms each on a machine's first programs), and LLVM inlined its code anyway. Code that
    Numba's pipeline compiles calls the compiled function, as before."""
    _IN_LINE.add(dispatcher.py_func)
    return dispatcher


class InLine(NamedTuple):
    """A call lowered in line: the callee's Python function and its types for the call."""

    func: object
    typed: FunctionTypes


class CodeOptions(NamedTuple):
    """The options under which a function's operations lower (a call lowered in line is lowered
    with its caller's: the callee's must be the same)."""

    error_model: str
    fastmath: bool
    boundscheck: bool

    @classmethod
    def of_flags(cls, flags) -> CodeOptions:
        return cls(flags.error_model, bool(flags.fastmath), bool(flags.boundscheck))

    def of_callee(self, options: dict) -> CodeOptions:
        """A callee's, compiled with the jit ``options`` from this caller: its error model
        and math flags, where it sets none, are the caller's (Numba's flags inherit them)."""
        return CodeOptions(options.get("error_model", self.error_model),
                           bool(options.get("fastmath", self.fastmath)),
                           bool(options.get("boundscheck")))


@functools.lru_cache(maxsize=256)
def _in_line_types(func, args: tuple, typing_context, code: CodeOptions) -> FunctionTypes | None:
    """``func``'s types for ``args`` (None: outside the subset), shared by every caller."""
    try:
        return FunctionTypes(function_tree(func), func.__globals__, typing_context, args,
                             frozenset({func}), code)
    except Unsupported:
        return None


class Unsupported(errors.TypingError):  # noqa: N818 - a verdict, not a failure of the program
    """A construct the direct compiler does not handle: Numba compiles the function instead (a
    ``TypingError``: to Numba, a call it could not type)."""


class Global:
    """A name or attribute chain that reads a global at compile time (as Numba freezes it)."""

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value


class FunctionTypes:
    """The types of one function: ``variables`` (name -> type), ``of`` (expression node ->
    type), ``calls`` (node -> (function type, signature)), ``globals`` (node -> Global)."""

    def __init__(self, tree: ast.FunctionDef, namespace: dict, typing_context,
                 argument_types: tuple, compiling: frozenset = frozenset(),
                 code: CodeOptions | None = None):
        self.tree, self.namespace, self.context = tree, namespace, typing_context
        self.compiling = compiling  # functions being compiled directly: calls of them refused
        self.code = code  # how the function's operations lower (None: no call lowered in line)
        arguments = tree.args
        names = [a.arg for a in arguments.args]
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs \
                or arguments.posonlyargs or len(names) != len(argument_types):
            raise Unsupported("parameters other than plain positional ones")
        self.parameters = dict(zip(names, argument_types, strict=True))
        # A parameter left out of a call (Numba: ``Omitted(default)``) is its default, typed as
        # Numba's lowering types it.
        self.omitted = {name: ty.value for name, ty in self.parameters.items()
                        if isinstance(ty, types.Omitted)}
        self.body = tree.body[1:] if _docstring(tree) else tree.body
        written = [n for n in ast.walk(tree)
                   if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
        self.written = {n.id for n in written}  # (stored or deleted: lowering asks too)
        self.locals = set(names) | {n.id for n in written if isinstance(n.ctx, ast.Store)}
        self.variables: dict[str, types.Type] = {
            name: typing_context.resolve_value_type_prefer_literal(self.omitted[name])
            if name in self.omitted else ty for name, ty in self.parameters.items()}
        assigned = self.locals - set(names)
        self._fixed = {name for name in names if name not in assigned}  # (never reassigned)
        self._ending: dict[ast.stmt, bool] = {}
        self.falls_through = not self.terminates(self.body)
        self._answers: dict[tuple, object] = {}
        for _ in range(_MAX_ROUNDS):
            before = dict(self.variables)
            self._reset()
            self._block(self.body)
            if self.variables == before:
                break
        else:
            raise Unsupported("variable types that do not settle")
        returned = self.returns + ([types.none] if self.falls_through else [])
        if not returned:  # (every path raises: Numba's return type is None)
            returned = [types.none]
        for ty in returned[1:]:
            if not same_kind(returned[0], ty):
                raise Unsupported(f"returns of types {returned[0]} and {ty}")
        self.return_type = typing_context.unify_types(*returned)
        if self.return_type is None or not self.return_type.is_precise() \
                or isinstance(self.return_type, types.Optional):  # (Numba returns those its way)
            raise Unsupported(f"return type of {returned}")

    def _ask(self, question: str, *args: object) -> object:
        """The typing context's answer to ``question(*args)``, asked once per function (each
        round of the fixed point asks again the questions of the round before)."""
        key = (question, *args)
        try:
            return self._answers[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable constant index: asked each time
            return self._answer(question, args)
        answer = self._answers[key] = self._answer(question, args)
        return answer

    def _answer(self, question: str, args: tuple) -> object:
        if question == "resolve_function_type":
            fnty, positional, keywords = args
            return self.context.resolve_function_type(fnty, positional, dict(keywords))
        return getattr(self.context, question)(*args)

    def _reset(self) -> None:
        self.of: dict[ast.AST, types.Type] = {}
        self.calls: dict[ast.AST, tuple] = {}
        self.globals: dict[ast.AST, Global] = {}
        # subscript -> its constant index; raise -> (exception class, constant arguments)
        self.static: dict[ast.AST, object] = {}
        self.returns: list[types.Type] = []

    # -- control flow -------------------------------------------------------------------------

    def static_truth(self, test: ast.expr) -> bool | None:
        """The truth of a condition known without running it, else None: constants, and a
        parameter typed None compared with None (``x is None`` where a call passed None or
        left a None default out: as Numba prunes such branches, the other one is never typed
        or emitted). Only tests without side effects."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            truth = self.static_truth(test.operand)
            return None if truth is None else not truth
        if isinstance(test, ast.BoolOp):
            truths = [self.static_truth(value) for value in test.values]
            if None in truths:
                return None
            return all(truths) if isinstance(test.op, ast.And) else any(truths)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 \
                and isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            sides = (test.left, test.comparators[0])
            if all(self._none(side) for side in sides):
                return isinstance(test.ops[0], (ast.Is, ast.Eq))
        return None

    def _none(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.Name) and node.id in self._fixed:
            ty = self.parameters[node.id]
            return isinstance(ty, types.NoneType) or (
                isinstance(ty, types.Omitted) and ty.value is None)
        return False

    def live(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        """``statements`` up to the first one control never leaves by its end (the rest is
        dead code: Numba's control flow graph drops it untyped)."""
        for i, node in enumerate(statements):
            if self._ends(node):
                return statements[:i + 1]
        return statements

    def taken(self, node: ast.If | ast.IfExp) -> list | ast.expr | None:
        """The branch a statically known test takes (None: not known)."""
        truth = self.static_truth(node.test)
        if truth is None:
            return None
        return node.body if truth else node.orelse

    def terminates(self, statements: list[ast.stmt]) -> bool:
        """Whether control never leaves the end of ``statements`` (each path returns, raises,
        leaves its loop or loops forever), as Python's compiler and Numba's control flow graph
        find it."""
        return any(self._ends(node) for node in statements)

    def _ends(self, node: ast.stmt) -> bool:
        known = self._ending.get(node)
        if known is None:
            known = self._ending[node] = self._find_end(node)
        return known

    def _find_end(self, node: ast.stmt) -> bool:
        if isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if isinstance(node, ast.If):
            taken = self.taken(node)
            if taken is not None:
                return self.terminates(taken)
            return self.terminates(node.body) and self.terminates(node.orelse)
        if isinstance(node, ast.While):
            return bool(self.static_truth(node.test)) and not self._breaks(node.body)
        return False

    def _breaks(self, statements: list[ast.stmt]) -> bool:
        """Whether a ``break`` in ``statements`` (not in a loop nested there) leaves their loop."""
        for node in self.live(statements):
            if isinstance(node, ast.Break):
                return True
            if isinstance(node, ast.If):
                taken = self.taken(node)
                branches = [node.body, node.orelse] if taken is None else [taken]
                if any(self._breaks(branch) for branch in branches):
                    return True
        return False

    # -- statements ---------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in self.live(statements):
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            self._assign(node.targets, node.value)
        elif isinstance(node, ast.AugAssign):
            self._update(node)
        elif isinstance(node, ast.Expr):
            self._expr(node.value)
        elif isinstance(node, ast.If):
            taken = self.taken(node)
            if taken is not None:
                self._block(taken)
                return
            self._condition(node.test)
            self._block(node.body)
            self._block(node.orelse)
        elif isinstance(node, ast.While):
            if node.orelse:
                raise Unsupported("while ... else")
            truth = self.static_truth(node.test)
            if truth is None:
                self._condition(node.test)
            if truth is not False:
                self._block(node.body)
        elif isinstance(node, ast.For):
            self._for(node)
        elif isinstance(node, ast.Raise):
            self._raise(node)
        elif isinstance(node, ast.Return):
            self.returns.append(types.none if node.value is None else self._expr(node.value))
        elif not isinstance(node, (ast.Break, ast.Continue, ast.Pass)):
            raise Unsupported(f"statement {type(node).__name__}")

    def _assign(self, targets: list[ast.expr], value: ast.expr) -> None:
        """``a = b = value``: the value once, then each target from the left."""
        target = targets[0]
        if len(targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(value.elts) == len(target.elts):
            items = [self._expr(item) for item in value.elts]  # (all read, then stored)
            for item_target, item_type in zip(target.elts, items, strict=True):
                self._store(item_target, item_type)
            return
        ty = self._expr(value)
        for target in targets:
            self._store(target, ty)

    def _store(self, target: ast.expr, ty: types.Type) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, ty)
        elif isinstance(target, ast.Subscript):
            self._setitem(target, ty)
        elif isinstance(target, ast.Tuple):
            if not isinstance(ty, types.BaseTuple) or len(ty) != len(target.elts):
                raise Unsupported("unpacking a non-tuple")
            for item_target, item_type in zip(target.elts, ty, strict=True):
                self._store(item_target, item_type)
        else:
            raise Unsupported(f"assignment to {type(target).__name__}")

    def _update(self, node: ast.AugAssign) -> None:
        """``x += v`` (``operator.iadd``, as Numba's inference types it: in place for arrays, a
        new value for numbers) and ``x[i] += v`` (the item read, updated, written back; the
        container and index evaluated once)."""
        target = node.target
        if isinstance(target, ast.Name):
            current = self._variable(target.id)
        elif isinstance(target, ast.Subscript):
            current = self._expr(target)
        else:
            raise Unsupported(f"augmented assignment of {type(target).__name__}")
        value = self._expr(node.value)
        fn = INPLACE[type(node.op)] if current.mutable else BINARY[type(node.op)]
        result = self._call_type(node, fn, (current, value))
        if isinstance(target, ast.Name):
            self._bind(target.id, result)
        else:
            self._setitem(target, result, evaluated=True)

    def _setitem(self, target: ast.Subscript, value_type: types.Type,
                 evaluated: bool = False) -> None:
        """Types ``target = <value_type>`` (``evaluated``: its container and index were typed
        by the read of an update; the signature is recorded under ``("set", target)``)."""
        if evaluated:
            container, index = self.of[target.value], self.of[target.slice]
        else:
            container, index = self._expr(target.value), self._index(target)
        key = ("set", target)
        if target in self.static:
            signature = self._ask("resolve_static_setitem", container,
                                  self.static[target], value_type)
            if signature is not None:
                self.calls[key] = ("static_setitem", signature)
                return
        signature = self._ask("resolve_setitem", container, index, value_type)
        if signature is None:
            raise Unsupported("setitem")
        self.calls[key] = ("setitem", signature)

    def _for(self, node: ast.For) -> None:
        if node.orelse or not isinstance(node.target, ast.Name):
            raise Unsupported("for ... else, or a target other than a name")
        if self._range_call(node.iter):
            call = node.iter
            bounds = [self._expr(a) for a in call.args]
            if not all(isinstance(t, types.IntegerLiteral) or t == types.int64 for t in bounds):
                raise Unsupported("range of non-int64 bounds")
            self._bind(node.target.id, types.int64)
        else:  # Numba's iteration protocol: getiter, then iternext until exhausted
            iterable = self._expr(node.iter)
            getiter = self._ask("resolve_function_type", "getiter", (iterable,), ())
            if getiter is None:
                raise Unsupported(f"iteration over {iterable}")
            iternext = self._ask("resolve_function_type", "iternext", (getiter.return_type,), ())
            if iternext is None or not isinstance(iternext.return_type, types.Pair):
                raise Unsupported(f"iteration over {iterable}")
            self.calls[node] = (getiter, iternext)
            self._bind(node.target.id, iternext.return_type.first_type)
        self._block(node.body)

    def _range_call(self, call: ast.expr) -> bool:
        """Whether ``call`` is ``range(...)`` of one to three positional arguments."""
        return isinstance(call, ast.Call) and not call.keywords \
            and isinstance(call.func, ast.Name) and call.func.id not in self.locals \
            and self._global_value(call.func.id) is range and 1 <= len(call.args) <= 3 \
            and not any(isinstance(a, ast.Starred) for a in call.args)

    def _raise(self, node: ast.Raise) -> None:
        if node.cause is not None or node.exc is None:
            raise Unsupported("raise from / bare raise")
        exc = node.exc
        args = ()
        if isinstance(exc, ast.Call):
            # (Numba's raise with run-time values leaks ~0.8 KB per raise: left to Numba)
            if exc.keywords or not all(isinstance(a, ast.Constant) for a in exc.args):
                raise Unsupported("raise with non-constant arguments")
            args = tuple(a.value for a in exc.args)
            exc = exc.func
        cls = self._constant_global(exc)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise Unsupported("raise of a non-exception")
        self.static[node] = (cls, args)

    def _condition(self, test: ast.expr) -> None:
        """Types a test: the truth of each operand of ``and``/``or`` in turn (their values are
        not needed: ``if a.size and b.size``), else ``bool(test)``."""
        if isinstance(test, ast.BoolOp):
            for value in test.values:
                self._condition(value)
            return
        ty = self._expr(test)
        if not isinstance(types.unliteral(ty), types.Boolean):
            self._call_type(("truth", test), bool, (ty,))

    # -- expressions --------------------------------------------------------------------------

    def _expr(self, node: ast.expr) -> types.Type:
        ty = self._expr_type(node)
        self.of[node] = ty
        return ty

    def _expr_type(self, node: ast.expr) -> types.Type:
        if isinstance(node, ast.Constant):
            return self._constant_type(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self._variable(node.id)
            return self._global(node, self._global_value(node.id))
        if isinstance(node, ast.Attribute):
            found = self._maybe_global(node)
            if found is not None:
                return self._global(node, found.value)
            ty = self._expr(node.value)
            attr = self._ask("resolve_getattr", ty, node.attr)
            if attr is None:
                raise Unsupported(f"attribute {node.attr} of {ty}")
            return attr
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                raise Unsupported("** (Numba types a constant exponent statically)")
            operands = (self._expr(node.left), self._expr(node.right))
            return self._call_type(node, BINARY[type(node.op)], operands)
        if isinstance(node, ast.UnaryOp):
            return self._call_type(node, UNARY[type(node.op)], (self._expr(node.operand),))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                if not isinstance(types.unliteral(self._expr(value)), types.Boolean):
                    raise Unsupported("and/or of non-booleans")
            return types.boolean
        if isinstance(node, ast.IfExp):
            taken = self.taken(node)
            if taken is not None:
                return self._expr(taken)
            self._condition(node.test)
            unified = self.context.unify_pairs(self._expr(node.body), self._expr(node.orelse))
            if unified is None:
                raise Unsupported("conditional expression of types that do not unify")
            return unified
        if isinstance(node, ast.Tuple):
            return types.BaseTuple.from_types([self._expr(item) for item in node.elts])
        if isinstance(node, ast.Slice):  # slice(lower, upper[, step]), None where left out
            parts = [node.lower, node.upper] + ([node.step] if node.step is not None else [])
            bounds = tuple(types.none if p is None else self._expr(p) for p in parts)
            return self._call_type(node, slice, bounds)
        raise Unsupported(f"expression {type(node).__name__}")

    def _compare(self, node: ast.Compare) -> types.Type:
        """``a < b``, ``x in y`` (``contains(y, x)``), ``x not in y`` (``not contains``), and
        chains ``a < b < c`` (as ``a < b and b < c``, ``b`` read once) of boolean results."""
        operands = [self._expr(node.left)] + [self._expr(c) for c in node.comparators]
        results = []
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            if isinstance(op, (ast.In, ast.NotIn)):
                result = self._call_type((node, i), operator.contains, (right, left))
                if isinstance(op, ast.NotIn):
                    result = self._call_type((node, i, "not"), operator.not_, (result,))
            elif type(op) in COMPARE:
                result = self._call_type((node, i), COMPARE[type(op)], (left, right))
            else:
                raise Unsupported(f"comparison {type(op).__name__}")
            results.append(result)
        if len(results) > 1 and not all(
                isinstance(types.unliteral(t), types.Number | types.Boolean)
                for t in (*operands, *results)):
            raise Unsupported("a chained comparison of other than numbers and booleans")
        return results[0] if len(results) == 1 else types.boolean

    def _constant_type(self, value: object) -> types.Type:
        if value is Ellipsis:
            return self.context.resolve_value_type(value)
        if value is None or isinstance(value, (bool, int, float, str)):
            literal = types.maybe_literal(value)
            return literal if literal is not None else self.context.resolve_value_type(value)
        raise Unsupported(f"constant {value!r}")

    def _subscript(self, node: ast.Subscript) -> types.Type:
        container = self._expr(node.value)
        index = self._index(node)
        if node in self.static:
            signature = self._ask("resolve_static_getitem", container, self.static[node])
            if signature is not None:
                self.calls[node] = ("static_getitem", signature)
                return signature.return_type
        return self._call_type(node, operator.getitem, (container, index))

    def _index(self, node: ast.Subscript) -> types.Type:
        """The index's type; a constant index (an int, a slice of constant ints) is also
        recorded in ``static``: Numba asks ``static_getitem`` first for those."""
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, int):
            self.static[node] = index.value
            return self._expr(index)
        if isinstance(index, ast.Slice):
            parts = [index.lower, index.upper, index.step]
            if all(p is None or (isinstance(p, ast.Constant) and isinstance(p.value, int))
                   for p in parts):
                self.static[node] = slice(*[None if p is None else p.value for p in parts])
        return self._expr(index)

    def _call(self, node: ast.Call) -> types.Type:
        if any(k.arg is None for k in node.keywords) or any(
                isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported("*args or **kwargs in a call")
        fnty = self._expr(node.func)
        found = self.globals.get(node.func)
        if found is not None and getattr(found.value, "direct_refuses", False):
            raise Unsupported(f"a call of {found.value}")
        if isinstance(fnty, types.Dispatcher) and fnty.dispatcher.py_func in self.compiling:
            raise Unsupported("recursion (Numba's inference types it)")
        args = tuple(self._expr(a) for a in node.args)
        kws = {k.arg: self._expr(k.value) for k in node.keywords}
        if isinstance(fnty, types.Dispatcher) and not kws:
            callee = self._in_line(fnty.dispatcher, args)
            if callee is not None:
                self.calls[node] = (IN_LINE, callee)
                return callee.typed.return_type
        signature = self._ask("resolve_function_type", fnty, args,
                              tuple(sorted(kws.items())))
        if signature is None:
            raise Unsupported(f"call of {fnty} with {args}")
        self.calls[node] = (fnty, signature)
        return signature.return_type

    def _in_line(self, dispatcher, args: tuple) -> InLine | None:
        """The call of ``dispatcher`` lowered in line, where it is marked so and lowers as this
        function does (else None: a call of the compiled function)."""
        func = dispatcher.py_func
        if func not in _IN_LINE or func in self.compiling or self.code is None \
                or self.code.of_callee(dispatcher.targetoptions) != self.code:
            return None
        typed = _in_line_types(func, tuple(types.unliteral(a) for a in args), self.context,
                               self.code)
        return None if typed is None else InLine(func, typed)

    def _call_type(self, key: object, fn: object, args: tuple) -> types.Type:
        """Types ``fn(*args)`` (an operator, ``bool``...) as Numba's inference does and records
        (function type, signature) under ``key``."""
        fnty = self.context.resolve_value_type(fn)
        signature = self._ask("resolve_function_type", fnty, args, ())
        if signature is None:
            raise Unsupported(f"{getattr(fn, '__name__', fn)} of {args}")
        self.calls[key] = (fnty, signature)
        return signature.return_type

    def _bind(self, name: str, ty: types.Type) -> None:
        """Records an assignment of ``ty`` to ``name``. All of a variable's assignments must be
        of one kind (``same_kind``): Numba types each assignment's version of the variable on
        its own and unifies only where versions meet, so ``x = 1; y = x // 2; x = 0.5`` is
        integer division for Numba (and Python), and would not be with one unified type."""
        old = self.variables.get(name)
        if old is not None and not same_kind(old, ty):
            raise Unsupported(f"variable {name} of types {old} and {ty}")
        unified = ty if old is None else self.context.unify_pairs(old, ty)
        if unified is None:
            raise Unsupported(f"variable {name} of types {old} and {ty}")
        self.variables[name] = unified

    def _variable(self, name: str) -> types.Type:
        if name not in self.variables:
            raise Unsupported(f"{name} read before it is assigned")
        return self.variables[name]

    # -- globals ------------------------------------------------------------------------------

    def _global_value(self, name: str) -> object:
        if name in self.namespace:
            return self.namespace[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise Unsupported(f"unknown name {name}")

    def _maybe_global(self, node: ast.expr) -> Global | None:
        """The global a name or attribute chain reads, if it reads one (not a variable)."""
        if isinstance(node, ast.Name) and node.id not in self.locals:
            return Global(self._global_value(node.id))
        if isinstance(node, ast.Attribute):
            base = self._maybe_global(node.value)
            if base is not None and isinstance(base.value, pytypes.ModuleType):
                if not hasattr(base.value, node.attr):
                    raise Unsupported(f"global attribute {node.attr}")
                return Global(getattr(base.value, node.attr))
        return None

    def _constant_global(self, node: ast.expr) -> object:
        found = self._maybe_global(node)
        if found is None:
            raise Unsupported("a global expected")
        return found.value

    def _global(self, node: ast.expr, value: object) -> types.Type:
        try:
            ty = self.context.resolve_value_type(value)
        except ValueError:
            raise Unsupported(f"global {value!r}") from None
        if isinstance(ty, types.Array):
            ty = ty.copy(readonly=True)  # Numba's global arrays are read-only constants
        self.globals[node] = Global(value)
        return ty
