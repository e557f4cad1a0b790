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

from autostage.runtime.backends.cpu import direct_arrays, loop_hints
from autostage.runtime.backends.cpu.direct_types import (
    IN_LINE,
    FunctionTypes,
    InLine,
    Unsupported,
    constant_int,
)
from numba.core import cgutils, funcdesc, ir, types, typing


class Value(NamedTuple):
    value: object  # an llvmlite value
    type: types.Type
    owned: bool


class Lowering:
    """Emits ``typed``'s body into the function ``builder`` is in, whose arguments are
    ``arguments`` (Numba's calling convention: ``lower()`` ends each path with a return or a
    raise). ``returns_to`` (a slot and a block): the body of a call lowered in line, whose
    returns store the result in the slot and continue at the block (its raises return from
    the function, as an error of a called function does)."""

    def __init__(self, context, builder, typed: FunctionTypes, arguments: list, filename: str,
                 returns_to: tuple | None = None):
        self.context, self.builder, self.typed = context, builder, typed
        self.returns_to = returns_to
        self.filename, self.func_name = filename, typed.tree.name
        # Parameters the body never assigns are read as the arguments themselves (borrowed:
        # the caller holds them for the call), without a slot, an incref and a decref.
        self.arguments = {name: Value(value, ty, False) for (name, ty), value
                          in zip(typed.parameters.items(), arguments, strict=True)
                          if name not in typed.written and name not in typed.omitted
                          and typed.variables[name] == ty}
        # (in line, the slots are nulled at each call, not in the entry block: a call in a loop
        # finds the last call's values there)
        self.slots = {name: self._slot(context.get_value_type(ty), zeroed=returns_to is None)
                      for name, ty in typed.variables.items() if name not in self.arguments}
        for slot in self.slots.values() if returns_to is not None else ():
            builder.store(slot.type.pointee(None), slot)
        self.exception_slot = None  # where called functions leave their exception (one for all)
        self.references: dict[types.Type, bool] = {}  # whether values of a type hold any
        self.loops: list[tuple[object, object]] = []  # (continue block, break block)
        self.held: list[Value] = []  # owned by loops being lowered: released by a return
        self.in_line_calls = 0  # calls lowered in line so far (loops holding one: see _range)
        self.line = typed.tree.lineno
        for (name, ty), value in zip(typed.parameters.items(), arguments, strict=True):
            if name in self.arguments:
                continue
            if name in typed.omitted:  # the default of a parameter the call left out
                default = typed.omitted[name]
                ty = context.typing_context.resolve_value_type_prefer_literal(default)
                value = context.get_constant_generic(builder, ty, default)
            self._store(name, Value(value, ty, False))

    def lower(self) -> None:
        """Lowers the body; the end, where control reaches it, returns None."""
        self._block(self.typed.body)
        if not self.builder.block.is_terminated:
            if self.typed.falls_through:
                self._return(None)
            else:  # (after a loop that only returns or raises: no path reaches it)
                self.builder.unreachable()

    def _return(self, node: ast.expr | None) -> None:
        """Returns ``node``'s value (None: None) as the function's type, owned; every variable
        released."""
        ty = self.typed.return_type
        if node is None:
            value = Value(self.context.get_dummy_value(), types.none, True)
        else:
            value = self._expr(node)
        value = self._owned(self._cast(value, ty))
        self._release_all()
        if self.returns_to is not None:
            slot, block = self.returns_to
            self.builder.store(value.value, slot)
            self.builder.branch(block)
            return
        self.context.call_conv.return_value(
            self.builder, self.context.get_return_value(self.builder, ty, value.value))

    def _release_all(self) -> None:
        """Releases every variable and what loops hold: the function returns or raises."""
        for held in self.held:
            self._release(held)
        for name, slot in self.slots.items():
            self._references("decref", self.typed.variables[name], self.builder.load(slot))

    # -- statements ---------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in self.typed.live(statements):  # (none after one that ends its block)
            self.line = statement.lineno
            self._statement(statement)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            self._assign(node.targets, node.value)
        elif isinstance(node, ast.AugAssign):
            self._update(node)
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
        elif isinstance(node, ast.Return):
            self._return(node.value)
        elif isinstance(node, ast.Raise):
            self._raise(*self.typed.static[node])
        elif not isinstance(node, ast.Pass):
            raise Unsupported(f"statement {type(node).__name__}")

    def _raise(self, cls: type[BaseException], args: tuple) -> None:
        """Raises ``cls(*args)`` (constant arguments), every variable released (as Numba's
        lowering deletes the live variables before a raise)."""
        self._release_all()
        self.context.call_conv.return_user_exc(self.builder, cls, args, loc=self._loc(),
                                               func_name=self.func_name)

    def _assign(self, targets: list[ast.expr], value: ast.expr) -> None:
        target = targets[0]
        if len(targets) == 1 and isinstance(target, ast.Name):
            self._store(target.id, self._expr(value))
            return
        if len(targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                and len(value.elts) == len(target.elts):
            items = [self._owned(self._expr(item)) for item in value.elts]  # (all read first)
            for item_target, item in zip(target.elts, items, strict=True):
                self._assign_value(item_target, item)
            return
        whole = self._expr(value)  # (Python's order: the value, then each target's parts)
        for target in targets:
            self._assign_value(target, Value(whole.value, whole.type, False))
        self._release(whole)

    def _assign_value(self, target: ast.expr, value: Value) -> None:
        """``target = value`` (``value`` released)."""
        if isinstance(target, ast.Name):
            self._store(target.id, value)
        elif isinstance(target, ast.Subscript):
            self._setitem(target, value)
        else:
            for i, item_target in enumerate(target.elts):
                item = self.builder.extract_value(value.value, i)
                self._assign_value(item_target, Value(item, value.type[i], False))
            self._release(value)

    def _update(self, node: ast.AugAssign) -> None:
        """``x += v``, ``x[i] += v`` (container and index evaluated once)."""
        fnty, signature = self.typed.calls[node]
        target = node.target
        if isinstance(target, ast.Name):
            current = self._load(target.id)
            self._store(target.id, self._apply(fnty, signature,
                                               [current, self._expr(node.value)]))
            return
        container, index = self._expr(target.value), self._expr(target.slice)
        current = self._item(target, self.typed.of[target], container, index)
        updated = self._apply(fnty, signature, [current, self._expr(node.value)])
        self._write_item(target, updated, container, index)
        self._release(index)
        self._release(container)

    def _setitem(self, target: ast.Subscript, item: Value) -> None:
        """``target = item`` (``item`` released), the target's container and index evaluated
        now."""
        container, index = self._expr(target.value), self._expr(target.slice)
        self._write_item(target, item, container, index)
        self._release(index)
        self._release(container)

    def _write_item(self, target: ast.Subscript, item: Value, container: Value,
                    index: Value) -> None:
        """``container[index] = item`` (a constant index: ``static_setitem``); ``item``
        released, the operands left to the caller."""
        kind, signature = self.typed.calls[("set", target)]
        if kind == "static_setitem":
            try:
                impl = self.context.get_function("static_setitem", signature)
            except NotImplementedError:
                raise Unsupported("static_setitem without an implementation") from None
            impl(self.builder, (container.value, self.typed.static[target],
                                self._cast(item, signature.args[2]).value))
        elif (pointer := self._element(signature, container, index)) is not None:
            direct_arrays.store(self.context, self.builder, signature.args[0], item.value,
                                item.type, pointer)
        else:
            fnty = self.context.typing_context.resolve_value_type(operator.setitem)
            impl = self.context.get_function(fnty, signature)
            impl(self.builder, (container.value, self._cast(index, signature.args[1]).value,
                                self._cast(item, signature.args[2]).value))
        self._release(item)

    def _element(self, signature: typing.Signature, container: Value, index: Value):
        """The address of one element ``container[index]`` (a get or set of this signature)
        computed in line (``direct_arrays``), or None where Numba's implementation is used."""
        array_type, index_type = signature.args[:2]
        tuple_index = isinstance(index_type, types.BaseTuple)
        index_types = tuple(index_type) if tuple_index else (index_type,)
        item_type = signature.args[2] if len(signature.args) == 3 else signature.return_type
        if not direct_arrays.element_type(array_type, index_types) or not (
                item_type == array_type.dtype if len(signature.args) == 2
                else isinstance(item_type, (types.Number, types.Boolean))):
            return None
        indices = self._cast(index, index_type).value
        indices = cgutils.unpack_tuple(self.builder, indices, len(index_types)) if tuple_index \
            else [indices]
        return direct_arrays.element_pointer(self.context, self.builder, array_type,
                                             self._cast(container, array_type).value,
                                             index_types, indices)

    def _if(self, node: ast.If) -> None:
        taken = self.typed.taken(node)
        if taken is not None:  # (the other branch was not typed: as Numba, not emitted)
            self._block(taken)
            return
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
        truth = self.typed.static_truth(node.test)
        if truth is False:
            return
        head, body, done = self._new("while"), self._new("body"), self._new("endwhile")
        self.builder.branch(head)
        self.builder.position_at_end(head)
        if truth is None:
            self.builder.cbranch(self._truth(node.test), body, done)
        else:  # (``while True``: left by a break, a return or a raise only)
            self.builder.branch(body)
        self.builder.position_at_end(body)
        self._loop_body(node.body, head, done)
        self.builder.position_at_end(done)

    def _for(self, node: ast.For) -> None:
        if node in self.typed.calls:
            self._iterate(node)
        else:
            self._range(node)

    def _range(self, node: ast.For) -> None:
        """``for name in range(...)`` (int64 bounds and step) as a loop of a count computed
        first, as Python's and Numba's ranges are: a bound near int64's limits takes as many
        steps as Python's (stepping a value past the bound would wrap around). A step of 0
        raises Python's error."""
        args = [self._cast(self._expr(a), types.int64).value for a in node.iter.args]
        int64 = self.context.get_value_type(types.int64)
        start, stop = (args[0], args[1]) if len(args) > 1 else (int64(0), args[0])
        b = self.builder
        constant = constant_int(node.iter.args[2]) if len(args) == 3 else 1
        if constant:
            step, magnitude, rising = int64(constant), int64(abs(constant)), constant > 0
            low, high = (start, stop) if rising else (stop, start)
        else:
            step = args[2]
            with cgutils.if_unlikely(b, b.icmp_signed("==", step, int64(0))):
                self.context.call_conv.return_user_exc(
                    b, ValueError, ("range() arg 3 must not be zero",), loc=self._loc(),
                    func_name=self.func_name)
            rising = b.icmp_signed(">", step, int64(0))
            magnitude = b.select(rising, step, b.neg(step))  # (as unsigned: exact)
            low, high = b.select(rising, start, stop), b.select(rising, stop, start)
        span = b.sub(high, low)  # (as unsigned: exact whenever low < high)
        steps = b.add(b.udiv(span, magnitude),
                      b.zext(b.icmp_unsigned("!=", b.urem(span, magnitude), int64(0)), int64))
        count = b.select(b.icmp_signed("<", low, high), steps, int64(0))
        counter = cgutils.alloca_once_value(b, int64(0))
        head, body = self._new("for"), self._new("forbody")
        latch, done = self._new("fornext"), self._new("endfor")
        b.branch(head)
        b.position_at_end(head)
        taken = b.load(counter)
        b.cbranch(b.icmp_unsigned("<", taken, count), body, done)
        b.position_at_end(body)
        value = b.add(start, b.mul(taken, step))  # (wraps only past values never taken)
        self._store(node.target.id, Value(value, types.int64, True))
        in_line_calls = self.in_line_calls
        self._loop_body(node.body, latch, done)
        b.position_at_end(latch)
        b.store(b.add(b.load(counter), int64(1)), counter)
        back = b.branch(head)
        if self.in_line_calls != in_line_calls or not loop_hints.carries(node):
            loop_hints.mark(back, loop_hints.NO_RUNTIME_UNROLL)
        b.position_at_end(done)

    def _iterate(self, node: ast.For) -> None:
        """``for name in iterable``: Numba's ``getiter``, then ``iternext`` (a pair: the item,
        whether there was one) until exhausted, with Numba's implementations and references."""
        getiter, iternext = self.typed.calls[node]
        b = self.builder
        iterable = self._expr(node.iter)
        impl = self.context.get_function("getiter", getiter)
        iterator = Value(impl(b, (self._cast(iterable, getiter.args[0]).value,)),
                         getiter.return_type, True)
        pair_type = iternext.return_type
        self.held += (iterable, iterator)
        head, body = self._new("iter"), self._new("iterbody")
        latch, exhausted, done = self._new("iternext"), self._new("exhausted"), self._new("enditer")
        b.branch(head)
        b.position_at_end(head)
        pair = self.context.get_function("iternext", iternext)(b, (iterator.value,))
        valid = self.context.pair_second(b, pair, pair_type)
        b.cbranch(valid, body, exhausted)
        b.position_at_end(body)
        item = self.context.pair_first(b, pair, pair_type)
        self._store(node.target.id, Value(item, pair_type.first_type, False))
        self._references("decref", pair_type, pair)
        self._loop_body(node.body, latch, done)  # (a break: the pair is released already)
        b.position_at_end(latch)
        b.branch(head)
        b.position_at_end(exhausted)
        self._references("decref", pair_type, pair)  # (holds no item: as Numba's, harmless)
        b.branch(done)
        b.position_at_end(done)
        del self.held[-2:]
        self._release(iterator)
        self._release(iterable)

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
        value = direct_arrays.attribute(self.context, self.builder, base.type, base.value,
                                        node.attr)
        if value is not None:
            self._release(base)
            return Value(value, ty, True)
        impl = self.context.get_getattr(base.type, node.attr)
        if impl is None:
            value = self.context.get_dummy_value()
        else:
            value = impl(self.context, self.builder, base.type, base.value, node.attr)
        self._release(base)
        return Value(value, ty, True)

    def _getitem(self, node: ast.Subscript, ty: types.Type) -> Value:
        container, index = self._expr(node.value), self._expr(node.slice)
        result = self._item(node, ty, container, index)
        self._release(index)
        self._release(container)
        return result

    def _item(self, node: ast.Subscript, ty: types.Type, container: Value,
              index: Value) -> Value:
        """``container[index]`` (a constant index: ``static_getitem``); the operands are left
        to the caller."""
        kind, signature = self.typed.calls[node]
        if kind == "static_getitem":
            constant = self.typed.static[node]
            static = typing.signature(ty, container.type, _literal_or_omitted(constant))
            try:
                impl = self.context.get_function("static_getitem", static)
            except NotImplementedError:
                raise Unsupported("static_getitem without an implementation") from None
            return Value(impl(self.builder, (container.value, constant)), ty, True)
        pointer = self._element(signature, container, index)
        if pointer is not None:
            item = direct_arrays.load(self.context, self.builder, signature.args[0], pointer)
            return Value(item, signature.return_type, True)
        array_type, index_type = signature.args
        if direct_arrays.row_type(array_type, index_type, signature.return_type):
            # A view of the container: borrowed as the container is (a variable keeps both
            # alive), a reference of its own when the container is a temporary.
            view = Value(direct_arrays.row(
                self.context, self.builder, array_type, self._cast(container, array_type).value,
                index_type, self._cast(index, index_type).value, signature.return_type),
                signature.return_type, False)
            return self._owned(view) if container.owned else view
        return self._apply(kind, signature, [container, index], release=False)

    def _call(self, node: ast.Call) -> Value:
        fnty, signature = self.typed.calls[node]
        if fnty is IN_LINE:
            return self._call_in_line(node, signature)
        callee = self._expr(node.func)
        positional = [self._expr(a) for a in node.args]
        if getattr(getattr(fnty, "typing_key", None), "same_value", False) \
                and len(positional) == 1 and not node.keywords \
                and positional[0].value.type == self.context.get_value_type(
                    signature.return_type):
            # An intrinsic returning its argument retyped (``blas.any_layout``): the value
            # itself, owned as the argument was (Numba's would incref it, the caller decref it).
            return Value(positional[0].value, signature.return_type, positional[0].owned)
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
                lambda i, param, values: cgutils.make_anonymous_struct(self.builder, [
                    self._cast(v, t).value
                    for v, t in zip(values, signature.args[i], strict=True)]))
        if isinstance(fnty, types.ExternalFunction):  # a C function named by its symbol
            described = funcdesc.ExternalFunctionDescriptor(fnty.symbol, fnty.sig.return_type,
                                                            fnty.sig.args)
            function = self.context.declare_external_function(self.builder.module, described)
            result = self.context.call_external_function(self.builder, function,
                                                         described.argtypes, args)
        elif (compiled := _compiled(fnty, signature)) is not None:
            result = self._call_compiled(compiled, args)
        else:
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

    def _call_in_line(self, node: ast.Call, callee: InLine) -> Value:
        """A call of a function marked ``direct_types.in_line``: its body lowered here, its
        parameters the arguments (borrowed for the call, as a called function's are)."""
        typed = callee.typed
        self.in_line_calls += 1
        arguments = [self._expr(a) for a in node.args]
        values = [self._cast(a, ty).value
                  for a, ty in zip(arguments, typed.parameters.values(), strict=True)]
        result = self._slot(self.context.get_value_type(typed.return_type), zeroed=False)
        done = self._new(f"end_{typed.tree.name}")
        Lowering(self.context, self.builder, typed, values, callee.func.__code__.co_filename,
                 returns_to=(result, done)).lower()
        self.builder.position_at_end(done)
        for argument in arguments:
            self._release(argument)
        return Value(self.builder.load(result), typed.return_type, True)

    def _call_compiled(self, compiled: object, args: list) -> object:
        """The result of calling ``compiled`` (a compile result of Numba's calling convention),
        as Numba's ``user_function`` calls it in fewer instructions (a tenth of a generated
        function's IR was its calls): the status tested once (0 or an error: no Optional
        result), an error handed up at once (no ``try`` in code lowered here), the result used
        as returned where that is its value's form, the slots left unset (read only after
        success)."""
        context, builder, descriptor = self.context, self.builder, compiled.fndesc
        convention = context.call_conv
        function = context.declare_function(builder.module, descriptor)
        result_slot = self._slot(convention.get_return_type(descriptor.restype).pointee,
                                 zeroed=False)
        if self.exception_slot is None:
            self.exception_slot = self._slot(function.args[1].type.pointee, zeroed=False)
        packed = convention._get_arg_packer(descriptor.argtypes).as_arguments(builder, args)
        status = builder.call(function, [result_slot, self.exception_slot, *packed])
        with cgutils.if_unlikely(builder, builder.icmp_signed("!=", status, status.type(0))):
            builder.store(builder.load(self.exception_slot),
                          convention._get_excinfo_argument(builder.function))
            builder.ret(status)
        result = builder.load(result_slot)
        if result.type != context.get_value_type(descriptor.restype):
            result = context.get_returned_value(builder, descriptor.restype, result)
        context.add_linking_libs([compiled.library])
        return result

    def _apply(self, fnty, signature, operands: list[Value], release: bool = True) -> Value:
        """An operator (or getitem) on ``operands``: cast to its signature, implemented by
        Numba's implementation; the operands released (unless not ``release``)."""
        impl = self.context.get_function(fnty, signature)
        args = [self._cast(v, t).value for v, t in zip(operands, signature.args, strict=True)]
        result = impl(self.builder, args)
        for operand in operands if release else ():
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
        truth = self._short_circuit(
            node, lambda operand: self._cast(self._expr(operand), types.boolean).value)
        return Value(truth, types.boolean, True)

    def _short_circuit(self, node: ast.BoolOp, truth) -> object:
        """The i1 result of ``node``, each operand's ``truth(operand)`` emitted only where
        Python evaluates it."""
        slot = cgutils.alloca_once(self.builder, self.context.get_value_type(types.boolean))
        done = self._new("endbool")
        for i, operand in enumerate(node.values):
            value = truth(operand)
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
        return self.builder.load(slot)

    def _ifexp(self, node: ast.IfExp, ty: types.Type) -> Value:
        taken = self.typed.taken(node)
        if taken is not None:
            return self._cast(self._expr(taken), ty)
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
        """The i1 truth of a condition (``bool(x)``, as Numba's branches ask it; ``and``/``or``
        the truth of each operand in turn)."""
        if isinstance(test, ast.BoolOp):
            return self._short_circuit(test, self._truth)
        value = self._expr(test)
        truth = self.typed.calls.get(("truth", test))
        if truth is None:
            result = self._cast(value, types.boolean).value
            self._release(value)
            return result
        return self._apply(*truth, [value]).value

    # -- values -------------------------------------------------------------------------------

    def _load(self, name: str) -> Value:
        argument = self.arguments.get(name)
        if argument is not None:
            return argument
        return Value(self.builder.load(self.slots[name]), self.typed.variables[name], False)

    def _store(self, name: str, value: Value) -> None:
        ty = self.typed.variables[name]
        new = self._owned(self._cast(value, ty))
        old = self.builder.load(self.slots[name])
        self.builder.store(new.value, self.slots[name])
        self._references("decref", ty, old)

    def _cast(self, value: Value, ty: types.Type) -> Value:
        if value.type == ty:
            return value
        cast = self.context.cast(self.builder, value.value, value.type, ty)
        return Value(cast, ty, value.owned)

    def _owned(self, value: Value) -> Value:
        if value.owned:
            return value
        self._references("incref", value.type, value.value)
        return Value(value.value, value.type, True)

    def _release(self, value: Value) -> None:
        if value.owned:
            self._references("decref", value.type, value.value)

    def _references(self, change: str, ty: types.Type, value) -> None:
        """Numba's ``nrt.incref``/``nrt.decref`` (``change``) of ``value``, reading only the
        fields that hold references: Numba's reads every field of the value first (an array's
        7 + 2 * ndim, for its one meminfo: a quarter of a generated function's IR), which
        LLVM's first passes then delete."""
        for meminfo in self._meminfos(ty, value):
            getattr(self.context.nrt, change)(self.builder, _MEMINFO, meminfo)

    def _meminfos(self, ty: types.Type, value) -> list:
        """The meminfos in ``value``, in the order of Numba's ``get_meminfos``."""
        if not self._holds_references(ty):
            return []
        model = self.context.data_model_manager[ty]
        found = [model.get_nrt_meminfo(self.builder, value)] if model.has_nrt_meminfo() else []
        for member_type, getter in model.traverse(self.builder):
            if self._holds_references(member_type):
                found += self._meminfos(member_type, getter(value))
        return found

    def _holds_references(self, ty: types.Type) -> bool:
        known = self.references.get(ty)
        if known is None:
            model = self.context.data_model_manager[ty]
            known = self.references[ty] = model.has_nrt_meminfo() or model.contains_nrt_meminfo()
        return known

    def _new(self, name: str):
        return self.builder.append_basic_block(name)

    def _slot(self, llvm_type, zeroed: bool = True) -> object:
        """An alloca of ``llvm_type`` in the entry block, set to null there if ``zeroed`` (once:
        Numba's ``alloca_once_value`` stores twice)."""
        with self.builder.goto_entry_block():
            slot = self.builder.alloca(llvm_type)
            if zeroed:
                self.builder.store(llvm_type(None), slot)
        return slot

    def _loc(self) -> ir.Loc:
        return ir.Loc(self.filename, self.line)


_MEMINFO = types.MemInfoPointer(types.voidptr)  # (one meminfo: Numba's incref/decref of it)


def _compiled(fnty: types.Type, signature: typing.Signature) -> object | None:
    """The compile result a call of ``fnty`` (a compiled function: a dispatcher) with
    ``signature`` runs, where it has one of a plain result (None: Numba's implementation
    calls it)."""
    if not isinstance(fnty, types.Dispatcher) or signature.recvr \
            or isinstance(signature.return_type, types.Optional):
        return None
    compiled = fnty.dispatcher.overloads.get(tuple(signature.args))
    if compiled is None or compiled.fndesc.restype != signature.return_type \
            or getattr(compiled, "objectmode", False):
        return None
    return compiled


def _literal_or_omitted(value: object) -> types.Type:
    try:
        return types.literal(value)
    except Exception:  # noqa: BLE001 - Numba's own fallback for values without a literal type
        return types.Omitted(value)
