"""LLVM IR of a typed generated function, built with Numba's own implementations of each op.

The second half of ``direct`` (``direct_types`` the first): one walk over the syntax tree emits
the function's body into the function Numba is compiling, asking Numba's target context for the
implementation of each typed operation (``context.get_function(fnty, signature)``), its casts,
constants, attributes, raises and calls of other compiled functions, exactly as Numba's lowering
does. What is left out is Numba's machinery around them (its IR, per-variable bookkeeping).

Values carry an ``owned`` flag (Numba's convention: an implementation returns a new reference,
a variable read is borrowed): a variable owns its value (a borrowed one is incref'd when
stored, the old one decref'd), a temporary owned value is decref'd once used, and at the end
every variable is released and the returned value handed over owned. Numba's reference-count
pruning removes the pairs that cancel.
"""

from __future__ import annotations

import ast
import operator
from typing import NamedTuple

from autostage.runtime.backends.cpu.direct_types import FunctionTypes, Unsupported, constant_int
from numba.core import cgutils, ir, types, typing


class Value(NamedTuple):
    value: object  # an llvmlite value
    type: types.Type
    owned: bool


class Lowering:
    """Emits ``typed``'s body at ``builder``; ``finish()`` -> the returned value (owned)."""

    def __init__(self, context, builder, typed: FunctionTypes, arguments: list, filename: str):
        self.context, self.builder, self.typed = context, builder, typed
        self.filename, self.func_name = filename, typed.tree.name
        self.slots = {name: cgutils.alloca_once_value(builder, context.get_constant_null(ty))
                      for name, ty in typed.variables.items()}
        self.loops: list[tuple[object, object]] = []  # (continue block, break block)
        self.line = typed.tree.lineno
        for (name, ty), value in zip(typed.parameters.items(), arguments, strict=True):
            self._store(name, Value(value, ty, False))

    def finish(self):
        """Lowers the body; returns the final ``return``'s value, owned, variables released."""
        body = self.typed.tree.body
        self._block(body[:-1])
        returned = body[-1]
        if self.builder.block.is_terminated:  # (every path before it raised)
            self.builder.position_at_end(self.builder.append_basic_block("dead"))
        self.line = returned.lineno
        value = self._owned(self._cast(self._expr(returned.value), self.typed.return_type))
        for name, ty in self.typed.variables.items():
            self.context.nrt.decref(self.builder, ty, self.builder.load(self.slots[name]))
        return value.value

    # -- statements ---------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            if self.builder.block.is_terminated:  # after a break, continue or raise
                self.builder.position_at_end(self.builder.append_basic_block("dead"))
            self.line = statement.lineno
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            self._assign(node.targets[0], node.value)
        elif isinstance(node, ast.AugAssign):
            name = node.target.id
            target = self._load(name)
            fnty, signature = self.typed.calls[node]
            self._store(name, self._apply(fnty, signature,
                                          [target, self._expr(node.value)]))
        elif isinstance(node, ast.Expr):
            self._release(self._expr(node.value))
        elif isinstance(node, ast.If):
            self._if(node)
        elif isinstance(node, ast.While):
            self._while(node)
        elif isinstance(node, ast.For):
            self._for(node)
        elif isinstance(node, ast.Break):
            self.builder.branch(self.loops[-1][1])
        elif isinstance(node, ast.Continue):
            self.builder.branch(self.loops[-1][0])
        elif isinstance(node, ast.Raise):
            cls, args = self.typed.static[node]
            self.context.call_conv.return_user_exc(self.builder, cls, args, loc=self._loc(),
                                                   func_name=self.func_name)
        elif not isinstance(node, ast.Pass):
            raise Unsupported(f"statement {type(node).__name__}")

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self._store(target.id, self._expr(value))
        elif isinstance(target, ast.Tuple):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                items = [self._owned(self._expr(item)) for item in value.elts]
                for item_target, item in zip(target.elts, items, strict=True):
                    self._store(item_target.id, item)
                return
            whole = self._expr(value)
            for i, item_target in enumerate(target.elts):
                item = self.builder.extract_value(whole.value, i)
                self._store(item_target.id, Value(item, whole.type[i], False))
            self._release(whole)
        else:
            self._setitem(target, value)

    def _setitem(self, target: ast.Subscript, value: ast.expr) -> None:
        kind, signature = self.typed.calls[target]
        item = self._expr(value)  # (Python's order: the value, then the target's parts)
        container = self._expr(target.value)
        if kind == "static_setitem":
            try:
                impl = self.context.get_function("static_setitem", signature)
            except NotImplementedError:
                raise Unsupported("static_setitem without an implementation") from None
            impl(self.builder, (container.value, self.typed.static[target],
                                self._cast(item, signature.args[2]).value))
        else:
            index = self._expr(target.slice)
            fnty = self.context.typing_context.resolve_value_type(operator.setitem)
            impl = self.context.get_function(fnty, signature)
            impl(self.builder, (container.value, self._cast(index, signature.args[1]).value,
                                self._cast(item, signature.args[2]).value))
            self._release(index)
        self._release(item)
        self._release(container)

    def _if(self, node: ast.If) -> None:
        then, otherwise = self._new("then"), self._new("else")
        merge = self._new("endif")
        self.builder.cbranch(self._truth(node.test), then, otherwise)
        for block, body in ((then, node.body), (otherwise, node.orelse)):
            self.builder.position_at_end(block)
            self._block(body)
            if not self.builder.block.is_terminated:
                self.builder.branch(merge)
        self.builder.position_at_end(merge)

    def _while(self, node: ast.While) -> None:
        head, body, done = self._new("while"), self._new("body"), self._new("endwhile")
        self.builder.branch(head)
        self.builder.position_at_end(head)
        self.builder.cbranch(self._truth(node.test), body, done)
        self.builder.position_at_end(body)
        self._loop_body(node.body, head, done)
        self.builder.position_at_end(done)

    def _for(self, node: ast.For) -> None:
        """``for name in range(...)`` (int64 bounds, a constant step) as a loop of a count
        computed first, as Python's and Numba's ranges are: a bound near int64's limits takes as
        many steps as Python's (stepping a value past the bound would wrap around)."""
        args = [self._cast(self._expr(a), types.int64).value for a in node.iter.args]
        step = constant_int(node.iter.args[2]) if len(args) == 3 else 1
        int64 = self.context.get_value_type(types.int64)
        start, stop = (args[0], args[1]) if len(args) > 1 else (int64(0), args[0])
        b = self.builder
        low, high = (start, stop) if step > 0 else (stop, start)
        span = b.sub(high, low)  # (as unsigned: exact whenever low < high)
        steps = b.add(b.udiv(span, int64(abs(step))),
                      b.zext(b.icmp_unsigned("!=", b.urem(span, int64(abs(step))), int64(0)),
                             int64))
        count = b.select(b.icmp_signed("<", low, high), steps, int64(0))
        counter = cgutils.alloca_once_value(b, int64(0))
        head, body = self._new("for"), self._new("forbody")
        latch, done = self._new("fornext"), self._new("endfor")
        b.branch(head)
        b.position_at_end(head)
        taken = b.load(counter)
        b.cbranch(b.icmp_unsigned("<", taken, count), body, done)
        b.position_at_end(body)
        value = b.add(start, b.mul(taken, int64(step)))  # (wraps only past values never taken)
        self._store(node.target.id, Value(value, types.int64, True))
        self._loop_body(node.body, latch, done)
        b.position_at_end(latch)
        b.store(b.add(b.load(counter), int64(1)), counter)
        b.branch(head)
        b.position_at_end(done)

    def _loop_body(self, body: list[ast.stmt], again, done) -> None:
        self.loops.append((again, done))
        self._block(body)
        self.loops.pop()
        if not self.builder.block.is_terminated:
            self.builder.branch(again)

    # -- expressions --------------------------------------------------------------------------

    def _expr(self, node: ast.expr) -> Value:
        ty = self.typed.of[node]
        if node in self.typed.globals:
            value = self.typed.globals[node].value
            return Value(self.context.get_constant_generic(self.builder, ty, value), ty, True)
        if isinstance(node, ast.Constant):
            constant = self.context.get_constant_generic(self.builder, types.unliteral(ty),
                                                         node.value)
            return Value(constant, ty, True)
        if isinstance(node, ast.Name):
            return self._load(node.id)
        if isinstance(node, ast.Attribute):
            return self._getattr(node, ty)
        if isinstance(node, ast.Subscript):
            return self._getitem(node, ty)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            fnty, signature = self.typed.calls[node]
            operands = [self._expr(node.left), self._expr(node.right)]
            return self._apply(fnty, signature, operands)
        if isinstance(node, ast.UnaryOp):
            fnty, signature = self.typed.calls[node]
            return self._apply(fnty, signature, [self._expr(node.operand)])
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Slice):
            fnty, signature = self.typed.calls[node]
            parts = [node.lower, node.upper] + ([node.step] if node.step is not None else [])
            bounds = [Value(self.context.get_dummy_value(), types.none, True) if p is None
                      else self._expr(p) for p in parts]
            return self._apply(fnty, signature, bounds)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.IfExp):
            return self._ifexp(node, ty)
        if isinstance(node, ast.Tuple):
            items = [self._owned(self._cast(self._expr(item), t))  # (the tuple owns them)
                     for item, t in zip(node.elts, ty, strict=True)]
            tup = self.context.make_tuple(self.builder, ty, [item.value for item in items])
            return Value(tup, ty, True)
        raise Unsupported(f"expression {type(node).__name__}")

    def _getattr(self, node: ast.Attribute, ty: types.Type) -> Value:
        base = self._expr(node.value)
        if isinstance(ty, types.BoundFunction):
            this = self._cast(base, ty.this)  # (the bound function's model is its object's)
            bound = self.context.get_bound_function(self.builder, this.value, ty.this)
            return Value(bound, ty, this.owned)
        impl = self.context.get_getattr(base.type, node.attr)
        if impl is None:
            value = self.context.get_dummy_value()
        else:
            value = impl(self.context, self.builder, base.type, base.value, node.attr)
        self._release(base)
        return Value(value, ty, True)

    def _getitem(self, node: ast.Subscript, ty: types.Type) -> Value:
        kind, signature = self.typed.calls[node]
        container = self._expr(node.value)
        if kind == "static_getitem":
            index = self.typed.static[node]
            static = typing.signature(ty, container.type, _literal_or_omitted(index))
            try:
                impl = self.context.get_function("static_getitem", static)
            except NotImplementedError:
                raise Unsupported("static_getitem without an implementation") from None
            result = impl(self.builder, (container.value, index))
            self._release(container)
            return Value(result, ty, True)
        index = self._expr(node.slice)
        return self._apply(kind, signature, [container, index])

    def _call(self, node: ast.Call) -> Value:
        fnty, signature = self.typed.calls[node]
        callee = self._expr(node.func)
        positional = [self._expr(a) for a in node.args]
        keywords = {k.arg: self._expr(k.value) for k in node.keywords}
        temporaries = [*positional, *keywords.values()]
        if signature.pysig is None:
            if keywords:
                raise Unsupported("keyword arguments of a function without a signature")
            args = [self._cast(a, t).value for a, t in zip(positional, signature.args, strict=True)]
        else:
            args = typing.fold_arguments(
                signature.pysig, positional, keywords,
                lambda i, param, v: self._cast(v, signature.args[i]).value,
                lambda i, param, default: self.context.get_constant_generic(
                    self.builder, signature.args[i], default),
                _no_star)
        impl = self.context.get_function(fnty, signature)
        if signature.recvr:
            args = [callee.value, *args]
        result = impl(self.builder, args, self._loc())
        for temporary in (*temporaries, callee):
            self._release(temporary)
        if isinstance(signature.return_type, types.Phantom):
            result = self.context.get_dummy_value()
        elif result is None:  # (as Numba's lowering: only a void implementation may)
            if signature.return_type != types.void:
                raise Unsupported("an implementation that returned nothing")
            result = self.context.get_dummy_value()
        return Value(result, signature.return_type, True)

    def _apply(self, fnty, signature, operands: list[Value]) -> Value:
        """An operator (or getitem) on ``operands``: cast to its signature, implemented by
        Numba's implementation; the operands released."""
        impl = self.context.get_function(fnty, signature)
        args = [self._cast(v, t).value for v, t in zip(operands, signature.args, strict=True)]
        result = impl(self.builder, args)
        for operand in operands:
            self._release(operand)
        return Value(result, signature.return_type, True)

    def _compare(self, node: ast.Compare) -> Value:
        """A comparison; a chain stops at its first false link, as Python's does (its operands
        are numbers or booleans, ``direct_types``: no references to keep for the next link)."""
        left = self._expr(node.left)
        if len(node.ops) == 1:
            return self._link(node, 0, left, self._expr(node.comparators[0]))
        slot = cgutils.alloca_once(self.builder, self.context.get_value_type(types.boolean))
        done = self._new("endcompare")
        for i, comparator in enumerate(node.comparators):
            right = self._expr(comparator)
            value = self._cast(self._link(node, i, left, right), types.boolean).value
            left = right
            self.builder.store(value, slot)
            if i == len(node.ops) - 1:
                self.builder.branch(done)
                break
            more = self._new("compare")
            self.builder.cbranch(value, more, done)
            self.builder.position_at_end(more)
        self.builder.position_at_end(done)
        return Value(self.builder.load(slot), types.boolean, True)

    def _link(self, node: ast.Compare, i: int, left: Value, right: Value) -> Value:
        fnty, signature = self.typed.calls[(node, i)]
        if isinstance(node.ops[i], (ast.In, ast.NotIn)):
            result = self._apply(fnty, signature, [right, left])
            negation = self.typed.calls.get((node, i, "not"))
            return result if negation is None else self._apply(*negation, [result])
        return self._apply(fnty, signature, [left, right])

    def _boolop(self, node: ast.BoolOp) -> Value:
        """``and``/``or`` of booleans: the later operands evaluated only as Python does."""
        slot = cgutils.alloca_once(self.builder, self.context.get_value_type(types.boolean))
        done = self._new("endbool")
        for i, operand in enumerate(node.values):
            value = self._cast(self._expr(operand), types.boolean).value
            self.builder.store(value, slot)
            if i == len(node.values) - 1:
                self.builder.branch(done)
                break
            more = self._new("bool")
            if isinstance(node.op, ast.And):
                self.builder.cbranch(value, more, done)
            else:
                self.builder.cbranch(value, done, more)
            self.builder.position_at_end(more)
        self.builder.position_at_end(done)
        return Value(self.builder.load(slot), types.boolean, True)

    def _ifexp(self, node: ast.IfExp, ty: types.Type) -> Value:
        slot = cgutils.alloca_once(self.builder, self.context.get_value_type(ty))
        then, otherwise, done = self._new("ifexp"), self._new("ifexpelse"), self._new("endifexp")
        self.builder.cbranch(self._truth(node.test), then, otherwise)
        for block, branch in ((then, node.body), (otherwise, node.orelse)):
            self.builder.position_at_end(block)
            self.builder.store(self._owned(self._cast(self._expr(branch), ty)).value, slot)
            self.builder.branch(done)
        self.builder.position_at_end(done)
        return Value(self.builder.load(slot), ty, True)

    def _truth(self, test: ast.expr):
        """The i1 truth of a condition (``bool(x)``, as Numba's branches ask it)."""
        value = self._expr(test)
        truth = self.typed.calls.get(("truth", test))
        if truth is None:
            result = self._cast(value, types.boolean).value
            self._release(value)
            return result
        return self._apply(*truth, [value]).value

    # -- values -------------------------------------------------------------------------------

    def _load(self, name: str) -> Value:
        return Value(self.builder.load(self.slots[name]), self.typed.variables[name], False)

    def _store(self, name: str, value: Value) -> None:
        ty = self.typed.variables[name]
        new = self._owned(self._cast(value, ty))
        old = self.builder.load(self.slots[name])
        self.builder.store(new.value, self.slots[name])
        self.context.nrt.decref(self.builder, ty, old)

    def _cast(self, value: Value, ty: types.Type) -> Value:
        if value.type == ty:
            return value
        cast = self.context.cast(self.builder, value.value, value.type, ty)
        return Value(cast, ty, value.owned)

    def _owned(self, value: Value) -> Value:
        if value.owned:
            return value
        self.context.nrt.incref(self.builder, value.type, value.value)
        return Value(value.value, value.type, True)

    def _release(self, value: Value) -> None:
        if value.owned:
            self.context.nrt.decref(self.builder, value.type, value.value)

    def _new(self, name: str):
        return self.builder.append_basic_block(name)

    def _loc(self) -> ir.Loc:
        return ir.Loc(self.filename, self.line)


def _literal_or_omitted(value: object) -> types.Type:
    try:
        return types.literal(value)
    except Exception:  # noqa: BLE001 - Numba's own fallback for values without a literal type
        return types.Omitted(value)


def _no_star(index, param, values):
    raise Unsupported("*args parameters")
