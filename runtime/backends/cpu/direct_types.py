"""Types of a generated function's variables and expressions, found with Numba's typing context.

``direct`` compiles the functions autostage generates without Numba's front end (bytecode
analysis, its IR, its passes, its constraint solver): their source is a small, regular subset of
Python, so one walk over the syntax tree types it. Every type and every signature comes from
Numba's own typing context, asked the question Numba's type inference would ask for the same
expression (``resolve_function_type(operator.add, (int64, float64))``, ``resolve_getattr``, ...),
so the code that runs is the code Numba would have compiled. A variable's type is the
unification of the types assigned to it, iterated until it no longer changes (loops carry types
around), as Numba's inference does.

Anything outside the subset raises ``Unsupported``: the function is then compiled by Numba, as
before. The subset: assignments to names, tuples of names and subscripts; ``+=``-style updates
of names; ``if``, ``while``, ``for ... in range(...)`` (int64 bounds, a constant step),
``break``, ``continue``, ``raise``, a final ``return``; names, constants, attributes, subscripts
and slices, calls (positional and keyword arguments), operators but ``**``, comparisons
(chains of numbers, ``in``, ``is``), ``not``/``and``/``or`` of booleans, conditional
expressions and tuples.
"""

from __future__ import annotations

import ast
import builtins
import operator
import types as pytypes

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
                 argument_types: tuple):
        self.tree, self.namespace, self.context = tree, namespace, typing_context
        names = [a.arg for a in tree.args.args]
        if tree.args.vararg or tree.args.kwarg or tree.args.kwonlyargs or tree.args.defaults \
                or len(names) != len(argument_types):
            raise Unsupported("parameters other than plain positional ones")
        self.parameters = dict(zip(names, argument_types, strict=True))
        self.locals = set(names) | {n.id for n in ast.walk(tree)
                                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.variables: dict[str, types.Type] = dict(self.parameters)
        self._answers: dict[tuple, object] = {}
        for _ in range(_MAX_ROUNDS):
            before = dict(self.variables)
            self._reset()
            self._block(tree.body)
            if self.variables == before:
                break
        else:
            raise Unsupported("variable types that do not settle")
        self.return_type = self.of[self._final_return().value]

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

    def _final_return(self) -> ast.Return:
        last = self.tree.body[-1] if self.tree.body else None
        if not isinstance(last, ast.Return) or last.value is None:
            raise Unsupported("no final return of a value")
        return last

    # -- statements ---------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise Unsupported("chained assignment")
            self._assign(node.targets[0], node.value)
        elif isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name):
                raise Unsupported("augmented assignment of a non-name")
            target = self._variable(node.target.id)
            value = self._expr(node.value)
            fn = INPLACE[type(node.op)] if target.mutable else BINARY[type(node.op)]
            self._bind(node.target.id, self._call_type(node, fn, (target, value)))
        elif isinstance(node, ast.Expr):
            self._expr(node.value)
        elif isinstance(node, ast.If):
            self._condition(node.test)
            self._block(node.body)
            self._block(node.orelse)
        elif isinstance(node, ast.While):
            if node.orelse:
                raise Unsupported("while ... else")
            self._condition(node.test)
            self._block(node.body)
        elif isinstance(node, ast.For):
            self._for(node)
        elif isinstance(node, ast.Raise):
            self._raise(node)
        elif isinstance(node, ast.Return):
            if node is not self._final_return():
                raise Unsupported("a return before the end")
            self._expr(node.value)
        elif not isinstance(node, (ast.Break, ast.Continue, ast.Pass)):
            raise Unsupported(f"statement {type(node).__name__}")

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, self._expr(value))
        elif isinstance(target, ast.Tuple):
            if not all(isinstance(t, ast.Name) for t in target.elts):
                raise Unsupported("unpacking into a non-name")
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                for item in value.elts:  # (all read, then bound)
                    self._expr(item)
                for item_target, item in zip(target.elts, value.elts, strict=True):
                    self._bind(item_target.id, self.of[item])
                return
            ty = self._expr(value)
            if not isinstance(ty, types.BaseTuple) or len(ty) != len(target.elts):
                raise Unsupported("unpacking a non-tuple")
            for item_target, item_type in zip(target.elts, ty, strict=True):
                self._bind(item_target.id, item_type)
        elif isinstance(target, ast.Subscript):
            value_type = self._expr(value)
            container = self._expr(target.value)
            index = self._index(target)
            if target in self.static:
                signature = self._ask("resolve_static_setitem", container,
                                      self.static[target], value_type)
                if signature is not None:
                    self.calls[target] = ("static_setitem", signature)
                    return
            signature = self._ask("resolve_setitem", container, index, value_type)
            if signature is None:
                raise Unsupported("setitem")
            self.calls[target] = ("setitem", signature)
        else:
            raise Unsupported(f"assignment to {type(target).__name__}")

    def _for(self, node: ast.For) -> None:
        call = node.iter
        if node.orelse or not isinstance(node.target, ast.Name) \
                or not isinstance(call, ast.Call) or call.keywords \
                or not isinstance(call.func, ast.Name) or call.func.id in self.locals \
                or self._global_value(call.func.id) is not range \
                or not 1 <= len(call.args) <= 3:
            raise Unsupported("a for loop other than over range(...)")
        bounds = [self._expr(a) for a in call.args]
        if not all(isinstance(t, types.IntegerLiteral) or t == types.int64 for t in bounds):
            raise Unsupported("range of non-int64 bounds")
        if len(call.args) == 3 and not constant_int(call.args[2]):
            raise Unsupported("range with a step that is not a non-zero constant")
        self._bind(node.target.id, types.int64)
        self._block(node.body)

    def _raise(self, node: ast.Raise) -> None:
        if node.cause is not None or node.exc is None:
            raise Unsupported("raise from / bare raise")
        exc = node.exc
        args = ()
        if isinstance(exc, ast.Call):
            if exc.keywords or not all(isinstance(a, ast.Constant) for a in exc.args):
                raise Unsupported("raise with non-constant arguments")
            args = tuple(a.value for a in exc.args)
            exc = exc.func
        cls = self._constant_global(exc)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise Unsupported("raise of a non-exception")
        self.static[node] = (cls, args)

    def _condition(self, test: ast.expr) -> None:
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
        args = tuple(self._expr(a) for a in node.args)
        kws = {k.arg: self._expr(k.value) for k in node.keywords}
        signature = self._ask("resolve_function_type", fnty, args,
                              tuple(sorted(kws.items())))
        if signature is None:
            raise Unsupported(f"call of {fnty} with {args}")
        self.calls[node] = (fnty, signature)
        return signature.return_type

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
        old = self.variables.get(name)
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
            if base is not None and isinstance(base.value, (pytypes.ModuleType, type)):
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
