"""Configuration, the public face of ``autostage.runtime.config``: every option has one name,
one ``AUTOSTAGE_*`` environment variable and one context manager (``OPTION.override(value)``).

===================  ==============================  ==========================================
option               environment variable            what it does
===================  ==============================  ==========================================
``MAX_TRACES``       ``AUTOSTAGE_MAX_TRACES``        traces kept per staged function (32; 0: all)
``TRACEBACK``        ``AUTOSTAGE_TRACEBACK``         ``filtered`` (user frames) or ``full``
``DO_NOT_CONVERT``   ``AUTOSTAGE_DO_NOT_CONVERT``    more modules never converted (``a,b``)
``VERIFY``           ``AUTOSTAGE_VERIFY``            run the IR verifier after every pass
``DUMP_BEFORE``      ``AUTOSTAGE_DUMP_BEFORE``       print the IR before these passes (``cse,all``)
``DUMP_AFTER``       ``AUTOSTAGE_DUMP_AFTER``        print the IR after these passes
``CACHE_DIR``        ``AUTOSTAGE_CACHE_DIR``         where generated and compiled code is kept
``EXACT_MATH``       ``AUTOSTAGE_EXACT_MATH``        cpu: real exp/log/tanh by libm, not kernels
``DIRECT``           ``AUTOSTAGE_DIRECT``            cpu: compiled without Numba's front end
``LLVM_WORKER``      ``AUTOSTAGE_LLVM_WORKER``       cpu: helpers' LLVM work on a worker thread
``MALLOC_TUNING``    ``AUTOSTAGE_MALLOC_TUNING``     cpu: freed big arrays reused (``0``: off)
``RECURSION_LIMIT``  ``AUTOSTAGE_RECURSION_LIMIT``   staged recursion depth (1000)
``UNROLL_LIMIT``     ``AUTOSTAGE_UNROLL_LIMIT``      longer Python ranges staged, not unrolled (3)
``STATIC_SIZES``     ``AUTOSTAGE_STATIC_SIZES``      argument sizes up to this traced as known (16)
``TIERED``           ``AUTOSTAGE_TIERED``            cpu: Python runs calls while a trace compiles
``EAGER``            ``AUTOSTAGE_EAGER``             calls run as Python, nothing staged (debug)
``CUDA_CUBLAS``      ``AUTOSTAGE_CUDA_CUBLAS``       cuda: products by cuBLAS via CuPy (``0``: off)
===================  ==============================  ==========================================

``do_not_convert_modules``: top-level modules whose functions ``converted_call`` always calls as
they are (never converted); ``AUTOSTAGE_DO_NOT_CONVERT`` extends it when autostage is imported,
and so may adding to the set at run time. The standard library, builtins and autostage itself are
never converted.

``max_traces``: a staged function traced for more (e.g. once per value of a Python constant)
drops the least recently run trace, with its compiled code; calling it with those arguments
again traces again (the CPU target then loads the compiled code from the disk cache).
``set_max_traces(n)`` and ``max_traces()`` are kept as the older spelling of ``MAX_TRACES``.
"""

from __future__ import annotations

from autostage.runtime.config import (
    CACHE_DIR,
    CUDA_CUBLAS,
    DIRECT,
    DO_NOT_CONVERT,
    DUMP_AFTER,
    DUMP_BEFORE,
    EAGER,
    EXACT_MATH,
    MALLOC_TUNING,
    MAX_TRACES,
    OPTIONS,
    RECURSION_LIMIT,
    STATIC_SIZES,
    TIERED,
    TRACEBACK,
    UNROLL_LIMIT,
    VERIFY,
    ConfigError,
    Option,
    cache_root,
)

do_not_convert_modules: set[str] = {
    "autostage", "numpy", "numba", "llvmlite", "gast", "scipy", "pandas", "torch", "jax",
    "jaxlib", "tensorflow", "pytest", "_pytest", "hypothesis",
}
do_not_convert_modules.update(DO_NOT_CONVERT.value())

TRACEBACK_MODES = ("filtered", "full")


def traceback_mode() -> str:
    """``"filtered"`` or ``"full"`` (``TRACEBACK``; unknown environment values: filtered)."""
    return TRACEBACK.value()


def max_traces() -> int:
    """How many traces each staged function keeps (0: all)."""
    return MAX_TRACES.value()


def set_max_traces(n: int) -> None:
    """Keeps at most ``n`` traces per staged function (0: all; see the module docstring)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"max_traces must be an int >= 0, not {n!r}")
    MAX_TRACES.set(n)


def run_functions_eagerly(flag: bool) -> None:
    """Runs every ``convert``-ed function as its converted Python code with the values given
    (``True``), or staged again (``False``): a debugging switch, like TF's of the same name.
    Results are the same either way; breakpoints and prints inside the function work as in
    plain Python while it is on. ``EAGER.override(True)`` does it for a ``with`` block."""
    EAGER.set(flag)


def functions_run_eagerly() -> bool:
    """Whether ``convert``-ed functions run as Python now (``run_functions_eagerly``)."""
    return EAGER.value()


__all__ = ["CACHE_DIR", "CUDA_CUBLAS", "DIRECT", "DO_NOT_CONVERT", "DUMP_AFTER", "DUMP_BEFORE",
           "EAGER", "EXACT_MATH", "MALLOC_TUNING", "MAX_TRACES", "OPTIONS", "RECURSION_LIMIT",
           "STATIC_SIZES", "TIERED", "TRACEBACK", "TRACEBACK_MODES", "UNROLL_LIMIT", "VERIFY",
           "ConfigError", "Option", "cache_root", "do_not_convert_modules",
           "functions_run_eagerly", "max_traces", "run_functions_eagerly", "set_max_traces",
           "traceback_mode"]
