"""The ``random_draw`` op: one call of a NumPy random function, run when the staged code runs.

A draw is never a trace-time constant: the op calls NumPy's own function at run time, on NumPy's
global ``RandomState`` (``np.random.rand``, ``np.random.normal``...) or on a
``np.random.Generator`` that is an operand of the op (a run-time input of the trace), so every
call and loop iteration draws fresh numbers, from the same state and with the same algorithm as
plain Python (identical values after the same seed). It has side effects (it advances the
state): passes never remove, merge, fold or reorder it.

Attributes: ``source`` ("np.random" or "Generator"), ``method`` (the function's name),
``args`` / ``kwargs`` (the call's arguments as written, with ``Operand(i)`` where a staged value
goes: operand ``i`` after the generator). ``METHODS`` lists what is supported, with each
function's signature and its result type rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from autostage.runtime import dtype_rules, op_registry
from autostage.runtime.ops.vjp_support import gradient_error
from autostage.runtime.types import GeneratorType, TensorType, as_dtype

GLOBAL = "np.random"
GENERATOR = "Generator"


@dataclass(frozen=True, slots=True)
class Operand:
    """Where staged operand ``index`` (after the generator) goes in a call's arguments."""

    index: int

    def __str__(self) -> str:
        return f"${self.index}"

    __repr__ = __str__


@dataclass(frozen=True, slots=True)
class Method:
    """A supported random function: its signature, the parameters that broadcast, its dtype
    rule and its shape rule ("size", "dims" for rand/randn, "choice", "permutation", "none")."""

    signature: inspect.Signature
    params: tuple[str, ...] = ()
    dtype: str | np.dtype | None = np.dtype(np.float64)  # "param": the dtype= argument
    shape: str = "size"
    python_scalar: bool = True  # a 0-d result is a Python scalar in NumPy (weak), not np.generic


def _sig(fn: Callable) -> inspect.Signature:
    return inspect.signature(fn)


def _size(size=None): ...
def _normal(loc=0.0, scale=1.0, size=None): ...
def _uniform(low=0.0, high=1.0, size=None): ...
def _exponential(scale=1.0, size=None): ...
def _gamma(shape, scale=1.0, size=None): ...
def _beta(a, b, size=None): ...
def _poisson(lam=1.0, size=None): ...
def _binomial(n, p, size=None): ...
def _dims(*dims): ...
def _randint(low, high=None, size=None, dtype=int): ...
def _choice(a, size=None, replace=True, p=None): ...
def _permutation(x): ...
def _seed(seed=None): ...
def _float(size=None, dtype=np.float64, out=None): ...
def _std_exponential(size=None, dtype=np.float64, method="zig", out=None): ...
def _integers(low, high=None, size=None, dtype=np.int64, endpoint=False): ...
def _g_choice(a, size=None, replace=True, p=None, axis=0, shuffle=True): ...
def _g_permutation(x, axis=0): ...


_I64 = np.dtype(np.int64)
_SHARED = {
    "normal": Method(_sig(_normal), ("loc", "scale")),
    "uniform": Method(_sig(_uniform), ("low", "high")),
    "exponential": Method(_sig(_exponential), ("scale",)),
    "gamma": Method(_sig(_gamma), ("shape", "scale")),
    "beta": Method(_sig(_beta), ("a", "b")),
    "poisson": Method(_sig(_poisson), ("lam",), _I64),
    "binomial": Method(_sig(_binomial), ("n", "p"), _I64),
}
METHODS: dict[str, dict[str, Method]] = {
    GLOBAL: {
        **_SHARED,
        "rand": Method(_sig(_dims), shape="dims"),
        "randn": Method(_sig(_dims), shape="dims"),
        **{name: Method(_sig(_size)) for name in (
            "random", "random_sample", "sample", "ranf", "standard_normal",
            "standard_exponential")},
        "randint": Method(_sig(_randint), ("low", "high"), "param"),
        "choice": Method(_sig(_choice), dtype=None, shape="choice"),
        "permutation": Method(_sig(_permutation), dtype=None, shape="permutation"),
        "seed": Method(_sig(_seed), dtype=None, shape="none"),
    },
    GENERATOR: {
        **_SHARED,
        "random": Method(_sig(_float), dtype="param"),
        "standard_normal": Method(_sig(_float), dtype="param"),
        "standard_exponential": Method(_sig(_std_exponential), dtype="param"),
        "integers": Method(_sig(_integers), ("low", "high"), "param", python_scalar=False),
        "choice": Method(_sig(_g_choice), dtype=None, shape="choice"),
        "permutation": Method(_sig(_g_permutation), dtype=None, shape="permutation"),
    },
}


def method(source: str, name: str) -> Method | None:
    return METHODS[source].get(name)


# -- the type rule --------------------------------------------------------------------------

def _shape_of(value: object) -> tuple:
    return value.shape if isinstance(value, TensorType) else np.shape(value)


def _dtype_of(value: object) -> np.dtype:
    return value.dtype if isinstance(value, TensorType) else np.asarray(value).dtype


def _dim(value: object, what: str) -> int | None:
    if isinstance(value, TensorType):
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise TypeError(f"{what} must be an integer, not a staged {value}")
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what} must be an integer, not {value!r}")
    return int(value)


def size_shape(size: object) -> tuple | None:
    """The shape ``size=`` asks for (None: the parameters' broadcast shape)."""
    if size is None:
        return None
    if isinstance(size, tuple | list):
        return tuple(_dim(d, "size") for d in size)
    return (_dim(size, "size"),)


def bind(meth: Method, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults applied (raises TypeError like the
    function would for arguments it does not take)."""
    bound = meth.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def result_type(source: str, name: str, arguments: dict[str, Any]) -> TensorType | None:
    """The type of a draw's result from its bound arguments (TensorTypes for staged ones);
    None for a function without a result (``seed``). Raises TypeError/ValueError."""
    meth = METHODS[source][name]
    if arguments.get("out") is not None:
        raise TypeError("out= is not supported in staged code (staged values are immutable); "
                        "use the returned array")
    if meth.shape == "none":
        return None
    if meth.shape == "dims":
        return TensorType(np.float64, tuple(_dim(d, f"np.random.{name}'s dimensions")
                                            for d in arguments["dims"]))
    if meth.shape == "permutation":
        x = arguments["x"]
        if isinstance(x, TensorType) and x.ndim == 0 or isinstance(x, int | np.integer):
            return TensorType(_I64, (_dim(x, "permutation(x)"),))
        return TensorType(_dtype_of(x), _shape_of(x))
    requested = size_shape(arguments.get("size"))
    if meth.shape == "choice":
        a = arguments["a"]
        if arguments.get("axis", 0) != 0:
            raise TypeError("choice(..., axis=...) is not supported in staged code")
        # A 0-d population, staged or not (``rng.choice(x.shape[0])``), is an int n: draws
        # from range(n), as NumPy does.
        if len(_shape_of(a)) > 1:
            raise TypeError("choice() of a multi-dimensional population is not supported in "
                            "staged code")
        dtype = _I64 if _is_population_size(a) else _dtype_of(a)
        return TensorType(dtype, () if requested is None else requested)
    if requested is None:
        shapes = [_shape_of(arguments[p]) for p in meth.params if arguments[p] is not None]
        requested = dtype_rules.broadcast_shapes(*shapes)
    dtype = _result_dtype(meth, arguments)
    if not requested and meth.python_scalar and dtype.kind == "f":
        dtype = np.dtype(np.float64)  # NumPy returns a Python float, even for dtype=float32
    return TensorType(dtype, requested)


def _result_dtype(meth: Method, arguments: dict[str, Any]) -> np.dtype:
    if meth.dtype != "param":
        return meth.dtype
    dtype = arguments["dtype"]
    if isinstance(dtype, TensorType):
        raise TypeError("dtype= must be a Python value")
    dtype = np.dtype(dtype)
    return as_dtype(dtype)


def is_python_scalar(source: str, name: str, arguments: dict[str, Any]) -> bool:
    """Whether NumPy returns a Python scalar (weak in promotion) for a 0-d draw."""
    meth = METHODS[source][name]
    if meth.shape == "choice":
        return _is_population_size(arguments["a"])
    return meth.python_scalar


def _is_population_size(a: object) -> bool:
    """Whether choice()'s ``a`` is a size n rather than an array: any 0-d value, staged
    (``x.shape[0]``, an ``np.int64`` argument) or not. NumPy then draws Python ints from
    range(n), so a 0-d draw is a Python int whichever kind of int ``a`` was."""
    return (a.ndim == 0) if isinstance(a, TensorType) else np.ndim(a) == 0


# -- run time -------------------------------------------------------------------------------

_ALIASES = {"sample": "random_sample", "ranf": "random_sample"}  # module functions


def substitute(template: object, operands: tuple) -> object:
    """``template`` with each ``Operand(i)`` replaced by ``operands[i]``."""
    if type(template) is Operand:
        value = operands[template.index]
        return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    if type(template) is tuple:
        return tuple(substitute(t, operands) for t in template)
    if type(template) is list:
        return [substitute(t, operands) for t in template]
    return template


def draw(generator: object, source: str, name: str, args: tuple, kwargs: tuple,
         operands: tuple) -> object:
    """Calls the NumPy function now (the global RandomState's, or ``generator``'s method)."""
    owner = np.random.mtrand._rand if source == GLOBAL else generator
    if source == GLOBAL:
        name = _ALIASES.get(name, name)
    return getattr(owner, name)(*substitute(args, operands),
                                **{k: substitute(v, operands) for k, v in kwargs})


def _evaluate(op, values: tuple, run) -> tuple:
    source = op.attrs["source"]
    generator, operands = (values[0], values[1:]) if source == GENERATOR else (None, values)
    result = draw(generator, source, op.attrs["method"], op.attrs["args"], op.attrs["kwargs"],
                  operands)
    if not op.results:
        return ()
    result = np.asarray(result)
    return (result if result.ndim else result[()],)


def _infer(operand_types: tuple, attrs: dict) -> tuple:
    source = attrs["source"]
    if source == GENERATOR:
        if not operand_types or not isinstance(operand_types[0], GeneratorType):
            raise TypeError("a Generator draw takes the generator as its first operand")
        operand_types = operand_types[1:]
    arguments = bind(METHODS[source][attrs["method"]],
                     substitute(attrs["args"], operand_types),
                     {k: substitute(v, operand_types) for k, v in attrs["kwargs"]})
    result = result_type(source, attrs["method"], arguments)
    return () if result is None else (result,)


op_registry.register(
    "random_draw", _infer, _evaluate, effects=op_registry.STATE,  # advances the generator
    raises=(ValueError,),  # NumPy's checks of staged arguments (a negative scale, low >= high)
    doc="attrs: source ('np.random' or 'Generator'), method, args, kwargs (with $i for staged "
        "operand i); operands: [generator], staged arguments; one fresh draw each time it runs")


def _vjp_random_draw(op, cts: tuple) -> tuple:
    """The sweep asks only when a float operand (a distribution's parameter) needs a gradient:
    reparameterized draws are not differentiated yet, and a silent zero would be wrong."""
    raise gradient_error(
        op, f"a random draw (np.random {op.attrs['method']}) with respect to its parameters "
            "yet; draw from the standard distribution and transform it (loc + scale * "
            "standard_normal(...)), or wrap the parameters in autostage.stop_gradient")


op_registry.lookup("random_draw").vjp = _vjp_random_draw
