"""Every configuration option of autostage, in one place: one name, one ``AUTOSTAGE_*``
environment variable, one context manager.

An option's value is, in order: the innermost ``option.override(value)`` active in this thread,
else the value given to ``option.set(value)``, else its environment variable (read at each use,
so a test or a long-running process may change it), else its default. A malformed environment
value is an error naming the variable, raised where the option is first read. The public face is
``autostage.config`` (which re-exports these); runtime modules read options from here, since the
runtime may not import the compiler.

    from autostage import config
    with config.VERIFY.override(True):  # the verifier runs after each pass in this block
        ...
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """An option was given a value it cannot take (``AUTOSTAGE_MAX_TRACES=lots``)."""


@dataclass(eq=False)
class Option(Generic[T]):
    """One option: ``value()`` reads it, ``set(v)`` sets it for the process, ``override(v)`` for
    a ``with`` block in this thread, ``reset()`` returns it to the environment or default."""

    name: str
    default: T
    parse: Callable[[str], T]  # the environment text -> the value (ConfigError if malformed)
    check: Callable[[Any], T]  # a value given in Python -> the value (ConfigError if invalid)
    doc: str
    _set: list = field(default_factory=list)  # [] or [value]
    _local: threading.local = field(default_factory=threading.local)

    @property
    def env(self) -> str:
        return "AUTOSTAGE_" + self.name.upper()

    def value(self) -> T:
        stack = getattr(self._local, "stack", None)
        if stack:
            return stack[-1]
        if self._set:
            return self._set[0]
        text = os.environ.get(self.env, "").strip()
        if not text:
            return self.default
        try:
            return self.parse(text)
        except (ValueError, ConfigError) as e:
            raise ConfigError(f"{self.env}={text!r}: {e}") from None

    def set(self, value: Any) -> None:
        self._set[:] = [self.check(value)]

    def reset(self) -> None:
        self._set.clear()

    @contextlib.contextmanager
    def override(self, value: Any) -> Iterator[T]:
        checked = self.check(value)
        stack = self._local.__dict__.setdefault("stack", [])
        stack.append(checked)
        try:
            yield checked
        finally:
            stack.pop()


# -- parsers and checks ---------------------------------------------------------------------------

def _flag(text: str) -> bool:
    return text not in ("0", "false", "False", "no", "off")


def _check_flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"expected True or False, not {value!r}")
    return value


def _count(text: str) -> int:
    return _check_count(int(text))


def _check_count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ConfigError(f"expected an int >= 0, not {value!r}")
    return value


def _names(text: str) -> frozenset[str]:
    return frozenset(name.strip() for name in text.split(",") if name.strip())


def _check_names(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return _names(value)
    return frozenset(str(name) for name in value)


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise ConfigError(f"expected one of {', '.join(choices)}, not {value!r}")
        return text
    return check


def _lenient_traceback(text: str) -> str:
    return "full" if text.lower() == "full" else "filtered"


def _path(text: str) -> str:
    return os.path.abspath(os.path.expanduser(text))


def _check_path(value: Any) -> str:
    return _path(os.fspath(value))


# -- the options ----------------------------------------------------------------------------------

MAX_TRACES: Option[int] = Option(
    "max_traces", 32, _count, _check_count,
    "How many traces each staged function keeps (0: all); the least recently run is dropped.")
TRACEBACK: Option[str] = Option(
    "traceback", "filtered", _lenient_traceback, _choice("filtered", "full"),
    "'filtered': errors show the user's frames only; 'full': every frame (read while an error is"
    " reported, so an unknown environment value means 'filtered' rather than a second error).")
DO_NOT_CONVERT: Option[frozenset] = Option(
    "do_not_convert", frozenset(), _names, _check_names,
    "Top-level modules whose functions are called as they are, never converted (comma-separated),"
    " in addition to autostage.config.do_not_convert_modules.")
VERIFY: Option[bool] = Option(
    "verify", False, _flag, _check_flag,
    "Run the IR verifier after every pass (tests turn it on).")
DUMP_BEFORE: Option[frozenset] = Option(
    "dump_before", frozenset(), _names, _check_names,
    "Print the IR to stderr before these passes (comma-separated names, or 'all').")
DUMP_AFTER: Option[frozenset] = Option(
    "dump_after", frozenset(), _names, _check_names,
    "Print the IR to stderr after these passes (comma-separated names, or 'all').")
CACHE_DIR: Option[str] = Option(
    "cache_dir", "", _path, _check_path,
    "Where generated and compiled code is kept ('': $XDG_CACHE_HOME/autostage or "
    "~/.cache/autostage); it must be private to this user.")

EXACT_MATH: Option[bool] = Option(
    "exact_math", False, _flag, _check_flag,
    "cpu target: compute real exp, log and tanh with libm's functions (Numba's scalar calls)"
    " instead of the vectorisable kernels of backends/cpu/vector_math.py (within 4 ulp of NumPy);"
    " read when a trace is compiled, and part of the generated code (no code is shared between"
    " the two settings).")

DIRECT: Option[bool] = Option(
    "direct", True, _flag, _check_flag,
    "cpu target: compile autostage's Numba functions (generated entries, shared helpers, the"
    " runtime's modules) through autostage's own front end where they can (backends/cpu/direct.py:"
    " typed and emitted with Numba's typing and target contexts, without Numba's bytecode"
    " analysis, IR and passes); a function it leaves out, or 0, is compiled by Numba's pipeline."
    " Read when a function compiles; part of those functions' cache keys.")

LLVM_WORKER: Option[bool] = Option(
    "llvm_worker", True, _flag, _check_flag,
    "cpu target: LLVM's optimisation and code generation of the helpers a function's compile"
    " needs run on a worker thread while the compile goes on (backends/cpu/llvm_worker.py);"
    " 0: on the compiling thread. Read when a helper compiles.")

MALLOC_TUNING: Option[bool] = Option(
    "malloc_tuning", True, _flag, _check_flag,
    "cpu target, Linux (glibc): raise malloc's mmap and trim thresholds to 1 GiB when the backend"
    " first compiles, so that big temporaries reuse freed memory instead of faulting in fresh"
    " pages at every call (backends/cpu/allocator.py); 0 leaves malloc as it is.")

RECURSION_LIMIT: Option[int] = Option(
    "recursion_limit", 1000, _count, _check_count,
    "cpu target: how deep staged recursion may go before RecursionError (native frames: a"
    " runaway recursion must not overflow the thread's stack); read when a trace is compiled.")

UNROLL_LIMIT: Option[int] = Option(
    "unroll_limit", 3, _count, _check_count,
    "A for loop over a Python range() longer than this, inside a trace and carrying staged"
    " values, is staged as one loop (its variable a staged int) instead of unrolled, when its"
    " body stages the same way; read while tracing. 0 stages every such loop.")

STATIC_SIZES: Option[int] = Option(
    "static_sizes", 16, _count, _check_count,
    "Array arguments' sizes up to this are part of a trace (its code is specialised on them:"
    " loops of known length, small products unrolled); a second call of the same ranks with"
    " other small sizes traces once more with every size unknown, and that trace serves all"
    " later calls (runtime/static_sizes.py). 0: every size unknown. Read at a function's first"
    " call.")

TIERED: Option[bool] = Option(
    "tiered", True, _flag, _check_flag,
    "cpu target: while a trace compiles (in a background thread), calls of a function made with"
    " autostage.convert run its converted Python code with the NumPy values given (Python's"
    " semantics, so the same results and side effects); compiled code takes over when ready."
    " 0: each trace compiles on its first call, which waits for it. Read at each such call.")


@dataclass(eq=False)
class Switch(Option[bool]):
    """A flag read on a hot path: ``engaged`` is false until the flag could be on (its
    environment variable set when the process imported autostage, or ``set``/``override`` given
    True), so a call tests one attribute and reads ``value()`` only after that. ``on_engage``:
    called once when it engages (or at once, if it has), for code that keeps its own copy of
    ``engaged`` (the C level of a staged call: ``call_slot``)."""

    engaged: bool = False
    _watchers: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.engaged = bool(os.environ.get(self.env, "").strip())

    def on_engage(self, callback: Callable[[], None]) -> None:
        self._watchers.append(callback)
        if self.engaged:
            callback()

    def _engage(self, value: bool) -> None:
        if value and not self.engaged:
            self.engaged = True
            for callback in self._watchers:
                callback()

    def set(self, value: Any) -> None:
        super().set(value)
        self._engage(value is True)

    @contextlib.contextmanager
    def override(self, value: Any) -> Iterator[bool]:
        with super().override(value) as checked:
            self._engage(bool(checked))
            yield checked


EAGER: Switch = Switch(
    "eager", False, _flag, _check_flag,
    "Every call of a function made with autostage.convert runs its converted Python code with"
    " the values given (NumPy semantics, no tracing or compilation), so breakpoints and prints"
    " work as in plain Python; gradients still trace. The environment variable is read when"
    " autostage is imported; config.run_functions_eagerly(flag) changes it in a running process.")

CUDA_CUBLAS: Option[bool] = Option(
    "cuda_cublas", True, _flag, _check_flag,
    "cuda target: float matrix products call cuBLAS through CuPy when CuPy is installed (no"
    " copies: CuPy reads the device arrays in place); 0, or no CuPy, uses autostage's tiled"
    " kernel. Read at each product.")

OPTIONS: tuple[Option, ...] = (MAX_TRACES, TRACEBACK, DO_NOT_CONVERT, VERIFY, DUMP_BEFORE,
                               DUMP_AFTER, CACHE_DIR, EXACT_MATH, DIRECT, LLVM_WORKER,
                               MALLOC_TUNING, RECURSION_LIMIT, UNROLL_LIMIT, STATIC_SIZES,
                               TIERED, EAGER, CUDA_CUBLAS)


def snapshot() -> tuple[tuple[Option, Any], ...]:
    """This thread's overrides (``Option.override``), for ``applied`` in another thread: a
    compilation started in the background must see the caller's settings."""
    return tuple((option, stack[-1]) for option in OPTIONS
                 if (stack := getattr(option._local, "stack", None)))


@contextlib.contextmanager
def applied(values: tuple[tuple[Option, Any], ...]) -> Iterator[None]:
    """Overrides each option with its value in ``values`` (a ``snapshot``) for a block."""
    with contextlib.ExitStack() as stack:
        for option, value in values:
            stack.enter_context(option.override(value))
        yield


def cache_root() -> str:
    """The configured cache directory, or the per-user default (not checked or created)."""
    configured = CACHE_DIR.value()
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autostage")


__all__ = ["CACHE_DIR", "CUDA_CUBLAS", "DIRECT", "DO_NOT_CONVERT", "DUMP_AFTER", "DUMP_BEFORE",
           "EAGER", "EXACT_MATH", "LLVM_WORKER", "MALLOC_TUNING", "MAX_TRACES", "OPTIONS",
           "RECURSION_LIMIT", "TIERED",
           "TRACEBACK", "VERIFY", "ConfigError", "Option", "Switch", "applied", "cache_root",
           "snapshot"]
