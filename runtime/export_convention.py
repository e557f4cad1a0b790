"""An exported trace's calling convention as plain JSON data, and back.

How Python arguments map to the module's parameters (the argument structure, and per leaf: a
staged array with its dtype and known sizes, a NumPy scalar, a Generator, or a Python constant
the trace was specialised on) and how its results are rebuilt (the returned structure, constants,
which results come back as Python numbers or lists, and their identity) are written as JSON with
arrays in ``.npy`` members. Only plain data is described: None, bool, int, float, complex, str,
NumPy arrays and scalars, and tuples, lists and dicts of them; anything else (a user class, a
namedtuple, a function) raises ``Unsupported`` saying what it is, and reading refuses anything
but these forms (nothing from the file is evaluated or unpickled).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import pytree
from autostage.runtime.cache_keys import SCALAR, constant_key
from autostage.runtime.function_outputs import (
    _AS_LIST,
    _AS_PYTHON_LIST,
    ArrayIf,
    Outputs,
    PythonIf,
)
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.types import DTYPES, GeneratorType, TensorType

_PLAIN = (type(None), bool, int, float, complex, str)


class Unsupported(ValueError):
    """A value or structure an export cannot describe as plain data (the message says what)."""


class Members:
    """The ``.npy`` members an archive is given while its manifest is written."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def array(self, value: np.ndarray, folder: str = "values") -> str:
        """Stores ``value`` (raw bytes, dtype and shape; never pickled); returns its name."""
        buffer = io.BytesIO()
        try:
            np.save(buffer, np.asarray(value), allow_pickle=False)
        except ValueError as e:
            raise Unsupported(f"an array of dtype {np.asarray(value).dtype} ({e})") from None
        return self.add(folder, ".npy", buffer.getvalue())

    def add(self, folder: str, suffix: str, data: bytes) -> str:
        """Stores ``data`` as the next member of ``folder`` (``folder/0.npy``...)."""
        count = sum(name.startswith(folder + "/") for name in self.files)
        name = f"{folder}/{count}{suffix}"
        self.files[name] = data
        return name


def read_array(data: bytes) -> np.ndarray:
    """An ``.npy`` member's array (``allow_pickle=False``: object arrays are refused)."""
    array = np.load(io.BytesIO(data), allow_pickle=False)
    if not isinstance(array, np.ndarray):
        raise ValueError("not a single .npy array")
    return array


# -- values ---------------------------------------------------------------------------------------

def encode_value(value: Any, members: Members) -> dict:
    """``value`` as tagged JSON (raises Unsupported for anything but plain data)."""
    kind = type(value)
    if value is None:
        return {"type": "none"}
    if kind is bool or kind is int or kind is str:
        return {"type": kind.__name__, "value": value}
    if kind is float:
        return {"type": "float", "value": value.hex()}
    if kind is complex:
        return {"type": "complex", "real": value.real.hex(), "imag": value.imag.hex()}
    if kind is np.ndarray:
        return {"type": "array", "member": members.array(value)}
    if isinstance(value, np.generic):
        return {"type": "scalar", "member": members.array(np.asarray(value))}
    if kind is list or kind is tuple:
        return {"type": kind.__name__, "items": [encode_value(v, members) for v in value]}
    if kind is dict:
        return {"type": "dict", "keys": [encode_value(k, members) for k in value],
                "values": [encode_value(v, members) for v in value.values()]}
    raise Unsupported(f"a {_type_name(value)} ({_short(value)})")


def decode_value(data: dict, arrays: Callable[[str], np.ndarray]) -> Any:
    """The value ``encode_value`` described (``arrays(member)`` reads an ``.npy`` member)."""
    kind = data["type"]
    if kind == "none":
        return None
    if kind in ("bool", "int", "str"):
        value = data["value"]
        if type(value).__name__ != kind:
            raise ValueError(f"a {kind} value holds {value!r}")
        return value
    if kind == "float":
        return float.fromhex(data["value"])
    if kind == "complex":
        return complex(float.fromhex(data["real"]), float.fromhex(data["imag"]))
    if kind == "array":
        return arrays(data["member"]).copy()
    if kind == "scalar":
        array = arrays(data["member"])
        if array.ndim != 0:
            raise ValueError(f"scalar member {data['member']} has shape {array.shape}")
        return array[()]
    if kind in ("list", "tuple"):
        items = [decode_value(v, arrays) for v in data["items"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        keys = [decode_value(k, arrays) for k in data["keys"]]
        if len(keys) != len(data["values"]):
            raise ValueError("a dict with more keys than values")
        return dict(zip(keys, [decode_value(v, arrays) for v in data["values"]], strict=True))
    raise ValueError(f"unknown value type {kind!r}")


# -- structures -----------------------------------------------------------------------------------

def encode_tree(treedef: pytree.TreeDef, members: Members) -> Any:
    """A treedef as JSON: null for a leaf, [kind, children], ["dict", keys, children]."""
    if treedef is pytree.LEAF:
        return None
    kind = treedef[0]
    if kind is dict:
        return ["dict", [encode_value(k, members) for k in treedef[1]],
                [encode_tree(c, members) for c in treedef[2]]]
    if kind is tuple or kind is list:
        return [kind.__name__, [encode_tree(c, members) for c in treedef[1]]]
    raise Unsupported(f"a {kind.__module__}.{kind.__qualname__} (a namedtuple: its class is "
                      "the user's code)")


def decode_tree(data: Any, arrays: Callable[[str], np.ndarray]) -> pytree.TreeDef:
    if data is None:
        return pytree.LEAF
    if not isinstance(data, list) or not data:
        raise ValueError(f"not a structure: {_short(data)}")
    kind = data[0]
    if kind == "dict" and len(data) == 3:
        keys = pytree.DictKeys(decode_value(k, arrays) for k in data[1])
        children = tuple(decode_tree(c, arrays) for c in data[2])
        if len(keys) != len(children):
            raise ValueError("a dict structure with more keys than children")
        return (dict, keys, children)
    if kind in ("tuple", "list") and len(data) == 2 and isinstance(data[1], list):
        return (tuple if kind == "tuple" else list,
                tuple(decode_tree(c, arrays) for c in data[1]))
    raise ValueError(f"not a structure: {_short(data)}")


# -- arguments ------------------------------------------------------------------------------------

def encode_leaf(part: Any, param_type: Any, label: str, members: Members) -> dict:
    """One argument leaf of a trace, from its trace key component (and, when staged, the type
    of its parameter: its known sizes)."""
    if type(param_type) is GeneratorType:
        return {"kind": "generator"}
    if type(part) is tuple and part and isinstance(part[0], np.dtype):
        if len(part) == 3 and part[2] == SCALAR:
            return {"kind": "scalar", "dtype": part[0].str}
        return {"kind": "array", "dtype": part[0].str, "shape": list(param_type.shape)}
    if type(part) is tuple and len(part) == 3 and part[0] is np.memmap:  # staged as an ndarray
        return {"kind": "array", "dtype": part[1].str, "shape": list(param_type.shape)}
    if param_type is not None:
        raise Unsupported(f"{label} is a {part[0]!r} (only NumPy arrays and scalars and "
                          "Generators are staged by an export)")
    kind, value = part
    if kind is float and type(value) is str:
        value = float.fromhex(value)
    if kind not in _PLAIN or type(value) is not kind:
        raise Unsupported(f"{label} is a {kind.__module__}.{kind.__qualname__}, a Python value "
                          "the trace was specialised on that an export cannot describe "
                          "(only None, bool, int, float, complex and str)")
    return {"kind": "constant", "value": encode_value(value, members)}


class LeafSpec:
    """What one argument leaf of a saved signature must be."""

    __slots__ = ("kind", "dtype", "shape", "constant")

    def __init__(self, data: dict, arrays: Callable[[str], np.ndarray]):
        self.kind = data["kind"]
        self.dtype = staged_dtype(data["dtype"]) if "dtype" in data else None
        self.shape = tuple(data.get("shape", ()))
        self.constant = None
        if self.kind == "constant":
            value = decode_value(data["value"], arrays)
            if type(value) not in _PLAIN:
                raise ValueError(f"a constant argument holds a {type(value).__name__}")
            self.constant = constant_key(value)

    @property
    def staged(self) -> bool:
        return self.kind != "constant"

    def known_sizes(self) -> int:
        return sum(d is not None for d in self.shape) if self.kind == "array" else 0

    def matches(self, leaf: object) -> bool:
        kind = self.kind
        if kind == "array":
            return (type(leaf) is np.ndarray or type(leaf) is np.memmap) and (
                leaf.dtype == self.dtype and leaf.ndim == len(self.shape)) and all(
                d is None or d == n for d, n in zip(self.shape, leaf.shape, strict=True))
        if kind == "scalar":
            return isinstance(leaf, np.generic) and leaf.dtype == self.dtype
        if kind == "generator":
            return type(leaf) is np.random.Generator
        return type(leaf) in _PLAIN and constant_key(leaf) == self.constant

    def __str__(self) -> str:
        if self.kind == "array":
            dims = ",".join("?" if d is None else str(d) for d in self.shape)
            return f"{_dtype_text(self.dtype)}[{dims}]"
        if self.kind == "scalar":
            return f"np.{self.dtype.name} scalar"
        if self.kind == "generator":
            return "np.random.Generator"
        kind, value = self.constant
        value = float.fromhex(value) if kind is float and type(value) is str else value
        return f"== {value!r}"


def staged_dtype(text: str) -> np.dtype:
    """A dtype an export names (``<f8``): one autostage stages, in either byte order."""
    dtype = np.dtype(text)
    native = dtype if dtype.isnative else dtype.newbyteorder("=")
    if native not in DTYPES:
        raise ValueError(f"dtype {text!r} is not one autostage stages")
    return dtype


def _dtype_text(dtype: np.dtype) -> str:
    native = dtype if dtype.isnative else dtype.newbyteorder("=")
    name = DTYPES.get(native, str(dtype))
    return name if dtype.isnative else f"{name} ({dtype.str})"


# -- results --------------------------------------------------------------------------------------

_PYTHON_TYPES = {int: "int", float: "float", bool: "bool", complex: "complex"}
_FROM_PYTHON_TYPES = {name: kind for kind, name in _PYTHON_TYPES.items()}
IDENTITY_KINDS = ("param", "same", "view", "fresh", "param_0d", "view_0d", "param_paths",
                  "param_maybe", "broadcast", "read_only", "param_if")


def encode_outputs(outputs: Outputs, result_count: int, members: Members) -> dict:
    """How a trace's results are rebuilt into what it returned."""
    positions = {position: i for i, position in enumerate(outputs.positions)}
    leaves = []
    for position, constant in enumerate(outputs.constants):
        if position in positions:
            how = {None: "value", _AS_LIST: "list", _AS_PYTHON_LIST: "python_list"}.get(
                constant if constant is None or constant is _AS_LIST
                or constant is _AS_PYTHON_LIST else "other")
            if how is None:
                raise Unsupported(f"a {type(constant).__name__} result")
            leaves.append({"result": positions[position], "as": how})
        else:
            leaves.append({"constant": encode_value(constant, members)})
    python_types: list = [None] * result_count
    for i, kind in outputs.python_types or ():
        if isinstance(kind, ArrayIf):  # a 0-d ndarray where result ``flag`` holds
            if kind.otherwise is not None:
                raise Unsupported("a 0-d result that is a 0-d ndarray, a NumPy scalar or a "
                                  "Python number by the paths taken")
            python_types[i] = {"array_if_result": kind.flag}
            continue
        if isinstance(kind, PythonIf):  # a Python number where result ``flag`` holds
            python_types[i] = {"kind": _PYTHON_TYPES[kind.kind], "if_result": kind.flag}
            if kind.number is not None:  # that number (its dtype does not hold it)
                python_types[i]["number"] = encode_value(kind.number, members)
            continue
        python_types[i] = "array" if isinstance(kind, functools.partial) else _PYTHON_TYPES[kind]
    return {"tree": encode_tree(outputs.treedef, members), "leaves": leaves,
            "python_types": python_types, "identity": [
                [kind, list(j) if type(j) is tuple else j] for kind, j in outputs.identity]}


def decode_outputs(data: dict, result_types: tuple, arrays: Callable[[str], np.ndarray]
                   ) -> Outputs:
    """The ``Outputs`` that rebuild a loaded trace's results (``result_types``: its module's)."""
    treedef = decode_tree(data["tree"], arrays)
    constants, positions = [], []
    for leaf in data["leaves"]:
        if "result" in leaf:
            positions.append((leaf["result"], len(constants)))
            constants.append({"value": None, "list": _AS_LIST,
                              "python_list": _AS_PYTHON_LIST}[leaf["as"]])
        else:
            constants.append(decode_value(leaf["constant"], arrays))
    order = [position for _, position in sorted(positions)]
    flags = {kind.get("if_result", kind.get("array_if_result")) for kind in data["python_types"]
             if isinstance(kind, dict)}
    values = len(result_types) - len(flags)  # (the flags of ``PythonIf`` results follow them)
    if [i for i, _ in sorted(positions)] != list(range(values)) or sorted(flags) != list(
            range(values, len(result_types))):
        raise ValueError(f"the results placed ({sorted(i for i, _ in positions)}) and the "
                         f"flags ({sorted(flags)}) are not the module's {len(result_types)} "
                         "results")
    if any(result_types[f] != TensorType(np.dtype(np.bool_), ()) for f in flags):
        raise ValueError("a python_types flag result is not a bool[]")
    if len(constants) != pytree.num_leaves(treedef):
        raise ValueError("the returned structure and its leaves disagree")
    kinds = data["python_types"]
    if len(kinds) != len(result_types):
        raise ValueError("python_types has not one entry per result")
    python_types = [_python_type(kind, t) for kind, t in zip(kinds, result_types, strict=True)]
    outputs = Outputs(treedef, constants, tuple(order), tuple(python_types))
    identity = tuple(_identity_entry(e, len(result_types)) for e in data["identity"])
    if len(identity) != values:
        raise ValueError("identity has not one entry per result")
    outputs.identity = identity
    return outputs


def _no_arrays(member: str) -> np.ndarray:
    raise ValueError(f"a result's number refers to the array member {member!r}")


def _python_type(kind: str | None, result_type: Any) -> Any:
    if kind is None:
        return None
    if isinstance(kind, dict) and "array_if_result" in kind:
        if not isinstance(result_type, TensorType) or result_type.ndim:
            raise ValueError("a 0-d ndarray result that is not a 0-d tensor")
        return ArrayIf(kind["array_if_result"], result_type.dtype, StagingTypeError(
            "a loaded result is a 0-d ndarray or a NumPy scalar by the paths its call took, "
            "which its uses here need to know"))
    if isinstance(kind, dict):
        python = _FROM_PYTHON_TYPES[kind["kind"]]
        number = decode_value(kind["number"], _no_arrays) if "number" in kind else None
        if number is not None and type(number) is not python:
            raise ValueError(f"a {kind['kind']} result's number is {number!r}")
        return PythonIf(python, kind["if_result"], number, None if number is None else
                        StagingTypeError(f"a loaded result is the Python {python.__name__} "
                                         f"{number!r} on this call's path, and staged code "
                                         "cannot compute what Python computes with it here"))
    if kind == "array":
        if not isinstance(result_type, TensorType):
            raise ValueError("an 'array' result that is not a tensor")
        return functools.partial(np.asarray, dtype=result_type.dtype)
    return _FROM_PYTHON_TYPES[kind]


def _identity_entry(entry: list, results: int) -> tuple:
    if len(entry) != 2 or entry[0] not in IDENTITY_KINDS:
        raise ValueError(f"not an identity entry: {entry!r}")
    kind, index = entry
    if kind == "param_maybe" and type(index) is list and index and all(
            type(j) is int for j in index):
        return (kind, tuple(index))  # (the candidate arguments)
    if kind == "param_if" and type(index) is list and len(index) == 2 and all(
            type(j) is int and 0 <= j < results for j in index):
        return (kind, tuple(index))  # (the argument, the flag result)
    if (kind in ("fresh", "read_only")) != (index is None) or (
            kind in ("param_maybe", "param_if") or index is not None and type(index) is not int):
        raise ValueError(f"not an identity entry: {entry!r}")
    return (kind, index)


# -- messages -------------------------------------------------------------------------------------

def _type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _short(value: object) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user object's repr may fail; the type still says it
        text = object.__repr__(value)
    return text if len(text) <= 50 else text[:47] + "..."
