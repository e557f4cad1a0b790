"""Staging of NumPy's linear algebra on tensors: ``np.linalg.solve``, ``inv``, ``det``,
``slogdet``, ``cholesky``, ``qr``, ``eigh``, ``eigvalsh``, ``eig``, ``eigvals``, ``svd``,
``svdvals``, ``lstsq``, ``pinv``, ``matrix_rank``, ``matrix_power``, ``cond``, ``multi_dot``, and
``np.inner``, ``np.vdot``, ``np.tensordot``.

Each call stages one ``numpy_linalg`` op (``ops/numpy_linalg.py``), computed by NumPy itself on
every target, so values, dtypes and errors are NumPy's. Arguments are bound with the NumPy
function's own signature (NumPy's ``TypeError`` for a wrong one); array arguments are staged,
the other arguments (``mode``, ``UPLO``, ``rcond``, ``axes``, ``n``...) must be known when
tracing: a staged value there is a ``StagingTypeError`` naming the function and argument.
Results come back in NumPy's containers: ``QRResult``, ``EighResult``, ``SVDResult``,
``SlogdetResult``, ``EigResult`` (namedtuples: ``q, r = ...`` and ``res.Q`` both work), a plain
tuple for ``lstsq`` and ``qr(mode='raw')``, one tensor otherwise.

Refused: ``eig``/``eigvals`` of a real matrix (NumPy returns real or complex arrays depending
on the values: the type of the result is not known when tracing) and ``multi_dot(out=...)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
from autostage.runtime import array_api, tracing, value_info
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.ops import numpy_linalg as op
from autostage.runtime.tensor import StagingTypeError, Tensor
from autostage.runtime.tracing import at as _at  # " at file:line" for messages

_PYTHON_RESULTS = (bool, int, float, complex)


def _constant(name: str, parameter: str, value: object) -> object:
    """A non-array argument as a hashable Python constant, or NumPy's own value check."""
    if isinstance(value, Staged):
        raise StagingTypeError(
            f"{name}: the argument {parameter} must be known when tracing (a Python value), "
            f"not a staged value{_at()}")
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_constant(name, parameter, v) for v in value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value.item()
        raise StagingTypeError(f"{name}: an array for the argument {parameter} is not "
                               f"supported on staged tensors; pass a Python number{_at()}")
    return value


def _staging(function: str, arrays: tuple[str, ...], check: Callable | None = None
             ) -> Callable:
    """The staged version of NumPy's ``function`` (a key of ``ops.numpy_linalg.FUNCTIONS``)
    whose parameters ``arrays`` are staged operands (the others constants)."""
    numpy_function = {"linalg.multi_dot": np.linalg.multi_dot}.get(
        function, op.FUNCTIONS[function][0])
    signature = inspect.signature(numpy_function)
    name = f"np.{function}"

    def staged(*args: object, **kwargs: object) -> object:
        bound = signature.bind(*args, **kwargs)  # NumPy's TypeError for a wrong call
        operands: list[Tensor] = []
        options: list[tuple[str, object]] = []
        for parameter, value in bound.arguments.items():
            if parameter == "arrays":
                if isinstance(value, Staged) and not isinstance(value, Tensor):
                    raise StagingTypeError(f"{name} of a staged list is not supported; pass a "
                                           f"Python list or tuple of arrays{_at()}")
                operands += [array_api.as_tensor(v) for v in value]
            elif parameter in arrays:
                operands.append(array_api.as_tensor(value))
            elif parameter == "out" and value is None:
                continue
            elif parameter == "out":
                raise StagingTypeError(f"{name}(..., out=...) cannot be staged: staged values "
                                       f"are immutable. Use the returned value instead{_at()}")
            else:
                options.append((parameter, _constant(name, parameter, value)))
        if check is not None:
            check(name, operands, dict(options))
        return _emit(function, operands, tuple(options))
    staged.__name__ = numpy_function.__name__
    return staged


def _emit(function: str, operands: list[Tensor], kwargs: tuple) -> object:
    values = [t.value for t in operands]
    results = tracing.emit("numpy_linalg", values, {"function": function, "kwargs": kwargs})
    sample = op.sample(function, kwargs, tuple(t.dtype for t in operands),
                       tuple(t.ndim for t in operands))
    for value, found in zip(results, op.results(sample), strict=True):
        if type(found) in _PYTHON_RESULTS:  # matrix_rank of a vector: a Python int
            value_info.mark_weak(value)
    tensors = [Tensor(v) for v in results]
    if not isinstance(sample, tuple):
        return tensors[0]
    kind = type(sample)
    return kind(*tensors) if hasattr(kind, "_fields") else kind(tensors)


def _complex_only(name: str, operands: list[Tensor], options: dict) -> None:
    if operands[0].dtype.kind != "c":
        raise StagingTypeError(
            f"{name} of a real ({operands[0].dtype}) matrix is not supported on staged tensors"
            f"{_at()}: NumPy returns real or complex arrays depending on the values. Cast it "
            f"first ({name}(a.astype(np.complex128))), or use np.linalg.eigh/eigvalsh for a "
            "symmetric matrix")


FUNCTIONS: dict[Callable, Callable] = {
    np.linalg.solve: _staging("linalg.solve", ("a", "b")),
    np.linalg.inv: _staging("linalg.inv", ("a",)),
    np.linalg.det: _staging("linalg.det", ("a",)),
    np.linalg.slogdet: _staging("linalg.slogdet", ("a",)),
    np.linalg.cholesky: _staging("linalg.cholesky", ("a",)),
    np.linalg.qr: _staging("linalg.qr", ("a",)),
    np.linalg.eigh: _staging("linalg.eigh", ("a",)),
    np.linalg.eigvalsh: _staging("linalg.eigvalsh", ("a",)),
    np.linalg.eig: _staging("linalg.eig", ("a",), _complex_only),
    np.linalg.eigvals: _staging("linalg.eigvals", ("a",), _complex_only),
    np.linalg.svd: _staging("linalg.svd", ("a",)),
    np.linalg.svdvals: _staging("linalg.svdvals", ("x",)),
    np.linalg.lstsq: _staging("linalg.lstsq", ("a", "b")),
    np.linalg.pinv: _staging("linalg.pinv", ("a",)),
    np.linalg.matrix_rank: _staging("linalg.matrix_rank", ("A",)),
    np.linalg.matrix_power: _staging("linalg.matrix_power", ("a",)),
    np.linalg.cond: _staging("linalg.cond", ("x",)),
    np.linalg.multi_dot: _staging("linalg.multi_dot", ()),
    np.inner: _staging("inner", ("a", "b")),
    np.vdot: _staging("vdot", ("a", "b")),
    np.tensordot: _staging("tensordot", ("a", "b")),
}
