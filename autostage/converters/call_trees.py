"""Routes calls through ``ag__`` so that user functions called from converted code are converted.

``f(a, *b, k=c)`` becomes ``ag__.converted(f)(a, *b, k=c)`` (callee first, then the arguments, as in
Python). A callee that is a global or builtin name (or a dotted path through modules, such as
``np.linalg.norm``) is resolved at conversion time in ``ctx.info.namespace``: an overloaded builtin
becomes its operator (``len(x)`` -> ``ag__.len_(x)``; the function given to ``map`` or ``filter``
goes through ``ag__.converted``, as a call of it would), and functions and classes that
``converted_call`` would call as they are (builtins, the standard library, NumPy, autostage and
``config.do_not_convert_modules``) are left as written, which keeps generated code lean. Names bound
in the converted code itself and free variables (closure cells, ``ctx.info.free_names``) are never
resolved, since they may hold anything at run time: closures made from one code share its
converted code.

Converters may not import the operators or the configuration (see DESIGN.md), so what is
overloaded and which modules run as they are comes from a ``CallPolicy`` that the caller puts in
``ctx.user.call_policy``; without one, builtins go through ``ag__.converted``, which decides at
run time.
Requires nothing; runs activity analysis itself.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import random
import sys
import types
from collections.abc import Collection, Mapping
from typing import Any

import gast

from autostage.pyct import anno, templates, transformer
from autostage.pyct.static_analysis import activity

_STDLIB = frozenset(sys.stdlib_module_names)
_UNKNOWN = object()
# Builtins that read or write the caller's frame: wrapping them would change what they see.
# Callables implemented in C (builtin functions and methods, slot wrappers): never converted.
_C_CALLABLES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
                types.MethodWrapperType, types.ClassMethodDescriptorType)
_FRAME_BUILTINS = frozenset(
    getattr(builtins, n) for n in ("super", "locals", "globals", "vars", "dir", "eval", "exec"))


@dataclasses.dataclass(frozen=True)
class CallPolicy:
    """What the converter knows at conversion time about callees.

    Attributes:
      overloads: builtin object -> its operator in ``ag__`` (the operator's name, or the operator
        function itself, whose ``__name__`` is its name there); None if unknown.
      as_is_modules: top-level modules (besides the standard library) whose functions and classes
        ``converted_call`` calls as they are. May be a live set that grows at run time.
    """

    overloads: Mapping[Any, Any] | None = None
    as_is_modules: Collection[str] = frozenset({"numpy", "autostage"})

    def overload(self, value: Any) -> str | None:
        """The name in ``ag__`` of the operator that replaces ``value``, if any."""
        if self.overloads is None:
            return None
        try:
            operator = self.overloads.get(value)
        except TypeError:  # unhashable
            return None
        return operator if operator is None or isinstance(operator, str) else operator.__name__

    def runs_as_is(self, value: Any) -> bool:
        """Whether ``converted_call`` would call ``value`` as it is (mirrors calls._target)."""
        if isinstance(getattr(value, "__self__", None), random.Random):
            return False  # random.random(), random.gauss()...: refused while tracing
        if isinstance(value, types.MethodType):
            value = value.__func__
        if isinstance(value, functools.partial) or inspect.ismodule(value):
            return False  # a partial's function may be user code
        module = getattr(value, "__module__", None)
        if module == "builtins" or (module is None and isinstance(value, _C_CALLABLES)):
            return self.overloads is not None  # unknown overloads: let ag__.converted decide
        if not isinstance(module, str):
            return False
        top = module.partition(".")[0]
        if top == "numba" and getattr(value, "__name__", None) == "prange":
            return False  # a range outside Numba (calls._target)
        return top in _STDLIB or top in self.as_is_modules


class _Scope:
    """Names bound by one enclosing function, lambda, class or comprehension."""

    def __init__(self):
        self.names: frozenset[str] = frozenset()


class CallTreeTransformer(transformer.Base):
    """Replaces calls by ``ag__.converted(f)(...)`` or an operator, or leaves them as they are."""

    def __init__(self, ctx: transformer.Context, policy: CallPolicy):
        super().__init__(ctx)
        self.policy = policy

    def _visit_in_scope(self, node: gast.AST, fields: tuple[str, ...]) -> gast.AST:
        """Visits ``fields`` of ``node`` with its own bound names in scope."""
        scope = anno.getanno(node, anno.Static.BODY_SCOPE)
        self.state[_Scope].enter().names = frozenset(str(q) for q in scope.local_names)
        for field in fields:
            value = getattr(node, field)
            if isinstance(value, list):
                setattr(node, field, self.visit_block(value))
            else:
                setattr(node, field, self.visit(value))
        self.state[_Scope].exit()
        return node

    def visit_FunctionDef(self, node: gast.FunctionDef) -> gast.AST:
        # Decorators, defaults and annotations are evaluated where the function is defined.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        return self._visit_in_scope(node, ("body",))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: gast.Lambda) -> gast.AST:
        node.args = self.visit(node.args)
        return self._visit_in_scope(node, ("body",))

    def visit_ClassDef(self, node: gast.ClassDef) -> gast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        return self._visit_in_scope(node, ("body",))

    def _visit_comprehension(self, node: gast.AST) -> gast.AST:
        # Conservatively, the first iterable also sees the comprehension's own names.
        return self._visit_in_scope(node, node._fields)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def _is_local(self, name: str) -> bool:
        return any(name in scope.names for scope in self.state[_Scope])

    def _resolve(self, node: gast.AST) -> Any:
        """The value a global name, or a dotted path through modules and library classes, has
        now; _UNKNOWN if it may not be looked up now."""
        if isinstance(node, gast.Name):
            # A free variable is no constant: the closures made from one code share its
            # converted code (each with its own cells), and a cell can be rebound.
            if self._is_local(node.id) or node.id in self.ctx.info.free_names:
                return _UNKNOWN
            return self.ctx.info.namespace.get(node.id, _UNKNOWN)
        if isinstance(node, gast.Attribute):
            owner = self._resolve(node.value)
            # Only modules and library classes: looking up user objects could run user code.
            if inspect.ismodule(owner) or (
                    isinstance(owner, type) and self.policy.runs_as_is(owner)):
                return getattr(owner, node.attr, _UNKNOWN)
        return _UNKNOWN

    def visit_Attribute(self, node: gast.Attribute) -> gast.AST:
        """``x.__class__`` -> ``ag__.class_of(x)``: a staged value's class is autostage's own,
        where Python's answer is the class of what it stands for (``type(x)`` converts so)."""
        node = self.generic_visit(node)
        if node.attr == "__class__" and isinstance(node.ctx, gast.Load):
            return templates.replace_as_expression("ag__.class_of(x)", x=node.value)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        node = self.generic_visit(node)
        if _is_generated(node.func):
            return node
        callee = self._resolve(node.func)
        if callee is not _UNKNOWN:
            if _is_frame_builtin(callee):
                return node
            operator = self.policy.overload(callee) if _hashes_natively(callee) else None
            if operator is not None:
                if operator in _APPLYING and node.args and not isinstance(
                        node.args[0], gast.Lambda | gast.Constant | gast.Starred):
                    node.args[0] = templates.replace_as_expression(
                        "ag__.converted(function)", function=node.args[0])
                return _with_keywords(templates.replace_as_expression(
                    "ag__.operator(args)", operator=operator, args=node.args), node)
            if self.policy.runs_as_is(callee):
                return node
        elif isinstance(node.func, gast.Name) and node.func.id == "super":
            return node  # zero-argument super() needs the caller's frame
        return _with_keywords(templates.replace_as_expression(
            "ag__.converted(func)(args)", func=node.func, args=node.args), node)


# Builtins that call their first argument: ``map(np.asarray, [a, b])`` calls it as converted
# code would (``np.asarray`` of a staged value is staged; a user function is converted).
_APPLYING = frozenset({"map_", "filter_"})


def _hashes_natively(value: Any) -> bool:
    """Whether set/dict look-ups of ``value`` run no user code. An object whose class defines
    ``__hash__``/``__eq__`` in Python (a callable instance, a class with such a metaclass) would
    run them while we convert: Python never calls them there, they may have effects, and they
    may need conversion themselves (a deadlock on the conversion lock)."""
    cls = type(value)
    return not any(isinstance(getattr(cls, name, None), types.FunctionType)
                   for name in ("__hash__", "__eq__"))


def _is_frame_builtin(value: Any) -> bool:
    return any(value is builtin for builtin in _FRAME_BUILTINS)


def _is_generated(func: gast.AST) -> bool:
    """Whether the callee is ``ag__.something``, written by an earlier converter."""
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id == "ag__"


def _with_keywords(call: gast.Call, original: gast.Call) -> gast.Call:
    call.keywords = original.keywords
    return call


def transform(node: gast.AST, ctx: transformer.Context) -> gast.AST:
    """Routes the calls in ``node`` (a function) through ``ag__``."""
    activity.resolve(node)
    policy = getattr(ctx.user, "call_policy", None) or CallPolicy()
    return CallTreeTransformer(ctx, policy).visit(node)
