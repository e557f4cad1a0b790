"""The IR ops registered by runtime/staging (cond, while, undef, list_*, print, assert): type
rules and NumPy references, run op by op; and the definedness formulas of logic.py."""

import numpy as np
import pytest
from autostage.runtime import ir, op_registry
from autostage.runtime.staging import logic
from autostage.runtime.types import ListType, TensorType, scalar

F32 = scalar(np.float32)
I64 = scalar(np.int64)
VEC = TensorType(np.float32, (None,))


def evaluate(name, values, attrs=None, regions=(), run=None):
    op = ir.Op(name, [], [], attrs, regions)
    return op_registry.lookup(name).evaluate(op, tuple(values), run)


def test_every_staging_op_is_registered_with_a_doc():
    for name in ("cond", "while", "undef", "list_new", "list_append", "list_pop", "list_get",
                 "list_set", "list_length", "list_stack", "print", "assert"):
        assert op_registry.lookup(name).doc
    assert op_registry.lookup("print").side_effects and op_registry.lookup("assert").side_effects


def test_list_type_rules():
    lst = ListType(VEC)
    assert op_registry.result_types("list_new", [], {"element": VEC}) == (lst,)
    assert op_registry.result_types("list_append", [lst, TensorType(np.float32, (3,))],
                                    {}) == (lst,)
    assert op_registry.result_types("list_pop", [lst], {}) == (lst, VEC)
    assert op_registry.result_types("list_stack", [lst], {}) == (
        TensorType(np.float32, (None, None)),)
    with pytest.raises(TypeError, match="cannot hold"):
        op_registry.result_types("list_append", [lst, F32], {})
    with pytest.raises(TypeError, match="integer scalar index"):
        op_registry.result_types("list_get", [lst, F32], {})


def test_list_references_follow_python_list_semantics():
    a, b = np.float32(1), np.float32(2)
    (lst,) = evaluate("list_append", [[a], b])
    assert lst == [a, b]
    assert evaluate("list_get", [lst, np.int64(-1)]) == (b,)
    with pytest.raises(IndexError, match="list index out of range"):
        evaluate("list_get", [lst, np.int64(2)])
    assert evaluate("list_pop", [lst, np.int64(0)]) == ([b], a)
    assert evaluate("list_set", [lst, np.int64(1), a]) == ([a, a],)
    assert evaluate("list_length", [lst]) == (2,)
    np.testing.assert_array_equal(evaluate("list_stack", [lst])[0], np.stack([a, b]))
    with pytest.raises(IndexError, match="pop from empty list"):
        evaluate("list_pop", [[]])


def test_cond_and_while_run_their_regions():
    then, orelse = ir.Region(), ir.Region()
    ran = []

    def run(region, args):
        ran.append(region)
        return (len(ran),)

    assert evaluate("cond", [np.bool_(False)], {"result_types": (I64,)}, (then, orelse),
                    run) == (1,)
    assert ran == [orelse]

    def run_loop(region, args):
        return (args[0] < 3,) if region is cond else (args[0] + 1,)

    cond, body = ir.Region([I64]), ir.Region([I64])
    assert evaluate("while", [np.int64(0)], {}, (cond, body), run_loop) == (3,)


def test_undef_is_a_zero_of_its_type():
    (value,) = evaluate("undef", [], {"type": TensorType(np.float32, (None, 2))})
    assert value.shape == (0, 2) and value.dtype == np.float32


def test_print_writes_its_template(capsys):
    evaluate("print", [np.float64(2.5)], {"parts": ("x=", 0, "\n"), "stream": "stdout"})
    assert capsys.readouterr().out == "x=2.5\n"


def test_assert_raises_with_its_message():
    assert evaluate("assert", [np.bool_(True)], {"parts": ("m",)}) == ()
    with pytest.raises(AssertionError) as e:
        evaluate("assert", [np.bool_(False), np.int64(3)], {"parts": ("n=", 0)})
    assert e.value.args == ("n=3",)
    with pytest.raises(AssertionError) as e:
        evaluate("assert", [np.bool_(False)], {"parts": None})
    assert e.value.args == ()


def test_formulas_decide_equivalence_by_truth_tables():
    p, q = ("atom", 1), ("atom", 2)
    flag = logic.ite(p, logic.TRUE, q)  # do_return after `if p: return`, given do_return = q
    defined = logic.ite(p, logic.TRUE, q)
    assert logic.equivalent(logic.ite(logic.not_(flag), logic.TRUE, defined), logic.TRUE)
    assert not logic.equivalent(logic.ite(p, logic.TRUE, logic.FALSE), logic.TRUE)
    assert logic.substitute(logic.ite(p, q, logic.FALSE), q, logic.TRUE) == logic.ite(
        p, logic.TRUE, logic.FALSE)
