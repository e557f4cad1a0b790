"""ops/buffers.py: every op declared to return fresh buffers really does, on both targets.

A staged function returns ``op(a)`` for an argument ``a``; the result must share no memory with
``a`` (an op that handed its operand on, e.g. a same-dtype cast without a copy, would let the
in-place pass write into the caller's array).
"""

import numpy as np
import pytest
from autostage.runtime import ir, op_registry
from autostage.runtime.ops import buffers, elementwise

import autostage

PROGRAMS = {
    "add": lambda a: a + 0.0, "negative": lambda a: -a, "cast": lambda a: a.astype(np.float64),
    "where": lambda a: np.where(a > 0, a, a), "clip": lambda a: np.clip(a, 0.0, 1.0),
    "sum": lambda a: a.sum(axis=0), "max": lambda a: a.max(axis=1), "mean": lambda a: a.mean(0),
    "cumsum": lambda a: np.cumsum(a, axis=0), "matmul": lambda a: a @ a.T,
    "copy": lambda a: a.copy(), "full_like": lambda a: np.zeros_like(a),
    "tril": lambda a: np.tril(a), "concatenate": lambda a: np.concatenate([a]),
    "stack": lambda a: np.stack([a]), "sort": lambda a: np.sort(a, axis=1),
    "getitem": lambda a: a[np.array([0, 1])], "setitem": lambda a: _write(a),
}


def _write(a):
    b = a.copy()
    b[0, 0] = 5.0
    return b


@pytest.mark.parametrize("target", ("interpreter", "cpu"))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_declared_fresh_ops_return_fresh_arrays(name, target):
    assert op_registry.lookup(name).fresh_results
    a = np.arange(6.0).reshape(2, 3)
    result = autostage.convert(PROGRAMS[name], target=target)(a)
    assert not np.shares_memory(result, a)
    assert result.flags.writeable


def test_interpreter_getitem_scalars_are_not_views():
    f = autostage.convert(lambda a: a[..., 0], target="interpreter")
    a = np.arange(3.0)
    r = f(a)
    assert r == 0.0 and not np.shares_memory(np.asarray(r), a)


def test_the_fresh_ops_are_declared_where_they_are_registered():
    """The ops each module declares fresh, and only those (a predicate for getitem/setitem)."""
    fresh = {name for name, op in op_registry.REGISTRY.items() if op.fresh_results is True}
    assert fresh == (set(elementwise.UFUNCS) - {"positive"}) | {
        "cast", "where", "clip", "fused",
        "sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "argmax", "argmin",
        "norm", "cumsum", "cumprod", "matmul", "dot", "batched_product",
        "arange", "full", "full_like", "eye", "copy", "tril", "triu", "concatenate", "stack",
        "dim", "size",
        "sort", "argsort", "take_along_axis", "list_stack", "scatter_add"}
    assert callable(op_registry.REGISTRY["getitem"].fresh_results)
    assert callable(op_registry.REGISTRY["setitem"].fresh_results)
    assert buffers.is_fresh(ir.Op("add", (), ())) and not buffers.is_fresh(ir.Op("reshape", (), ()))
