"""The cuda target's runner: the optimized IR driven from the host, arrays resident on the GPU.

A call runs the module op by op, as the interpreter does (``interpreter.Frame``: frames, the
user's line on every error, recursion, Variables), with one difference: each op that has a rule
in ``RULES`` and array results runs as a CUDA kernel (``kernels``) on device arrays; every other
op runs on the host with the interpreter's NumPy reference. So control flow is the host's
(``cond``/``while`` read their 0-d predicate on the host: every 0-d result comes back at once,
one small copy), print/assert/raise report at run time as on the other targets, and an op with
no kernel still gives NumPy's answer (README "CUDA" lists which ops run where).
Values move lazily: a NumPy argument is copied to the GPU when a kernel first reads it, a device
array is copied back when a host op first reads it, and each copy is kept for the rest of the
call (``_Transfers``; SSA values never change, and an in-place write goes only to a value that
is dead afterwards). Results come back as NumPy values, unless an argument is a GPU array: then
array results stay on the device (``_Placement``), so that a caller holding GPU arrays never
pays a copy to the host and back.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from autostage.runtime import config, interpreter, ir
from autostage.runtime.backends.cuda import device, kernels, scalar_code
from autostage.runtime.inputs import device_array
from autostage.runtime.ops import fused as fused_op
from autostage.runtime.ops.elementwise import UFUNCS
from autostage.runtime.ops.indexing import build_index
from autostage.runtime.ops.shapes import fill_shape
from autostage.runtime.types import TensorType


def on_device(value: object) -> bool:
    """A GPU array: ours (numba.cuda), or an argument of another library (CuPy, ...)."""
    return not isinstance(value, np.ndarray | np.generic) and device_array(value)


class _Transfers:
    """The copies made during one call, each way (keyed by the identity of the source, which
    each entry keeps alive)."""

    __slots__ = ("cuda", "hosted", "placed")

    def __init__(self, cuda):
        self.cuda = cuda
        self.hosted: dict[int, tuple[object, np.ndarray]] = {}
        self.placed: dict[int, tuple[object, object]] = {}

    def host(self, value: object) -> object:
        """``value`` as NumPy (a tensor list with its items as NumPy)."""
        if type(value) is list:  # a tensor list may hold device arrays
            return [self.host(v) for v in value]
        if not on_device(value):
            return value
        found = self.hosted.get(id(value))
        if found is None:
            found = self.hosted[id(value)] = (value, self._numba(value).copy_to_host())
        return found[1]

    def device(self, value: object):
        """``value`` as a C-contiguous numba.cuda array."""
        if hasattr(value, "copy_to_host") and value.is_c_contiguous():  # ours (the usual case)
            return value
        found = self.placed.get(id(value))
        if found is None:
            array = (self._numba(value) if on_device(value)
                     else self.cuda.to_device(np.ascontiguousarray(value)))
            found = self.placed[id(value)] = (value, array)
        return found[1]

    def forget(self, value: object) -> None:
        self.hosted.pop(id(value), None)
        self.placed.pop(id(value), None)

    def _numba(self, value):
        """A GPU array as a numba.cuda array of the same memory, C-contiguous (a strided
        argument of another library is copied: kernels read contiguous arrays)."""
        array = value if hasattr(value, "copy_to_host") else self.cuda.as_cuda_array(value)
        if array.is_c_contiguous():
            return array
        return self.cuda.to_device(np.ascontiguousarray(array.copy_to_host()))


class CudaFrame(interpreter.Frame):
    """One call of a function of the module on the cuda target."""

    __slots__ = ("transfers", "kernels")

    def __init__(self, module: ir.Module, function: ir.Function, transfers: _Transfers,
                 compiled: dict, depth: int = 0):
        super().__init__(module, function, depth)
        self.transfers = transfers
        self.kernels = compiled  # compiled kernels and launch configurations of the module

    def callee_frame(self, function: ir.Function) -> CudaFrame:
        return CudaFrame(self.module, function, self.transfers, self.kernels, self.depth + 1)

    def evaluate(self, op: ir.Op, operands: tuple) -> tuple:
        rule = RULES.get(op.name)
        if rule is not None and _array_results(op):
            results = rule(op, operands, self)
            if results is not None:
                return results
        if op.regions or op.name in _PASS_THROUGH:  # their values pass through unread
            return super().evaluate(op, operands)
        results = super().evaluate(op, tuple([self.transfers.host(v) for v in operands]))
        for result in results:  # an op writing in place returns the array it wrote:
            self.transfers.forget(result)  # its earlier copy on the device is stale
        return results

    def kernel(self, op: ir.Op, variant: object, make: Callable[[], kernels.Kernel]):
        key = (op, variant)
        found = self.kernels.get(key)
        if found is None:
            found = self.kernels[key] = make().compiled()
        return found

    def launch(self, kernel, grid, block):
        """``kernel[grid, block]``, made once per configuration: numba.cuda warns about a grid
        of few blocks when one is made, which is no news to a user of small arrays. (Not kept
        on the simulator: its ``kernel[grid, block]`` configures ``kernel`` itself and returns
        it, so a kept one would launch with the configuration made last.)"""
        key = (kernel, grid, block)
        found = self.kernels.get(key)
        if found is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=Warning)
                found = kernel[grid, block]
            if not device.simulated():
                self.kernels[key] = found
        return found

    def empty(self, shape: tuple[int, ...], dtype: np.dtype):
        return self.transfers.cuda.device_array(shape, dtype=dtype)


def _array_results(op: ir.Op) -> bool:
    return all(isinstance(v.type, TensorType) for v in op.results) and any(
        v.type.ndim for v in (*op.operands, *op.results) if isinstance(v.type, TensorType))


def _launch_elementwise(op: ir.Op, frame: CudaFrame, ops: list[ir.Op], args: list[ir.Value],
                        result: ir.Value, operands: tuple):
    """Runs ``ops`` (element-wise, computing ``result`` from ``args`` = ``operands``) as one
    kernel; returns the device array of ``result``, or None when it is 0-d (a host op)."""
    shape = np.broadcast_shapes(*[v.shape for v in operands])  # NumPy's ValueError
    if not shape:
        return None
    n = int(np.prod(shape))
    ranks = [len(v.shape) for v in operands]
    direct = all(r == 0 or tuple(v.shape) == shape for v, r in zip(operands, ranks, strict=True))
    kernel = frame.kernel(op, (direct, tuple(ranks)), lambda: kernels.elementwise(
        ops, args, result, ranks, len(shape), direct))
    values = [a.type.dtype.type(v) if r == 0 else frame.transfers.device(v)
              for v, a, r in zip(operands, args, ranks, strict=True)]
    out = frame.empty(shape, result.type.dtype)
    if n:
        frame.launch(kernel, kernels.blocks(n), kernels.THREADS)(out, n, *values)
    return out


def _elementwise(op: ir.Op, operands: tuple, frame: CudaFrame):
    if not scalar_code.supports(op):
        return None
    out = _launch_elementwise(op, frame, [op], list(op.operands), op.results[0], operands)
    return None if out is None else (out,)


def _fused(op: ir.Op, operands: tuple, frame: CudaFrame):
    (body,) = op.regions
    last = body.ops[-1]
    reduction = last if fused_op.is_fusible_reduction(last) else None
    element_ops = body.ops[:-1] if reduction else body.ops
    looped = reduction.operands[0] if reduction else body.results[0]
    if len(op.results) != 1 or not all(scalar_code.supports(o) for o in element_ops):
        return None
    if element_ops:
        values = _launch_elementwise(op, frame, element_ops, list(body.args), looped, operands)
        if values is None:
            return None
    else:
        values = operands[body.args.index(looped)]
    if reduction is None:
        return (values,)
    whole = reduction.attrs.get("axis") is None
    (out,) = _reduced(reduction.name, whole, op.results[0].type.dtype, values, frame, op)
    return (_kept(out, tuple(values.shape), whole) if reduction.attrs.get("keepdims") else out,)


def reduces_on_device(op: ir.Op) -> bool:
    """A sum/max/min a reduction kernel computes: over all axes or one, keepdims or not, in its
    result dtype (no ``dtype=``), of plain numbers (max/min: ordered by ``>``)."""
    if len(op.operands) != 1 or op.attrs.get("dtype") is not None:
        return False
    x = op.operands[0].type
    if not isinstance(x, TensorType) or x.ndim == 0 or not scalar_code.fuses(op):
        return False
    if op.name != "sum" and x.dtype.kind not in "iuf":
        return False
    axis = op.attrs.get("axis")
    return axis is None or len(axis) == 1


def _reduction(op: ir.Op, operands: tuple, frame: CudaFrame):
    if not reduces_on_device(op):
        return None
    axis = op.attrs.get("axis")
    x = operands[0]
    shape = tuple(x.shape)
    dtype = op.results[0].type.dtype
    if axis is None or axis[0] == len(shape) - 1:
        (out,) = _reduced(op.name, axis is None, dtype, x, frame, op)
    else:
        out = _reduced_axis(op, axis[0], dtype, x, frame)
    if not op.attrs.get("keepdims"):
        return (out,)
    return (_kept(out, shape, axis is None, axis),)


def _kept(out, shape: tuple[int, ...], whole: bool, axis: tuple[int] | None = None):
    """A reduction's result ``out`` with the reduced axes of ``shape`` kept (size 1): all of
    them (``whole``), else ``axis`` (default: the last)."""
    reduced = len(shape) - 1 if axis is None else axis[0]
    kept = tuple(1 if whole or k == reduced else d for k, d in enumerate(shape))
    return out.reshape(kept) if not on_device(out) else _shaped(out, kept)


def _check_identity(name: str, reduced: int) -> None:
    """NumPy's error for a max/min over no elements (a sum of none is 0)."""
    if name != "sum" and reduced == 0:
        ufunc = {"max": "maximum", "min": "minimum"}[name]
        raise ValueError(f"zero-size array to reduction operation {ufunc} which has no identity")


def _reduced_axis(op: ir.Op, axis: int, dtype: np.dtype, x, frame: CudaFrame):
    """The reduction of ``x`` over ``axis`` (not the last), as a device array (0-d: host)."""
    shape = tuple(x.shape)
    _check_identity(op.name, shape[axis])
    outer, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    n = outer * inner
    out = frame.empty(n, dtype)
    if n:
        source = np.dtype(x.dtype)
        kernel = frame.kernel(op, ("axis", source), lambda: kernels.reduce_axis(
            op.name, source, dtype))
        view = _shaped(frame.transfers.device(x), (outer, shape[axis], inner))
        frame.launch(kernel, kernels.blocks(n), kernels.THREADS)(view, out, n)
    return _shaped(out, shape[:axis] + shape[axis + 1:])


def _reduced(name: str, whole: bool, dtype: np.dtype, x, frame: CudaFrame, key: ir.Op):
    """The ``name`` reduction (sum/max/min) of ``x`` over all axes (``whole``) or the last,
    accumulated in ``dtype`` on the device; a 0-d result comes back to the host."""
    shape = tuple(x.shape)
    reduced = int(np.prod(shape)) if whole else shape[-1]
    _check_identity(name, reduced)
    x = frame.transfers.device(x)
    source = np.dtype(x.dtype)
    if whole:
        n = reduced
        flat = x.reshape(n) if n else frame.empty(0, source)
        first = frame.kernel(key, ("all", source), lambda: kernels.reduce_all(name, source, dtype))
        grid = max(1, min(-(-n // kernels.THREADS), kernels.PARTIALS))
        partial = frame.empty(grid, dtype)
        frame.launch(first, grid, kernels.THREADS)(flat, n, partial)
        if grid > 1:
            second = frame.kernel(key, ("all", dtype), lambda: kernels.reduce_all(
                name, dtype, dtype))
            total = frame.empty(1, dtype)
            frame.launch(second, 1, kernels.THREADS)(partial, grid, total)
            partial = total
        return (partial.copy_to_host().reshape(()),)
    rows = int(np.prod(shape[:-1]))
    out = frame.empty(rows, dtype)
    if rows:
        kernel = frame.kernel(key, ("rows", source), lambda: kernels.reduce_rows(
            name, source, dtype))
        frame.launch(kernel, max(1, min(rows, kernels.MAX_BLOCKS)), kernels.THREADS)(
            x.reshape(rows, shape[-1]), out)
    return (_shaped(out, shape[:-1]),)


def _stack(op: ir.Op, operands: tuple, frame: CudaFrame):
    """``np.stack`` of a list of arrays of one shape, copied on the device."""
    (items,) = operands
    if not any(on_device(v) for v in items):
        return None  # (0-d items are always on the host)
    shape = tuple(items[0].shape)
    if any(tuple(v.shape) != shape for v in items):
        raise ValueError("all input arrays must have the same shape")
    out = frame.empty((len(items), *shape), op.results[0].type.dtype)
    for i, item in enumerate(items):
        out[i].copy_to_device(frame.transfers.device(item))
    return (out,)


def _shaped(x, shape: tuple[int, ...]):
    """``x`` (contiguous, on the device) viewed as ``shape``; a 0-d value comes to the host."""
    if not shape:
        return x.copy_to_host().reshape(())
    return x.reshape(*shape) if tuple(x.shape) != tuple(shape) else x


def _mean(op: ir.Op, operands: tuple, frame: CudaFrame):
    """``mean`` of a non-empty float array over all axes: the sum, then NumPy's own division
    (``_methods._mean``: by an ``intp`` count, then back to the result dtype)."""
    x = op.operands[0].type
    if (op.attrs.get("axis") is not None or op.attrs.get("keepdims")
            or op.attrs.get("dtype") is not None or x.dtype.kind != "f"
            or x.dtype == np.float16 or not int(np.prod(operands[0].shape))):
        return None
    dtype = op.results[0].type.dtype
    (total,) = _reduced("sum", True, dtype, operands[0], frame, op)
    return (np.asarray(dtype.type(total[()] / np.intp(int(np.prod(operands[0].shape))))),)


def _matmul(op: ir.Op, operands: tuple, frame: CudaFrame):
    a, b = op.operands
    dtype = op.results[0].type.dtype
    if not (a.type.dtype == b.type.dtype == dtype and dtype in (np.float32, np.float64)
            and (a.type.ndim, b.type.ndim) in ((2, 2), (2, 1), (1, 2), (1, 1))):
        return None
    x, y = operands
    xs, ys = tuple(x.shape), tuple(y.shape)  # (the simulator's shapes refuse shape[-1])
    k = xs[-1]
    inner = ys[0]
    if k != inner:
        if op.name == "dot":
            raise ValueError(f"shapes {xs} and {ys} not aligned: {k} (dim {len(xs) - 1}) != "
                             f"{inner} (dim 0)")
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {inner} is "
                         f"different from {k})")
    m = xs[0] if len(xs) == 2 else 1
    n = ys[1] if len(ys) == 2 else 1
    left = _shaped(frame.transfers.device(x), (m, k)) if m * k else frame.empty((m, k), dtype)
    right = _shaped(frame.transfers.device(y), (k, n)) if k * n else frame.empty((k, n), dtype)
    out = frame.empty((m, n), dtype)
    if m and n and k and _cublas() is not None:
        cupy = _cublas()
        cupy.matmul(cupy.asarray(left), cupy.asarray(right), out=cupy.asarray(out))
    elif m and n:
        kernel = frame.kernel(op, dtype, lambda: kernels.matmul(dtype))
        grid = (-(-n // kernels.TILE), -(-m // kernels.TILE))
        frame.launch(kernel, grid, (kernels.TILE, kernels.TILE))(left, right, out)
    shape = (xs[:-1] if len(xs) == 2 else ()) + (ys[1:] if len(ys) == 2 else ())
    return (_shaped(out, shape),)


_CUPY: list = []  # [cupy or None], imported once


def _cublas():
    """CuPy, when installed, usable here and allowed (``config.CUDA_CUBLAS``), else None."""
    if not config.CUDA_CUBLAS.value() or device.simulated():
        return None
    if not _CUPY:
        try:
            import cupy
        except Exception:  # noqa: BLE001 - not installed, or built for another CUDA
            cupy = None
        _CUPY.append(cupy)
    return _CUPY[0]


def _transpose(op: ir.Op, operands: tuple, frame: CudaFrame):
    (x,) = operands
    axes = tuple(op.attrs["axes"])
    if len(x.shape) < 2:
        return None
    shape = tuple(x.shape[a] for a in axes)
    n = int(np.prod(shape))
    out = frame.empty(shape, op.results[0].type.dtype)
    if n:
        dtype = op.results[0].type.dtype
        kernel = frame.kernel(op, dtype, lambda: kernels.permute(axes, dtype))
        frame.launch(kernel, kernels.blocks(n), kernels.THREADS)(frame.transfers.device(x), out, n)
    return (out,)


def _reshape(op: ir.Op, operands: tuple, frame: CudaFrame):
    """A view of a device array (a NumPy operand stays a host op: a view is free there)."""
    x = operands[0]
    if not on_device(x):
        return None
    shape = _resolve(fill_shape(op.attrs["shape"], operands[1:]), int(np.prod(x.shape)))
    return (_shaped(frame.transfers.device(x), shape),)


def _view(op: ir.Op, operands: tuple, frame: CudaFrame):
    """expand_dims / squeeze of a device array: the shape NumPy gives a stand-in of no memory."""
    x = operands[0]
    if not on_device(x):
        return None
    shape = tuple(x.shape)
    standin = np.lib.stride_tricks.as_strided(np.zeros(1, x.dtype), shape, (0,) * len(shape))
    (shaped,) = interpreter.Frame.evaluate(frame, op, (standin,))
    return (_shaped(frame.transfers.device(x), shaped.shape),)


def _getitem(op: ir.Op, operands: tuple, frame: CudaFrame):
    """``x[i, j, a:b]`` (integers, then at most one slice of step 1): a contiguous view of
    ``x`` on the device (a NumPy ``x`` is copied there once per call: a loop over its rows
    reads them there). Other indexing runs on the host."""
    x, *staged = operands
    if op.results[0].type.ndim == 0 or any(len(v.shape) for v in staged):
        return None
    index = build_index(op.attrs["index"], [frame.transfers.host(v) for v in staged])
    shape = tuple(x.shape)
    if len(index) > len(shape):
        return None
    view = []
    for axis, (item, size) in enumerate(zip(index, shape, strict=False)):
        if isinstance(item, slice):
            if axis != len(index) - 1 or item.step not in (None, 1):
                return None
            start, stop, _ = item.indices(size)
            view.append(slice(start, max(start, stop)))
        elif isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_):
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for axis {axis} with size "
                                 f"{size}")
            view.append(int(item) % size)
        else:
            return None
    return (frame.transfers.device(x)[tuple(view)],)


def _fill(op: ir.Op, operands: tuple, frame: CudaFrame):
    """``full`` / ``full_like``: a kernel writes the fill value, cast as np.full casts it."""
    t = op.results[0].type
    shape = (tuple(operands[0].shape) if op.name == "full_like"
             else fill_shape(op.attrs["shape"], operands[1:]))
    if any(d < 0 for d in shape) or t.dtype.kind not in "biuf" or t.dtype == np.float16:
        return None  # (NumPy's error for a negative size, on the host)
    value = np.full((), frame.transfers.host(operands[-1] if op.name == "full_like"
                                             else operands[0]), t.dtype)[()]
    out = frame.empty(shape, t.dtype)
    n = int(np.prod(shape))
    if n:
        kernel = frame.kernel(op, len(shape), lambda: fill_kernel(t.dtype, len(shape)))
        frame.launch(kernel, kernels.blocks(n), kernels.THREADS)(out, n, value)
    return (out,)


def fill_kernel(dtype: np.dtype, rank: int) -> kernels.Kernel:
    """The kernel writing its one scalar argument into every element of ``out``."""
    (value,) = ir.Region([TensorType(np.dtype(dtype), ())]).args
    return kernels.elementwise([], [value], value, [0], rank, True)


def _resolve(shape: tuple[int, ...], total: int) -> tuple[int, ...]:
    """``shape`` with its -1 filled in, as ``np.reshape`` does (and its ValueError)."""
    known = int(np.prod([d for d in shape if d != -1]))
    if -1 in shape and known and total % known == 0:
        shape = tuple(total // known if d == -1 else d for d in shape)
    if int(np.prod(shape)) != total or -1 in shape:
        raise ValueError(f"cannot reshape array of size {total} into shape {shape}")
    return shape


# op name -> rule(op, operands, frame) -> results, or None to run the op on the host
RULES: dict[str, Callable] = {
    **{name: _elementwise for name in (*UFUNCS, "where", "cast")},
    "fused": _fused,
    "sum": _reduction, "max": _reduction, "min": _reduction, "mean": _mean,
    "matmul": _matmul, "dot": _matmul,
    "transpose": _transpose, "reshape": _reshape, "expand_dims": _view, "squeeze": _view,
    "list_stack": _stack, "getitem": _getitem, "full": _fill, "full_like": _fill,
}
# List ops only move their items: a device array stays on the device in a tensor list.
_PASS_THROUGH = frozenset({"list_new", "list_append", "list_pop", "list_get", "list_set",
                           "list_length"})


def prepare(module: ir.Module) -> Callable[[list], tuple]:
    """The runner of an optimized module: ``run(args) -> results`` (NumPy values, or GPU
    arrays for a call with GPU arguments: ``_Placement``)."""
    device.require_installed()
    compiled: dict = {}
    function = module.functions[module.entry]
    on_gpu = _device_results(function)

    def run(args: list) -> tuple:
        cuda = device.require_device()
        transfers = _Transfers(cuda)
        frame = CudaFrame(module, function, transfers, compiled)
        # GPU arrays of other libraries (CuPy, PyTorch) as numba.cuda arrays of their memory
        own = [transfers.device(a) if on_device(a) else a for a in args]
        # as compiled code: no FloatingPointError, no warnings; kernels round as NumPy does
        with np.errstate(all="ignore"), device.separate_roundings():
            results = frame.run_function(own)
        # an argument returned itself is returned as the same object (Python's identity)
        given = {id(o): a for o, a in zip(own, args, strict=True)}
        placement = _Placement.of(args, transfers)

        def returned(value: object, keep: bool) -> object:
            if id(value) in given:
                return given[id(value)]
            if keep and placement is not None:
                return placement.returned(value)
            return interpreter.to_user(transfers.host(value))

        return tuple(map(returned, results, on_gpu))

    run.copy_result = _copy_result  # (result_identity: a result Python returns as a new array)
    return run


def _device_results(function: ir.Function) -> tuple[bool, ...]:
    """Per result of ``function``: whether a call with GPU arguments returns it on the device.
    Arrays do; 0-d values come back as NumPy scalars or Python numbers, as on every target.
    So does a 1-d stack of 0-d values made for the caller (``empty_ok``: a returned list of
    numbers, which ``Outputs`` rebuilds from it, or ``np.array`` of one, the same op): Python
    hands back the list's items as host scalars, a list of a device array's would not be."""
    defined = {v: op for op in function.body.ops for v in op.results}
    keep = []
    for value in function.body.results:
        op = defined.get(value)
        scalars = (op is not None and op.name == "list_stack" and op.attrs.get("empty_ok")
                   and value.type.ndim == 1)
        keep.append(isinstance(value.type, TensorType) and value.type.ndim > 0 and not scalars)
    return tuple(keep)


class _Placement:
    """Where a call with GPU arguments returns its array results: on the device, without a
    copy to the host (one the caller would copy back for its next GPU call). A result a kernel
    computed is returned as it is, one a host op computed is copied to the device; both as
    numba.cuda arrays (``__cuda_array_interface__``: CuPy and PyTorch view them without a
    copy), or as CuPy arrays when the first GPU argument is one."""

    __slots__ = ("transfers", "wrap")

    def __init__(self, transfers: _Transfers, wrap: Callable[[object], object] | None):
        self.transfers = transfers
        self.wrap = wrap  # numba.cuda array -> the user's library's array (None: itself)

    @classmethod
    def of(cls, args: list, transfers: _Transfers) -> _Placement | None:
        """The placement of a call with these arguments; None when none is a GPU array (the
        results come back as NumPy values)."""
        first = next((a for a in args if on_device(a)), None)
        if first is None:
            return None
        if type(first).__module__.partition(".")[0] == "cupy":
            import cupy  # (imported already: the argument is one of its arrays)

            return cls(transfers, cupy.asarray)  # a view of the same memory
        return cls(transfers, None)

    def returned(self, value: object) -> object:
        """``value`` (an array result) as a GPU array of the user's library."""
        array = value if on_device(value) else self.transfers.device(value)
        return array if self.wrap is None else self.wrap(array)


def _copy_result(value: object) -> object:
    """A new array equal to ``value``, of its kind: a numba.cuda array has no ``copy()``."""
    if not hasattr(value, "copy_to_host"):  # NumPy, CuPy
        return value.copy()
    cuda = device.cuda_module()
    if not value.is_c_contiguous():
        return cuda.to_device(np.ascontiguousarray(value.copy_to_host()))
    copy = cuda.device_array(tuple(value.shape), dtype=value.dtype)
    copy.copy_to_device(value)
    return copy
