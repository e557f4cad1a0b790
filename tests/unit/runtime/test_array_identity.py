"""An older reference to an array written in place (another name, a view made before, a list
holding it, a cond result, a loop's captured value) is a clear StagingError naming both lines;
programs that do not alias keep Python's values (``runtime/array_identity.py``)."""

import inspect

import numpy as np
import pytest
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ["interpreter", "cpu"]


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def other_name(n):
    x = np.zeros(n)
    y = x
    x[0] = 1.0
    return y  # stale


def view_before(n):
    x = np.zeros(n)
    v = x[1:3]
    x[1] = 5.0
    return v + 1.0  # stale


def list_holding(n):
    x = np.zeros(n)
    lst = []
    lst.append(x)
    x[0] = 1.0
    return np.stack(lst)  # stale


def loop_reads_alias(n):
    x = np.zeros(n)
    y = x
    for i in range(1, n):
        x[i] = y[i - 1] + 1.0  # stale
    return x


def alias_after_loop(n):
    x = np.zeros(n)
    y = x
    for i in range(n):
        x[i] = i
    return y + 0.0  # stale


def cond_result(n):
    x = np.zeros(n)
    w = np.ones(n)
    z = x if n > 2 else w
    z[0] = 7.0
    return x * 1.0  # stale


def appended_every_iteration(n):
    x = np.zeros(n)
    hist = []
    for i in range(n):
        x[i] = i
        hist.append(x)  # stale
    return np.stack(hist)


def in_place_operator(n):
    x = np.zeros(n)
    y = x
    x += 1.0
    return y * 2.0  # stale


ALIASING = [other_name, view_before, list_holding, loop_reads_alias, alias_after_loop,
            cond_result, appended_every_iteration, in_place_operator]
WRITES = {other_name: "x[0] = 1.0", view_before: "x[1] = 5.0", list_holding: "x[0] = 1.0",
          loop_reads_alias: "x[i] = y", alias_after_loop: "x[i] = i", cond_result: "z[0] = 7.0",
          appended_every_iteration: "x[i] = i", in_place_operator: "x += 1.0"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", ALIASING, ids=lambda f: f.__name__)
def test_older_reference_after_write_is_refused(fn, target):
    with pytest.raises(StagingError) as info:
        autostage.convert(fn, target=target)(np.int64(4))
    message = str(info.value)
    assert "changed in place" in message and "older reference" in message
    assert f"test_array_identity.py:{line_of(fn, WRITES[fn])}" in message
    if fn is other_name:
        assert "used as the function's result" in message
    else:
        assert f"test_array_identity.py:{line_of(fn, '# stale')}" in message
    assert ".copy()" in message


def test_the_message_names_the_variables():
    with pytest.raises(StagingError, match=r"`x` was changed in place.*\(`y`\)"):
        autostage.convert(in_place_operator, target="interpreter")(np.int64(4))


def dp(n):
    d = np.zeros((n + 1, n + 1))
    for i in range(1, n + 1):
        d[i, 0] = i
        for j in range(1, n + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (i != j))
    return d


def copied(n):
    x = np.zeros(n)
    y = x.copy()
    x[0] = 1.0
    return y + x


def write_and_read_in_other_branch(n):
    x = np.zeros(n)
    if n > 2:
        x[0] = 1.0
        r = x.sum()
    else:
        r = x.sum() + 2.0
    return x, r


def rebound_before_write(n):
    x = np.zeros(n)
    y = x
    x = x * 2.0
    x[0] = 1.0
    return y, x


def slice_updates(n):
    x = np.zeros(n)
    for i in range(n):
        x[1:3] += 1.0
        x[i] += 2.0
    return x


def swap_in_loop(n):
    a = np.zeros(n)
    b = np.ones(n)
    for i in range(n):
        a[i] = i + 1.0
        a, b = b, a
    return a, b


def trajectory(n):
    y = np.ones(2)
    out = []
    for _ in range(n):
        y = y * 0.5
        out.append(y)
        y[0] = y[0] + 0.0 if False else y[0]
    return np.stack(out)


def read_before_write_same_iteration(n):
    x = np.zeros(n)
    for i in range(1, n):
        prev = x[i - 1]
        x[i] = prev + 1.0
    return x


def returned_when_converged(n):  # (a Gauss-Seidel solver's early return)
    x = np.zeros(n)
    for _ in range(50):
        x[0] = x[0] + 1.5
        if x[0] > 10:
            return x
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [dp, copied, write_and_read_in_other_branch, rebound_before_write,
                                slice_updates, swap_in_loop, read_before_write_same_iteration,
                                returned_when_converged],
                         ids=lambda f: f.__name__)
def test_programs_without_aliasing_keep_pythons_values(fn, target):
    expected = fn(np.int64(4))
    got = autostage.convert(fn, target=target)(np.int64(4))
    for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                    got if isinstance(got, tuple) else (got,), strict=True):
        np.testing.assert_array_equal(g, e)


def test_the_message_names_the_array_written_by_an_element_assignment():
    with pytest.raises(StagingError, match=r"`x` was changed in place.*`v = x\.copy\(\)`"):
        autostage.convert(view_before, target="interpreter")(np.int64(4))


def _round_int(a):
    return np.round(a)


def _same_on_both_paths(b, c):
    t = c if b.sum() > 0 else c
    return (t,)


def _argument_on_one_path(b, c):
    if b.sum() > 0:
        t = c * 2
    else:
        t = c
    return t


def _raise_on_one_path(b, c):
    if b.sum() > 100:
        raise ValueError("large")
    t = c
    return t


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_returned_arguments_are_pythons_objects(target):
    a = np.arange(3, dtype=np.int32)
    assert autostage.convert(_round_int, target=target)(a) is not a  # NumPy: a new array
    b_pos, b_neg, c = np.ones(2), -np.ones(2), np.arange(4.0)
    for fn in (_same_on_both_paths, _argument_on_one_path, _raise_on_one_path):
        staged = autostage.convert(fn, target=target)
        for b in (b_pos, b_neg, b_pos):
            want, got = fn(b, c), staged(b, c)
            want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
            assert [w is c for w in want] == [g is c for g in got], (fn.__name__, b)
            np.testing.assert_array_equal(got[0], want[0])


def _python_while(a):
    a = a.copy()
    j = 0
    while j < 2:
        a[1:3] *= 2.0
        a[0] = a[1] + 1.0
        j += 1
    return a


def _range_that_unrolls(a):
    b = a * 1.0
    rows = []
    for j in range(5):  # a Python list grown per iteration: staging it fails, it unrolls
        b[j % 3] += 1.0
        rows.append(j)
    return b, len(rows)


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_a_loop_attempt_that_python_runs_leaves_no_stale_versions(target):
    x = np.arange(4.0)
    for fn in (_python_while, _range_that_unrolls):
        got, want = autostage.convert(fn, target=target)(x), fn(x)
        if isinstance(want, tuple):
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1] == want[1]
        else:
            np.testing.assert_array_equal(got, want)


def _early_return_of_a_view(x, y):
    if (x > 0).any():
        return x[::-1], y
    return y, y  # (the paths that returned earlier yield placeholders here: not candidates)


def _view_of_another_argument(x, y):
    if x.sum() > 0:
        return y[1:]
    return x


def _argument_or_its_view(x, y):
    if x.sum() > 0:
        return x[::-1]
    return x


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_an_argument_on_some_paths_a_view_of_another_on_others(target):
    for fn in (_early_return_of_a_view, _view_of_another_argument):
        staged = autostage.convert(fn, target=target)
        for x in (np.ones(3), -np.ones(3), np.ones(3)):
            y = np.arange(3.0)
            want, got = fn(x, y), staged(x, y)
            want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
            assert [(w is x, w is y) for w in want] == [(g is x, g is y) for g in got], fn
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_an_argument_or_a_view_of_it_is_refused_where_they_look_alike(target):
    staged = autostage.convert(_argument_or_its_view, target=target)
    x = np.ones(3)
    got = staged(x, x)  # the view's path: its memory is laid out otherwise
    assert got is not x and np.shares_memory(got, x)
    with pytest.raises(StagingError, match=r"a result of _argument_or_its_view has the memory "
                                           r"and layout of argument #1, which it is on some "
                                           r"paths of the staged if or loop at .*"
                                           r"test_array_identity.py:\d+, .*x\.copy\(\)"):
        staged(-x, x)  # x's path: it might be x[...], a new view Python would return
    y = -np.arange(1.0, 5.0)
    with pytest.raises(StagingError, match="memory and layout of argument #1"):
        autostage.convert(_view_of_another_argument, target=target)(y, y)  # one memory twice


def _sliced_in_a_loop(a, n):
    for _ in range(n):
        a = a[1:]
    return a


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_a_view_made_in_a_loop_that_may_not_run(target):
    staged = autostage.convert(_sliced_in_a_loop, target=target)
    a = np.arange(4.0)
    got = staged(a, np.int64(2))
    assert got is not a
    np.testing.assert_array_equal(got, a[2:])
    for empty_or_not_run in ((a, np.int64(0)), (np.ones(0), np.int64(2))):  # a's own layout
        with pytest.raises(StagingError, match="staged if or loop"):
            staged(*empty_or_not_run)


def _list_argument_as_it_is(xs, a):
    return xs


def _containers_in_a_structure(xs, d, a):
    return (xs, a.sum(), d), [xs]


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_a_list_or_dict_argument_returned_as_it_is_is_the_callers(target):
    # (a new list with the same items until the twenty-ninth session: `f(x) is x` was False)
    xs = [0, 1, 2]
    for _ in range(3):  # (traced once, then from the cache)
        assert autostage.convert(_list_argument_as_it_is, target=target)(xs, np.ones(2)) is xs
    staged = autostage.convert(_containers_in_a_structure, target=target)
    ys, d = [np.ones(2)], {"k": 1.5}
    for _ in range(2):
        (first, total, same_d), outer = staged(ys, d, np.arange(3.0))
        assert first is ys and same_d is d and outer[0] is ys and total == 3.0
        assert type(outer) is list and outer is not ys


def _made_at_trace_time(n):
    a = np.zeros((n, 3))  # a Python size: a NumPy array while tracing
    a[1, 2] = 5.0
    b = np.asfortranarray(np.ones((2, 2)))
    return (a, a[1], a.T, a[::-1, 0], a, b, b[:, 0], np.zeros(2), a.view(np.int64),
            np.broadcast_to(a[0], (2, 3)))


@pytest.mark.parametrize("target", TARGETS)
def test_arrays_made_at_trace_time_and_returned_together_share_memory_as_in_python(target):
    # Each was copied alone on each call: `return a, a` gave two arrays, and a write into one
    # result did not show through a view of it.
    f = autostage.convert(_made_at_trace_time, target=target)
    for _ in range(3):  # (the first call traces; later ones copy the trace's arrays)
        got, want = f(3), _made_at_trace_time(3)
        for g, w in zip(got, want, strict=True):
            assert (type(g), g.dtype, g.shape, g.strides, g.flags.writeable) == \
                (type(w), w.dtype, w.shape, w.strides, w.flags.writeable)
            np.testing.assert_array_equal(g, w)
        assert got[0] is got[4]
        shares = [[np.shares_memory(x, y) for y in got] for x in got]
        assert shares == [[np.shares_memory(x, y) for y in want] for x in want]
        got[0][1, 2] = 7.0
        assert got[1][2] == got[2][2, 1] == 7.0
    assert not np.shares_memory(f(3)[0], f(3)[0])  # a new copy per call


def _alias_on_one_path(x):
    a = np.zeros(2)  # made while tracing
    if x[0] > 0:
        b = a
    else:
        b = np.ones(2)
    a[0] = 5.0  # Python: b sees it where it is a
    return b


def _view_on_one_path(x):
    a = np.zeros(3)
    b = a[1:] if x[0] > 0 else np.ones(2)
    a[1] = 5.0
    return b


def _copy_on_one_path(x):
    a = np.zeros(3)
    b = a.copy() if x[0] > 5 else a
    a[1] = 4.0
    return b


@pytest.mark.parametrize("fn, text", [(_alias_on_one_path, "if x[0] > 0"),
                                      (_view_on_one_path, "b = a[1:]"),
                                      (_copy_on_one_path, "b = a.copy()")])
@pytest.mark.parametrize("target", TARGETS)
def test_an_array_bound_to_a_second_name_on_some_paths_only_is_refused(fn, text, target):
    # The staged result was a value of its own: b came back [0, 0] where Python's is [5, 0].
    with pytest.raises(StagingError, match=r"is the array `a` \(or a view of it\) on one path "
                       "of the staged") as info:
        autostage.convert(fn, target=target)(np.array([1.0]))
    assert f":{line_of(fn, text)}" in str(info.value)


def _swap_rows(x):
    a = x.copy()
    a[0], a[1] = a[1], a[0]
    return a


def test_a_tuple_assignment_of_views_is_refused_in_the_users_words():
    """NumPy's `a[0], a[1] = a[1], a[0]` on rows copies row 1 into both (the second value is
    a view a[0] = ... changed); the refusal names the construct, not the converter's name for
    the view (`item_1`)."""
    with pytest.raises(StagingError, match=r"a view on the right of a tuple assignment, is used "
                                           r".*a\[1\]\.copy\(\), a\[0\]\.copy\(\)") as info:
        autostage.convert(_swap_rows)(np.array([[5.0, 3.0], [1.0, 4.0]]))
    assert "item" not in str(info.value)


def _copied_by_the_copy_module(x):
    import copy

    y = copy.copy(x)
    x[0] = 5.0
    z = copy.deepcopy({"pos": x, "n": x.shape[0]})
    x += 1.0
    return y, z["pos"], z["n"], x


@pytest.mark.parametrize("target", TARGETS)
def test_copy_and_deepcopy_of_a_staged_array_are_new_arrays(target):
    """``copy.copy(x)`` gave ``x`` itself (so a later write into ``x`` was refused as if ``y``
    were another reference to it) and ``copy.deepcopy`` a copy of the staged stand-in (a
    TracerLeakError); both are new arrays, as NumPy's ``__copy__``/``__deepcopy__`` make, and a
    staged Python number stays itself."""
    x = np.array([1.5, -2.0, 3.0])
    expected = _copied_by_the_copy_module(x.copy())
    got = autostage.convert(_copied_by_the_copy_module, target=target)(x)
    for e, g in zip(expected, got, strict=True):
        assert type(e) is type(g)
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(x, [6.0, -1.0, 4.0])


def _same_object_after_a_write(x):
    y = x
    y[0] = 5.0
    return y is x


def _a_view_is_not_its_base(x):
    v = x[1:]
    return v is x, x is x


@pytest.mark.parametrize("target", TARGETS)
def test_is_of_an_older_reference_after_a_write_is_refused(target):
    """``y = x; y[0] = 5.0; y is x`` is True in Python (one object); the write makes ``y`` a
    new staged value, and ``is`` compared the two: False, silently. It is the older reference's
    clear error now; identities without a write keep Python's answer."""
    with pytest.raises(StagingError, match=r"`y` was changed in place at \S+, but an older "
                       r"reference to the same array \(`x`\).* in an `is` test") as info:
        autostage.convert(_same_object_after_a_write, target=target)(np.array([1.0, 2.0]))
    assert f":{line_of(_same_object_after_a_write, 'return y is x')}" in str(info.value)
    assert autostage.convert(_a_view_is_not_its_base, target=target)(np.ones(3)) == (
        False, True)
