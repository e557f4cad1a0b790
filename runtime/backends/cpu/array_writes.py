"""Writes of an array into an array (``x[i:j] = v``, a row of a list's buffer, a Variable, a
broadcast): loops in a helper shared by every program instead of Numba's slice assignment.

Numba's slice assignment builds its shape-mismatch message with f-strings and ``str.join``, so
each process that compiles a program using it first compiles Numba's string machinery for it:
2.3-3.1 s here, paid by 8 of the 37 realistic programs (issue 14: compile time). ``assign``
emits a call of ``h_assign_<rank>_<source rank>``, which writes element by element (the source
broadcast as NumPy does, and copied first where the two may overlap, as NumPy copies), compiled
once per machine for each dtype and layout. Callers check shapes before, with NumPy's messages
(``check_assignable`` for an indexed write; the others write what has the target's shape).
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.backends.cpu import run_errors
from autostage.runtime.backends.cpu.codegen import Emitter

_ASSIGN = '''
@numba.njit(**JIT)
def {{name}}(dst, src):
    if dst.size and src.size:  # NumPy reads an overlapping source whole before writing
{dst_span}
{src_span}
        if dst_lo < src_hi + src.itemsize and src_lo < dst_hi + dst.itemsize:
            src = cpu_new.copy(src)
{loops}
'''
# The first and last addresses an array's elements start at (strides may be negative; int64
# throughout: a variable of one type, which ``direct`` compiles).
_SPAN = '''\
        {a}_lo = {a}_hi = np.int64({a}.ctypes.data)
        for axis in range({a}.ndim):
            step = ({a}.shape[axis] - 1) * {a}.strides[axis]
            if step < 0:
                {a}_lo += step
            else:
                {a}_hi += step'''


def assign(em: Emitter, dst: str, dst_ndim: int, src: str, src_ndim: int) -> None:
    """Emits ``dst[...] = src`` for arrays of these ranks (``src_ndim >= 1``; leading sizes of
    ``src`` beyond ``dst_ndim`` are 1, as the caller checked)."""
    if src_ndim > dst_ndim:  # NumPy drops leading sizes of 1
        src = f"{src}[{', '.join(['0'] * (src_ndim - dst_ndim))}]"
        src_ndim = dst_ndim
    helper = em.helper(f"assign_{dst_ndim}_{src_ndim}", _source(dst_ndim, src_ndim))
    em.line(f"{helper}({dst}, {src})")


def _source(ndim: int, src_ndim: int) -> str:
    """The helper writing a rank-``src_ndim`` source into a rank-``ndim`` target: the source's
    axes are the target's last ones, each read at ``index * step``, the step 0 where it has size
    1 (NumPy's broadcasting; Numba's ``np.broadcast_to`` took 0.2-0.3 s more to compile)."""
    return _ASSIGN.format(dst_span=_SPAN.format(a="dst"), src_span=_SPAN.format(a="src"),
                          loops="\n".join(broadcast_loops(ndim, src_ndim)))


def broadcast_loops(ndim: int, src_ndim: int) -> list[str]:
    """The lines (at a function body's indent) writing ``src`` into ``dst`` element by element,
    each source axis (the target's last ones) read at ``index * step``, 0 where its size is 1."""
    lead = ndim - src_ndim
    steps = [f"    s{axis} = np.int64(src.shape[{axis}] != 1)" for axis in range(src_ndim)]
    loops = [f"{'    ' * (axis + 1)}for i{axis} in range(dst.shape[{axis}]):"
             for axis in range(ndim)]
    at = ", ".join(f"i{axis}" for axis in range(ndim))
    read = ", ".join(f"i{lead + axis} * s{axis}" for axis in range(src_ndim))
    return [*steps, *loops, f"{'    ' * (ndim + 1)}dst[{at}] = src[{read}]"]


def check_assignable(em: Emitter, op: ir.Op, target: str, target_shape: tuple,
                     value: ir.Value) -> None:
    """NumPy's "could not broadcast input array from shape ... into shape ..." where ``value``
    does not broadcast to the view ``target`` (static shapes: ``target_shape``, None where only
    known at run time; static mismatches were refused when tracing)."""
    name, shape = em.name(value), value.type.shape
    tests = []
    for axis in range(1, len(shape) + 1):
        have, expr = shape[-axis], f"{name}.shape[{len(shape) - axis}]"
        if axis > len(target_shape):  # a leading size beyond the target's rank must be 1
            if have is None:
                tests.append(f"{expr} != 1")
            continue
        want = target_shape[-axis]
        if have == 1 or have is not None and have == want:
            continue
        tests.append(f"(({expr} != 1) & ({expr} != {target}.shape[{len(target_shape) - axis}]))")
    if not tests:
        return
    value_dims = [f"{name}.shape[{k}]" for k in range(len(shape))]
    target_dims = [f"{target}.shape[{k}]" for k in range(len(target_shape))]
    value_text, start = run_errors.shape_text(value_dims, 0)
    target_text, _ = run_errors.shape_text(target_dims, start)
    run_errors.check(em, op, " | ".join(tests), ValueError,
                     f"could not broadcast input array from shape {value_text} into shape "
                     f"{target_text}", value_dims + target_dims)


def check_indexed_assignable(em: Emitter, op: ir.Op, extents: list[str], value: ir.Value,
                             one_mask: bool) -> None:
    """NumPy's errors where ``value`` does not broadcast to an advanced index's result, whose
    sizes are ``extents`` (run-time expressions): for ``x[mask] = v`` with one mask of ``x``'s
    rank, "cannot assign N input values to the M output values where the mask is true";
    else "shape mismatch: value array of shape ... could not be broadcast to indexing result
    of shape ...". (Unchecked, a loop would read past the value's elements.)"""
    name, shape = em.name(value), value.type.shape
    tests = []
    for axis in range(1, len(shape) + 1):
        have = f"{name}.shape[{len(shape) - axis}]"
        if shape[-axis] == 1:
            continue
        want = f"{extents[-axis]}" if axis <= len(extents) else "1"
        tests.append(f"(({have} != 1) & ({have} != {want}))")
    if not tests:
        return
    value_dims = [f"{name}.shape[{k}]" for k in range(len(shape))]
    if one_mask and len(shape) == 1:
        run_errors.check(em, op, tests[0], ValueError,
                         "NumPy boolean array indexing assignment cannot assign {0} input "
                         "values to the {1} output values where the mask is true",
                         [value_dims[0], extents[0]])
        return
    value_text, start = run_errors.shape_text(value_dims, 0)
    result_text, _ = run_errors.shape_text(extents, start)
    run_errors.check(em, op, " | ".join(tests), ValueError,
                     f"shape mismatch: value array of shape {value_text} could not be "
                     f"broadcast to indexing result of shape {result_text}",
                     value_dims + list(extents))
