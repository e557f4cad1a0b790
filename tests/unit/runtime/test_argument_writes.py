"""Writes into array arguments (``out[i] = v``, ``out += v``), written back into the caller's
array: each program runs as Python and converted, on fresh copies of the same arguments, and must
give the same results, stdout, exceptions and final argument contents (and the argument itself
where Python returns it). Aliased or read-only arguments run as Python; what cannot be written
back is a clear error."""

import contextlib
import io

import numpy as np
import pytest
from autostage.runtime import argument_writes, ir, tracing
from autostage.runtime.call_slot import Plan
from autostage.runtime.passes import inplace

import autostage

TARGETS = ("cpu", "interpreter")


def fill(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
    return out


def cumsum_into(x, out):
    acc = 0.0
    for i in range(len(x)):
        acc += x[i]
        out[i] = acc


def rows_then_add(m, out):
    n, k = m.shape
    for i in range(n):
        for j in range(k):
            out[i, j] = m[i, j] + i
    out += 1.0
    return out.sum()


def write_in_branches(x, out):
    if x.sum() > 0:
        out[0] = 1.0
    else:
        out[1] = 2.0
    out[2:] = x[2:]
    return out


def whole_array_updates(x, out):
    out[...] = x
    out *= 2.0
    out[:] = out + 1.0
    out[1] -= 5.0
    return out[1:]


def raise_halfway(x, out):
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise ValueError("negative")
        out[i] = x[i]
    return out


def raise_at_trace_time(x, out):  # the IndexError is certain while tracing (x is 1-d)
    out *= 2.0
    return x[:, 1]


def write_or_fail_to_cast(x, out):  # the other path raises NumPy's casting error (uint8 += 0.5)
    if np.any(x == 0):
        out[...] = 0
    else:
        out[[0, 2]] += 0.5
    return out + 0


def python_counter(x, out):  # a while over a Python int runs as Python after a staging attempt
    j = 0
    while j < 3:
        out[j] = x[j] * 2.0
        out[1:3] *= 2.0
        j += 1


def print_around_write(x, out):
    print("before", out[0])
    out[0] = x[0]
    print("after", out[0])
    return x


def while_positive(x, out):
    i = 0
    while i < x.shape[0] and x[i] > 0:
        out[i] = x[i] ** 2
        i += 1
    return i


def two_outputs(x, a, b):
    for i in range(x.shape[0]):
        a[i] = x[i] + 1
        b[i] = x[i] - 1
    return a, b


def int_floor_halves(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 3
    out //= 2


def relax(t, n):  # a heat-equation solver stepping its argument (reads what it overwrites)
    for _ in range(n):
        t[1:-1] = 0.5 * (t[:-2] + t[2:])
    return t


def _helper_writes(v):
    v[0] = 1.0
    return v


def _calls_a_writer(x):
    return _helper_writes(x)


def sift_down(p, i, n):  # a heap's sift-down: `j` is assigned on the path that does not break,
    x = p[i]             # the flags and indices the loop carries are values, never views of p
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        elif p[c] > x:
            j = c
        else:
            break
        p[i] = p[j]
        i = j
    p[i] = x
    return p


def next_k_array(a):  # (quantecon's): a write after an early return that returns the argument
    k = len(a)
    if k == 1 or a[0] + 1 < a[1]:
        a[0] += 1
        return a
    a[0] = 0
    i = 1
    x = a[i] + 1
    while i < k - 1 and x == a[i + 1]:
        i += 1
        a[i - 1] = i - 1
        x = a[i] + 1
    a[i] = x
    return a


def loop_never_runs(a, c):  # the body's write could not broadcast, but the loop does not run
    j = 0
    while np.sum(c) < 5 and j < 4:
        c[..., ::2] = np.ptp(a, axis=0)
        j += 1
    return c  # (the argument itself, as Python: it was returned as a new array object)


def copied_then_written(d):
    m = np.empty_like(d)
    for i in range(d.shape[0]):
        m[i] = d[i]
    d[1] = 0.0
    return m


CASES = {
    "fill": (fill, lambda: (np.arange(5.0), np.zeros(5))),
    "fill_long": (fill, lambda: (np.arange(40.0), np.zeros(40))),
    "cumsum": (cumsum_into, lambda: (np.arange(6.0), np.zeros(6))),
    "rows": (rows_then_add, lambda: (np.arange(12.0).reshape(3, 4), np.zeros((3, 4)))),
    "rows_big": (rows_then_add, lambda: (np.arange(600.0).reshape(30, 20), np.zeros((30, 20)))),
    "branch_then": (write_in_branches, lambda: (np.arange(5.0), np.zeros(5))),
    "branch_else": (write_in_branches, lambda: (-np.arange(5.0), np.zeros(5))),
    "whole": (whole_array_updates, lambda: (np.arange(5.0), np.zeros(5))),
    "raise_halfway": (raise_halfway, lambda: (np.array([1.0, 2.0, -1.0, 4.0]), np.zeros(4))),
    "no_raise": (raise_halfway, lambda: (np.array([1.0, 2.0, 1.0, 4.0]), np.zeros(4))),
    "raise_at_trace_time": (raise_at_trace_time, lambda: (np.arange(3.0), np.ones(3))),
    "write_or_raise": (write_or_fail_to_cast, lambda: (np.array([0, 1]),
                                                       np.array([1, 2, 3], np.uint8))),
    "raise_or_write": (write_or_fail_to_cast, lambda: (np.array([2, 1]),
                                                       np.array([1, 2, 3], np.uint8))),
    "python_counter": (python_counter, lambda: (np.arange(4.0), np.ones(4))),
    "prints": (print_around_write, lambda: (np.arange(3.0), np.zeros(3))),
    "while": (while_positive, lambda: (np.array([1.0, 2.0, -1.0, 4.0]), np.zeros(4))),
    "two_outputs": (two_outputs, lambda: (np.arange(4.0), np.zeros(4), np.zeros(4))),
    "ints": (int_floor_halves, lambda: (np.arange(5), np.zeros(5, dtype=np.int64))),
    "relax": (relax, lambda: (np.linspace(0.0, 1.0, 9) ** 2, 3)),
    "sift_down": (sift_down, lambda: (np.array([1.0, 5.0, 3.0, 4.0, 2.0]), 0, 5)),
    "helper_writes": (_calls_a_writer, lambda: (np.arange(4.0),)),  # (the caller's x returned)
    "loop_never_runs": (loop_never_runs, lambda: (np.arange(12.0).reshape(3, 4),
                                                   np.array([[4], [1], [1]], np.uint8))),
    "next_k_array": (next_k_array, lambda: (np.array([0, 1, 2, 5]),)),
    "next_k_array_early": (next_k_array, lambda: (np.array([0, 2, 3, 5]),)),
    # a loop copies the argument's elements into its own array, then the argument is written
    # (the in-place pass took the loop's array for a view of the argument: refused)
    "copied_then_written": (copied_then_written, lambda: (np.arange(5.0),)),
    "rows_copied_then_written": (copied_then_written, lambda: (np.arange(10.0).reshape(5, 2),)),
    # the written argument aliases another input, or cannot be written: Python runs
    "out_is_x": (fill, lambda: (np.arange(5.0),) * 2),
    "overlapping": (cumsum_into, lambda: (lambda a: (a[1:], a[:-1]))(np.arange(7.0))),
    "interleaved": (fill, lambda: (lambda a: (a[::2], a[1::2]))(np.arange(12.0))),
    "read_only": (fill, lambda: (np.arange(5.0), np.frombuffer(np.zeros(5).tobytes()))),
}


def _run(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            return ("returned", fn(*args)), out.getvalue()
        except Exception as e:  # noqa: BLE001 - compared with Python's
            return ("raised", type(e), str(e)), out.getvalue()


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _identities(result, args) -> list:
    results = result if isinstance(result, tuple) else (result,)
    return [[i for i, a in enumerate(args) if r is a] for r in results]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES)
def test_writes_into_arguments_are_pythons(case, target):
    fn, make = CASES[case]
    staged = autostage.convert(fn, target=target)
    for _ in range(2):  # the second call takes the cached trace
        plain_args, staged_args = make(), make()
        expected, expected_out = _run(fn, plain_args)
        got, got_out = _run(staged, staged_args)
        assert _same(got, expected), (got, expected)
        assert got_out == expected_out
        for p, s in zip(plain_args, staged_args, strict=True):
            assert _same(s, p), (s, p)
        if expected[0] == "returned":
            assert _identities(got[1], staged_args) == _identities(expected[1], plain_args)


def _sum_twice(x, out):  # out given as x: Python's second sum sees the write (one sum, merged,
    total = x.sum()       # in the trace)
    out[0] = 100.0
    out[1] = x.sum() - total


def _scaled_copy(x, out):
    out[...] = x * 2.0
    return out.sum(), x


# Once warmed up, calls take the generated fast path, which tests the aliasing in line: calls
# whose arguments alias (of the same types, so the type tests pass) must still be Python's.
FAST_CASES = {
    "fill": (fill, lambda: (np.arange(8.0), np.zeros(8))),
    "sum_twice": (_sum_twice, lambda: (np.arange(1.0, 9.0), np.zeros(8))),
    "cumsum": (cumsum_into, lambda: (np.arange(8.0), np.zeros(8))),
    "rows": (rows_then_add, lambda: (np.arange(12.0).reshape(3, 4), np.zeros((3, 4)))),
    "two_outputs": (two_outputs, lambda: (np.arange(4.0), np.zeros(4), np.zeros(4))),
    "scalar_and_argument": (_scaled_copy, lambda: (np.arange(4.0), np.zeros(4))),
}
ALIASED = {
    "same": lambda args: (args[0],) * len(args),
    "overlapping": lambda args: tuple(np.arange(2.0 * a.size).reshape(-1)[k:k + a.size]
                                      .reshape(a.shape) for k, a in enumerate(args)),
    "read_only": lambda args: (*args[:-1], np.frombuffer(args[-1].tobytes()).reshape(
        args[-1].shape)),
}


@pytest.mark.parametrize("case", FAST_CASES)
def test_the_fast_path_tests_aliasing_and_keeps_pythons_results(case):
    fn, make = FAST_CASES[case]
    staged = autostage.convert(fn, target="cpu")
    for _ in range(3):
        plain_args, staged_args = make(), make()
        expected, got = _run(fn, plain_args), _run(staged, staged_args)
        assert _same(got[0], expected[0]) and got[0][0] == "returned"
        for p, s in zip(plain_args, staged_args, strict=True):
            assert _same(s, p)
        assert _identities(got[0][1], staged_args) == _identities(expected[0][1], plain_args)
    fast = staged._fast  # (a Plan tests the aliasing in C, its Python fallback too)
    if isinstance(fast, Plan):
        assert fast.specs[2]  # the written arguments
        fast = fast.fallback
    assert "shares(" in fast.source
    assert isinstance(staged._fast, Plan) or case == "two_outputs"  # (returns two arguments)
    for alias in ALIASED.values():
        plain_args, staged_args = alias(make()), alias(make())
        expected, got = _run(fn, plain_args), _run(staged, staged_args)
        assert _same(got[0], expected[0]), (got, expected)
        for p, s in zip(plain_args, staged_args, strict=True):
            assert _same(s, p)
    assert staged.trace_count == 1


def test_compiled_code_writes_into_the_callers_memory():
    staged = autostage.convert(fill, target="cpu")
    x, out = np.arange(3.0), np.zeros(3)
    body = staged.backend_source(x, out).split("def f_fill")[1]
    assert "copy" not in body and "a2[" not in body  # the parameter is the loop's array
    assert staged(x, out) is out and out.tolist() == [0.0, 2.0, 4.0]
    calls = [staged(np.arange(3.0), o) for o in (np.zeros(3), np.ones(3))]
    assert [c.tolist() for c in calls] == [[0.0, 2.0, 4.0]] * 2
    assert staged.trace_count == 1


def test_a_read_only_argument_raises_numpys_error_from_its_line():
    staged = autostage.convert(fill, target="cpu")
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        staged(np.arange(3.0), frozen)


def test_the_tiered_start_writes_back_too(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_TIERED", "1")
    staged = autostage.convert(cumsum_into, target="cpu")
    for _ in range(3):
        out = np.zeros(4)
        assert staged(np.arange(4.0), out) is None
        assert out.tolist() == [0.0, 1.0, 3.0, 6.0]
    staged.compile(np.arange(4.0), np.zeros(4))
    out = np.zeros(4)
    staged(np.arange(4.0), out)
    assert out.tolist() == [0.0, 1.0, 3.0, 6.0]


def _through_a_view(x, out):
    tail = out[1:]
    tail[0] = x[0]
    return out


def _one_path_argument(x, out, other):
    y = out if x.sum() > 0 else other
    y[0] = 7.0
    return y


def _write_then_raise(x, out):
    if x.sum() > 0:
        out[0] = 5.0
        raise ValueError("positive")
    return out


def _loop_rebinds(x, out):
    for i in range(x.shape[0]):
        out[0] = x[i]
        out = out[1:]
    return out


def _view_written_in_a_loop(grid, r):
    row = grid[1:]  # a view of the argument, written in a staged loop (the message said the
    for j in range(row.shape[0]):  # array was read from an attribute or a global)
        row[j] = 0
    return grid.sum()


class _Counter:
    """A running sum read through ``self``, written in a staged ``if`` that carries nothing."""

    def __init__(self):
        self.total = np.zeros(4)

    def add(self, g):
        if g.sum() > 0:
            self.total += g
        return self.total.sum()


_SCALE = np.ones(4)


def _global_write(g):
    _SCALE[0] = g.sum()  # a global array: read once per trace, refused as before
    return g


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args,message", [
    (_through_a_view, 2, r"test_argument_writes.py:\d+: this assignment to an element changes "
                         r"the argument `out` through a view of it"),
    (_one_path_argument, 3, r"test_argument_writes.py:\d+: this assignment to an element "
                            r"changes an array that is the argument `out` on some paths"),
    (_view_written_in_a_loop, 2, r"test_argument_writes.py:\d+: this assignment to an "
                                 r"element changes the argument `grid` through a view of it"),
    (_loop_rebinds, 2, r"a staged loop writes into the argument `out` and then gives its "
                       r"variable another array"),
    (_write_then_raise, 2, r"test_argument_writes.py:\d+: this write into the argument `out` is "
                           r"on a path of a staged `if` that then raises"),
    (_Counter().add, 1, r"test_argument_writes.py:\d+: this write changes `self.total`, an "
                        r"array the function reads through an object or a container, inside "
                        r"a staged `if` or loop .* \(`a = self.total`\)"),
    (_global_write, 1, r"test_argument_writes.py:\d+: item assignment into a staged tensor"),
])
def test_what_cannot_be_written_back_is_a_clear_error(fn, args, message, target):
    values = [np.arange(4.0) + 1 for _ in range(args)]
    before = [v.copy() for v in values]
    with pytest.raises(tracing.StagingError, match=message):
        autostage.convert(fn, target=target)(*values)
    for v, b in zip(values, before, strict=True):  # nothing the user owns changed
        assert np.array_equal(v, b)


def test_a_final_state_in_another_buffer_is_refused_after_the_passes():
    staged = autostage.convert(fill, target="cpu")
    module = ir.copy_module(staged.get_concrete_function(np.arange(3.0), np.zeros(3)).module)
    function = module.main
    assert [(p, name) for p, _, name in function.writes_back] == [(1, "out")]
    with pytest.raises(tracing.StagingError, match=r"test_argument_writes.py:\d+: this write "
                                                   r"into the argument `out` cannot go into the "
                                                   r"caller's array as it happens"):
        argument_writes.check_in_place(module)  # as traced: no write marked in place
    inplace.run(module)
    argument_writes.check_in_place(module)  # each write now goes into the argument


def _zero_grads(grads):
    for g in grads:
        g[:] = 0.0
    return len(grads)


def _sgd_step(params, grads, lr):
    for k in params:
        params[k] -= lr * grads[k]
    return params


def _momentum(model, grads, lr, mu):
    for layer, grad in zip(model["layers"], grads, strict=True):
        for k, v in layer["velocity"].items():
            v *= mu
            v -= lr * grad[k]
            layer["params"][k] += v
    return model["layers"][0]["params"]["W"]


def _model(n):
    layers = []
    for i in range(2):
        shapes = {"W": (n + i, 2), "b": (2,)}
        layers.append({"params": {k: np.linspace(-1.0, 1.0, np.prod(s)).reshape(s)
                                  for k, s in shapes.items()},
                       "velocity": {k: np.full(s, 0.25) for k, s in shapes.items()}})
    grads = [{k: np.full(v.shape, 0.5 + i) for k, v in layer["params"].items()}
             for i, layer in enumerate(layers)]
    return {"layers": layers}, grads


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _leaves(tree[k])]
    if isinstance(tree, list | tuple):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


@pytest.mark.parametrize("target", TARGETS)
def test_writes_into_arrays_of_list_and_dict_arguments_reach_the_callers_arrays(target):
    """A training step on a dict of parameters (`params[k] -= lr * grads[k]`) or a list
    (`for g in grads: g[:] = 0.0`) was refused: only whole array arguments were written back.
    The arrays inside list, tuple and dict arguments are now too; the containers keep their
    items, the caller's own arrays, written into."""
    grads = [np.ones(2), np.ones((2, 3))]
    held = list(grads)
    assert autostage.convert(_zero_grads, target=target)(grads) == 2
    assert all(a is b for a, b in zip(grads, held, strict=True))
    assert not any(g.any() for g in grads)

    step = autostage.convert(_sgd_step, target=target)
    for n in (3, 4, 3):  # the trace, another shape, the cache hit
        params = {"W": np.arange(n * 2.0).reshape(n, 2), "b": np.arange(2.0)}
        expected = {k: v.copy() for k, v in params.items()}
        gradients = {k: np.full(v.shape, 0.5) for k, v in params.items()}
        arrays = dict(params)
        assert step(params, gradients, 0.1) is params  # the caller's dict, as Python returns
        _sgd_step(expected, gradients, 0.1)
        for k in params:
            assert params[k] is arrays[k]
            np.testing.assert_array_equal(params[k], expected[k])

    momentum = autostage.convert(_momentum, target=target)
    for n in (3, 5):
        (model, grads), (plain, plain_grads) = _model(n), _model(n)
        arrays = _leaves(model)
        w = momentum(model, grads, 0.1, np.float64(0.9))
        assert w is model["layers"][0]["params"]["W"]
        np.testing.assert_array_equal(w, _momentum(plain, plain_grads, 0.1, np.float64(0.9)))
        assert all(a is b for a, b in zip(_leaves(model), arrays, strict=True))
        for a, b in zip(_leaves(model), _leaves(plain), strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("target", TARGETS)
def test_arrays_of_a_dict_argument_that_share_memory_are_written_as_python_writes(target):
    step = autostage.convert(_sgd_step, target=target)
    for make in (lambda: (lambda a: {"W": a, "b": a})(np.ones(3)),  # one array twice
                 lambda: (lambda a: {"W": a[:3], "b": a[1:]})(np.ones(4)),  # overlapping views
                 lambda: {"W": np.ones(3), "b": np.ones(3)}):
        params, plain = make(), make()
        gradients = {"W": np.arange(3.0), "b": np.full(3, 2.0)}
        step(params, gradients, 0.5)
        _sgd_step(plain, gradients, 0.5)
        for k in params:
            np.testing.assert_array_equal(params[k], plain[k])


def _replace_item(params, g):
    params["W"] = params["W"] - g


def test_storing_another_array_into_a_dict_argument_is_still_refused():
    from autostage.runtime.escapes import PythonSideEffectError

    params = {"W": np.ones(3)}
    with pytest.raises(PythonSideEffectError, match="changes a Python dict given to it"):
        autostage.convert(_replace_item)(params, np.ones(3))
    assert np.array_equal(params["W"], np.ones(3))


def test_an_in_place_operator_on_a_0d_array_argument_says_so():
    def accumulate(c, x):
        c += x.sum()
        return c

    with pytest.raises(tracing.StagingError, match=r"changes `c`, a 0-d array argument, in place.*"
                                           r"Return the new value"):
        autostage.convert(accumulate)(np.array(1.0), np.ones(3))


class BatchNorm:
    """A layer as model code writes it: running statistics updated in place through ``self``
    in training mode (a Python flag), read in evaluation mode."""

    def __init__(self, n):
        self.running_mean, self.running_var = np.zeros(n), np.ones(n)
        self.momentum, self.training = 0.9, True
        self.params = {"gamma": np.ones(n), "beta": np.zeros(n)}
        self.history = [np.zeros(2), np.zeros(n)]

    def __call__(self, x):
        if self.training:
            mean, var = x.mean(axis=0), x.var(axis=0)
            self.running_mean *= self.momentum
            self.running_mean += (1 - self.momentum) * mean
            self.running_var[:] = self.momentum * self.running_var + (1 - self.momentum) * var
            self.params["beta"] -= 0.01 * mean
            for h in self.history:
                h += 1.0
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean) / np.sqrt(var + 1e-5)
        return y * self.params["gamma"] + self.params["beta"]


def _state(layer):
    return [layer.running_mean, layer.running_var, layer.params["beta"], *layer.history]


@pytest.mark.parametrize("target", TARGETS)
def test_writes_into_arrays_read_through_self_are_written_back(target):
    """``self.running_mean *= m``, ``self.running_var[:] = ...``, ``self.params['beta'] -= g``
    and ``for h in self.history: h += 1`` write into the object's own arrays at every call, as
    in Python: the same results, the same arrays (the objects the layer held) with the same
    contents, in training and evaluation mode."""
    plain, staged_layer = BatchNorm(3), BatchNorm(3)
    staged = autostage.convert(staged_layer, target=target)
    held = _state(staged_layer)
    rng = np.random.default_rng(0)
    for k in range(5):
        x = rng.normal(size=(8, 3)) + k
        plain.training = staged_layer.training = k != 3
        np.testing.assert_array_equal(staged(x), plain(x))
        for got, want, same in zip(_state(staged_layer), _state(plain), held, strict=True):
            np.testing.assert_array_equal(got, want)
            assert got is same  # written into, not replaced
    assert staged.trace_count == 2  # training and evaluation


class _Accumulator:
    def __init__(self):
        self.acc = np.zeros(3)

    def __call__(self, x):
        self.acc *= 0.5
        self.acc += x
        return self.acc


@pytest.mark.parametrize("target", TARGETS)
def test_an_array_written_through_self_aliasing_an_argument_runs_as_python(target):
    """The written array returned is the object's own; given as the argument too (or a view
    of it), or read-only, the call runs as Python: Python's result, or its error."""
    for make_arg in (lambda a: np.ones(3), lambda a: a, lambda a: a[::-1]):
        plain, layer = _Accumulator(), _Accumulator()
        staged = autostage.convert(layer, target=target)
        for _ in range(3):
            want, got = plain(make_arg(plain.acc)), staged(make_arg(layer.acc))
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(layer.acc, plain.acc)
            assert got is layer.acc
    layer.acc.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        staged(np.ones(3))


class _Carried:
    def __init__(self):
        self.acc = np.zeros(3)

    def __call__(self, xs):
        acc = self.acc  # (carried by the staged loop through a local name)
        i = 0
        while i < xs.shape[0]:
            acc += xs[i]
            i += 1
        self.acc = acc
        return self.acc.sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_staged_loop_writes_an_array_read_through_self_by_a_local_name(target):
    plain, layer = _Carried(), _Carried()
    staged = autostage.convert(layer, target=target)
    held = layer.acc
    for n in (2, 4, 1):
        xs = np.arange(3.0 * n).reshape(n, 3)
        assert staged(xs) == plain(xs)
        np.testing.assert_array_equal(layer.acc, plain.acc)
    assert layer.acc is held


def _epochs(params, grads, lr, n):
    for _ in range(n):  # (a Python int: unrolled)
        for p, g in zip(params, grads, strict=True):
            p -= lr * g
    return params[0].sum()


def _epochs_of_a_dict(params, grads, lr):
    for _ in range(3):
        for k in params:
            w = params[k]
            w *= 0.9
            w -= lr * grads[k]
    return params["a"].sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_second_epoch_reads_the_written_arrays_of_its_list_and_dict_arguments(target):
    """After ``p -= lr * g`` through a loop variable, the argument list's item is the written
    array (Python's list holds the array it wrote into): the next epoch reads it, where it was
    refused as an older reference to the array."""
    def lists():
        return [np.ones(3), np.ones(2)], [np.arange(3.0), np.ones(2)]

    def dicts():
        return {"a": np.ones(3), "b": np.ones(2)}, {"a": np.arange(3.0), "b": np.ones(2)}

    for fn, make, extra in ((_epochs, lists, (0.1, 3)), (_epochs_of_a_dict, dicts, (0.1,))):
        staged = autostage.convert(fn, target=target)
        for _ in range(2):
            (plain_params, grads), (params, _) = make(), make()
            held = list(params.values() if isinstance(params, dict) else params)
            assert staged(params, grads, *extra) == fn(plain_params, grads, *extra)
            now = list(params.values() if isinstance(params, dict) else params)
            want = plain_params.values() if isinstance(plain_params, dict) else plain_params
            for got, expected, same in zip(now, want, held, strict=True):
                np.testing.assert_array_equal(got, expected)
                assert got is same
