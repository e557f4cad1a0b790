"""The pass manager: runs named passes over a module in order, like Numba's.

Each pass is timed (logged at DEBUG on ``autostage.passes``, silent by default, and kept in
``PassManager.timings``); an exception inside a pass is re-raised as ``PassError`` naming the pass.
While checks are on (``AUTOSTAGE_VERIFY=1``, ``checks(True)`` or ``PassManager(verify=True)``;
tests turn them on) the verifier runs after every pass, so a broken rewrite is caught by the pass
that made it. ``AUTOSTAGE_DUMP_BEFORE`` / ``AUTOSTAGE_DUMP_AFTER`` (``cse,fusion`` or ``all``) print
the IR to stderr before/after the named passes; they are read when the passes run.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from autostage.runtime import config, ir, printer, verifier

logger = logging.getLogger("autostage.passes")



class PassError(RuntimeError):
    """A pass failed, or left IR the verifier rejects: a bug in autostage, never the user's.

    Example: ``PassError: pass 'cse' failed: KeyError: ...``; run with
    ``AUTOSTAGE_DUMP_BEFORE=cse`` to see the IR it was given. ``pass_name`` names the pass.
    """

    def __init__(self, pass_name: str, message: str):
        super().__init__(message)
        self.pass_name = pass_name


@dataclass(frozen=True, slots=True)
class Pass:
    """A named rewrite of a module in place; ``run`` returns whether it changed anything."""

    name: str
    run: Callable[[ir.Module], object]


def checks_enabled() -> bool:
    """Whether the verifier runs after each pass (``config.VERIFY``)."""
    return config.VERIFY.value()


@contextlib.contextmanager
def checks(enabled: bool = True) -> Iterator[None]:
    """Turns verification after each pass on (or off) inside the ``with`` block
    (``config.VERIFY.override``)."""
    with config.VERIFY.override(enabled):
        yield


class PassManager:
    """Runs ``passes`` in order; ``verify`` None follows ``checks_enabled()``."""

    def __init__(self, passes: Sequence[Pass], verify: bool | None = None):
        self.passes = tuple(passes)
        self.verify = verify
        self.timings: list[tuple[str, float]] = []  # (pass name, seconds) of the last run

    def run(self, module: ir.Module) -> ir.Module:
        """Runs every pass on ``module`` (in place) and returns it.

        Raises:
          PassError: a pass raised, or (checks on) its output failed verification.
        """
        self.timings = []
        verify = checks_enabled() if self.verify is None else self.verify
        before, after = config.DUMP_BEFORE.value(), config.DUMP_AFTER.value()
        for p in self.passes:
            if p.name in before or "all" in before:
                _dump(module, f"before {p.name}")
            self._run_one(p, module, verify)
            if p.name in after or "all" in after:
                _dump(module, f"after {p.name}")
        return module

    def _run_one(self, p: Pass, module: ir.Module, verify: bool) -> None:
        start = time.perf_counter()
        try:
            p.run(module)
        except Exception as e:
            raise PassError(p.name, f"pass {p.name!r} failed: {type(e).__name__}: {e}") from e
        elapsed = time.perf_counter() - start
        self.timings.append((p.name, elapsed))
        logger.debug("pass %s took %.3f ms", p.name, elapsed * 1e3)
        if verify:
            try:
                verifier.verify(module)
            except verifier.VerificationError as e:
                raise PassError(p.name, f"pass {p.name!r} left invalid IR: {e}") from e


def _dump(module: ir.Module, when: str) -> None:
    print(f"// IR {when}\n{printer.format_module(module)}\n", file=sys.stderr)
