"""Replaces every function of an installed package by its ``autostage.to_graph`` version.

``convert_package("toolz")`` imports the package and all its modules (test subpackages left out),
then swaps, in place, every plain function *defined in the package* for ``to_graph(fn)``:
module-level functions (and every other module attribute that is the same object, so that
``from .core import f`` re-exports see the converted one), methods, static and class methods and
the accessors of properties, in classes at any nesting depth. The wrapper ``to_graph`` returns
carries ``functools.wraps`` metadata (name, qualname, module, doc, ``__wrapped__``), so pickling by
qualified name and ``inspect.signature`` keep working.

Left as they are, each for a reason Python itself would give (recorded in ``Report.left``):

- generator and coroutine functions: converted code calls them as written (``calls.py``), and a
  converted generator would be an ordinary function (issue 8 item 1 is open);
- functions whose source autostage cannot read or convert (``to_graph`` raises): recorded in
  ``Report.refused`` with the error, so that a test can list them instead of hiding them;
- objects that are not plain functions (``functools.partial``, callable instances such as
  ``toolz.curry``, builtins, C functions): not functions that ``to_graph`` converts in place;
  their Python-level methods are converted with their classes;
- members named like attributes of ``type`` itself (a property called ``__name__``): ``setattr``
  on the class would rename the class, and a class ``__dict__`` cannot be written directly;
- ``__init_subclass__``/``__class_getitem__``/``__new__``: converted like any other method
  (Python stores them as class/static methods; they are unwrapped and rewrapped).

The caller names further exclusions (``skip``: qualified names) with a reason each.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.abc
import inspect
import pkgutil
import sys
import types
from collections.abc import Callable, Iterable

import autostage

_DATA_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)


@dataclasses.dataclass
class Report:
    converted: list[str] = dataclasses.field(default_factory=list)
    left: dict[str, str] = dataclasses.field(default_factory=dict)  # qualname -> why
    refused: dict[str, str] = dataclasses.field(default_factory=dict)  # qualname -> error


def package_modules(package: str, exclude: Iterable[str] = (".tests",)) -> list[types.ModuleType]:
    """The package and every submodule, imported; names containing an ``exclude`` part left out."""
    root = importlib.import_module(package)
    modules = [root]
    for info in pkgutil.walk_packages(getattr(root, "__path__", []), prefix=package + "."):
        if any(part in info.name + "." for part in (e + "." for e in exclude)):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


class _Converter:
    def __init__(self, package: str, skip: dict[str, str], exclude: Iterable[str],
                 lazy: bool):
        self.package = package
        self.lazy_mode = lazy
        self.exclude = tuple(exclude)
        self.skip = skip
        self.report = Report()
        self.done: dict[int, Callable] = {}  # id(original) -> replacement
        self.keep: list[Callable] = []  # originals, alive so that their ids stay unique

    def owns(self, fn: types.FunctionType) -> bool:
        module = getattr(fn, "__module__", None) or ""
        return module == self.package or module.startswith(self.package + ".")

    def owns_module(self, name: str) -> bool:
        return (name == self.package or name.startswith(self.package + ".")) and not any(
            part in name + "." for part in (e + "." for e in self.exclude))

    def function(self, fn: types.FunctionType) -> Callable:
        """``fn`` converted, or ``fn`` itself when it is left as written (with the reason)."""
        if id(fn) in self.done:
            return self.done[id(fn)]
        name = f"{fn.__module__}.{fn.__qualname__}"
        replacement: Callable = fn
        if name in self.skip:
            self.report.left[name] = self.skip[name]
        elif (inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn)
              or inspect.isasyncgenfunction(fn)):
            self.report.left[name] = "generator/coroutine function: runs as written"
        else:
            replacement = self.lazy(fn, name) if self.lazy_mode else self.convert(fn, name)
        self.done[id(fn)] = replacement
        self.done[id(replacement)] = replacement  # a second sweep must not convert it again
        self.keep.append(fn)
        return replacement

    def convert(self, fn: types.FunctionType, name: str) -> Callable:
        try:
            converted = autostage.to_graph(fn)
        except Exception as exc:  # a refusal is a result: listed, never hidden
            self.report.refused[name] = f"{type(exc).__name__}: {exc}"
            return fn
        self.report.converted.append(name)
        return converted

    def lazy(self, fn: types.FunctionType, name: str) -> Callable:
        """A stand-in that converts ``fn`` on its first call (only what the tests reach is
        converted: a large package converts in seconds instead of minutes)."""
        target: list[Callable] = []
        convert = self.convert

        @functools.wraps(fn)
        def first_call_converts(*args, **kwargs):
            if not target:
                target.append(convert(fn, name))
            return target[0](*args, **kwargs)

        # Converted callers call the stand-in as it is; it calls the converted function.
        return autostage.do_not_convert(first_call_converts)

    def member(self, value: object) -> object:
        """The converted form of a class member, or ``value`` unchanged."""
        if isinstance(value, types.FunctionType) and self.owns(value):
            return self.function(value)
        if isinstance(value, (staticmethod, classmethod)):
            inner = value.__func__
            if isinstance(inner, types.FunctionType) and self.owns(inner):
                new = self.function(inner)
                return value if new is inner else type(value)(new)
        if isinstance(value, property):
            parts = [self.member(f) for f in (value.fget, value.fset, value.fdel)]
            if any(p is not f for p, f in zip(parts, (value.fget, value.fset, value.fdel),
                                                strict=True)):
                return property(*parts, value.__doc__)
        return value

    def klass(self, cls: type, seen: set[int]) -> None:
        if id(cls) in seen:
            return
        seen.add(id(cls))
        for name, value in list(vars(cls).items()):
            if isinstance(value, type) and value.__module__ == cls.__module__:
                self.klass(value, seen)
                continue
            new = self.member(value)
            if new is value:
                continue
            if isinstance(vars(type).get(name), _DATA_DESCRIPTORS):
                # ``__name__``/``__doc__``/``__qualname__`` defined in the class body as a
                # property: setattr would set the class's own name, and a type's __dict__ is
                # read-only, so Python offers no way to swap it after the class exists.
                self.report.left[f"{cls.__module__}.{cls.__qualname__}.{name}"] = (
                    "member named like a type attribute: cannot be replaced on the class")
                continue
            setattr(cls, name, new)

    def module(self, module: types.ModuleType, seen: set[int]) -> None:
        if not self.owns_module(module.__name__):
            return
        for name, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and self.owns(value):
                new = self.function(value)
                if new is not value:
                    setattr(module, name, new)
            elif isinstance(value, type) and self.owns(value):
                self.klass(value, seen)


class _ConvertAfterExec(importlib.abc.MetaPathFinder):
    """Import hook: each module of the package is converted right after it executes, before
    another module can ``from it import f`` or capture ``f`` (``take = curry(take)``)."""

    def __init__(self, converter: _Converter, seen: set[int]):
        self.converter, self.seen = converter, seen

    def find_spec(self, name, path, target=None):
        if not self.converter.owns_module(name):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        hook = self

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                hook.converter.module(module, hook.seen)

        spec.loader = _Loader()
        return spec


def convert_package(package: str, skip: dict[str, str] | None = None,
                    exclude: Iterable[str] = (".tests",), lazy: bool = False) -> Report:
    """Converts ``package`` in place (see the module docstring); returns what was done.

    Best before the package is first imported: each module is then converted as soon as it has
    executed. Modules imported earlier are converted afterwards, and every module attribute
    bound to an original function is pointed at its converted version (a sweep by identity).
    ``lazy``: each function is converted on its first call instead of now."""
    converter = _Converter(package, dict(skip or {}), exclude, lazy)
    seen: set[int] = set()
    hook = _ConvertAfterExec(converter, seen)
    sys.meta_path.insert(0, hook)
    try:
        modules = package_modules(package, exclude)
    finally:
        sys.meta_path.remove(hook)
    for module in modules:
        converter.module(module, seen)
    return converter.report
