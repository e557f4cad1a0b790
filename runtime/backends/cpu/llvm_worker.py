"""LLVM's work on the helpers a compile needs, done on a worker thread beside the compile.

A function's typing compiles the helpers it calls (products, sums, list buffers, checks: 15 in
the GRU encoder with attention), each to machine code at once: LLVM's optimisation and code
generation of the helpers (~0.4 s of that program's ~1.6 s cold compile) ran between the
caller's typing steps, on the thread that was typing. Here a helper's code library, once its
IR is complete and linked (``symbol_links.SymbolLinkedLibrary.finalize``), is handed to a
worker thread as bitcode: the worker optimises it (the same O3 pipeline, on a target machine
made as Numba makes its own) and emits its object code, while the compiling thread goes on
typing and lowering the caller. The library is *completed* when something needs its code:
a caller's finalisation (which links it or calls it by symbol), its disk cache entry, a call
from Python. Completing parses the optimised module back and hands the object code to Numba's
JIT as a cached object, the path Numba's own disk cache loads code by.

Two threads can only work on LLVM at once outside llvmlite's lock, which serialises every call
of a process (a worker thread calling through it gained nothing: the forty-second session of
issue 14): the worker parses each module into an LLVM context of its own, which LLVM allows to
be used beside the global one, calling llvmlite's C functions from a C routine of its own
(``_llvm_worker.c``) that runs the whole job without the GIL: through ctypes, each of a job's
dozen calls took the GIL back after it, waiting up to Python's switch interval (5 ms)
while the compiling thread ran Python, which made jobs 2-3 times as long. Only the compiling
thread touches the global context and Numba's JIT.

A library is deferred only when ``direct`` compiles it while a caller is being typed (the
function being compiled for a call from Python is needed at once; Numba's pipeline asks for a
function's entry point at once), when its code is autostage's own (``symbol_links``' one-pass
O3) and no dump of LLVM's work is asked for. One that links libraries still on the worker is
linked and handed over when they are done, not waited for. A failure on the worker completes
the library on the compiling thread, Numba's way; a fork waits for the worker and for a compile
another thread runs (the child would never get the locks it holds).
``AUTOSTAGE_LLVM_WORKER=0`` turns it off.
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import functools
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from autostage.runtime import concrete_function, config
from llvmlite import binding as ll
from llvmlite.binding import ffi
from numba.core import codegen as numba_codegen
from numba.core import config as numba_config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.llvm_bindings import create_pass_builder

try:
    from autostage.runtime import _llvm_worker as _c_level
except ImportError:  # (built without its C extension: helpers compile in line)
    _c_level = None

logger = logging.getLogger(__name__)


class Job:
    """One library's way through the worker: deferred until the libraries it links are
    complete (``started``), then its bitcode in, optimised bitcode and object code (or the
    error) out."""

    def __init__(self, library: Any):
        self.library = library
        self.started = False
        self.bitcode = self.manager = self.builder = None
        self.done = threading.Event()
        self.result: tuple[bytes, bytes] | None = None
        self.error: BaseException | None = None  # the worker's
        self.link_error: BaseException | None = None  # linking's (raised at completion)
        self.after: list[Callable[[], None]] = []  # run on the compiling thread, completed


# Jobs not completed yet, in the order deferred (the compiling thread's, under Numba's lock).
_pending: dict[int, Job] = {}
_deferred_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # entry -> wait
stats: collections.Counter = collections.Counter()  # libraries completed: "worker", "in_line"


def enabled() -> bool:
    """``config.LLVM_WORKER``, with its C level (``_llvm_worker.c``) and llvmlite's functions
    as it expects them."""
    return config.LLVM_WORKER.value() and _c_level is not None \
        and _llvm_functions() is not None


def deferrable(library: Any, caller_typing: bool) -> bool:
    """Whether ``library``'s optimisation and code generation may go to the worker."""
    return (caller_typing and enabled() and library._object_caching_enabled
            and not (numba_config.DUMP_OPTIMIZED or numba_config.DUMP_ASSEMBLY
                     or numba_config.DUMP_FUNC_OPT))


def _job(library: Any) -> Job | None:
    return _pending.get(id(library))  # (a job holds its library: no other object has its id)


def pending(library: Any) -> bool:
    return _job(library) is not None


def defer(library: Any) -> None:
    """Finalises ``library`` on the worker: its final module is linked (``library.
    _linked_bitcode()``) and handed over once the libraries it links are complete, so that a
    caller of a helper on the worker does not wait for it here."""
    _pending[id(library)] = Job(library)
    _start_ready()


def _start_ready() -> None:
    """Starts every deferred job whose libraries to link are all done on the worker."""
    for job in list(_pending.values()):
        if not job.started and all(
                dependency.done.is_set() for dependency in _dependencies(job)):
            _start(job)


def _dependencies(job: Job) -> list[Job]:
    return [dependency for library in job.library._linking_libraries
            if (dependency := _job(library)) is not None]


def _start(job: Job) -> None:
    job.started = True
    try:
        bitcode = job.library._linked_bitcode()  # (completes the libraries it links)
    except Exception as e:  # noqa: BLE001 - raised where the library is completed
        job.link_error = e
        job.done.set()
        return
    machine = _worker().machine
    builder = create_pass_builder(machine, opt=numba_config.OPT,
                                  loop_vectorize=numba_config.LOOP_VECTORIZE,
                                  slp_vectorize=numba_config.SLP_VECTORIZE)
    manager = builder.getModulePassManager()  # (as Numba's codegen._module_pass_manager)
    if numba_config.LLVM_REFPRUNE_PASS:
        manager.add_refprune_pass(numba_codegen._parse_refprune_flags())
    job.bitcode, job.manager, job.builder = bitcode, manager, builder
    _worker().put(job)


def after(library: Any, action: Callable[[], None]) -> None:
    """Runs ``action`` once ``library`` is completed (at once if it is not deferred)."""
    job = _job(library)
    if job is not None:
        job.after.append(action)
    else:
        action()


def complete(library: Any) -> None:
    """Waits for ``library``'s code from the worker and loads it (nothing if not deferred)."""
    if _job(library) is None:
        return
    with global_compiler_lock:
        job = _job(library)
        if job is None:  # (completed by another thread meanwhile)
            return
        if not job.started:
            _start(job)
        del _pending[id(library)]
        job.done.wait()
        if job.link_error is not None:
            raise job.link_error
        if job.result is None:
            logger.debug("autostage: LLVM worker failed on %s (%s); compiled in line",
                         library.name, job.error)
            library._finish_in_line()
            stats["in_line"] += 1
        else:
            library._load_compiled(*job.result)
            stats["worker"] += 1
        for action in job.after:
            action()
        _start_ready()


def complete_all() -> None:
    """Completes every deferred library (a compile's end: its callees' code and cache entries
    are ready before its own code runs)."""
    while _pending:
        complete(next(iter(_pending.values())).library)


def entry(library: Any, make: Callable[[], Any]) -> Any:
    """The entry point of ``library``'s function (``make()``: Numba's, from its machine code):
    for a deferred library, one that waits for the code at its first call, ``make()`` run when
    the library is completed (it also points the code at its environment)."""
    if not pending(library):
        return make()
    made: list = []
    after(library, lambda: made.append(make()))

    def wait() -> Any:
        complete(library)
        if not made:  # (its completion raised: a bug, reported where it happened)
            raise RuntimeError(f"autostage: the code of {library.name} failed to compile")
        return made[0]

    deferred = _c_level.deferred_entry(wait)
    _deferred_entries[deferred] = wait
    return deferred


def resolved(entry_point: Any) -> Any:
    """Numba's entry point behind ``entry_point`` (itself unless deferred)."""
    wait = _deferred_entries.get(entry_point)
    return entry_point if wait is None else wait()


# ---------------------------------------------------------------- the worker thread

class _Worker:
    def __init__(self) -> None:
        self.pid = os.getpid()
        options: dict[str, Any] = {"opt": numba_config.OPT}
        from numba.core.registry import cpu_target

        cpu_target.target_context.codegen()._customize_tm_options(options)
        target = ll.Target.from_triple(ll.get_process_triple())
        self.machine = target.create_target_machine(**options)  # its own: TMs cache state
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.outstanding = 0  # jobs submitted and not done
        self.idle = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="autostage-llvm", daemon=True)
        self.thread.runs_no_user_code = True  # (random_freeze: it draws no random numbers)
        self.thread.start()

    def put(self, job: Job) -> None:
        with self.idle:
            self.outstanding += 1
        self.jobs.put(job)

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                job.result = _compiled(job.bitcode, job.manager, job.builder, self.machine)
            except Exception as e:  # noqa: BLE001 - completed in line instead
                job.error = e
            finally:
                job.bitcode = job.manager = job.builder = None
                job.done.set()
                with self.idle:
                    self.outstanding -= 1
                    self.idle.notify_all()


_lock = threading.Lock()


def _worker() -> _Worker:
    worker = getattr(_worker, "current", None)
    if worker is None or worker.pid != os.getpid():
        with _lock:
            worker = getattr(_worker, "current", None)
            if worker is None or worker.pid != os.getpid():
                worker = _worker.current = _Worker()
    return worker


def _quiesce() -> None:
    """Waits until the worker is between jobs (before a fork, at exit): LLVM holds no lock
    then, and no job is cut off."""
    worker = getattr(_worker, "current", None)
    if worker is not None and worker.pid == os.getpid():
        with worker.idle:
            worker.idle.wait_for(lambda: worker.outstanding == 0, timeout=60)


_fork = threading.local()  # .locked: whether this thread took Numba's lock for its fork


def _before_fork() -> None:
    """Before ``os.fork()`` (a fork-started ``multiprocessing`` pool): waits for a compile
    another thread runs (it holds Numba's compiler lock, which in the child, without that
    thread, would never be released: the child's first compile waited forever), then for the
    worker. Not longer than a minute (a thread the forking one holds up cannot finish). A
    tiered start's compilations are waited for first: one waiting for the lock would wait for
    the fork, and the fork for it."""
    concrete_function.finish_preparations_before_fork()
    _fork.locked = global_compiler_lock._lock.acquire(timeout=60)
    _quiesce()


def _after_fork_in_parent() -> None:
    if getattr(_fork, "locked", False):
        _fork.locked = False
        global_compiler_lock._lock.release()


def _after_fork() -> None:
    _after_fork_in_parent()  # (this thread, the child's only one, owns the lock there)
    # The child has no worker thread: the jobs handed to the parent's and not done would never
    # finish; they complete in line (those not started yet go to the child's own worker).
    for job in _pending.values():
        if job.started and not job.done.is_set():
            job.error = RuntimeError("the process forked")
            job.done.set()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork)
atexit.register(_quiesce)


# ---------------------------------------------------------------- LLVM without llvmlite's lock

# llvmlite's C functions the C level calls, in its order, with the number of arguments
# llvmlite declares for each (None: none declared); another llvmlite turns the worker off.
LLVM_FUNCTIONS = (("LLVMPY_ContextCreate", None), ("LLVMPY_ContextDispose", 1),
                  ("LLVMPY_ParseBitcode", 4), ("LLVMPY_RunNewModulePassManager", 3),
                  ("LLVMPY_VerifyModule", 2), ("LLVMPY_WriteBitcodeToString", 3),
                  ("LLVMPY_TargetMachineEmitToMemory", 4), ("LLVMPY_GetBufferStart", 1),
                  ("LLVMPY_GetBufferSize", 1), ("LLVMPY_DisposeMemoryBuffer", 1),
                  ("LLVMPY_DisposeModule", 1), ("LLVMPY_DisposeString", None))


@functools.cache
def _llvm_functions() -> tuple[int, ...] | None:
    """The addresses of ``LLVM_FUNCTIONS`` (without the lock llvmlite's wrappers take), or
    None if llvmlite declares any otherwise."""
    import llvmlite.binding.context  # noqa: F401 - (the modules declaring them)
    import llvmlite.binding.newpassmanagers  # noqa: F401

    addresses = []
    for name, arity in LLVM_FUNCTIONS:
        function = getattr(getattr(ffi.lib, name, None), "_cfn", None)
        declared = None if function is None or function.argtypes is None \
            else len(function.argtypes)
        if function is None or declared != arity:
            logger.debug("autostage: llvmlite's %s is not as llvm_worker expects", name)
            return None
        addresses.append(ctypes.cast(function, ctypes.c_void_p).value)
    return tuple(addresses)


def _compiled(bitcode: bytes, manager: Any, builder: Any, machine: Any) -> tuple[bytes, bytes]:
    """``bitcode`` optimised by ``manager`` and compiled for ``machine``: (optimised bitcode,
    object code), in an LLVM context of its own, the GIL released throughout."""
    return _c_level.compile(_llvm_functions(), bitcode, _address(manager), _address(builder),
                            _address(machine))


def _address(llvm_object: Any) -> int:
    return ctypes.cast(llvm_object._ptr, ctypes.c_void_p).value
