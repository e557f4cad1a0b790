"""Module: name, variables / trainable_variables / submodules found by walking attributes
(nesting, lists, tuples, dicts, sharing, cycles; attribute-sorted order), and staged methods
that read their Variables at each call and assign them for the caller to see."""

import numpy as np
import pytest
from autostage.runtime.modules import Module, walk
from autostage.runtime.state import Variable

import autostage

TARGETS = ["interpreter", "cpu"]


class Dense(Module):
    def __init__(self, n_in, n_out, seed, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(seed)
        self.w = Variable(rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), name="w")
        self.b = Variable(np.zeros(n_out), name="b")

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class MLP(Module):
    def __init__(self, seed=0):
        super().__init__()
        self.layers = [Dense(3, 4, seed), Dense(4, 2, seed + 1)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def names(variables):
    return [v.name for v in variables]


def test_a_module_pickles_with_its_variables():
    import pickle
    model = MLP(seed=3)
    clone = pickle.loads(pickle.dumps(model))
    assert names(clone.variables) == names(model.variables)
    x = np.ones((2, 3))
    np.testing.assert_array_equal(clone(x), model(x))


def test_name_defaults_to_the_class_name_in_snake_case():
    assert MLP().name == "mlp" and Dense(1, 1, 0).name == "dense"
    assert Dense(1, 1, 0, name="first").name == "first"

    class DenseLayer2D(Module):
        pass

    assert DenseLayer2D().name == "dense_layer2_d"
    with pytest.raises(ValueError, match="a Module's name must be a Python identifier, got 'a b'"):
        Module(name="a b")


def test_variables_of_nested_modules_lists_tuples_and_dicts_once_each_in_sorted_order():
    class Net(Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2, 2, 0, name="l0"), Dense(2, 2, 1, name="l1")]
            self.steps = Variable(np.int64(0), trainable=False, name="steps")
            self.tied = self.layers[1].w  # shared: found once, under its first path
            self.extra = {"z": Variable(0.0, name="z"), "a": (Variable(1.0, name="a"),)}
            self.me = self  # a cycle

    net = Net()
    # the Net's own Variables first (attributes by name, dict items by key), then layer 0's,
    # then layer 1's (its w already found as ``tied``)
    assert names(net.variables) == ["a", "z", "steps", "w", "b", "w", "b"]
    assert net.variables[3] is net.layers[1].w and net.variables[5] is net.layers[0].w
    assert names(net.trainable_variables) == ["a", "z", "w", "b", "w", "b"]
    assert [m.name for m in net.submodules] == ["l0", "l1"]
    assert [("/".join(map(str, path)), var.name) for path, var in walk(net)][:4] == [
        ("extra/a/0", "a"), ("extra/z", "z"), ("steps", "steps"), ("tied", "w")]


def test_plain_objects_are_walked_only_when_asked():
    class Holder:
        def __init__(self):
            self.v = Variable(1.0, name="held")

    class Net(Module):
        def __init__(self):
            super().__init__()
            self.holder = Holder()

    assert Net().variables == ()  # as tf.Module: only Modules and containers are walked
    assert [(path, v.name) for path, v in walk(Net(), plain_objects=True)] == [
        (("holder", "v"), "held")]


@pytest.mark.parametrize("target", TARGETS)
def test_a_staged_method_reads_its_variables_at_each_call(target):
    class Model(MLP):
        forward = autostage.convert(MLP.__call__, target=target)

    model, x = Model(), np.array([[0.5, -1.0, 2.0]])
    expected = MLP.__call__(model, x)
    np.testing.assert_allclose(model.forward(x), expected, rtol=1e-12)
    model.layers[0].b.assign(np.ones(4))  # assigned outside, between calls
    np.testing.assert_allclose(model.forward(x), MLP.__call__(model, x), rtol=1e-12)
    assert not np.allclose(model.forward(x), expected)
    model.layers[1].b = Variable(np.zeros(2))  # replaced by a new Variable: retraces
    model.layers[1].b.assign(np.full(2, 0.25))
    np.testing.assert_allclose(model.forward(x), MLP.__call__(model, x), rtol=1e-12)


def test_a_new_variable_equal_to_the_traced_one_is_not_mistaken_for_it():
    class Scale(Module):
        def __init__(self):
            super().__init__()
            self.s = Variable(2.0)

        @autostage.convert(target="interpreter")
        def __call__(self, x):
            self.s.assign_add(1.0)
            return x * self.s

    model = Scale()
    assert model(np.float64(1.0)) == 3.0
    old, model.s = model.s, Variable(2.0)  # the same value: the trace must not use ``old``
    assert model(np.float64(1.0)) == 3.0
    assert (old.read(), model.s.read()) == (3.0, 3.0)


class Trainer(MLP):
    @autostage.convert
    def train_step(self, x, y, lr):
        with autostage.GradientTape() as tape:
            loss = np.mean((self(x) - y) ** 2)
        variables = self.trainable_variables
        for var, grad in zip(variables, tape.gradient(loss, variables), strict=True):
            var.assign_sub(lr * grad)
        return loss


@pytest.mark.parametrize("target", TARGETS)
def test_staged_training_steps_assign_variables_seen_outside(target):
    class Model(Trainer):
        step = autostage.convert(Trainer.train_step.python_function, target=target)

    model, reference = Model(seed=3), MLP(seed=3)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2)) * 0.5
    losses = [model.step(x, y, 0.1) for _ in range(5)]
    assert losses[-1] < losses[0]
    for _ in range(5):  # the same steps by hand, in NumPy
        h = np.tanh(x @ reference.layers[0].w.read() + reference.layers[0].b.read())
        out = np.tanh(h @ reference.layers[1].w.read() + reference.layers[1].b.read())
        d_out = 2 * (out - y) / out.size * (1 - out ** 2)
        d_h = d_out @ reference.layers[1].w.read().T * (1 - h ** 2)
        grads = {reference.layers[0].w: x.T @ d_h, reference.layers[0].b: d_h.sum(0),
                 reference.layers[1].w: h.T @ d_out, reference.layers[1].b: d_out.sum(0)}
        for var, grad in grads.items():
            var.assign_sub(0.1 * grad)
    for got, want in zip(model.variables, reference.variables, strict=True):
        np.testing.assert_allclose(got.read(), want.read(), rtol=1e-10, atol=1e-12)
