"""The JSON schema of an export's manifest (format version 1) and the small checker that applies it.

``SCHEMA`` is written in JSON Schema's vocabulary (the subset ``check`` knows: ``type``,
``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``, ``const``,
``minimum``, ``anyOf``, ``$ref`` into ``$defs``), so that it documents the format for other
readers too. ``check`` raises ``ValueError`` naming the first place (``$.signatures[0].module``)
that does not fit. Recursive parts (values, structures) are described here and decoded by
``export_convention``, which refuses anything else again.
"""

from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_DTYPE = {"type": "string"}
_MEMBER = {"type": "string"}
_SHAPE = {"type": "array", "items": {"anyOf": [_INT, {"type": "null"}]}}


def _object(required: dict, optional: dict | None = None) -> dict:
    return {"type": "object", "properties": {**required, **(optional or {})},
            "required": list(required), "additionalProperties": False}


_VALUE = {"anyOf": [
    _object({"type": {"enum": ["none"]}}),
    _object({"type": {"enum": ["bool"]}, "value": {"type": "boolean"}}),
    _object({"type": {"enum": ["int"]}, "value": {"type": "integer"}}),
    _object({"type": {"enum": ["float"]}, "value": _STR}),
    _object({"type": {"enum": ["complex"]}, "real": _STR, "imag": _STR}),
    _object({"type": {"enum": ["str"]}, "value": _STR}),
    _object({"type": {"enum": ["array", "scalar"]}, "member": _MEMBER}),
    _object({"type": {"enum": ["list", "tuple"]},
             "items": {"type": "array", "items": {"$ref": "#/$defs/value"}}}),
    _object({"type": {"enum": ["dict"]},
             "keys": {"type": "array", "items": {"$ref": "#/$defs/value"}},
             "values": {"type": "array", "items": {"$ref": "#/$defs/value"}}}),
]}

# A structure: null is a leaf; [kind, children] for a tuple or list; ["dict", keys, children].
_TREE = {"anyOf": [
    {"type": "null"},
    {"type": "array", "items": {"anyOf": [{"enum": ["tuple", "list", "dict"]}, {"type": "array"}]}},
]}

_LEAF = {"anyOf": [
    _object({"kind": {"enum": ["array"]}, "dtype": _DTYPE, "shape": _SHAPE}),
    _object({"kind": {"enum": ["scalar"]}, "dtype": _DTYPE}),
    _object({"kind": {"enum": ["generator"]}}),
    _object({"kind": {"enum": ["constant"]}, "value": {"$ref": "#/$defs/value"}}),
]}

_OUTPUT_LEAF = {"anyOf": [
    _object({"result": _INT, "as": {"enum": ["value", "list", "python_list"]}}),
    _object({"constant": {"$ref": "#/$defs/value"}}),
]}

_SIGNATURE = _object({
    "module": _MEMBER,
    "inputs": _object({"tree": {"$ref": "#/$defs/tree"},
                       "leaves": {"type": "array", "items": _LEAF}}),
    "captured": {"type": "array", "items": _MEMBER},
    "state": {"type": "array", "items": _INT},
    "outputs": _object({
        "tree": {"$ref": "#/$defs/tree"},
        "leaves": {"type": "array", "items": _OUTPUT_LEAF},
        "python_types": {"type": "array", "items": {"anyOf": [
            {"enum": [None, "int", "float", "bool", "complex", "array"]},
            # a Python number where the result ``if_result`` (a bool) is true, else NumPy's
            # (and ``number``: that number, where the result's dtype does not hold it)
            _object({"kind": {"enum": ["int", "float", "bool", "complex"]},
                     "if_result": _INT}, {"number": _VALUE}),
            # a 0-d ndarray where the result ``array_if_result`` (a bool) is true, else a scalar
            _object({"array_if_result": _INT})]}},
        # (kind, argument index or null; for "param_maybe": the candidate arguments' indices,
        # a negative one -j-1 a view of argument j; for "param_if": [argument, flag result])
        "identity": {"type": "array", "items": {"type": "array", "items": {
            "anyOf": [_STR, _INT, {"type": "null"}, {"type": "array", "items": _INT}]}}},
    }),
})

_PARAMETER = _object(
    {"name": _STR, "kind": {"enum": ["positional_only", "positional_or_keyword",
                                     "var_positional", "keyword_only", "var_keyword"]}},
    {"default": {"$ref": "#/$defs/value"}})

SCHEMA: dict = {
    "$defs": {"value": _VALUE, "tree": _TREE},
    **_object({
        "format": {"const": "autostage-export"},
        "version": {"const": 1},
        "autostage_version": _STR,
        "name": _STR,
        "target": _STR,
        "parameters": {"type": "array", "items": _PARAMETER},
        "float_arguments": {"type": "array", "items": _INT},
        "input_signature": {"anyOf": [{"type": "null"}, _object({
            "tree": {"$ref": "#/$defs/tree"},
            "specs": {"type": "array", "items": _object({"dtype": _DTYPE, "shape": _SHAPE})}})]},
        "variables": {"type": "array", "items": _object(
            {"name": _STR, "dtype": _DTYPE, "shape": _SHAPE, "member": _MEMBER},
            {"trainable": {"type": "boolean"}})},
        "signatures": {"type": "array", "items": _SIGNATURE},
        "members": {"type": "object", "additionalProperties": _STR},
    }),
}

_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
}


def check(instance: Any, schema: dict = SCHEMA) -> None:
    """Raises ValueError naming where ``instance`` (parsed JSON) does not fit ``schema``."""
    problem = _problem(instance, schema, "$", SCHEMA["$defs"])
    if problem is not None:
        raise ValueError(problem)


def _problem(value: Any, schema: dict, path: str, defs: dict) -> str | None:
    if "$ref" in schema:
        return _problem(value, defs[schema["$ref"].rsplit("/", 1)[1]], path, defs)
    if "anyOf" in schema:
        problems = [_problem(value, option, path, defs) for option in schema["anyOf"]]
        if all(problems):
            return min(problems, key=len) if len(problems) == 1 else (
                f"{path}: {_short(value)} is none of the forms allowed here")
        return None
    if "const" in schema and (value != schema["const"] or type(value) is not type(
            schema["const"])):
        return f"{path}: expected {schema['const']!r}, got {_short(value)}"
    if "enum" in schema and not any(value == e and type(value) is type(e)
                                    for e in schema["enum"]):
        return f"{path}: expected one of {schema['enum']}, got {_short(value)}"
    kind = schema.get("type")
    if kind is not None:
        problem = _type_problem(value, kind, schema, path)
        if problem is not None:
            return problem
    if isinstance(value, dict):
        return _object_problem(value, schema, path, defs)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problem = _problem(item, schema["items"], f"{path}[{i}]", defs)
            if problem is not None:
                return problem
    return None


def _type_problem(value: Any, kind: str, schema: dict, path: str) -> str | None:
    if kind == "integer":
        ok = type(value) is int and value >= schema.get("minimum", value)
    else:
        ok = type(value) is _TYPES[kind]
    return None if ok else f"{path}: expected {kind}, got {_short(value)}"


def _object_problem(value: dict, schema: dict, path: str, defs: dict) -> str | None:
    properties = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            return f"{path}: missing {name!r}"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name)
        if sub is None:
            if extra is False:
                return f"{path}: unexpected key {name!r}"
            if isinstance(extra, dict):
                sub = extra
            else:
                continue
        problem = _problem(item, sub, f"{path}.{name}", defs)
        if problem is not None:
            return problem
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
