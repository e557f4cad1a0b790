"""Staged inputs reach the runtime: autostage.runtime's hook registry and each operator's route.

A fake staged class (a ``runtime.Staged`` subclass) stands in for tensors, with recording hooks;
no hook is left registered.
"""

import numpy as np
import pytest

from autostage import ag, runtime
from autostage.operators import BUILTINS


class Staged(runtime.Staged):
    """Stands in for a staged tensor; its bool() must never be taken by an operator."""

    __slots__ = ("name",)

    def __init__(self, name="t"):
        self.name = name

    def __bool__(self):
        raise AssertionError("an operator took bool() of a staged value")

    def __lt__(self, other):
        return Staged(f"{self.name}<")

    def __gt__(self, other):  # the reflection of `2 < staged`
        return Staged(f"<{self.name}")

    def __repr__(self):
        return f"Staged({self.name!r})"


class StagedSubclass(Staged):
    __slots__ = ()


@pytest.fixture
def staged():
    """Registers Staged and a recorder hook for every operator; yields the list of calls."""
    calls = []
    names = list(dict.fromkeys([*ag.__all__, "and_", "numpy_call"]))
    previous = {name: runtime.register_operator_hook(
        name, lambda *args, name=name, **kwargs: calls.append((name, args, kwargs)) or "staged")
        for name in names}
    yield calls
    for name, hook in previous.items():
        runtime.register_operator_hook(name, hook)


def body(*state):
    return state


def orelse(*state):
    return state


# --- the registry ---------------------------------------------------------------------------


def test_instances_of_staged_subclasses_are_staged():
    value = Staged()
    assert runtime.is_staged(value)
    assert runtime.is_staged(StagedSubclass())
    assert not runtime.is_staged(1)
    assert not runtime.is_staged(object())
    assert runtime.any_staged([1, value])
    assert not runtime.any_staged((1, "x"))
    assert not runtime.any_staged(())


def test_register_operator_hook_returns_the_hook_it_replaces():
    def first(*args):
        return ("first", args)

    def second(*args):
        return ("second", args)

    assert runtime.register_operator_hook("test_op", first) is None
    try:
        assert runtime.stage_operator("test_op", 1) == ("first", (1,))
        assert runtime.register_operator_hook("test_op", second) is first
        assert runtime.stage_operator("test_op", 2) == ("second", (2,))
    finally:
        assert runtime.register_operator_hook("test_op", None) is second
    refusal = runtime.register_operator_hook("unsupported", None)  # as without the runtime
    try:
        with pytest.raises(NotImplementedError, match="'test_op'"):
            runtime.stage_operator("test_op", 3)
    finally:
        runtime.register_operator_hook("unsupported", refusal)


def test_the_runtime_refuses_an_operator_without_a_rule_naming_it():
    import autostage.runtime.staging  # noqa: F401 - registers the "unsupported" hook
    from autostage.runtime.tensor import StagingTypeError

    with pytest.raises(StagingTypeError, match=r"^sorted\(\) of a staged value"):
        runtime.stage_operator("sorted_", Staged())


def test_a_staged_value_without_a_hook_is_a_clear_error_naming_the_operator():
    previous = runtime.register_operator_hook("if_stmt", None)  # as if the runtime had none
    refusal = runtime.register_operator_hook("unsupported", None)
    try:
        with pytest.raises(NotImplementedError) as error:
            ag.if_stmt(Staged(), body, orelse, ())
    finally:
        runtime.register_operator_hook("if_stmt", previous)
        runtime.register_operator_hook("unsupported", refusal)
    assert str(error.value) == ("autostage operator 'if_stmt' got a staged value, but the staging "
                                "runtime has no rule for 'if_stmt' yet")


def test_python_values_never_reach_a_hook(staged):
    assert ag.if_stmt(1, lambda: ("body",), lambda: ("orelse",)) == ("body",)
    assert ag.and_(0, Staged) == 0
    assert ag.len_([Staged(), Staged()]) == 2
    assert staged == []


# --- each operator routes a staged input, with its own arguments -----------------------------


def test_if_stmt_hands_the_condition_and_branches_to_the_hook(staged):
    cond = Staged()
    assert ag.if_stmt(cond, body, orelse, (1, 2)) == "staged"
    assert staged == [("if_stmt", (cond, body, orelse, (1, 2)), {})]


def test_if_branch_and_if_exp_branch_stage_through_if_stmt_and_if_exp(staged):
    cond = Staged()
    assert ag.if_branch(cond, body, orelse)(1, 2) == "staged"
    assert ag.if_branch(cond, body, None)() == "staged"
    assert ag.if_exp_branch(cond, body, orelse)() == "staged"
    assert staged == [("if_stmt", (cond, body, orelse, (1, 2)), {}),
                      ("if_stmt", (cond, body, None, ()), {}),
                      ("if_exp", (cond, body, orelse), {})]


def test_while_stmt_hands_over_when_its_test_becomes_staged(staged):
    t = Staged()

    def test(i):
        return t if i == 2 else True

    def loop_body(i):
        return (i + 1,)

    assert ag.while_stmt(test, loop_body, (0,), {"maximum_iterations": 5}) == "staged"
    # The last argument is where the trace stood before the test ran (None: no trace).
    assert staged == [("while_stmt", (test, loop_body, (2,), {"maximum_iterations": 5}, t, None),
                       {})]


def test_for_stmt_hands_a_staged_iterable_to_the_hook(staged):
    t = Staged()
    assert ag.for_stmt(t, None, body, (1,)) == "staged"
    assert staged == [("for_stmt", (t, None, body, (1,), None), {})]


def test_compare_chain_continues_a_staged_comparison_with_and(staged):
    log = []
    a, c = Staged("a"), Staged("c")
    assert ag.compare_chain(a, "<", lambda: log.append("b") or 2,
                            "<", lambda: log.append("c") or c) == "staged"
    ((name, (result, rest), kwargs),) = staged
    assert (name, result.name, kwargs, log) == ("and_", "a<", {}, ["b"])
    assert rest().name == "<c" and log == ["b", "c"]  # the rest of the chain, from b on


@pytest.mark.parametrize("call, name, args", [
    (lambda t: ag.and_(t, orelse), "and_", lambda t: (t, orelse)),
    (lambda t: ag.or_(t, orelse), "or_", lambda t: (t, orelse)),
    (lambda t: ag.not_(t), "not_", lambda t: (t,)),
    (lambda t: ag.if_exp(t, body, orelse), "if_exp", lambda t: (t, body, orelse)),
    (lambda t: ag.assert_stmt(t, orelse), "assert_stmt", lambda t: (t, orelse)),
    (lambda t: ag.list_append(t, 1), "list_append", lambda t: (t, 1)),
    (lambda t: ag.list_pop(t, 0), "list_pop", lambda t: (t, 0)),
    (lambda t: ag.getitem([1], t), "getitem", lambda t: ([1], t)),
    (lambda t: ag.setitem(t, 0, 5), "setitem", lambda t: (t, 0, 5)),
    (lambda t: ag.iadd(1, t), "iadd", lambda t: (1, t)),
    (lambda t: ag.ior(t, 1), "ior", lambda t: (t, 1)),
    (lambda t: ag.len_(t), "len_", lambda t: (t,)),
    (lambda t: ag.range_(0, t, 2), "range_", lambda t: (0, t, 2)),
])
def test_operator_hands_its_arguments_to_its_hook(staged, call, name, args):
    t = Staged()
    assert call(t) == "staged"
    assert staged == [(name, args(t), {})]


def test_builtins_check_keyword_arguments_too(staged):
    t = Staged()
    assert ag.print_(1, t, sep="-") == "staged"
    assert ag.sum_([1], start=t) == "staged"
    assert staged == [("print_", (1, t), {"sep": "-"}), ("sum_", ([1],), {"start": t})]


PYTHON_BUILTINS = sorted((b for b in BUILTINS if getattr(b, "__module__", "") == "builtins"),
                         key=lambda b: b.__name__)
NUMPY_FUNCTIONS = sorted((f for f in BUILTINS if f not in PYTHON_BUILTINS and BUILTINS[
    f].__module__ == "autostage.operators.numpy_overloads"), key=lambda f: f.__name__)


@pytest.mark.parametrize("builtin", PYTHON_BUILTINS, ids=lambda b: b.__name__)
def test_every_builtin_overload_routes_a_staged_argument(staged, builtin):
    t = Staged()
    assert BUILTINS[builtin](t) == "staged"
    assert staged == [(builtin.__name__ + "_", (t,), {})]


@pytest.mark.parametrize("function", NUMPY_FUNCTIONS, ids=lambda f: f.__name__)
def test_numpy_overloads_route_staged_arguments_while_tracing(staged, monkeypatch, function):
    from autostage.operators import numpy_overloads

    overload = BUILTINS[function]
    assert overload.__name__ == f"np_{function.__name__}"
    args = {"full": (3, 1.5), "concatenate": ([[1.0], [2.0]],), "linspace": (0.0, 1.0, 3),
            "roots": ([1.0, -3.0, 2.0],), "poly": ([1.0, 2.0],), "nditer": (np.arange(3),),
            "ndenumerate": (np.arange(3),), "as_strided": (np.arange(3.0),),
            "unravel_index": (3, (2, 2)), "broadcast_to": (np.ones(1), (3,)),
            "repeat": (np.arange(2), 2), "reshape": (np.arange(4.0), (2, 2)),
            "tile": (np.ones(2), 2), "sort": ([3.0, 1.0],), "argsort": ([3.0, 1.0],),
            "cumsum": ([3.0, 1.0],)}.get(function.__name__, (3,))
    plain, expected = overload(*args), function(*args)  # Python values: NumPy itself
    assert type(plain) is type(expected)
    if isinstance(expected, np.nditer | np.ndenumerate):  # iterators: what they give
        assert [repr(v) for v in plain] == [repr(v) for v in expected]
    elif isinstance(expected, tuple):  # np.unravel_index: NumPy integers
        assert plain == expected
    elif isinstance(expected, np.ndarray):
        assert plain.shape == expected.shape and plain.dtype == expected.dtype
    else:
        assert plain == expected  # np.isscalar: a Python bool
    t = Staged()
    monkeypatch.setattr(numpy_overloads, "is_tracing", lambda: True)
    assert overload((t, 2)) == "staged"
    assert staged == [("numpy_call", (function, (t, 2)), {})]


def test_ag_reexports_the_operators_namespace():
    from autostage.runtime import OWN_ERRORS

    from autostage import operators
    from autostage.calls import converted
    from autostage.pyct.errors import PyCTError

    assert ag.__all__ == [*operators.__all__, "converted", "AUTOSTAGE_ERRORS"]
    assert all(getattr(ag, name) is getattr(operators, name) for name in operators.__all__)
    assert ag.converted is converted
    assert ag.AUTOSTAGE_ERRORS == (*OWN_ERRORS, PyCTError)


# --- subscript reads: Python's own first, the runtime when that fails on a staged key ---------


class Wrapper:
    """A user container that takes staged keys itself (as one wrapping a tensor would)."""

    def __getitem__(self, key):
        return ("wrapped", key)


@pytest.mark.parametrize("key", [Staged("i"), slice(Staged("i"), 3), slice(None, None, Staged()),
                                 (0, slice(1, Staged("j"))), (Staged("i"), 0)])
def test_getitem_stages_numpy_and_list_reads_with_staged_key_parts(staged, key):
    for target in (np.arange(4), [1.0, 2.0]):
        assert ag.getitem(target, key) == "staged"
        assert staged.pop() == ("getitem", (target, key), {})
    assert ag.getitem(Wrapper(), key) == ("wrapped", key)  # its own __getitem__ took the key
    assert not staged


def test_getitem_raises_pythons_error_when_nothing_is_staged(staged):
    with pytest.raises(IndexError, match="list index out of range"):
        ag.getitem([1.0], 3)
    with pytest.raises(TypeError, match="list indices must be integers or slices, not tuple"):
        ag.getitem([1.0], (0, slice(1, 2)))
    assert not staged
