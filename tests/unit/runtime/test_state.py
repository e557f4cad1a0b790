"""Variable: NumPy holder outside tracing; var_read / var_assign / var_assign_add ops inside,
run in program order, naming the Variable by its index in the module's state table; created only
on a function's first trace."""

import numpy as np
import pytest
from autostage.runtime import ir, verifier
from autostage.runtime.state import Variable, VariableCreationError
from autostage.runtime.targets import optimized
from autostage.runtime.types import TensorType

import autostage

COUNTER = Variable(0.0)


def test_variable_outside_tracing_is_a_numpy_holder():
    v = Variable([1.0, 2.0])
    assert v.read().tolist() == [1.0, 2.0] and v.dtype == np.float64 and v.shape == (2,)
    v.assign([3, 4])
    v.assign_add(np.ones(2))
    assert v.value.tolist() == [4.0, 5.0]
    assert (v + 1).tolist() == [5.0, 6.0] and (1 - v).tolist() == [-3.0, -4.0]
    assert (v * v).tolist() == [16.0, 25.0] and (-v).tolist() == [-4.0, -5.0]
    assert np.asarray(v).tolist() == [4.0, 5.0]
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0])
    with pytest.raises(TypeError, match="same-kind"):
        Variable(np.int32(1)).assign(1.5)
    assert autostage.Variable is Variable


def test_a_variable_pickles_and_copies_by_value():
    import copy
    import pickle
    v = Variable(np.array([1.0, 2.0], np.float32), trainable=False, name="w")
    for clone in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
        assert clone is not v and (clone.name, clone.trainable, clone.dtype) == ("w", False,
                                                                                  np.float32)
        clone.assign_add(np.ones(2, np.float32))  # its own state, with its own lock
        assert clone.read().tolist() == [2.0, 3.0] and v.read().tolist() == [1.0, 2.0]


def bump(x):
    before = COUNTER.read()
    COUNTER.assign_add(x)
    middle = COUNTER.read()
    COUNTER.assign(middle * 2)
    return before, middle, COUNTER.read()


def test_staged_reads_and_assignments_run_in_program_order_on_every_call():
    COUNTER.assign(0.0)
    f = autostage.convert(bump, target="interpreter")
    assert f(np.float64(1.0)) == (0.0, 1.0, 2.0)
    assert f(np.float64(1.0)) == (2.0, 3.0, 6.0)
    assert f.trace_count == 1
    assert COUNTER.read() == 6.0
    concrete = f.get_concrete_function(np.float64(1.0))
    ops = [op.name for op in concrete.function.body.ops]
    assert concrete.text().startswith(f"state 0 = variable {COUNTER.name!r} : f64[]\n\n")
    assert "var_assign_add %0 {type=f64[], var=0}" in concrete.text()
    assert ops == ["var_read", "var_assign_add", "var_read", "constant", "multiply",
                   "var_assign", "var_read"]


class Counter:
    def __init__(self):
        self.total = None

    @autostage.convert(target="interpreter")
    def add(self, x):
        if self.total is None:
            self.total = Variable(np.float32(0))
        self.total.assign_add(x)
        return self.total.read()


def test_variables_created_on_the_first_trace_are_reused():
    counter = Counter()
    assert counter.add(np.float32(1)) == 1.0
    assert counter.add(np.float32(2)) == 3.0
    assert counter.add(np.float32(0.5)) == 3.5
    assert counter.add.trace_count == 1


def creates_each_time(x):
    v = Variable(0.0)
    v.assign(x)
    return v.read()


def test_creating_a_variable_on_a_retrace_is_an_error():
    f = autostage.convert(creates_each_time, target="interpreter")
    assert f(np.float64(2.0)) == 2.0
    with pytest.raises(VariableCreationError, match="created a Variable on its trace number 2"):
        f(np.float32(2.0))


def freezes(x):
    return x + np.asarray(COUNTER)


def test_converting_a_variable_to_an_array_while_tracing_is_an_error():
    f = autostage.convert(freezes, target="interpreter")
    with pytest.raises(Exception, match="use v.read"):
        f(np.float64(1.0))


SCALE = Variable(np.float32(2.0), name="scale")


def _scaled(x):
    COUNTER.assign_add(1.0)
    return x * SCALE.read()


def calls_with_state(x):
    SCALE.assign(SCALE.read() + np.float32(1))
    return _scaled(x) + _scaled(x + np.float32(1))


def _state_ops(module):
    return [(name, op.name, op.attrs["var"]) for name, function in module.functions.items()
            for op in function.body.walk() if op.name.startswith("var_")]


def test_one_state_table_per_module_shared_by_its_functions_and_copies():
    concrete = autostage.convert(calls_with_state, target="interpreter").get_concrete_function(
        np.ones(2, np.float32))
    module = concrete.module
    assert all(entry is var for entry, var in zip(module.state, (SCALE, COUNTER), strict=True))
    assert _state_ops(module) == [
        ("calls_with_state", "var_read", 0), ("calls_with_state", "var_assign", 0),
        ("_scaled", "var_assign_add", 1), ("_scaled", "var_read", 0)]
    inlined = optimized(ir.copy_module(module))  # the callee's ops moved into the caller
    assert list(inlined.functions) == ["calls_with_state"]
    assert all(a is b for a, b in zip(inlined.state, module.state, strict=True))
    assert [index for _, _, index in _state_ops(inlined)] == [0, 0, 1, 0, 1, 0]


def test_the_verifier_checks_state_indices_and_types():
    module = autostage.convert(calls_with_state, target="interpreter").get_concrete_function(
        np.ones(2, np.float32)).module
    read = module.main.body.ops[0]
    read.attrs["var"] = 2
    with pytest.raises(verifier.VerificationError, match="names state 2, which is not in the "
                                                         "module's table of 2 entries"):
        verifier.verify(module)
    read.attrs["var"] = 1  # COUNTER: f64[], while the op says f32[]
    with pytest.raises(verifier.VerificationError, match=r"says state 1 has type f32\[\], but "
                                                         r"it has f64\[\]"):
        verifier.verify(module)
    assert read.attrs["type"] == TensorType("f32", ())
