"""Tests for autostage.operators.variables: Undefined can only be passed around; ld raises."""

import math
import operator

import pytest

from autostage.operators.variables import (
    Undefined,
    UndefinedReturnValue,
    is_undefined,
    ld,
    retval,
)


def python_unbound_message():
    def read():
        del_me = 1
        del del_me
        return del_me  # noqa: F821 - unbound on purpose

    with pytest.raises(UnboundLocalError) as error:
        read()
    return str(error.value).replace("del_me", "x")


def test_ld_returns_defined_values_unchanged():
    value = [1]
    assert ld(value) is value
    assert ld(None) is None
    assert ld(UndefinedReturnValue) is UndefinedReturnValue


def test_ld_of_undefined_raises_pythons_unbound_local_error():
    with pytest.raises(UnboundLocalError) as error:
        ld(Undefined("x"))
    assert str(error.value) == python_unbound_message()
    assert str(error.value) == ("cannot access local variable 'x' where it is not associated "
                                "with a value")


def test_undefined_can_be_passed_around_and_recognised():
    u = Undefined("y")
    state = (1, u)
    a, b = state
    assert b is u
    assert is_undefined(u)
    assert not is_undefined(None)
    assert not is_undefined(UndefinedReturnValue())
    assert u.symbol_name == "y"
    assert repr(u) == "Undefined('y')"


class Box:
    pass


USES = {
    "add": lambda u: u + 1, "radd": lambda u: 1 + u, "sub": lambda u: u - 1,
    "rmul": lambda u: 2 * u, "matmul": lambda u: u @ u, "truediv": lambda u: u / 2,
    "rfloordiv": lambda u: 2 // u, "mod": lambda u: u % 2, "pow": lambda u: u ** 2,
    "divmod": lambda u: divmod(u, 2), "lshift": lambda u: u << 1, "ror": lambda u: 1 | u,
    "iadd": lambda u: operator.iadd(u, 1), "neg": lambda u: -u, "invert": lambda u: ~u,
    "abs": abs, "bool": bool, "not": lambda u: not u, "if": lambda u: 1 if u else 0,
    "str": str, "format": lambda u: f"{u}", "int": int,
    "percent": lambda u: "%s" % u,  # noqa: UP031 - old-style formatting is a use too
    "format spec": lambda u: format(u, ">3"),
    "float": float, "index": lambda u: [0][u], "round": round, "floor": math.floor,
    "len": len, "iter": iter, "for": lambda u: [v for v in u], "contains": lambda u: 1 in u,
    "in list": lambda u: u in [1], "getitem": lambda u: u[0], "call": lambda u: u(),
    "eq": lambda u: u == 1, "req": lambda u: 1 == u, "ne": lambda u: u != u,
    "lt": lambda u: u < 1, "ge": lambda u: u >= 1, "hash": hash, "dict key": lambda u: {u: 1},
    "getattr": lambda u: u.shape, "hasattr": lambda u: hasattr(u, "shape"),
    "setattr": lambda u: setattr(u, "symbol_name", "z"), "delattr": lambda u: delattr(u, "a"),
    "setitem": lambda u: operator.setitem(u, 0, 1), "sorted": lambda u: sorted([u, u]),
}


def _with(u):
    with u:
        pass


USES["with"] = _with


@pytest.mark.parametrize("use", sorted(USES))
def test_every_use_of_undefined_raises_unbound_local_error_naming_it(use):
    with pytest.raises(UnboundLocalError) as error:
        USES[use](Undefined("x"))
    assert str(error.value) == python_unbound_message()


def test_retval_turns_the_undefined_return_value_into_none():
    assert retval(UndefinedReturnValue()) is None
    assert retval(0) == 0
    marker = object()
    assert retval(marker) is marker
    assert repr(UndefinedReturnValue()) == "UndefinedReturnValue()"
