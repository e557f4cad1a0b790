"""Boolean facts about staged ``bool[]`` values, to prove that a variable is always assigned.

Early ``return`` and ``break`` are lowered to flags (``do_return``, ``retval_``...), so after a
staged ``if`` or loop a variable may be assigned only on the paths where a flag is set, and a
later ``if not do_return:`` assigns it on the others. To accept that code (and reject code that
really may read an unassigned variable) each variable's *definedness* is a formula over staged
bool values: atoms (``ir.Value`` ids), constants, ``not``/``and``/``or`` and ``ite`` (a ``cond``
choosing between two formulas). Formulas are nested tuples; equivalence is decided by trying
every assignment of their atoms (few in practice; past ``MAX_ATOMS`` the answer is "unknown",
treated as not proven). The facts of a trace map bool values made by cond/not/and/or to their
formulas.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

from autostage.runtime import ir, tracing

Formula = tuple
TRUE: Formula = ("const", True)
FALSE: Formula = ("const", False)
MAX_ATOMS = 12


def const(value: bool) -> Formula:
    return TRUE if value else FALSE


def atom(value: ir.Value) -> Formula:
    return ("atom", id(value))


def not_(f: Formula) -> Formula:
    if f[0] == "const":
        return const(not f[1])
    if f[0] == "not":
        return f[1]
    return ("not", f)


def and_(a: Formula, b: Formula) -> Formula:
    if a == TRUE or b == FALSE:
        return b
    if b == TRUE or a == FALSE:
        return a
    return ("and", a, b)


def ite(p: Formula, a: Formula, b: Formula) -> Formula:
    if p[0] == "const":
        return a if p[1] else b
    if a == b:
        return a
    return ("ite", p, a, b)


def _facts() -> dict[int, tuple[ir.Value, Formula]]:
    trace = tracing.current()
    facts = getattr(trace, "staging_facts", None)
    if facts is None:
        facts = trace.staging_facts = {}
    return facts


@contextmanager
def assuming(f: Formula) -> Iterator[None]:
    """While tracing a branch taken only where ``f`` holds (an ``if``'s condition, or its
    negation on the ``else`` path)."""
    trace = tracing.current()
    outer = getattr(trace, "staging_assumption", TRUE)
    trace.staging_assumption = and_(outer, f)
    try:
        yield
    finally:
        trace.staging_assumption = outer


def holds(f: Formula) -> bool:
    """Whether ``f`` holds on every run-time path reaching the point being traced (the
    conditions of the enclosing branches imply it; False if unknown)."""
    assumption = getattr(tracing.current(), "staging_assumption", TRUE)
    return equivalent(ite(assumption, f, TRUE), TRUE)


def record(value: ir.Value, f: Formula) -> None:
    """Remembers what a staged bool value means (the value is kept alive with its fact)."""
    if f != atom(value):
        _facts()[id(value)] = (value, f)


def of(value: ir.Value) -> Formula:
    """The formula of a staged bool value (an atom when nothing more is known)."""
    known = _facts().get(id(value))
    return known[1] if known is not None and known[0] is value else atom(value)


def substitute(f: Formula, old: Formula, new: Formula) -> Formula:
    if f == old:
        return new
    if f[0] in ("const", "atom"):
        return f
    return (f[0], *(substitute(g, old, new) for g in f[1:]))


def _atoms(f: Formula, out: set) -> set:
    if f[0] == "atom":
        out.add(f[1])
    elif f[0] != "const":
        for g in f[1:]:
            _atoms(g, out)
    return out


def _eval(f: Formula, env: dict) -> bool:
    kind = f[0]
    if kind == "const":
        return f[1]
    if kind == "atom":
        return env[f[1]]
    if kind == "not":
        return not _eval(f[1], env)
    if kind == "and":
        return _eval(f[1], env) and _eval(f[2], env)
    if kind == "or":
        return _eval(f[1], env) or _eval(f[2], env)
    return _eval(f[2], env) if _eval(f[1], env) else _eval(f[3], env)


def equivalent(a: Formula, b: Formula) -> bool:
    """True when ``a`` and ``b`` agree on every assignment of their atoms (False if unknown)."""
    if a == b:
        return True
    atoms = sorted(_atoms(b, _atoms(a, set())))
    if len(atoms) > MAX_ATOMS:
        return False
    for bits in itertools.product((False, True), repeat=len(atoms)):
        env = dict(zip(atoms, bits, strict=True))
        if _eval(a, env) != _eval(b, env):
            return False
    return True
