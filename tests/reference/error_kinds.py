"""Classifies an exception that left autostage: a clear refusal, Python's own, or a leak.

Every exception leaving staged or converted code must be either
* ``"refused"``: one of autostage's documented errors (``StagingError``, ``ConversionError``)
  whose message names the user's file and a line, or
* ``"python"``: an exception of a type Python or NumPy raise (builtins, NumPy's), which the
  reference comparisons then check against plain Python's;
anything else is a ``"leak"`` (a bug): an internal exception type (autostage's own that is not
documented for users, Numba's or llvmlite's), an error that says it is a bug of autostage, a
message naming autostage's, Numba's or generated files, or a documented error naming no user
line. ``assert_no_leak`` is what the fuzzer and the reference suites call.
"""

from __future__ import annotations

import os
import re

_INTERNAL_MODULES = ("numba", "llvmlite")
_INTERNAL_PATH = re.compile(r"[/\\](numba|llvmlite)[/\\]|stage_[0-9a-f]{16,}\.py|"
                            r"[/\\](runtime|autostage)[/\\][\w/\\]+\.py")


def _documented() -> tuple[type, ...]:
    from autostage.runtime import tracing

    import autostage

    return (tracing.StagingError, autostage.ConversionError)


def classify(exc: BaseException, user_file: str) -> tuple[str, str]:
    """``(kind, why)``: kind is ``"refused"``, ``"python"`` or ``"leak"``."""
    kind = type(exc)
    module = kind.__module__.split(".")[0]
    text = str(exc)
    if module in _INTERNAL_MODULES:
        return "leak", f"a raw {kind.__module__}.{kind.__name__}"
    if _INTERNAL_PATH.search(text):
        return "leak", "the message names an internal or generated file"
    if "bug in autostage" in text or "this is a bug" in text:
        return "leak", "autostage reports a bug of its own"
    if isinstance(exc, _documented()):
        name = os.path.basename(user_file)
        if not re.search(rf"{re.escape(name)}\D{{0,3}}\d+", text):
            return "leak", f"a {kind.__name__} that names no line of {name}"
        return "refused", ""
    if module in ("autostage", "runtime"):
        return "leak", f"an internal exception type {kind.__module__}.{kind.__name__}"
    return "python", ""


def assert_no_leak(exc: BaseException, user_file: str, context: str = "") -> str:
    """The kind of ``exc`` (``"refused"`` or ``"python"``); AssertionError for a leak."""
    kind, why = classify(exc, user_file)
    assert kind != "leak", (f"{context}: an exception leaked out of autostage ({why}): "
                            f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
    return kind
