"""The Python objects a compiled function's CPython wrapper embeds, unpickled once per process.

Numba's wrapper boxes each array it returns with the array's Python class (``np.ndarray``),
which it embeds pickled and unpickles at every call: ``numba_unpickle`` makes three Python
objects and calls ``numba.core.serialize._numba_unpickle``, whose memo hashes a bytes key —
about 0.2 us of a 0.45 us call of ``x + 1`` on a small array, more than the rest of the
boxing (issue 14, goal 3). ``PythonAPI`` here is Numba's code generator for the C API with one
change: an object embedded as a constant (``serialize_object``) is unpickled at the wrapper's
first call and kept in a global of the module, so later calls load it. Each use still gets its
own reference, as from ``numba_unpickle``; an unpickling error is raised as before and retried
at the next call. Objects whose pickle is built at run time (an exception's arguments) are not
constants and are unpickled as before. ``direct`` compiles its wrappers with it.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, pythonapi

_PICKLED_CONSTANT = ".const.picklebuf."  # serialize_object's global names (Numba's)


class PythonAPI(pythonapi.PythonAPI):
    """Numba's ``PythonAPI``, unpickling each embedded constant once per process."""

    def unserialize(self, structptr):
        if not (isinstance(structptr, ir.GlobalVariable) and structptr.global_constant
                and structptr.name.startswith(_PICKLED_CONSTANT)):
            return super().unserialize(structptr)
        return self.builder.call(self._getter(structptr), ())

    def _getter(self, structptr: ir.GlobalVariable) -> ir.Function:
        """A function of the module giving a new reference to the object ``structptr``
        holds pickled (NULL with the error set where unpickling fails), unpickled once."""
        name = f"{structptr.name}.get"
        try:
            return self.module.get_global(name)
        except KeyError:
            pass
        getter = ir.Function(self.module, ir.FunctionType(self.pyobj, ()), name)
        getter.linkage = "internal"
        getter.attributes.add("noinline")  # (in line, it cost LLVM ~5% of a cold compile)
        kept = ir.GlobalVariable(self.module, self.pyobj, f"{structptr.name}.object")
        kept.linkage = "internal"
        kept.initializer = ir.Constant(self.pyobj, None)
        builder = ir.IRBuilder(getter.append_basic_block())
        api = pythonapi.PythonAPI(self.context, builder)
        with builder.if_then(cgutils.is_null(builder, builder.load(kept)), likely=False):
            builder.store(api.unserialize(structptr), kept)  # (the reference it makes is kept)
        value = builder.load(kept)
        api.incref(value)  # (Py_IncRef: NULL-safe)
        builder.ret(value)
        return getter
