"""Code libraries of functions only ever linked into their callers: no machine code of their own.

A function compiled without a CPython or C wrapper (the helpers of generated modules, the
runtime's checks, products, vector math) is called only from other compiled functions, and
Numba links its optimized IR into each caller's module, where LLVM inlines it or emits a copy.
Numba still emits the function's own machine code, which nothing calls (~0.5 s of the 4 s a
program's first compile took with an empty cache). A ``LinkOnlyLibrary`` is finalized as
Numba's (callees linked, optimized: the IR its callers link) but gives the execution engine only
a module of its environment globals, which Numba sets when it reloads the function from the
cache; its cached object holds those alone, its cached bitcode is what callers link, as before.

A library with any other global that other code could refer to by name is finalized as Numba
finalizes it.
"""

from __future__ import annotations

import weakref

import llvmlite.binding as ll
import llvmlite.ir as llvmir
from numba.core import cgutils, codegen

_ENV_PREFIX = "_ZN08NumbaEnv"  # Numba's mangled names of environment globals
_LOCAL = (ll.Linkage.private, ll.Linkage.internal)


class LinkOnlyLibrary(codegen.JITCodeLibrary):
    """A JIT code library whose functions are linked into callers, never run from it."""

    def _finalize_final_module(self) -> None:
        module = self._globals_module()
        if module is None:
            super()._finalize_final_module()
            return
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        # (Numba's object cache hooks find the library by this attribute of the module compiled)
        module._CPUCodeLibrary__library = weakref.proxy(self)
        cleanup = self._codegen._add_module(module)
        if cleanup:
            weakref.finalize(self, cleanup)
        self._codegen._engine.finalize_object()
        self._finalized = True

    def _globals_module(self) -> ll.ModuleRef | None:
        """A module defining the environment globals of the final module (None if it defines
        another global visible outside it)."""
        names = []
        for variable in self._final_module.global_variables:
            if variable.is_declaration or variable.linkage in _LOCAL:
                continue
            if variable.linkage != ll.Linkage.common or not variable.name.startswith(_ENV_PREFIX):
                return None
            names.append(variable.name)
        module = self._codegen._create_empty_module(self.name)
        for name in names:
            variable = llvmir.GlobalVariable(module, cgutils.voidptr_t, name=name)
            variable.linkage = "common"
            variable.initializer = cgutils.get_null_value(cgutils.voidptr_t)
        return ll.parse_assembly(str(module))
