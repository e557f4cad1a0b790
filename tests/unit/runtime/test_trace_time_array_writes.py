"""A NumPy array made while tracing (``np.zeros(3)`` of Python ints) and written with a staged
value: staged as a copy when the user's variable alone holds it (also through converted loops:
``operators/sole_holder``), else a clear error (a copy would leave the other holders' array
unchanged: a silently different answer)."""

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ("interpreter", "cpu")


def small_vector(x):
    out = np.zeros(3)
    out[0] = x.sum()
    out[2] = x[1] * 2
    return out, out.sum()


def at_staged_index(x, i):
    out = np.full((2, 3), 7.0)
    out[1, i] = x[0]
    return out


def not_uniform(x):
    out = np.array([0.0, -0.0, 2.5])  # a copy of these bits, not a fill of the first
    out[2] = x[0]
    return out


def int_array(x):
    counts = np.zeros(4, dtype=np.int32)
    counts[1] = x.shape[0]
    return counts


def written_in_loops(x, rows, columns):
    """Written in nested loops over Python-int sizes, as code not written for autostage is."""
    out = np.zeros((rows, columns))
    for i in range(rows):
        for j in range(columns):
            out[i, j] = x[i % x.shape[0]] * j
    return out


def written_in_a_while(x):
    out = np.zeros(4)
    i = 0
    while i < x.shape[0]:
        out[i % 4] = x[i] * 3
        i += 1
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, extra", [(small_vector, ()), (at_staged_index, (np.int64(2),)),
                                       (not_uniform, ()), (int_array, ()),
                                       (written_in_loops, (5, 4)), (written_in_a_while, ())])
def test_a_name_only_array_is_staged_as_a_copy(target, fn, extra):
    f = autostage.convert(fn, target=target)
    for x in (np.arange(3.0), np.array([4.0, -1.0, 0.5, 2.0])):
        want, got = fn(x, *extra), f(x, *extra)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)
            assert np.asarray(g).dtype == np.asarray(w).dtype
            assert np.array_equal(np.signbit(g), np.signbit(w))


def aliased_by_a_name(x):
    out = np.zeros(3)
    alias = out
    out[0] = x.sum()
    return alias


def held_by_a_list(x):
    out = np.zeros(3)
    kept = [out]
    out[0] = x.sum()
    return kept[0]


def through_a_view(x):
    base = np.zeros(4)
    v = base[1:]
    v[0] = x.sum()
    return base


def viewed_by_another_name(x):
    base = np.zeros(4)
    v = base[1:]
    base[1] = x.sum()
    return v


def alias_outside_a_loop(x):
    out = np.zeros(3)
    keep = out
    for i in range(3):
        out[i] = x[i]
    return keep


def alias_inside_a_loop(x):
    out = np.zeros(3)
    other = out
    for i in range(3):
        other = out
        out[i] = x[i]
    return other


def held_by_a_list_around_a_loop(x):
    out = np.zeros(3)
    box = [out]
    for i in range(3):
        out[i] = x[i]
    return box[0]


def written_by_a_helper(buf, x):
    buf[0] = x[0]
    return buf


def passed_to_a_helper(x):
    out = np.zeros(2)
    written_by_a_helper(out, x)
    return out


def boxed_per_row(x):
    """The outer loop does not carry ``out`` (a list in its state holds it): the inner loop's
    operator must not count the outer one's call as the variable's."""
    boxes = []
    for i in range(2):
        out = np.zeros(3)
        box = [out]
        for j in range(3):
            out[j] = x[j] * (i + 1)
        boxes.append(box)
    return boxes[0][0], boxes[1][0]


def filled_by_a_nested_function(x):
    """A nested function of the user's own writes its parameter: the caller's ``out`` is the
    same array and would see the write (not a converted loop body)."""
    out = np.zeros(3)

    def fill(out):
        out[0] = x[0]
        return out

    fill(out)
    return out


def in_a_staged_branch(x):
    out = np.zeros(2)
    if x[0] > 0:
        out[1] = x[0]
    return out


@pytest.mark.parametrize("fn", [aliased_by_a_name, held_by_a_list, through_a_view,
                                viewed_by_another_name, alias_outside_a_loop,
                                alias_inside_a_loop, held_by_a_list_around_a_loop,
                                passed_to_a_helper, boxed_per_row,
                                filled_by_a_nested_function])
def test_an_array_something_else_may_hold_is_refused(fn):
    with pytest.raises(StagingTypeError, match=r"made while tracing .* that something besides "
                                               r"this variable may hold"):
        autostage.convert(fn)(np.arange(3.0))


def test_the_reference_counts_are_calibrated_on_this_python():
    """The walk names no reference that is not there (a negative count would); for_stmt's call
    holds the state's items once more, while_stmt's and if_stmt's do not."""
    from autostage.operators import control_flow, sole_holder

    assert sole_holder._CALIBRATED and sole_holder._BASE >= 2
    assert sole_holder._CALL_COPIES[control_flow.for_stmt.__code__] >= 0
    assert sole_holder._CALL_COPIES[control_flow.while_stmt.__code__] >= 0


def aliased_around_a_staged_loop(x):
    """The loop is staged whole (its state holds a staged value before it): it begins from the
    array as a constant and would write a copy while ``keep`` holds the original."""
    out = np.zeros(5)
    keep = out
    acc = x[0]
    for i in range(5):
        acc = acc + x[i]
        out[i] = acc
    return keep, out


def written_in_a_staged_loop(x):
    out = np.zeros(5)
    acc = x[0]
    for i in range(5):
        acc = acc + x[i]
        out[i] = acc
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_a_staged_loop_writes_an_array_only_its_variable_holds(target):
    x = np.arange(1.0, 6.0)
    np.testing.assert_array_equal(autostage.convert(written_in_a_staged_loop, target=target)(x),
                                  written_in_a_staged_loop(x))
    with pytest.raises((StagingTypeError, StagingError), match="something besides this variable"):
        autostage.convert(aliased_around_a_staged_loop, target=target)(x)


def one_hot_argmax(labels, n):  # (numpy-ml's vote: a single staged index)
    s = 0
    for i in range(labels.shape[0]):
        counts = np.zeros(n)
        counts[labels[i]] = 1.0
        s += np.argmax(counts)
    return s


def knn_vote(D, labels, n_classes):  # a later loop's body reads `counts`: a closure cell
    preds = []
    for i in range(D.shape[0]):
        nn = np.argsort(D[i])[:2]
        counts = np.zeros(n_classes, dtype=np.int64)
        for j in nn:
            counts[labels[j]] += 1
        best = 0
        for c in range(1, n_classes):
            if counts[c] > counts[best]:
                best = c
        preds.append(best)
    return preds


def class_means(X, y, n_classes):  # (naive Bayes: the means a later loop reads)
    means = np.zeros((n_classes, X.shape[1]))
    for c in range(n_classes):
        means[c] = X[y == c].mean(axis=0)
    scores = np.zeros((X.shape[0], n_classes))
    for c in range(n_classes):
        scores[:, c] = -np.sum((X - means[c]) ** 2, axis=1)
    return scores.argmax(axis=1), means


@pytest.mark.parametrize("target", TARGETS)
def test_writes_at_a_staged_index_and_arrays_later_closures_read(target):
    """``counts[labels[i]] = 1.0`` (a staged index alone) was refused as shared, and so was an
    array a later statement's generated body reads (a closure cell, though no function could
    read it while the loop ran)."""
    labels = np.array([1, 0, 1])
    assert autostage.convert(one_hot_argmax, target=target)(labels, 2) == 2
    D = np.array([[0.1, 0.5, 0.2], [0.9, 0.1, 0.3]])
    assert autostage.convert(knn_vote, target=target)(D, labels, 2) == knn_vote(D, labels, 2)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, 30)
    for got, want in zip(autostage.convert(class_means, target=target)(X, y, 3),
                         class_means(X, y, 3), strict=True):
        np.testing.assert_array_equal(got, want)


def read_by_an_earlier_closure(nn, labels):
    counts = np.zeros(2, dtype=np.int64)

    def total():
        return counts.sum()
    t = 0
    for j in nn:
        counts[labels[j]] += 1
        t = t + total()
    return t


def read_by_a_running_generator(nn, labels):
    counts = np.zeros(2, dtype=np.int64)
    g = (counts[k] for k in range(2))
    first = next(g)
    for j in nn:
        counts[labels[j]] += 1
    return first + next(g)


@pytest.mark.parametrize("fn", [read_by_an_earlier_closure, read_by_a_running_generator])
def test_an_array_a_closure_made_before_reads_is_refused(fn):
    """Those would read the unwritten array while (or after) the staged copy is written."""
    with pytest.raises(StagingTypeError, match="that something besides this variable may hold"):
        autostage.convert(fn)(np.array([0, 2]), np.array([0, 1, 1]))


# --- NumPy arrays made while tracing, written inside a staged if (twenty-ninth session) -------
# A write of Python values ran at trace time, on every path: `if x[0] > 0: out[1] = 5.0` gave
# 5.0 where the condition was false. The staged if now carries such an array as a staged copy
# (as staged loops do), or refuses it where something else holds it.


def constant_write_in_a_branch(x):
    out = np.zeros(3)
    if x[0] > 0:
        out[1] = 5.0
    return out


def in_place_operator_in_a_branch(x):
    out = np.zeros(3)
    if x[0] > 0:
        out += 1
    return out


def slice_update_in_a_branch(x):
    out = np.zeros(4)
    if x[0] > 0:
        out[1:] += 2
    return out


def constant_write_in_a_branch_of_a_loop(x, n):
    out = np.zeros(n)
    for i in range(n):
        if x[i] > 0:
            out[i] = 1.0
    return out


def aliased_then_written_in_a_branch(x):
    out = np.zeros(3)
    b = out
    if x[0] > 0:
        out[1] = 5.0
    return b


def aliased_then_written_in_a_loop_branch(x, n):
    out = np.zeros(n)
    b = out
    for i in range(n):
        if x[i] > 0:
            out[i] = 1.0
    return b


def _write_first(a):
    a[0] = 1.0


def helper_writes_in_a_branch(x):
    out = np.zeros(3)
    if x[0] > 0:
        _write_first(out)
    return out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn", [in_a_staged_branch, constant_write_in_a_branch,
                                in_place_operator_in_a_branch, slice_update_in_a_branch])
def test_an_array_written_in_a_staged_branch_is_written_on_that_path_only(fn, target):
    staged = autostage.convert(fn, target=target)
    for x in (np.array([2.0, 1.0]), np.array([-2.0, 1.0])):
        np.testing.assert_array_equal(staged(x), fn(x), strict=True)


@pytest.mark.parametrize("n", [2, 5])  # (a Python range loop: unrolled at 2, staged at 5)
def test_an_array_written_in_a_branch_of_a_loop(n):
    x = np.array([1.0, -1.0, 2.0, 3.0, -4.0])
    staged = autostage.convert(constant_write_in_a_branch_of_a_loop)
    np.testing.assert_array_equal(staged(x, n), constant_write_in_a_branch_of_a_loop(x, n),
                                  strict=True)


@pytest.mark.parametrize("fn, args", [(aliased_then_written_in_a_branch, ()),
                                      (aliased_then_written_in_a_loop_branch, (5,)),
                                      (helper_writes_in_a_branch, ())])
def test_an_array_another_holder_sees_is_refused_when_written_in_a_staged_branch(fn, args):
    x = np.array([1.0, -1.0, 2.0, 3.0, -4.0])
    with pytest.raises((StagingTypeError, StagingError),
                       match="something besides this variable (also|may) hold"):
        autostage.convert(fn)(x, *args)


def _through_a_row(w):
    z = np.zeros((2, 3))
    z[1][2] = w[0, 0] + 1
    return z


def _through_a_transpose_in_a_branch(w):
    z = np.zeros((2, 3))
    if w[0, 0] > 0:
        z.T[0, 1] = 5.0
    return z


def _constant_through_a_row(w):
    z = np.zeros((2, 3))
    z[1][2] = 4.0  # (Python values outside staged control flow: Python's own write)
    return z + w


class _Holder:
    def __init__(self):
        self.items = [0, 0]


def _list_attribute(w):
    holder = _Holder()
    holder.items[0] = 3  # (Python's assignment: not an array)
    return w * holder.items[0]


@pytest.mark.parametrize("fn", [_through_a_row, _through_a_transpose_in_a_branch])
def test_a_write_through_an_expression_into_a_trace_time_array_is_a_clear_error(fn):
    # (NumPy's "setting an array element with a sequence", naming no line, or a write done at
    # trace time on every path, until the twenty-ninth session)
    with pytest.raises(StagingTypeError, match=r"test_trace_time_array_writes.py:\d+: this item "
                       "assignment writes into a NumPy array made while tracing through an "
                       "expression"):
        autostage.convert(fn)(np.ones((2, 2)))


def test_writes_through_expressions_of_python_values_stay_pythons():
    w = np.ones((2, 3))
    np.testing.assert_array_equal(autostage.convert(_constant_through_a_row)(w),
                                  _constant_through_a_row(w), strict=True)
    np.testing.assert_array_equal(autostage.convert(_list_attribute)(w), w * 3, strict=True)


def _into_a_python_list(w):
    items = [1, 2]
    items[int(w[0, 0])] = 5
    return items


def test_writes_refused_for_the_container_name_the_users_line():
    # (these two refusals named no line until the twenty-ninth session)
    with pytest.raises(StagingTypeError, match=r"^.*test_trace_time_array_writes.py:\d+: cannot "
                       r"write a staged value .* into a list that is not staged"):
        autostage.convert(_into_a_python_list)(np.ones((2, 2)))
    with pytest.raises(StagingTypeError, match=r"^.*test_trace_time_array_writes.py:\d+: cannot "
                       r"write a staged value .* into a NumPy array made while tracing"):
        autostage.convert(aliased_by_a_name)(np.ones(3))
