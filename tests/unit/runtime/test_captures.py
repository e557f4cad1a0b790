"""Tests for runtime/captures.py (issue 8, item 7): what a staged function reads through objects
is read at each call (arrays, by reference) or guarded (Python values: a change retraces)."""

import enum
import types
import warnings

import numpy as np
import pytest
from autostage.runtime.function import RETRACE_WARNING_THRESHOLD, RetracingWarning
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ["interpreter", "cpu"]


class Lin:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return x @ self.w


@pytest.mark.parametrize("target", TARGETS)
def test_model_weights_are_read_at_each_call(target):
    m = Lin(np.eye(2))
    f = autostage.convert(target=target)(m)
    x = np.ones((1, 2))
    assert f(x).tolist() == [[1.0, 1.0]]
    m.w = 2 * np.eye(2)  # rebound
    assert f(x).tolist() == m(x).tolist() == [[2.0, 2.0]]
    m.w *= 2  # changed in place
    assert f(x).tolist() == m(x).tolist() == [[4.0, 4.0]]
    assert f.trace_count == 1  # captured by reference: no retrace
    m.w = np.eye(3)[:2, :]  # another shape: traced again, never stale
    assert f(x).tolist() == m(x).tolist()
    assert f.trace_count == 2


CFG = {"scale": 2.0}
NS = types.SimpleNamespace(scale=7.0, table=np.array([1.0, 2.0]))


def scaled(x):
    return x * CFG["scale"] + NS.scale * NS.table


@pytest.mark.parametrize("target", TARGETS)
def test_python_values_in_global_dicts_and_objects_are_guarded(target):
    f = autostage.convert(scaled, target=target)
    x = np.ones(2)
    assert f(x).tolist() == scaled(x).tolist() == [9.0, 16.0]
    CFG["scale"] = 3.0
    try:
        assert f(x).tolist() == scaled(x).tolist() == [10.0, 17.0]
        NS.scale = 1.0
        NS.table[1] = 5.0
        assert f(x).tolist() == scaled(x).tolist() == [4.0, 8.0]
        assert f.trace_count == 3  # one per guarded value; the array change did not retrace
        CFG["scale"], NS.scale = 2.0, 7.0
        assert f(x).tolist() == scaled(x).tolist() == [9.0, 37.0]
        assert f.trace_count == 3  # the first trace (these values) is still there
    finally:
        CFG["scale"], NS.scale, NS.table = 2.0, 7.0, np.array([1.0, 2.0])


class Layer:
    def __init__(self, w, scale):
        self.w, self.scale = w, scale

    def __call__(self, h):
        if self.scale > 1:  # a Python branch on a guarded attribute
            return np.tanh(h @ self.w) * self.scale
        return h @ self.w


class Model:
    def __init__(self):
        self.layers = [Layer(np.eye(2), 1.0), Layer(np.full((2, 2), 0.5), 2.0)]
        self.temperature = 1.0

    def __call__(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return h / self.temperature


@pytest.mark.parametrize("target", TARGETS)
def test_nested_objects_lists_and_methods_are_read_at_each_call(target):
    m = Model()
    f = autostage.convert(target=target)(m)
    x = np.array([[1.0, 2.0]])
    np.testing.assert_allclose(f(x), m(x))
    m.layers[0].w[0, 0] = 3.0
    m.layers[1].w = np.eye(2)
    np.testing.assert_allclose(f(x), m(x))
    assert f.trace_count == 1
    m.layers[1].scale = 0.5  # the branch goes the other way: retraced
    m.temperature = 4.0
    np.testing.assert_allclose(f(x), m(x))
    m.layers.append(Layer(np.eye(2), 1.0))  # the list grew: retraced
    np.testing.assert_allclose(f(x), m(x))
    assert f.trace_count == 3


class Tempered:
    def __init__(self):
        self.temperature = 1.0

    def __call__(self, x):
        return x / self.temperature


def test_retracing_warning_names_the_path():
    m = Tempered()
    f = autostage.convert(target="interpreter")(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(RETRACE_WARNING_THRESHOLD + 1):
            m.temperature = float(i + 1)
            assert f(np.ones(1)).tolist() == [1.0 / (i + 1)]
    messages = [str(w.message) for w in caught if w.category is RetracingWarning]
    assert len(messages) == 1 and "self.temperature changed" in messages[0]


def test_writing_into_an_array_read_through_an_object_reaches_the_array():
    class Buffer:
        def __init__(self):
            self.buf = np.zeros(2)

        def __call__(self, x):
            self.buf[0] = x
            return x

    buffer = Buffer()
    held = buffer.buf
    f = autostage.convert(target="interpreter")(buffer)
    for k in range(3):  # never a silently lost write into the user's array
        assert f(np.float64(k + 1.0)) == k + 1.0
        assert buffer.buf is held and buffer.buf.tolist() == [k + 1.0, 0.0]


def test_the_reader_of_a_model_with_ten_weights_is_generated_code():
    class Ten:
        def __init__(self):
            for i in range(10):
                setattr(self, f"w{i}", np.full(2, float(i)))

        def __call__(self, x):
            return (x + self.w0 + self.w1 + self.w2 + self.w3 + self.w4 + self.w5 + self.w6
                    + self.w7 + self.w8 + self.w9)

    m = Ten()
    f = autostage.convert(target="interpreter")(m)
    assert f(np.zeros(2)).tolist() == [45.0, 45.0]
    read = f.concrete_functions[0].read
    assert read.source.count(".w") == 10 and "getattr" not in read.source


class Act:
    def __init__(self, gain):
        self.gain = gain

    def __call__(self, h):
        if h.sum() > 0:  # staged control flow in a sub-object's method
            return h * self.gain
        return -h


class TwoActs:
    def __init__(self):
        self.a, self.b = Act(np.float64(2.0)), Act(np.float64(3.0))

    def __call__(self, x):
        return self.a(x) + self.b(x)


@pytest.mark.parametrize("target", TARGETS)
def test_sub_objects_are_called_converted_and_per_object(target):
    m = TwoActs()
    f = autostage.convert(target=target)(m)
    for x in (np.ones(2), -np.ones(2)):
        assert f(x).tolist() == m(x).tolist()
    m.b.gain = np.float64(10.0)
    assert f(np.ones(2)).tolist() == m(np.ones(2)).tolist() == [12.0, 12.0]
    assert f.trace_count == 1


# --- The user's own modules are read like objects; changes to the user's data are refused. -----

from autostage.runtime.staging.errors import PythonSideEffectError  # noqa: E402
from captures_data import settings  # noqa: E402


@pytest.mark.parametrize("target", TARGETS)
def test_attributes_of_user_modules_are_read_at_each_call(target):
    @autostage.convert(target=target)
    def f(x):
        return x * settings.SCALE + settings.OFFSET

    old_scale, old_offset = settings.SCALE, settings.OFFSET.copy()
    try:
        assert f(np.ones(2)).tolist() == [2.0, 2.0]
        settings.SCALE = 5.0  # a Python value: guarded, so the call traces again
        assert f(np.ones(2)).tolist() == [5.0, 5.0]
        settings.OFFSET += 1  # an array: read by reference at each call
        assert f(np.ones(2)).tolist() == [6.0, 6.0]
        assert f.trace_count == 2
    finally:
        settings.SCALE, settings.OFFSET = old_scale, old_offset


COUNTER = 0
W = np.ones(2)


@pytest.mark.parametrize("target", TARGETS)
def test_a_global_changed_while_tracing_is_refused_and_put_back(target):
    @autostage.convert(target=target)
    def f(x):
        global COUNTER
        COUNTER += 1
        return x + W

    with pytest.raises(PythonSideEffectError, match=r"global variable 'COUNTER' .*once per trace"):
        f(np.ones(2))
    assert COUNTER == 0


class Counting:
    def __init__(self):
        self.calls = 0
        self.training = True
        self.w = np.ones(2)

    def __call__(self, x):
        self.training = True  # stores what is already there: no change
        self.calls += 1
        return x * self.w


@pytest.mark.parametrize("target", TARGETS)
def test_changing_an_attribute_while_tracing_is_refused(target):
    m = Counting()
    f = autostage.convert(target=target)(m)
    line = Counting.__call__.__code__.co_firstlineno + 2
    with pytest.raises(PythonSideEffectError, match=rf"test_captures.py:{line}: self.calls "):
        f(np.ones(2))


LOG = []


@pytest.mark.parametrize("target", TARGETS)
def test_appending_to_a_global_list_while_tracing_is_refused(target):
    @autostage.convert(target=target)
    def f(x):
        LOG.append("called")
        return x + 1

    with pytest.raises(PythonSideEffectError, match=r"LOG.append\(\) \(reached through global"):
        f(np.ones(2))
    assert LOG == []


@pytest.mark.parametrize("target", TARGETS)
def test_the_functions_own_containers_may_change(target):
    @autostage.convert(target=target)
    def f(x):
        seen = {"n": 0}
        seen["n"] += 1
        parts = []
        parts.append(x)
        return parts[0] * seen["n"]

    assert f(np.ones(2)).tolist() == [1.0, 1.0]


class StagedLinear:
    """A layer whose ``__call__`` is a staged function, called by other converted code."""

    def __init__(self):
        self.w = np.ones(2)
        self.kind = "linear"

    @autostage.convert
    def __call__(self, x):
        y = x * self.w
        return np.tanh(y) if self.kind == "tanh" else y

    @autostage.convert
    def loss(self, x):
        return np.sum(self(x))  # self(x): the staged __call__ of the stand-in


@autostage.convert
def loss_of(model, x):
    return np.sum(model(x))


def test_a_staged_call_of_an_argument_object_reads_its_attributes_at_each_call():
    """model(x) of a layer whose __call__ is staged froze the layer's weights and settings into
    the caller's first trace (the stand-in called the staged function with the object itself)."""
    m, x = StagedLinear(), np.array([1.0, 2.0])
    for loss in (lambda: loss_of(m, x), lambda: m.loss(x)):
        m.w, m.kind = np.ones(2), "linear"
        assert loss() == 3.0
        m.w = m.w - 1.0  # rebound between calls
        assert loss() == 0.0
        m.w += 2.0  # changed in place
        assert loss() == 6.0
        m.kind = "tanh"  # a setting the trace specialised on: traced again
        assert loss() == np.sum(np.tanh(x * m.w))


class Net:
    def act(self, x):
        return x

    @autostage.convert
    def forward(self, x):
        return self.act(x) * 2.0


def test_a_method_set_on_the_object_after_a_call_is_called():
    """`net.act = f` after the first call shadows the class's method: the trace that called
    the class's method is not used any more."""
    net, x = Net(), np.ones(2)
    assert net.forward(x).tolist() == [2.0, 2.0]
    net.act = lambda v: v + 100.0
    assert net.forward(x).tolist() == [202.0, 202.0]
    del net.act
    assert net.forward(x).tolist() == [2.0, 2.0]


_GLOBAL_ROW = np.ones(2)
_GLOBAL_0D = np.array(1.0)


def _adds_into_a_global_row(x):
    g = _GLOBAL_ROW
    g += x  # in place: Python changes the global's array
    return g


def _adds_into_a_global_0d(x):
    g = _GLOBAL_0D
    g += x.sum()  # a 0-d ndarray: changed in place too
    return g


def _returns_the_global_0d(x):
    return _GLOBAL_0D


@pytest.mark.parametrize("fn", [_adds_into_a_global_row, _adds_into_a_global_0d])
def test_an_in_place_operator_on_a_captured_array_is_refused(fn):
    """Staged code cannot write into an array it reads from a global (it computed a new array
    and left the global unchanged, silently, before)."""
    with pytest.raises(StagingError, match=r"changes `global '_GLOBAL_(ROW|0D)'`, an array the "
                                           r"function reads from .* a global"):
        autostage.convert(fn)(np.array([1.5, 2.0]))
    assert _GLOBAL_ROW.tolist() == [1.0, 1.0] and _GLOBAL_0D == 1.0


def test_an_in_place_operator_on_a_closed_over_array_is_refused():
    kept = np.ones(2)

    def scale(x):
        c = kept
        c *= x
        return c

    with pytest.raises(StagingError, match="closed-over variable 'kept'"):
        autostage.convert(scale)(np.array([1.5, 2.0]))


def test_a_captured_0d_array_is_returned_as_itself():
    assert autostage.convert(_returns_the_global_0d)(np.ones(2)) is _GLOBAL_0D


class Hyper:  # a class used as a namespace of settings
    momentum = 0.9
    w = np.array([1.0, 2.0])
    n = 2
    act = np.tanh

    class Schedule:
        decay = 0.5


class MoreHyper(Hyper):
    extra = 1.0


def uses_class_attributes(x):
    return (x * MoreHyper.momentum * MoreHyper.w * MoreHyper.Schedule.decay * MoreHyper.extra,
            MoreHyper.act(x[:MoreHyper.n]).sum())


@pytest.mark.parametrize("target", TARGETS)
def test_class_attributes_are_read_at_each_call(target, monkeypatch):
    """A class stays itself (``type(x) is C``, ``super(C, self)`` need it): its data
    attributes, its bases' and its nested classes' are guarded, a change retracing; an array's
    items changed in place too (the trace's digest of the arrays it froze)."""
    f = autostage.convert(uses_class_attributes, target=target)
    x = np.ones(2)

    def same():
        got, want = f(x), uses_class_attributes(x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == pytest.approx(want[1], rel=1e-14)  # (tanh: within 4 ulp)

    same()
    for owner, name, value in [(MoreHyper, "momentum", 0.5), (Hyper, "n", 1),
                               (Hyper, "w", np.array([5.0, 5.0])), (Hyper, "act", np.sin),
                               (Hyper.Schedule, "decay", 0.25), (MoreHyper, "extra", 3.0)]:
        monkeypatch.setattr(owner, name, value)
        same()
    Hyper.w[0] = -1.0  # (the monkeypatched array: changed in place)
    same()


def scaled_by_own_attribute(x):
    return x * scaled_by_own_attribute.k


@pytest.mark.parametrize("decorated", [False, True])
def test_a_functions_attributes_are_read_at_each_call(decorated, monkeypatch):
    monkeypatch.setattr(scaled_by_own_attribute, "k", 2.0, raising=False)
    f = autostage.convert(scaled_by_own_attribute)
    if decorated:  # the global name is the converted function: its attribute is read
        monkeypatch.setitem(globals(), "scaled_by_own_attribute", f)
        f.k = 2.0
    x = np.ones(2)
    assert f(x).tolist() == [2.0, 2.0]
    (f if decorated else scaled_by_own_attribute).k = 4.0
    assert f(x).tolist() == [4.0, 4.0]


class Base:
    eps = 1.0


class Child(Base):
    def __init__(self):
        super(Child, self).__init__()  # noqa: UP008 - the class itself, by its global name


def uses_the_class_itself(x):
    c = Child()
    return x + Child.eps, type(c) is Child, isinstance(c, Base)


def test_a_class_read_for_its_attributes_is_still_the_class():
    f = autostage.convert(uses_the_class_itself)
    x = np.ones(2)
    got = f(x)
    assert got[0].tolist() == [2.0, 2.0] and got[1:] == (True, True)
    Base.eps = 5.0
    try:
        assert f(x)[0].tolist() == [6.0, 6.0]
    finally:
        Base.eps = 1.0


class Activation(enum.Enum):
    RELU = 1
    TANH = 2


class _Sentinel:
    pass


DEFAULT = _Sentinel()


class ActivationLayer:
    def __init__(self, act):
        self.act = act

    def __call__(self, x):
        if self.act is Activation.RELU:
            return np.maximum(x, 0.0)
        return x * 0.5


def _scaled_unless_default(x, option):
    return x * (1.0 if option is DEFAULT else 2.0)


def _scaled_unless_same(x, a, b):
    return x * (1.0 if a is not b else 2.0)


@pytest.mark.parametrize("target", TARGETS)
def test_is_compares_the_users_objects_behind_stand_ins(target):
    """``act is Activation.RELU`` on an attribute or argument read through a stand-in: the user's
    object is compared, and the answer is guarded (another member: another trace)."""
    layer, x = ActivationLayer(Activation.RELU), np.array([-1.0, 0.5])
    f = autostage.convert(layer, target=target)
    for act in (Activation.RELU, Activation.TANH, Activation.RELU, Activation.TANH):
        layer.act = act
        np.testing.assert_array_equal(f(x), ActivationLayer.__call__(layer, x))
    g = autostage.convert(_scaled_unless_default, target=target)
    for option in (DEFAULT, _Sentinel(), DEFAULT):
        np.testing.assert_array_equal(g(x, option), _scaled_unless_default(x, option))
    h = autostage.convert(_scaled_unless_same, target=target)
    one, other = _Sentinel(), _Sentinel()
    for a, b in [(one, one), (one, other), (other, other), (other, one)]:
        np.testing.assert_array_equal(h(x, a, b), _scaled_unless_same(x, a, b))


class Biased:
    def __init__(self):
        self.w = 1.0


def _with_optional_bias(m, x):
    return x * m.w + getattr(m, "bias", 0.0)


def _with_bias_if_set(m, x):
    return x + (m.bias if hasattr(m, "bias") else 0.0)


@pytest.mark.parametrize("fn", [_with_optional_bias, _with_bias_if_set])
def test_an_attribute_missing_when_traced_is_looked_for_at_each_call(fn):
    """A trace that took getattr's default (or hasattr's False) must not serve the object once
    it has the attribute, set on the object or on its class, nor after it is deleted."""
    m, x = Biased(), np.zeros(2)
    f = autostage.convert(fn)
    np.testing.assert_array_equal(f(m, x), fn(m, x))
    m.bias = 5.0
    np.testing.assert_array_equal(f(m, x), [5.0, 5.0])
    del m.bias
    np.testing.assert_array_equal(f(m, x), [0.0, 0.0])
    Biased.bias = 3.0
    try:
        np.testing.assert_array_equal(f(m, x), [3.0, 3.0])
    finally:
        del Biased.bias
    np.testing.assert_array_equal(f(m, x), [0.0, 0.0])


class Patched:
    def act(self, x):
        return -x

    def __call__(self, x):
        return self.act(x)


def test_a_method_replaced_on_the_class_is_called():
    model, x = Patched(), np.ones(1)
    f = autostage.convert(model)
    np.testing.assert_array_equal(f(x), -x)
    original = Patched.act
    Patched.act = lambda self, v: v * 10.0
    try:
        np.testing.assert_array_equal(f(x), x * 10.0)
    finally:
        Patched.act = original
    np.testing.assert_array_equal(f(x), -x)


class Params(dict):
    pass


class Layers(list):
    pass


class Holder:
    def __init__(self):
        self.p = Params(W=np.ones(2), s=1.0)
        self.layers = Layers([np.ones(2), 1.0])


def _from_a_dict_subclass(net, x):
    return x * net.p["W"] * net.p["s"]


def _from_a_list_subclass(net, x):
    return x * net.layers[0] * net.layers[1]


@pytest.mark.parametrize("target", TARGETS)
def test_items_of_a_users_dict_or_list_subclass_are_read_at_each_call(target):
    net, x = Holder(), np.ones(2)
    f = autostage.convert(_from_a_dict_subclass, target=target)
    g = autostage.convert(_from_a_list_subclass, target=target)
    for change in (lambda: None, lambda: net.p.update(W=np.zeros(2), s=3.0),
                   lambda: net.p["W"].__setitem__(slice(None), 7.0),
                   lambda: net.layers.__setitem__(1, 5.0),
                   lambda: net.layers[0].__imul__(2.0)):
        change()
        np.testing.assert_array_equal(f(net, x), _from_a_dict_subclass(net, x))
        np.testing.assert_array_equal(g(net, x), _from_a_list_subclass(net, x))


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def _scaled_by_config(x, cfg):
    return x * cfg.lr


def test_an_attribute_dict_argument_is_read_without_its_getattr():
    """An object whose ``__getattr__`` raises KeyError (an attribute dict) is an argument like
    any other: autostage's own probes of it must not run that ``__getattr__``."""
    cfg, x = AttrDict(lr=0.1), np.ones(2)
    f = autostage.convert(_scaled_by_config)
    np.testing.assert_array_equal(f(x, cfg), x * 0.1)
    cfg.lr = 0.5
    np.testing.assert_array_equal(f(x, cfg), x * 0.5)


class Tags(set):
    pass


class Tagged:
    def __init__(self):
        self.tags = Tags({"a"})

    def __call__(self, x):
        return x * len(self.tags) + (1.0 if "b" in self.tags else 0.0)


def test_a_users_set_subclass_read_by_c_level_methods_is_guarded_whole():
    model, x = Tagged(), np.ones(2)
    f = autostage.convert(model)
    for change in (lambda: None, lambda: model.tags.add("b"), lambda: model.tags.add("c"),
                   lambda: model.tags.discard("b")):
        change()
        np.testing.assert_array_equal(f(x), Tagged.__call__(model, x))



class Scaled:
    def __init__(self):
        self.scale = 2.0

    def __call__(self, x):
        return x * self.scale


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bound", [True, False])
def test_python_values_read_through_self_are_guarded_on_the_fast_path(target, bound):
    """The fast path of repeated calls tested the guards of values read through ``self`` only
    where it also read arrays there: a changed ``self.scale`` gave the old trace's result."""
    m = Scaled()
    f = autostage.convert(m.__call__ if bound else m, target=target)
    for _ in range(3):
        assert f(np.ones(2)).tolist() == [2.0, 2.0]
    for v in (3.0, 4.0):
        m.scale = v
        assert f(np.ones(2)).tolist() == [v, v]


@pytest.mark.parametrize("target", TARGETS)
def test_a_global_named_like_an_attribute_is_not_a_source(target, monkeypatch):
    """``self.scale`` reads no global ``scale``: a loop counter or schedule of that name changed
    between calls made every call trace again (attribute names are in co_names too)."""
    f = autostage.convert(Scaled(), target=target)
    for v in range(3):
        monkeypatch.setitem(globals(), "scale", float(v))
        assert f(np.ones(2)).tolist() == [2.0, 2.0]
    assert f.trace_count == 1
