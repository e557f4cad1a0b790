"""Loop hints (backends/cpu/loop_hints.py): which loops carry a value from one iteration to the
next, the loop ID a hint is, and which ``range`` loops ``direct`` marks."""

import ast

import numba
import numpy as np
import pytest
from autostage.runtime.backends.cpu import direct, loop_hints, vector_math
from llvmlite import ir

_LOOPS = {
    "a map": ("for i in range(n):\n    e = a[i]\n    out[i] = e * 2.0", False),
    "a map through a temporary": ("for i in range(n):\n    s = a[i]\n    b[i] = s", False),
    "a sum in order": ("for i in range(n):\n    acc += a[i]", True),
    "a cumulative sum": ("for i in range(n):\n    acc += a[i]\n    c[i] = acc", True),
    "a recurrence through an array": ("for i in range(1, n):\n    y[i] = y[i - 1] + x[i]", True),
    "an in-place map": ("for i in range(n):\n    a[i] = a[i] * 2.0", True),
    "a value read before it is assigned": ("for i in range(n):\n    t = s\n    s = t + a[i]",
                                           True),
    "a branch reading a value of the last iteration": (
        "for i in range(n):\n    if a[i] > 0:\n        best = best + a[i]\n    out[i] = 1.0", True),
    "a nested loop summing a row": (
        "for i in range(n):\n    acc = 0.0\n    for j in range(m):\n        acc += a[i, j]\n"
        "    out[i] = acc", False),
}


@pytest.mark.parametrize("name", sorted(_LOOPS))
def test_carries(name):
    source, carried = _LOOPS[name]
    assert loop_hints.carries(ast.parse(source).body[0]) is carried


def test_a_loop_id_is_a_node_naming_itself_then_the_options():
    module = ir.Module()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "f")
    builder = ir.IRBuilder(function.append_basic_block("loop"))
    loop_hints.mark(builder.branch(builder.block), loop_hints.PLAIN)
    text = str(module)
    branch = next(line for line in text.splitlines() if line.strip().startswith("br "))
    loop_id = branch.rsplit("!llvm.loop ", 1)[1]
    definition = next(line for line in text.splitlines() if line.startswith(loop_id + " = "))
    first, *options = definition.split("{", 1)[1].rstrip("}").replace(" ", "").split(",")
    assert first == loop_id and len(options) == 2
    assert '!"llvm.loop.vectorize.enable",i1false' in text.replace(" ", "")
    assert '!{!"llvm.loop.unroll.disable"}' in text.replace(" ", "")


@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def halves(a, out):
    """A map: each element from its own."""
    for i in range(a.shape[0]):
        e = a[i]
        out[i] = e / 3.0


@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def running(a, out):
    """A cumulative sum: a value carried from one iteration to the next."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i]
        out[i] = acc


@numba.njit(error_model="numpy", pipeline_class=direct.Compiler)
def decays(a, out):
    """A recurrence, but of a kernel lowered in line: its copies would cost, not pay."""
    x = 0.0
    for i in range(a.shape[0]):
        x = vector_math.exp(a[i] - x)
        out[i] = x


def _fresh(dispatcher):
    """A new dispatcher of ``dispatcher``'s function: compiled here whatever ran before."""
    return numba.njit(error_model="numpy", pipeline_class=direct.Compiler)(dispatcher.py_func)


def test_direct_marks_maps_and_kernel_loops_not_loops_carrying_a_value(monkeypatch):
    marked = []
    original = loop_hints.mark
    monkeypatch.setattr(loop_hints, "mark", lambda branch, options: (
        marked.append((branch.parent.parent.name, options)), original(branch, options)))
    a = np.linspace(-1.0, 1.0, 11)
    for fn, want in ((halves, a / 3.0), (running, np.cumsum(a))):
        out = np.empty_like(a)
        _fresh(fn)(a, out)
        np.testing.assert_allclose(out, want, rtol=1e-15)
    out, x = np.empty_like(a), 0.0
    _fresh(decays)(a, out)
    for i, v in enumerate(a):
        x = np.exp(v - x)
        assert out[i] == pytest.approx(x, rel=1e-15)
    names = [name for name, options in marked if options is loop_hints.NO_RUNTIME_UNROLL]
    assert [n for n in names if "halves" in n] and [n for n in names if "decays" in n]
    assert not [n for n in names if "running" in n]


def test_a_map_keeps_one_scalar_copy_of_its_body():
    """LLVM vectorises ``halves``; its scalar remainder is not unrolled at run time: one scalar
    division beside the vector one (unrolled, four)."""
    a = np.arange(5.0)
    halves(a, np.empty(5))
    code = halves.inspect_llvm(halves.signatures[0])
    assert code.count("fdiv <") >= 1 and code.count("fdiv double") == 1
