"""``save`` and ``load``: a staged function's traces and Variable values in one file, run later
in a process where the function's source is not importable.

``save`` writes every current trace of a ``StagedFunction`` (the one its ``input_signature``
fixes, traced now if needed): each module's exact text (``ir_text``), its calling convention
(``export_convention``) and the values of the Variables it uses and of the arrays it reads from
globals or through objects (``.npy`` members: those arrays are saved as they are at save time).
A trace that carries something the text cannot describe as plain data is refused at save time,
naming the user's line: a ``py_function`` (a call back into Python), an exception class of the
user's code, a user object in the arguments or results. ``load`` reads the archive
(``export_archive`` checks it), binds the modules' state to fresh Variables and returns a
``LoadedFunction``, which picks the saved trace matching each call and runs it on the target
recorded (or the one asked for) with the existing backends. Nothing in the file is executed:
no pickle, no eval; ``ir_text.parse`` accepts literals only.
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from autostage.runtime import (
    export_archive,
    fp_state,
    inputs,
    ir,
    ir_text,
    pytree,
    tracing,
    verifier,
)
from autostage.runtime.autodiff.tape import float_arguments
from autostage.runtime.cache_keys import ById, Exact
from autostage.runtime.concrete_function import ConcreteFunction
from autostage.runtime.environment import environment_key
from autostage.runtime.export_archive import ExportError, autostage_version
from autostage.runtime.export_convention import (
    LeafSpec,
    Members,
    Unsupported,
    decode_outputs,
    decode_tree,
    decode_value,
    encode_leaf,
    encode_outputs,
    encode_tree,
    encode_value,
    read_array,
    staged_dtype,
)
from autostage.runtime.operator_hooks import Staged
from autostage.runtime.signature_binding import Binding, check_arguments
from autostage.runtime.staged_function import StagedFunction
from autostage.runtime.state import Variable
from autostage.runtime.targets import target_for
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.types import GeneratorType, TensorType

# Ops whose meaning is code of this process, which an export cannot carry: op -> why.
REFUSED_OPS = {
    "py_function": "it calls back into Python at run time (py_function), and the Python "
                   "function is code of this process, which an export does not carry",
}
_KNOWN_EXCEPTION_MODULES = ("autostage.", "numpy")  # importable wherever autostage is

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}
_KIND_OF_NAME = {name: kind for kind, name in _KINDS.items()}


class NoSavedSignatureError(TypeError):
    """A loaded function was called with arguments none of its saved traces takes.

    Example: ``f`` saved after ``f(np.ones(3))`` (a float64 vector), then
    ``autostage.load(path)(np.ones(3, np.float32))``. Fix: call the original with such arguments
    (or give it an ``input_signature`` that covers them) before saving it, or convert the
    arguments to a saved signature's types.
    """


# -- saving ---------------------------------------------------------------------------------------

def save(function: Any, path: str | os.PathLike) -> None:
    """Writes ``function``'s traces and Variable values to ``path`` (a zip file, atomically).

    Args:
      function: a staged function (``autostage.convert(f)``, ``autostage.grad(f)``) that has
        been called, or has an ``input_signature``.
      path: the file to write (replaced if it exists).
    Raises:
      ExportError: no trace to save, or a trace an export cannot describe (the message names
        what and, for an op, the user's file and line).
    """
    staged, float_arguments = _staged_of(function)
    where = f"cannot save {staged.name} to {os.fspath(path)}"
    members = Members()
    variables: list[Variable] = []
    try:
        signatures = [_signature(staged, concrete, members, variables, where)
                      for concrete in _traces(staged, where)]
        signatures = [s for s in signatures if s is not None]
        if not signatures:
            raise ExportError(
                f"{where}: every trace of it is stale (a global or an object it was specialised "
                "on changed since it was traced); call it again, then save it")
        manifest = {
            "format": export_archive.FORMAT, "version": export_archive.VERSION,
            "autostage_version": autostage_version(), "name": staged.name,
            "target": staged.target, "parameters": _parameters(staged, members),
            "float_arguments": float_arguments,
            "input_signature": _input_signature(staged, members),
            "variables": [_variable(v, members) for v in variables],
            "signatures": signatures,
        }
    except Unsupported as e:
        raise ExportError(f"{where}: {e}") from None
    export_archive.write(path, manifest, members.files)


def _staged_of(function: Any) -> tuple[StagedFunction, list[int]]:
    """The StagedFunction to save, and the positional arguments its caller turns from Python
    floats into float64 scalars (``autostage.grad``'s wrapper)."""
    if isinstance(function, types.MethodType) and isinstance(function.__func__, StagedFunction):
        raise ExportError(
            f"cannot save {function.__func__.name}: it is a method bound to a "
            f"{type(function.__self__).__name__} object, which is the user's code; save a "
            "staged function of arrays (pass what it reads from the object as arguments)")
    inner = getattr(function, "_staged", None)
    if isinstance(inner, StagedFunction) and not isinstance(function, StagedFunction):
        return inner, [int(i) for i in getattr(function, "_argnums", ())]
    if isinstance(function, StagedFunction):
        return function, []
    raise TypeError(f"autostage.save takes a staged function (autostage.convert(f)), not a "
                    f"{type(function).__name__}")


def _traces(staged: StagedFunction, where: str) -> list[ConcreteFunction]:
    if staged.input_signature is not None:
        staged.get_concrete_function()  # traces the signature's trace if it is not yet
    traces = list(staged.concrete_functions)
    if not traces:
        raise ExportError(
            f"{where}: it has no trace yet; call it once with example arguments (each trace "
            "its calls made is saved), or give it an input_signature")
    return traces


def _signature(staged: StagedFunction, concrete: ConcreteFunction, members: Members,
               variables: list[Variable], where: str) -> dict | None:
    """One trace's entry of the manifest (None: the trace is stale, the function would not run
    it again)."""
    treedef = concrete.key[0]
    count = pytree.num_leaves(treedef)
    parts = concrete.key[1:1 + count]
    params = concrete.module.main.body.args
    staged_parts = sum(_is_staged(part) for part in parts)
    leaves = _example_leaves(parts, params)
    implicit = _implicit_values(staged, concrete, leaves, count)
    if implicit is None:
        return None
    labels = staged._binding.labels(pytree.unflatten(treedef, leaves), short=True)
    param_types = iter(p.type for p in params[:staged_parts])
    try:
        encoded = [encode_leaf(part, next(param_types) if _is_staged(part) else None,
                               f"argument '{label}'", members)
                   for part, label in zip(parts, labels, strict=True)]
        tree = encode_tree(treedef, members)
    except Unsupported as e:
        raise ExportError(f"{where}: {e}") from None
    captured = [_captured(value, param.type, where, members)
                for value, param in zip(implicit, params[staged_parts:], strict=True)]
    text = module_text(concrete.module, where)
    name = members.add("signatures", ".ir", text.encode("utf-8"))
    try:
        outputs = encode_outputs(concrete.outputs, len(concrete.module.main.result_types),
                                 members)
    except Unsupported as e:
        raise ExportError(f"{where}: it returns {e}, which an export cannot describe as plain "
                          "data (return arrays, numbers, strings, tuples, lists and dicts)"
                          ) from None
    return {"module": name, "inputs": {"tree": tree, "leaves": encoded}, "captured": captured,
            "state": [_variable_index(entry, variables, where)
                      for entry in concrete.module.state],
            "outputs": outputs}


def _is_staged(part: Any) -> bool:
    """Whether a trace key component is a staged leaf's (else a constant's)."""
    if type(part) is not tuple or not part:
        return False
    head = part[0]
    return isinstance(head, np.dtype | GeneratorType) or head == "device array" or (
        isinstance(head, type) and issubclass(head, np.ndarray))


def _example_leaves(parts: tuple, params: tuple) -> list:
    """Argument leaves like the trace's: example arrays for staged ones, the constants."""
    leaves, staged = [], iter(params)
    for part in parts:
        if _is_staged(part):
            param_type = next(staged).type
            leaves.append(np.zeros([1 if d is None else d for d in param_type.shape],
                                   param_type.dtype) if isinstance(param_type, TensorType)
                          else None)
        else:
            kind, value = part
            leaves.append(float.fromhex(value) if kind is float and type(value) is str
                          else value.obj if isinstance(value, ById)
                          else value.value if type(value) is Exact else value)
    return leaves


def _implicit_values(staged: StagedFunction, concrete: ConcreteFunction, leaves: list,
                     count: int) -> list | None:
    """The trace's implicit parameters now (arrays of globals, read through objects), or None
    when the trace is stale: a global it was specialised on, a value it read through an object
    or an array it froze changed since."""
    env = [source.read() for source in staged._sources]
    if concrete.guards and not tracing.arrays_unchanged(concrete.guards):
        return None
    keys = [key for key, head in staged._cache.items() if _in_chain(head, concrete)]
    longest = max(keys, key=len, default=concrete.key)[1 + count:]
    if tuple(environment_key(value) for value in env[:len(longest)]) != tuple(longest):
        return None
    if concrete.read is None:
        return []
    return concrete.read(leaves, env)


def _in_chain(head: ConcreteFunction, concrete: ConcreteFunction) -> bool:
    while head is not None:
        if head is concrete:
            return True
        head = head.alternative
    return False


def _captured(value: Any, param_type: Any, where: str, members: Members) -> str:
    if type(value) is not np.ndarray or not isinstance(param_type, TensorType):
        raise ExportError(
            f"{where}: it reads a {type(value).__name__} from a global or through an object "
            "at each call (a np.random.Generator?), which an export cannot save; pass it as an "
            "argument instead")
    return members.array(value.copy())


def _variable_index(entry: Any, variables: list[Variable], where: str) -> int:
    if not isinstance(entry, Variable):
        raise ExportError(f"{where}: its state holds a {type(entry).__name__}, not a Variable")
    for i, known in enumerate(variables):
        if known is entry:
            return i
    variables.append(entry)
    return len(variables) - 1


def _variable(variable: Variable, members: Members) -> dict:
    value = np.asarray(variable)
    return {"name": variable.name, "dtype": value.dtype.str, "shape": list(value.shape),
            "trainable": bool(getattr(variable, "trainable", True)),
            "member": members.array(value.copy(), "variables")}


def _parameters(staged: StagedFunction, members: Members) -> list[dict]:
    out = []
    for param in staged._binding.params:
        entry = {"name": param.name, "kind": _KINDS[param.kind]}
        if param.default is not inspect.Parameter.empty:
            try:
                entry["default"] = encode_value(param.default, members)
            except Unsupported as e:
                raise Unsupported(f"parameter '{param.name}' has a default that is {e}, which "
                                  "an export cannot describe as plain data") from None
        out.append(entry)
    return out


def _input_signature(staged: StagedFunction, members: Members) -> dict | None:
    if staged.input_signature is None:
        return None
    specs, treedef = pytree.flatten(staged.input_signature)
    return {"tree": encode_tree(treedef, members),
            "specs": [{"dtype": s.dtype.str, "shape": list(s.shape)} for s in specs]}


def module_text(module: ir.Module, where: str) -> str:
    """The exact text of ``module``, checked to be exportable: no op refused by name, no
    exception class of the user's code, every attribute with a text form, read back the same.

    Raises:
      ExportError: naming the op and the user's file and line.
    """
    if module.main.writes_back:  # (a callee's writes are results of its calls: exported)
        names = ", ".join(f"`{name}`" for _, _, name in module.main.writes_back)
        raise ExportError(f"{where}: it writes into its array argument(s) {names}, which an "
                          "exported function does not write back yet; return the new "
                          "arrays instead")
    for function in module.functions.values():
        for op in function.body.walk():
            why = _refusal(op)
            if why is not None:
                raise ExportError(f"{where}: {why}, at {_where(op)}")
    if getattr(module, "callables", None):  # the Python functions of py_function ops
        raise ExportError(f"{where}: {REFUSED_OPS['py_function']}")
    try:
        text = ir_text.format_module(module)
    except ir_text.TextFormError as e:
        op = _op_without_text(module)
        raise ExportError(f"{where}: {e}" + (f", at {_where(op)}" if op else "")) from None
    if ir_text.format_module(ir_text.parse(text)) != text:  # pragma: no cover - a text bug
        raise ExportError(f"{where}: its IR text does not read back the same")
    return text


def _refusal(op: ir.Op) -> str | None:
    why = REFUSED_OPS.get(op.name)
    if why is not None:
        return why
    for value in _attribute_values(op.attrs.values()):
        if isinstance(value, BaseException):
            cls = type(value)
            if cls.__module__ != "builtins" and not cls.__module__.startswith(
                    _KNOWN_EXCEPTION_MODULES):
                return (f"it raises {cls.__module__}.{cls.__qualname__}, an exception class "
                        "of the user's code, which a process without that code cannot create "
                        "(raise a builtin exception such as ValueError instead)")
    return None


def _attribute_values(values: Any) -> list:
    out = []
    for value in values:
        if type(value) in (tuple, list):
            out += _attribute_values(value)
        else:
            out.append(value)
    return out


def _op_without_text(module: ir.Module) -> ir.Op | None:
    """The first op whose attributes have no text form."""
    for function in module.functions.values():
        for op in function.body.walk():
            probe = ir.Module("probe")
            body = ir.Region()
            body.append(ir.Op(op.name, [], [], op.attrs, (), op.loc))
            probe.add(ir.Function("probe", body))
            try:
                ir_text.format_module(probe)
            except ir_text.TextFormError:
                return op
    return None


def _where(op: ir.Op) -> str:
    if op.loc is None:
        return f"`{op.name}` (no source location)"
    where = f"{op.loc.filename}:{op.loc.lineno}"
    return where + (f" (in {op.loc.function})" if op.loc.function else "")


# -- loading --------------------------------------------------------------------------------------

def load(path: str | os.PathLike, target: str | None = None) -> LoadedFunction:
    """The function saved at ``path``, ready to call; it needs none of the original source.

    Args:
      path: an archive ``save`` wrote.
      target: run it on this target (``"cpu"``, ``"interpreter"``...) instead of the one it was
        saved with.
    Raises:
      ExportError: the file is not an intact export this autostage reads (names the file and
        what is wrong), e.g. written by a newer autostage.
      FileNotFoundError: there is no such file.
    """
    archive = export_archive.Archive(path)
    chosen = target_for(target or archive.manifest["target"])
    try:
        return LoadedFunction(archive, chosen)
    except (ValueError, KeyError, TypeError, ir_text.TextFormError) as e:
        if isinstance(e, ExportError):
            raise
        raise archive.error(f"holds an export that cannot be loaded: {e}") from None


def _unpickled(archive: export_archive.Archive, target: str,
               variables: tuple[Variable, ...]) -> LoadedFunction:
    """A pickled ``LoadedFunction`` rebuilt, its Variables holding the pickled values."""
    loaded = LoadedFunction(archive, target_for(target))
    for mine, pickled in zip(loaded.variables, variables, strict=True):
        mine.assign(pickled.read())
    return loaded


class _Signature:
    """One saved trace, ready to run: what its argument leaves must be, and its trace."""

    __slots__ = ("treedef", "leaves", "concrete", "captured", "specificity")

    def __init__(self, treedef: Any, leaves: list[LeafSpec], concrete: ConcreteFunction,
                 captured: list[np.ndarray]):
        self.treedef, self.leaves, self.concrete = treedef, leaves, concrete
        self.captured = captured or None
        self.specificity = sum(leaf.known_sizes() for leaf in leaves)


class _Parameters:
    """A callable with the saved Python signature, for ``Binding`` (which reads it)."""

    def __init__(self, signature: inspect.Signature):
        self.__signature__ = signature

    def __call__(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - never called
        raise NotImplementedError


class LoadedFunction:
    """A function ``autostage.load`` read: its saved traces, its own Variables (``variables``,
    starting with the saved values; its calls assign them as the original's did)."""

    def __init__(self, archive: export_archive.Archive, target: Any):
        manifest = archive.manifest
        self._archive = archive  # what a pickle of this function carries (see __reduce__)
        self.name: str = manifest["name"]
        self.path = archive.path
        self.target: str = target.name
        arrays = _array_reader(archive)
        self._binding = Binding(_Parameters(_python_signature(manifest["parameters"], arrays)))
        self._float_arguments = tuple(manifest["float_arguments"])
        self._input_signature = _decode_input_signature(manifest["input_signature"], arrays)
        self._variables = tuple(_decode_variable(entry, arrays) for entry in
                                manifest["variables"])
        self._signatures = [self._load_signature(entry, archive, arrays, target)
                            for entry in manifest["signatures"]]
        if not self._signatures:
            raise ValueError("it holds no signature")

    @property
    def variables(self) -> tuple[Variable, ...]:
        """This function's own Variables (the saved values to begin with)."""
        return self._variables

    @property
    def signatures(self) -> list[str]:
        """Each saved signature, as ``name(x: f64[?], n == 3)``."""
        return [self._describe(s.treedef, [str(leaf) for leaf in s.leaves])
                for s in self._signatures]

    def __repr__(self) -> str:
        return f"<LoadedFunction {self.name} from {self.path} target={self.target}>"

    def __reduce__(self) -> tuple:
        # By value, as Dask and Ray need: the archive read (not the path, which a worker may
        # not have) and the Variables' current values; the traces are rebuilt on unpickling.
        return _unpickled, (self._archive, self.target, self._variables)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if fp_state.current() is not fp_state.accepted[0]:
            fp_state.check(f"when {self.name} is called")
        if self._float_arguments:
            args = float_arguments(args, self._float_arguments)
        values = self._binding.canonical(args, kwargs)
        if self._input_signature is not None:
            check_arguments(self.name, self._binding, self._input_signature, args, kwargs,
                            values)
        leaves, treedef = pytree.flatten(values)
        if any(isinstance(leaf, Staged) for leaf in leaves):
            raise StagingTypeError(
                f"{self.name} (loaded from {self.path}) is called with staged values"
                f"{tracing.at()}: a loaded function runs its saved compiled code on NumPy "
                "values and cannot be part of a staged function; call it outside the converted "
                "function, or call the original function (converted) there")
        best = None
        for signature in self._signatures:
            if signature.treedef == treedef and all(
                    spec.matches(leaf) for spec, leaf in zip(signature.leaves, leaves,
                                                              strict=True)):
                if best is None or signature.specificity > best.specificity:
                    best = signature
        if best is None:
            raise self._no_signature(treedef, leaves)
        staged = [leaf for spec, leaf in zip(best.leaves, leaves, strict=True) if spec.staged]
        return best.concrete.run(staged, best.captured)

    def _describe(self, treedef: Any, texts: list[str]) -> str:
        values = pytree.unflatten(treedef, [None] * pytree.num_leaves(treedef))
        labels = self._binding.labels(values, short=True)
        parts = [f"{label}: {text}" if not text.startswith("==") else f"{label} {text}"
                 for label, text in zip(labels, texts, strict=True)]
        return f"{self.name}({', '.join(parts)})"

    def _no_signature(self, treedef: Any, leaves: list) -> NoSavedSignatureError:
        given = self._describe(treedef, [_argument_text(leaf) for leaf in leaves])
        saved = "\n  ".join(self.signatures)
        return NoSavedSignatureError(
            f"{self.name} (loaded from {self.path}) has no saved signature for the call "
            f"{given}; it was saved for:\n  {saved}\nCall the original with such arguments "
            "before saving it, or pass arguments of a saved signature")

    def _load_signature(self, entry: dict, archive: export_archive.Archive,
                        arrays: Callable[[str], np.ndarray], target: Any) -> _Signature:
        text = archive.member(entry["module"]).decode("utf-8")
        module = ir_text.parse(text)
        _bind_state(module, [self._variables[i] if i < len(self._variables) else None
                             for i in entry["state"]])
        verifier.verify(module)
        treedef = decode_tree(entry["inputs"]["tree"], arrays)
        leaves = [LeafSpec(leaf, arrays) for leaf in entry["inputs"]["leaves"]]
        if len(leaves) != pytree.num_leaves(treedef):
            raise ValueError(f"{entry['module']}: the argument structure and its leaves disagree")
        params = module.main.body.args
        staged = [leaf for leaf in leaves if leaf.staged]
        captured = [arrays(name) for name in entry["captured"]]
        if len(staged) + len(captured) != len(params):
            raise ValueError(f"{entry['module']}: {len(params)} parameters, but "
                             f"{len(staged)} staged arguments and {len(captured)} saved arrays")
        for spec, param in zip(staged, params, strict=False):
            _check_parameter(spec, param.type, entry["module"])
        for value, param in zip(captured, params[len(staged):], strict=True):
            _check_captured(value, param.type, entry["module"])
        outputs = decode_outputs(entry["outputs"], module.main.result_types, arrays)
        _check_identity(outputs.identity, len(params), entry["module"])
        prepare = target.prepare
        swapped = tuple(i for i, spec in enumerate(staged)
                        if spec.dtype is not None and not spec.dtype.isnative)
        if swapped:  # non-native byte order: copied at each call, as the original does
            prepare = (lambda m, _prepare=prepare: inputs.native_order(_prepare(m), swapped))
        concrete = ConcreteFunction(module, (), {}, None, outputs, prepare)
        return _Signature(treedef, leaves, concrete, captured)


def _array_reader(archive: export_archive.Archive) -> Callable[[str], np.ndarray]:
    def read(name: str) -> np.ndarray:
        try:
            return read_array(archive.member(name))
        except ExportError:
            raise
        except ValueError as e:
            raise archive.error(f"has a member {name!r} that is not a plain .npy array ({e})"
                                ) from None
    return read


def _python_signature(parameters: list[dict], arrays: Callable) -> inspect.Signature:
    return inspect.Signature([
        inspect.Parameter(p["name"], _KIND_OF_NAME[p["kind"]], default=decode_value(
            p["default"], arrays) if "default" in p else inspect.Parameter.empty)
        for p in parameters])


def _decode_input_signature(data: dict | None, arrays: Callable) -> tuple | None:
    if data is None:
        return None
    treedef = decode_tree(data["tree"], arrays)
    specs = [TensorSpec(s["shape"], staged_dtype(s["dtype"])) for s in data["specs"]]
    return tuple(pytree.unflatten(treedef, specs))


def _decode_variable(entry: dict, arrays: Callable) -> Variable:
    value = arrays(entry["member"])
    if value.dtype != np.dtype(entry["dtype"]) or list(value.shape) != entry["shape"]:
        raise ValueError(f"Variable {entry['name']!r}: its member holds a {value.dtype} array "
                         f"of shape {value.shape}, its entry says {entry['dtype']} "
                         f"{tuple(entry['shape'])}")
    if not entry.get("trainable", True):
        return Variable(value, trainable=False, name=entry["name"], dtype=value.dtype)
    return Variable(value, name=entry["name"], dtype=value.dtype)


def _bind_state(module: ir.Module, variables: list[Variable | None]) -> None:
    """Puts fresh Variables where the parsed module has state descriptions."""
    if len(variables) != len(module.state):
        raise ValueError(f"module @{module.entry} has {len(module.state)} state entries, its "
                         f"manifest entry names {len(variables)} Variables")
    for i, (entry, variable) in enumerate(zip(module.state, variables, strict=True)):
        if variable is None or str(variable.type) != str(entry.type):
            raise ValueError(f"state {i} of module @{module.entry} ({entry.type}) is not the "
                             "Variable its manifest entry names")
        module.state[i] = variable


def _check_parameter(spec: LeafSpec, param_type: Any, member: str) -> None:
    if spec.kind == "generator":
        ok = type(param_type) is GeneratorType
    else:
        shape = spec.shape if spec.kind == "array" else ()
        ok = isinstance(param_type, TensorType) and param_type.dtype == inputs.native(
            spec.dtype) and tuple(param_type.shape) == tuple(shape)
    if not ok:
        raise ValueError(f"{member}: a parameter of type {param_type} stands for an argument "
                         f"{spec}")


def _check_captured(value: np.ndarray, param_type: Any, member: str) -> None:
    if not (isinstance(param_type, TensorType) and value.dtype == param_type.dtype
            and value.ndim == len(param_type.shape) and all(
                d is None or d == n for d, n in zip(param_type.shape, value.shape,
                                                    strict=True))):
        raise ValueError(f"{member}: a saved {value.dtype} array of shape {value.shape} for a "
                         f"parameter of type {param_type}")


def _check_identity(identity: tuple, params: int, member: str) -> None:
    for i, (kind, j) in enumerate(identity):
        bound = i if kind == "same" else params
        low = -params if kind == "param_maybe" else 0  # (negative: a view of an argument)
        indices = j if type(j) is tuple else () if j is None else (j,)
        indices = indices[:1] if kind == "param_if" else indices  # (then the flag result)
        if any(not low <= k < bound for k in indices):
            raise ValueError(f"{member}: identity entry {i} ({kind}, {j}) is out of range")


def _argument_text(leaf: object) -> str:
    if type(leaf) is np.ndarray or isinstance(leaf, np.ndarray):
        return f"{leaf.dtype} array of shape {leaf.shape}"
    if isinstance(leaf, np.generic):
        return f"np.{leaf.dtype.name} scalar"
    if type(leaf) is np.random.Generator:
        return "np.random.Generator"
    text = repr(leaf)
    return f"== {text if len(text) <= 40 else text[:37] + '...'}"


__all__ = ["ExportError", "LoadedFunction", "NoSavedSignatureError", "load", "save"]
