"""``ConcreteFunction``: one trace of a staged function, prepared by its target on first run.

It holds the traced IR module (as traced: ``f.ir()``), how its results map back to the returned
structure (``Outputs``), what reads its implicit parameters and which frozen arrays guard it.
The first run hands a copy of the module to the target (``Target.prepare``: the cpu target
optimizes and compiles it), under a lock, so that each later run is one closure call. A tiered
start (``StagedFunction``) asks for that preparation on a background thread instead
(``prepare_in_background``) and runs Python meanwhile.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from autostage.runtime import argument_writes, collector, config, ir, printer, result_identity
from autostage.runtime.function_outputs import Outputs


class ConcreteFunction:
    """One trace: an IR module and how to turn its results back into the returned structure."""

    __slots__ = ("module", "key", "description", "read", "alternative", "outputs", "guards",
                 "used", "_prepare", "_runner", "_lock", "_released", "_background",
                 "background_error", "staged_only")

    def __init__(self, module: ir.Module, key: tuple, description: dict[str, tuple],
                 read: Callable | None, outputs: Outputs, prepare: Callable,
                 guards: list | None = None):
        self.module = module
        self.key = key
        self.description = description  # component label -> key, for retrace messages
        # read(leaves, env) -> the implicit parameters (environment arrays, arrays read through
        # objects), or None when a Python value this trace was specialised on changed
        # (captures.reader); None: no implicit parameters and nothing guarded.
        self.read = read
        self.alternative: ConcreteFunction | None = None  # another trace of the same key
        self.outputs = outputs
        # Arrays frozen in as constants that outlive the call (e.g. `self.w` of an object passed
        # as a constant): if one changes in place, this trace is stale (tracing.Trace.guards).
        self.guards = guards or []
        # The backend's ``prepare(module) -> run(args) -> tuple``, called on the first run (the
        # CPU backend compiles then), so that each call afterwards is one closure call.
        self._prepare = prepare
        self._runner: Callable[[list], tuple] | None = None
        self._lock = threading.Lock()  # one thread prepares (compiles); the others wait for it
        self.used = True  # run since the trace cache last looked (StagedFunction._bound)
        # Why the traced function's Python code may not run in this trace's stead (a tiered
        # start), or None (``function_trace.ModuleState.staged_only``).
        self.staged_only: str | None = None
        self._released = False  # dropped from the trace cache (release)
        self._background: threading.Thread | None = None  # preparing it (prepare_in_background)
        self.background_error: BaseException | None = None  # what that thread raised, if any

    @property
    def function(self) -> ir.Function:
        return self.module.main

    def run(self, staged: list, implicit: list | None) -> Any:
        if implicit:
            staged = staged + implicit
        self.used = True
        runner = self._runner
        if runner is None:
            runner = self._prepared()
        outputs = self.outputs
        if outputs.python_types is None:
            return outputs.build(runner(staged))
        return outputs.build(outputs.as_python(runner(staged)))

    def prepared_runner(self) -> Callable[[list], tuple] | None:
        """The backend's runner, if this trace has been prepared (run) already."""
        return self._runner

    def prepare(self, example: list | None = None) -> Callable[[list], tuple]:
        """The backend's runner, preparing it now if needed (compiled for the types of
        ``example``, a run's arguments, when given); waits for a preparation running in the
        background."""
        return self._runner or self._prepared(example)

    def prepare_in_background(self, staged: list, implicit: list | None) -> bool:
        """Starts preparing this trace on a daemon thread, once (with the caller's configuration
        overrides), compiled for the types of these arguments (a run's); whether it is still
        running. False once it finished: the runner is ready, or preparing failed and ``run``
        will prepare again in the caller's thread and raise."""
        thread = self._background
        if thread is None:
            with _STARTING:
                if self._background is None:  # published once started: alive until it ends
                    thread = threading.Thread(
                        target=self._prepare_quietly, daemon=True,
                        args=(config.snapshot(), staged + implicit if implicit else staged),
                        name=f"autostage-compile-{self.function.name}")
                    thread.start()
                    self._background = thread
                    _RUNNING.add(thread)
                thread = self._background
        return thread.is_alive()

    def wait(self) -> None:
        """Waits for this trace's background preparation, if one was started."""
        thread = self._background
        if thread is not None:
            thread.join()

    def _prepare_quietly(self, settings: tuple, args: list) -> None:
        try:
            with config.applied(settings):
                self._prepared(args)
        except BaseException as e:  # noqa: BLE001 - the caller's next run raises it again
            self.background_error = e

    def _prepared(self, example: list | None = None) -> Callable[[list], tuple]:
        """Prepares the runner (once), compiled for ``example``'s types if given, before it is
        published: a caller that finds it runs compiled code without waiting."""
        with self._lock, collector.deferred():
            if self._runner is None:
                # The backend prepares (the cpu target optimizes) a copy, so the trace stays
                # as traced (``f.ir()``); the identity fixes depend on the copy's passes.
                module = ir.copy_module(self.module)
                body = module.main.body
                runner = result_identity.keeping_identity(
                    self._prepare(module), self.outputs.identity, body.args, body.results,
                    self.function.name)
                if module.main.writes_back:
                    runner = result_identity.wrapping(
                        argument_writes.writing_back(runner, self.module.main, self.guards),
                        runner)
                compile_for = getattr(runner, "compile_for", None)
                if example is not None and compile_for is not None:
                    compile_for(list(example))
                self._runner = runner
                if self._released:  # prepared for a caller holding a dropped trace
                    _release_runner(self._runner)
            return self._runner

    def release(self) -> None:
        """Tells the backend this trace was dropped from its function's cache (the CPU backend
        forgets its module, so that its compiled code is freed with the last reference)."""
        with self._lock:
            if not self._released:
                self._released = True
                _release_runner(self._runner)

    def text(self) -> str:
        """The printed IR of this trace (every function of its module)."""
        return printer.format_module(self.module)

    def __repr__(self) -> str:
        params = ", ".join(str(t) for t in self.function.param_types)
        return f"<ConcreteFunction {self.function.name}({params})>"


_STARTING = threading.Lock()  # one background preparation per trace
_RUNNING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


@atexit.register
def _finish_preparations() -> None:
    """At exit, waits for background preparations still running: their compiled code reaches
    the disk cache, so the next process loads it instead of compiling again (a script shorter
    than its compilation would otherwise never run compiled code)."""
    for thread in list(_RUNNING):
        thread.join()


def finish_preparations_before_fork() -> None:
    """Before ``os.fork()`` (a ``multiprocessing`` pool with the fork start method), waits for
    the background preparations: a child has none of the parent's threads, so a lock one held
    (this trace's, Numba's compiler lock) would never be released there, and the child's first
    call of that function would wait forever. Not longer than a minute each."""
    current = threading.current_thread()
    for thread in list(_RUNNING):
        if thread is not current:
            thread.join(timeout=60)


os.register_at_fork(before=finish_preparations_before_fork)  # (and from llvm_worker's, first)


def _release_runner(runner: Callable | None) -> None:
    release = getattr(runner, "release", None)
    if release is not None:
        release()
