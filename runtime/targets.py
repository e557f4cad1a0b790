"""Targets: what runs a staged IR module, as objects in one table.

A ``Target`` has a name, the passes it runs before lowering (``pipeline``), what its lowering
can compute (``fuses``: the question the fusion pass asks about each op, so that a backend's
limits live with the backend, not inside the generic pass) and ``prepare(module) -> run``, which
optimizes and lowers a traced module once and returns ``run(args: list) -> tuple`` of NumPy
results. ``TARGETS`` holds every target a user may name; one whose backend does not exist yet
(``cuda``) has no ``lower`` and ``target_for`` says so as a NotImplementedError. A new backend
is one more instance here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autostage.runtime import argument_writes, interpreter, ir, printer, verifier
from autostage.runtime.backends.cpu import fusible as cpu_fusible
from autostage.runtime.backends.cuda import device as cuda_device
from autostage.runtime.backends.cuda import scalar_code as cuda_scalar
from autostage.runtime.passes import DEFAULT, optimize

Runner = Callable[[list], tuple]  # run(args) -> the results (NumPy values; cuda: see its executor)


def fuses_anything(op: ir.Op) -> bool:
    """The answer of a target without limits: every element-wise op fits a per-element loop."""
    return True


@dataclass(frozen=True, slots=True)
class Target:
    """One target a staged function may run on.

    Args:
      name: what users pass as ``convert(target=...)``.
      pipeline: the passes (``passes.PASSES`` names) run, in order, before lowering.
      lower: turns the optimized module into ``run(args) -> tuple``; None while the backend is
        not implemented.
      fuses: whether one loop of this target computes ``op`` element by element (asked by the
        fusion pass; ops it answers False for stay whole-array ops).
      verify_after: whether the optimized module is verified before lowering.
      available: raises a clear error when the backend cannot run here (a missing package);
        asked when a function is converted for this target.
      writes_back: whether a function's writes into its array arguments reach the caller's
        arrays (``argument_writes``; else they are refused).
    """

    name: str
    pipeline: tuple[str, ...]
    lower: Callable[[ir.Module], Runner] | None
    fuses: Callable[[ir.Op], bool] = fuses_anything
    verify_after: bool = True
    available: Callable[[], None] | None = None
    writes_back: bool = True

    @property
    def implemented(self) -> bool:
        return self.lower is not None

    def supports(self, op: ir.Op) -> bool:
        """Whether this target computes ``op`` inside a fused per-element loop."""
        return self.fuses(op)

    def optimize(self, module: ir.Module, passes: Sequence[str] | None = None) -> ir.Module:
        """``module`` after this target's pipeline (or ``passes``), in place, verified when
        ``verify_after``: what the backend lowers."""
        module = optimize(module, self.pipeline if passes is None else passes,
                          fuses=self.fuses)
        if self.verify_after:
            verifier.verify(module)
        return module

    def prepare(self, module: ir.Module) -> Runner:
        """Optimizes ``module`` (a copy the caller no longer needs) and lowers it."""
        if self.lower is None:
            raise not_implemented(self.name)
        module = self.optimize(module)
        argument_writes.check_in_place(module)
        argument_writes.drop_finals(module.main)
        return self.lower(module)


def _run_interpreted(module: ir.Module) -> Runner:
    """Runs the traced IR as it is (after the in-place marking of setitems, so a write into a
    dead array does not copy it, as in compiled code, and the flag threading and folding it
    needs to see the writes after an early return)."""
    return lambda args: interpreter.run(module, args)


def _cpu_backend():
    """``backends/cpu/compile``, imported when a cpu trace is first compiled or shown (Numba)."""
    from autostage.runtime.backends.cpu import compile as cpu_compile

    return cpu_compile


def _cuda_backend():
    """``backends/cuda/ptx`` (and through it the executor), imported when a cuda trace is first
    run or shown."""
    from autostage.runtime.backends.cuda import ptx

    return ptx


def _compile_cpu(module: ir.Module) -> Runner:
    """Compiles with Numba (on the first call of a trace; see ConcreteFunction.run)."""
    return _cpu_backend().compile_module(module)


def _run_cuda(module: ir.Module) -> Runner:
    """Runs the IR from the host with kernels for array ops (numba-cuda, the ``gpu`` extra)."""
    return _cuda_backend().executor.prepare(module)


# The interpreter runs the IR as traced (its semantics are the oracle), verified only by the
# tracer, but for the passes that decide which writes into arguments go in place (so that the
# same programs write back on both targets: flag conds threaded and folded, then the marking);
# the cpu target runs the default pipeline and verifies what it lowers.
INTERPRETER = Target("interpreter", ("flag_threading", "constant_folding", "inplace"),
                     _run_interpreted, verify_after=False)
CPU = Target("cpu", DEFAULT, _compile_cpu, fuses=cpu_fusible.fuses)
CUDA = Target("cuda", DEFAULT, _run_cuda, fuses=cuda_scalar.fuses,
              available=cuda_device.require_installed, writes_back=False)

TARGETS: dict[str, Target] = {t.name: t for t in (CPU, INTERPRETER, CUDA)}


def not_implemented(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"autostage: the {name!r} backend is not implemented yet; use target='interpreter'")


def target_for(name: str) -> Target:
    """The target called ``name``.

    Raises:
      ValueError: an unknown name.
      NotImplementedError: a target whose backend does not exist yet.
    """
    target = TARGETS.get(name)
    if target is None:
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(TARGETS)}")
    if not target.implemented:
        raise not_implemented(name)
    if target.available is not None:
        target.available()
    return target


def backend_for(target: str, stacklevel: int = 1) -> tuple[str, Callable[[ir.Module], Runner]]:
    """The backend that runs ``target``: its name and ``prepare(module) -> run(args)``."""
    found = target_for(target)
    return found.name, found.prepare


def backend_text(module: ir.Module, name: str, form: str = "source",
                 cc: tuple[int, int] = (9, 0)) -> str:
    """What target ``name`` makes of ``module`` (optimized in place), for a reader. ``form``
    "source": the Python source the cpu backend hands Numba, the cuda kernels with the ops left
    on the host, or the IR the interpreter runs; "llvm": Numba's LLVM IR (cpu); "ptx": the PTX
    of the cuda kernels for compute capability ``cc``."""
    module = target_for(name).optimize(module)
    if form == "llvm":
        return _cpu_backend().llvm_ir(module)
    if form == "ptx":
        return _cuda_backend().module_ptx(module, cc).rstrip("\n")
    if name == "cpu":
        return _cpu_backend().generate(module).source.rstrip("\n")
    if name == "cuda":
        return _cuda_backend().backend_source(module)
    return printer.format_module(module)


def optimized(module: ir.Module) -> ir.Module:
    """``module`` after the cpu target's pass pipeline, verified: what compiled backends lower."""
    return CPU.optimize(module)
