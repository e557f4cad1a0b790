"""Which NumPy arguments can be staged, checked once per trace, with errors naming the argument.

A staged argument is an ``np.ndarray`` or NumPy scalar of a supported dtype (``types.DTYPES``).
Around that rule:

- **Subclasses.** ``np.memmap`` is staged as the ndarray it is (no copy): NumPy itself returns
  plain ndarrays and NumPy scalars from computations on it. Every other ndarray subclass is
  refused: ``np.matrix`` and masked arrays change what operators mean, and a user subclass
  would come back from NumPy's own operations as an instance of that subclass (ufuncs, slices
  and reductions keep the subclass), which compiled code cannot reproduce.
- **Byte order.** A supported dtype in non-native byte order (``>f8`` on a little-endian machine)
  is staged as its native twin; the argument is copied to native order at each call
  (``native_order``), as NumPy computes in native order too.
- **Other dtypes** (object, str, bytes, datetime64, timedelta64, structured/void, longdouble)
  are refused with a ``StagingTypeError`` naming the argument and its dtype.
- **Arrays of other libraries** (CuPy, PyTorch, JAX, numba.cuda device arrays: anything with
  ``__cuda_array_interface__``, ``__dlpack__`` or ``__array_interface__``) are refused: as
  compile-time constants, what the function computed from them at trace time would be frozen
  into the trace and returned again after they change.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from autostage.runtime import tensor
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.types import DTYPES

# ndarray subclasses staged as ndarray: NumPy's own results from them are ndarrays/scalars.
STAGED_SUBCLASSES = (np.memmap,)

_REFUSED_SUBCLASSES = {
    np.matrix: "np.matrix changes what operators mean (`*` is a matrix product, results "
               "stay 2-D)",
    np.ma.MaskedArray: "a masked array carries a mask that staged code would ignore",
}


def subclass_key(leaf: np.ndarray) -> tuple:
    """The trace key of an ndarray-subclass argument: its type is part of it, so that a refused
    subclass never shares a trace with ndarray (its trace raises, naming the argument)."""
    return (type(leaf), leaf.dtype, leaf.ndim)


def _subclass_problem(kind: type) -> str | None:
    if kind is np.ndarray or kind in STAGED_SUBCLASSES:
        return None
    for base, why in _REFUSED_SUBCLASSES.items():
        if issubclass(kind, base):
            return why
    return (f"NumPy would return {kind.__name__} instances from operations on it (ufuncs, "
            "slices and reductions keep an ndarray subclass), which staged code returns as "
            "np.ndarray")


def check(leaf: np.ndarray | np.generic, label: str, function: str) -> None:
    """Raises StagingTypeError when argument ``leaf`` (``label``: ``argument 'x'[1]``) cannot be
    staged: a refused ndarray subclass or an unsupported dtype."""
    kind = type(leaf)
    if isinstance(leaf, np.ndarray):
        why = _subclass_problem(kind)
        if why is not None:
            raise StagingTypeError(
                f"{function}(): {label} is a {_qualified(kind)}, an ndarray subclass autostage "
                f"does not stage: {why}. Pass np.asarray({_short(label)}) (no copy) to stage "
                "its data as an ndarray")
    dtype = leaf.dtype
    if native(dtype) not in DTYPES:
        raise StagingTypeError(
            f"{function}(): {label} has dtype {dtype} ({_dtype_kind(dtype)}), which autostage "
            f"cannot stage; supported dtypes: {', '.join(str(d) for d in DTYPES)}")


def check_constant(value: np.ndarray) -> None:
    """Raises StagingTypeError when ``value``, an array the traced code reads (a global, an
    attribute, a trace-time result) as a constant, is a refused ndarray subclass: staged as
    its data, ``x * m`` of an ``np.matrix`` would be element-wise and a masked array's mask
    ignored (silently different answers)."""
    why = _subclass_problem(type(value))
    if why is not None:
        raise StagingTypeError(
            f"autostage cannot stage a {_qualified(type(value))}, an ndarray subclass, where "
            f"converted code computes with it: {why}. Compute with np.asarray(...) of it (no "
            "copy) to stage its data as an ndarray, or do this work outside the converted "
            "function")


tensor.subclass_check = check_constant


def _qualified(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


_FOREIGN = ("__cuda_array_interface__", "__dlpack__", "__array_interface__")


def device_array(leaf: object) -> bool:
    """Whether ``leaf`` is a GPU array (``__cuda_array_interface__``: numba.cuda, CuPy, ...),
    which the cuda target stages like an ndarray, without copying it."""
    return _has(leaf, "__cuda_array_interface__") or _simulated(leaf)


def _has(leaf: object, name: str) -> bool:
    """Whether ``leaf`` has the protocol attribute ``name``, on its class (as libraries define
    them) or in its ``__dict__``: found without running the user's ``__getattr__`` (an
    attribute dict's raises KeyError for any name)."""
    if hasattr(type(leaf), name):
        return True
    try:
        attributes = object.__getattribute__(leaf, "__dict__")
    except AttributeError:
        return False
    return type(attributes) is dict and name in attributes


def _simulated(leaf: object) -> bool:
    """A device array of the CUDA simulator (it has no ``__cuda_array_interface__``)."""
    return type(leaf).__module__.startswith("numba.cuda.simulator.")


def device_dtype_ndim(leaf: object) -> tuple[np.dtype, int]:
    if _simulated(leaf):
        return np.dtype(leaf.dtype), len(leaf.shape)
    interface = leaf.__cuda_array_interface__
    return np.dtype(interface["typestr"]), len(interface["shape"])


def check_foreign(leaf: object, label: str, function: str, target: str) -> None:
    """Raises StagingTypeError when argument ``leaf`` is an array of another library (a GPU
    array is staged on the cuda target, if its dtype is)."""
    if isinstance(leaf, np.ndarray | np.generic) or not (
            device_array(leaf) or any(_has(leaf, a) for a in _FOREIGN)):
        return
    kind = type(leaf)
    name = _qualified(kind)
    if device_array(leaf) and target == "cuda":
        dtype = device_dtype_ndim(leaf)[0]
        if dtype not in DTYPES:
            raise StagingTypeError(
                f"{function}(): {label} has dtype {dtype}, which autostage cannot stage; "
                f"supported dtypes: {', '.join(str(d) for d in DTYPES)}")
        return
    where = ("; GPU arrays are staged by target='cuda'" if device_array(leaf) else "")
    raise StagingTypeError(
        f"{function}(): {label} is a {name}, an array of another library: autostage stages "
        "NumPy arrays and scalars, and anything computed from another array while tracing "
        "would be frozen into the trace. Pass a NumPy array (for a GPU array: "
        f"cupy.asnumpy(x), x.copy_to_host(), x.cpu().numpy()){where}")


def _short(label: str) -> str:
    """``argument 'xs'[1]`` -> ``xs[1]``."""
    if label.startswith("argument '"):
        name, _, rest = label[len("argument '"):].partition("'")
        return name + rest
    return label


def _dtype_kind(dtype: np.dtype) -> str:
    if dtype.fields is not None:
        return "a structured dtype"
    return {"O": "Python objects", "U": "strings", "S": "bytes", "V": "raw bytes (void)",
            "M": "datetime64", "m": "timedelta64"}.get(
        dtype.kind, "extended precision" if dtype.kind in "fc" else "not a numeric dtype")


def native(dtype: np.dtype) -> np.dtype:
    """``dtype`` in native byte order (the same dtype when it already is)."""
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def needs_native_copy(leaf: object) -> bool:
    """A staged argument whose bytes must be put in native order before compiled code reads it."""
    return isinstance(leaf, np.ndarray) and not leaf.dtype.isnative


def native_order(run: Callable[[list], tuple], positions: tuple[int, ...]
                 ) -> Callable[[list], tuple]:
    """``run`` with the staged arguments at ``positions`` copied to native byte order at each
    call. A result that is one of those copies (the function returned its argument) is the
    caller's own array again, as in Python."""
    def run_native(args: list) -> tuple:
        args = list(args)
        copies = {}
        for i in positions:
            copy = args[i].astype(native(args[i].dtype))
            copies[id(copy)] = args[i]
            args[i] = copy
        results = run(args)
        return tuple(copies.get(id(r), r) for r in results)
    return run_native
