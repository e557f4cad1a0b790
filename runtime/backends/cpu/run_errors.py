"""Run-time errors of compiled code, reported as the interpreter reports them.

An op that fails while compiled code runs (an index out of bounds, operands whose shapes do not
match, a staged ``raise``/``assert``/``raise_if``) must raise the exception NumPy or Python would
raise, with the operand sizes in the message and a note naming the op and the user's file and
line, exactly like ``interpreter.Frame._add_note``. Two mechanisms give that:

* **Checked sites.** A lowering that can fail emits ``check(em, op, test, kind, template,
  sizes)``: one call of a compiled check (``checks.check``; a lowering that checks per element,
  such as an index's bounds, writes its own inline test and ``raise_now``: ``checks.fail_site``)
  that, when the test is true, records the site's key and sizes (integers) and raises
  ``checks.SiteFailure``; the runner raises the site's error in its place (``site_error``): the
  message is formatted in Python from a constant template (nothing is built inside Numba), and
  the site's note (the printed op and its location, fixed at code generation) is added. Sites
  are keyed by a hash of their content, so the key is the same in every process and Numba's
  cache stays valid. The key is an int64 (``np.int64(k)``): a string argument would be typed
  as a literal, compiling the checks once per site (100 checked matmuls: 15 s instead of 4 s).
* **Located errors.** Any other exception leaving compiled code (a native ``raise`` with a
  constant message, an error inside a helper or inside Numba's own implementation) is located
  by ``locate``: Numba records the generated line it raised at as a traceback entry, which maps
  back to the op it was emitted for (a helper shared by several ops names each of them). Text
  naming Numba's internal files is removed from the message.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from types import TracebackType

import numpy as np
from autostage.runtime import ir, printer
from autostage.runtime.backends.cpu import checks
from autostage.runtime.backends.cpu.checks import LOCATION_ATTR, SITES
from autostage.runtime.backends.cpu.codegen import Emitter, hashed_import, where
from autostage.runtime.ops import fused as fused_op

NOTE_PREFIX = "autostage: "  # the interpreter's note prefix: one format on every target
CHECKS_IMPORT = hashed_import(checks, "cpu_chk")
_SHAPE_READ = re.compile(r"\w+\.shape\[\d+\]")  # already an int64


def note_for(op: ir.Op, names: dict[ir.Value, str] | None) -> str:
    """The interpreter's note for a failing op: "autostage: error in `<op>` at file:line"."""
    text = printer.format_op(op, names)
    return f"{NOTE_PREFIX}error in `{text}` at {where(op)}"


def check(em: Emitter, op: ir.Op, test: str, kind: type[BaseException], template: str,
          sizes: Sequence[str]) -> None:
    """Emits ``cpu_chk.check(test, key, sizes)``: raises ``kind(template.format(*sizes))`` with
    the op's note when ``test`` is true (a call, not an inline branch: ``checks``).

    Args:
      em: the emitter, positioned in the function body (not in a helper shared by other ops,
        whose failure could not be told apart).
      op: the op that fails when ``test`` is true.
      test: a native boolean expression (``&``/``|`` of parenthesised comparisons: ``and``/
        ``or`` would branch).
      kind: the exception type NumPy or Python raises there.
      template: the message, NumPy's or Python's text, with ``{0}``, ``{1}``... for ``sizes``.
      sizes: integer expressions, safe to evaluate whatever the test (evaluated with it).
    """
    em.module_line("cpu_chk", CHECKS_IMPORT)
    # (at least two sizes: one compiled check for sites of none, one or two, where each length
    # was a function of its own, compiled once per machine)
    em.line(f"cpu_chk.check({test}, {_site(em, op, kind, template)}, "
            f"{_sizes_tuple(sizes, least=2)})")


def raise_now(em: Emitter, op: ir.Op, kind: type[BaseException], template: str,
              sizes: Sequence[str]) -> None:
    """Emits the raise of a checked site unconditionally (inside a test the lowering wrote)."""
    em.module_line("cpu_chk", CHECKS_IMPORT)
    em.line(f"cpu_chk.fail_site({_site(em, op, kind, template)}, {_sizes_tuple(sizes)})")
    em.line(f"raise {kind.__name__}('unreachable')")


def _site(em: Emitter, op: ir.Op, kind: type[BaseException], template: str) -> str:
    """The key of a checked site (registered in ``SITES``: what ``fail`` raises for it), as an
    int64 expression (see the module docstring): in a program's function a module constant
    (``SITE_<hex> = np.int64(...)``, read as a constant: a call of ``np.int64`` is typed and
    lowered at each site), in a helper the call."""
    note = note_for(op, em.value_names())
    key = int(hashlib.sha256(f"{kind.__module__}.{kind.__qualname__}|{template}|{note}".encode()
                             ).hexdigest()[:15], 16)  # fits an int64
    SITES[key] = (kind, template, note, op.loc)
    if not isinstance(em, Emitter):
        return f"np.int64({key})"
    name = f"SITE_{key:x}"
    em.module_line(name, f"{name} = np.int64({key})")
    return name


def _sizes_tuple(sizes: Sequence[str], pad: str = "cpu_chk.ZERO", least: int = 0) -> str:
    """The sizes as a tuple expression of int64s: a shape read or an ``np.int64(...)`` as it
    is, anything else converted (a constant would be typed as a literal, compiling the check
    once per value), padded with ``pad`` (a constant of ``checks``) to a length of 0, 1 or a
    power of two (``least`` at least): the check is compiled once per length (~80 ms on first
    use), and a message reads only its own fields."""
    items = [size if _SHAPE_READ.fullmatch(size) or _is_int64_call(size) else f"np.int64({size})"
             for size in sizes]
    items += [pad] * (_padded_length(len(items), least) - len(items))
    return "(" + "".join(f"{item}, " for item in items).rstrip(" ") + ")"


def _padded_length(count: int, least: int = 0) -> int:
    """The length ``_sizes_tuple`` pads ``count`` sizes to."""
    return max(count if count <= 2 else 1 << (count - 1).bit_length(), least)


def _is_int64_call(expr: str) -> bool:
    """Whether ``expr`` is one ``np.int64(...)`` call (not, say, ``np.int64(a) * b``)."""
    if not (expr.startswith("np.int64(") and expr.endswith(")")):
        return False
    depth = 0
    for position, char in enumerate(expr):
        depth += (char == "(") - (char == ")")
        if depth == 0 and char == ")":
            return position == len(expr) - 1
    return False


def shape_text(sizes: Sequence[str], start: int) -> tuple[str, int]:
    """NumPy's text of a shape in its messages, sizes as template fields from ``{start}``:
    ``({0},)``, ``({0},{1})``."""
    fields = [f"{{{start + i}}}" for i in range(len(sizes))]
    return _shape_text(fields), start + len(fields)


def _shape_text(parts: Sequence[object]) -> str:
    """NumPy's text of a shape whose sizes are ``parts``: ``(3,)``, ``(3,4)``, ``()``."""
    return "(" + ",".join(map(str, parts)) + ("," if len(parts) == 1 else "") + ")"


def check_broadcast(em: Emitter, op: ir.Op, operands: Sequence[ir.Value]) -> None:
    """NumPy's "operands could not be broadcast together" for array operands whose sizes are
    only known at run time (static mismatches were refused when tracing)."""
    arrays = [v for v in operands if v.type.ndim > 0]
    if len(arrays) < 2:
        return
    rank = max(v.type.ndim for v in arrays)
    tests = []
    for axis in range(1, rank + 1):
        sizes = [(f"{em.name(v)}.shape[{v.type.ndim - axis}]", v.type.shape[-axis])
                 for v in arrays if v.type.ndim >= axis]
        for i, (a, da) in enumerate(sizes):
            for b, db in sizes[i + 1:]:
                if da == 1 or db == 1 or (da is not None and da == db):
                    continue
                one_a = "" if da is not None else f" & ({a} != 1)"
                one_b = "" if db is not None else f" & ({b} != 1)"
                tests.append(f"(({a} != {b}){one_a}{one_b})")
    if tests:
        check(em, op, " | ".join(tests), ValueError, *_broadcast_message(em, op, arrays))


def broadcast_extents(em: Emitter, op: ir.Op, arrays: Sequence[ir.Value], rank: int
                      ) -> list[str]:
    """The extents of NumPy's broadcast of ``arrays`` (``rank`` axes), computed in code linear
    in the operands, with ``check_broadcast``'s error when they do not broadcast.

    Per axis: a static size other than 1 is the extent, each run-time size tested against it;
    else ``checks.broadcast_extent`` of the run-time sizes, -1 where they do not broadcast (one
    test per axis). Where no axis has a static extent, the axes of several run-time sizes
    (up to three) take theirs from one call that also raises the error
    (``checks.broadcast_shape_<axes>``)."""
    extents, tests, shared, single = [], [], [], []
    for axis in range(rank, 0, -1):
        sizes = [(f"{em.name(v)}.shape[{v.type.ndim - axis}]", v.type.shape[-axis])
                 for v in arrays if v.type.ndim >= axis]
        static = [d for _, d in sizes if d is not None and d != 1]
        dynamic = [text for text, d in sizes if d is None]
        if static:
            extent = str(static[0])
            tests += [f"(({d} != {extent}) & ({d} != 1))" for d in dynamic]
        elif len(dynamic) > 1:
            extent = em.fresh("extent")
            shared.append((extent, dynamic))
        else:
            extent = dynamic[0] if dynamic else "1"
            single += dynamic
        extents.append(extent)
    if shared:
        em.module_line("cpu_chk", CHECKS_IMPORT)
    if shared and not tests and len(single) <= 1 and len(shared) + bool(single) <= 3:
        # (the size of an axis no other operand shares is in the message too: passed as one
        # more tuple, whose "extent" is not used; the call still tests that tuple, so it may
        # hold one size only: sizes of two such axes, `x[:, None] - c[None, :]`'s n and k,
        # are no axis's sizes and need not be equal)
        fields = [*shared, (em.fresh("sizes"), single)] if single else shared
        _broadcast_shape(em, op, arrays, fields)
        return extents
    for extent, dynamic in shared:
        em.line(f"{extent} = cpu_chk.broadcast_extent({_sizes_tuple(dynamic, 'cpu_chk.ONE')})")
        tests.append(f"({extent} < 0)")
    if tests:
        check(em, op, " | ".join(tests), ValueError, *_broadcast_message(em, op, arrays))
    return extents


def _broadcast_shape(em: Emitter, op: ir.Op, arrays: Sequence[ir.Value],
                     shared: list[tuple[str, list[str]]]) -> None:
    """``extent, ... = cpu_chk.broadcast_shape_<n>(site, sizes, ...)``: the message's fields
    are the positions of the operands' sizes in the (padded) tuples, concatenated. Tuples of
    4 or 8 sizes (``BROADCAST_SIGNATURES``: what ``autostage --precompile`` compiles)."""
    tuples = [_sizes_tuple(dynamic, "cpu_chk.ONE", least=4) for _, dynamic in shared]
    positions, offset = {}, 0
    for _, dynamic in shared:
        positions.update({size: offset + k for k, size in enumerate(dynamic)})
        offset += _padded_length(len(dynamic), 4)

    def field(v: ir.Value, k: int) -> int | None:
        return None if v.type.shape[k] is not None else positions[f"{em.name(v)}.shape[{k}]"]

    site = _site(em, op, ValueError, _broadcast_template(op, arrays, field))
    names = ", ".join(extent for extent, _ in shared)  # (one: an int, not a tuple)
    em.line(f"{names} = cpu_chk.broadcast_shape_{len(shared)}({site}, {', '.join(tuples)})")


# The size tuples' lengths of ``checks.broadcast_shape_<axes>`` that programs call (each
# signature a compile of ~0.1 s the first time): compiled by ``autostage --precompile``.
BROADCAST_SIGNATURES = ((4,), (8,), (4, 4), (4, 8), (8, 4), (8, 8), (4, 4, 4))


def _broadcast_message(em: Emitter, op: ir.Op, arrays: Sequence[ir.Value]
                       ) -> tuple[str | FusedBroadcastMessage, list[str]]:
    """NumPy's "could not be broadcast" message template and its size fields (every axis of
    every operand, in order)."""
    first, offset = {}, 0  # the field of each operand's first axis
    for v in arrays:
        first.setdefault(v, offset)
        offset += v.type.ndim
    all_sizes = [f"{em.name(v)}.shape[{k}]" for v in arrays for k in range(v.type.ndim)]
    return _broadcast_template(op, arrays, lambda v, k: first[v] + k), all_sizes


def _broadcast_template(op: ir.Op, arrays: Sequence[ir.Value], field
                        ) -> str | FusedBroadcastMessage:
    """The message of ``op``'s broadcast of ``arrays``, each axis's size the template field
    ``field(value, axis)`` (None: its static size, written in): a template string for one
    operation; for a fused loop, which tests all its operands at once, the replay of NumPy's
    order (``FusedBroadcastMessage``)."""
    shapes = [tuple(("size", d) if (k := field(v, a)) is None else ("field", k)
                    for a, d in enumerate(v.type.shape)) for v in arrays]
    if op.name == "fused":
        return FusedBroadcastMessage.of(op, dict(zip(arrays, shapes, strict=True)))
    texts = [_shape_text([n if kind == "size" else f"{{{n}}}" for kind, n in shape])
             for shape in shapes]
    return f"operands could not be broadcast together with shapes {' '.join(texts)} "


class FusedBroadcastMessage:
    """NumPy's "could not be broadcast" message for a fused loop: the shapes of the operands of
    the first of its operations whose operands do not broadcast, in the order NumPy evaluates
    them, from the loop operands' sizes (``format(*sizes)``, as a template string's). The loop
    tests every operand at once, where NumPy fails at the first mismatched operation (``a * 2
    + b``: "shapes (3,4) (3,)", not with a third operand ``c`` of the same expression)."""

    def __init__(self, shapes: tuple, steps: tuple):
        self.shapes = shapes  # per loop operand: per axis ("field", k) or ("size", n)
        self.steps = steps    # per operation, in order: the positions of its operands among
        # the loop operands then the operations' results

    @classmethod
    def of(cls, op: ir.Op, shapes: dict[ir.Value, tuple]) -> FusedBroadcastMessage:
        (body,) = op.regions
        position = {arg: k for k, arg in enumerate(body.args)}
        ops = body.ops[:-1] if fused_op.is_fusible_reduction(body.ops[-1]) else body.ops
        steps = []
        for inner in ops:
            steps.append(tuple(position[v] for v in inner.operands))
            position[inner.results[0]] = len(body.args) + len(steps) - 1
        return cls(tuple(shapes.get(v, ()) for v in op.operands), tuple(steps))

    def format(self, *sizes: int) -> str:
        values = [tuple(sizes[n] if kind == "field" else n for kind, n in shape)
                  for shape in self.shapes]
        for step in self.steps:
            operands = [values[k] for k in step]
            try:
                values.append(np.broadcast_shapes(*operands))
            except ValueError:
                break
        else:  # (not reached: the loop's test failed, so one operation does)
            operands = [shape for shape in values[:len(self.shapes)] if shape]
        texts = [_shape_text(shape) for shape in operands]
        return f"operands could not be broadcast together with shapes {' '.join(texts)} "

    def __repr__(self) -> str:  # (part of the site's key: the same in every process)
        return f"FusedBroadcastMessage({self.shapes!r}, {self.steps!r})"


_NUMBA_FILE = re.compile(r'\s*File "[^"]*[/\\]numba[/\\][^"]*", line \d+,?.*$', re.MULTILINE)


def locate(error: BaseException, module: ir.Module, filename: str, line_ops: dict[int, ir.Op],
           helper_ops: dict[str, list[ir.Op]]) -> None:
    """Adds the note of the op ``error`` came from (unless a checked site did), and removes the
    paths of Numba's files from its message. Never raises."""
    try:
        _clean_message(error)
        if any(n.startswith(NOTE_PREFIX) for n in getattr(error, "__notes__", ())):
            return
        ops = _failing_ops(error.__traceback__, filename, line_ops, helper_ops)
        if len(ops) == 1:
            note = note_for(ops[0], _names_of(module, ops[0]))
            if ops[0].loc is not None:
                setattr(error, LOCATION_ATTR, ops[0].loc)
        elif ops:
            note = (f"{NOTE_PREFIX}error in `{ops[0].name}` at one of "
                    f"{', '.join(dict.fromkeys(where(op) for op in ops))}")
        else:
            note = (f"{NOTE_PREFIX}error in the compiled code of `{module.entry}` (run it with "
                    "target='interpreter' to see which operation)")
        error.add_note(note)
    except Exception:  # noqa: BLE001 - reporting must never replace the user's error
        pass


def _failing_ops(tb: TracebackType | None, filename: str, line_ops: dict[int, ir.Op],
                 helper_ops: dict[str, list[ir.Op]]) -> list[ir.Op]:
    """The op(s) of the innermost traceback entry in the generated file."""
    found: list[ir.Op] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            op = line_ops.get(tb.tb_lineno)
            found = [op] if op is not None else helper_ops.get(code.co_name, found)
        elif code.co_name in helper_ops:  # a helper shared by programs (shared_helpers)
            found = helper_ops[code.co_name]
        tb = tb.tb_next
    return [op for op in found if op is not None]


def _names_of(module: ir.Module, op: ir.Op) -> dict[ir.Value, str] | None:
    """The print names of the values of the function ``op`` belongs to."""
    for function in module.functions.values():
        if any(o is op for o in function.body.walk()):
            return printer.value_names(function)
    return None


def _clean_message(error: BaseException) -> None:
    args = error.args
    if len(args) == 1 and isinstance(args[0], str) and "numba" in args[0]:
        cleaned = _NUMBA_FILE.sub("", args[0]).rstrip()
        if cleaned != args[0]:
            error.args = (cleaned,)
