"""Staged while/for loops (runtime/staging/loops.py, loop_state.py, iteration.py): data-dependent
loops, for over tensors, range, enumerate and zip, break and early return, type promotion of
Python scalars, and the loop staging errors with the variable and line."""

import inspect

import numpy as np
import pytest
from autostage.runtime.staging import StagingUnboundError
from autostage.runtime.tensor import StagingTypeError
from test_staging_support import ops, run, staged

import autostage


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def total(xs):
    s = 0.0
    for x in xs:
        s = s + x
    return s


def weighted(n, w):
    s = 0.0
    for i in range(n):
        s += w * i
    return s


def countdown(n):
    s = 0
    for i in range(n, 0, -2):
        s = s * 10 + i
    return s


def dot_enumerate(a, b):
    s = 0.0
    for i, (u, v) in enumerate(zip(a, b, strict=False)):
        s = s + u * v * i
    return s


def first_index(xs, t):
    for i, x in enumerate(xs):
        if x == t:
            return i
    return -1


def sum_until(xs, limit):
    s = 0.0
    for x in xs:
        if s > limit:
            break
        s = s + x
    return s


def python_int_becomes_float(x):
    y = 1
    while y < 10:
        y = y * x
    return y


def while_else(n):
    s = 0
    i = 0
    while i < n:
        if s > 10:
            break
        s += i
        i += 1
    else:
        s = -1
    return s


def test_collatz():
    module, result = staged(collatz, np.int64(27))
    assert result == collatz(27) == 111
    assert ops(module).count("while") == 1


@pytest.mark.parametrize("a", [2.0, 10.0, 0.25])
def test_newton(a):
    assert run(newton_sqrt, np.float64(a)) == newton_sqrt(np.float64(a))


def total_rows(xs):
    s = np.zeros(2)
    for row in xs:
        s = s + row
    return s


def test_for_over_a_tensor():
    xs = np.array([1.0, 2.0, 3.5])
    assert run(total, xs) == total(xs)


def test_for_over_a_matrix_iterates_axis_0():
    xs = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(run(total_rows, xs), total_rows(xs))


def test_python_scalar_that_becomes_an_array_in_the_loop_is_an_error():
    with pytest.raises(StagingTypeError, match=r"loop variable 's' changes from Python float "
                                               r"to f64\[\?\]"):
        run(total, np.ones((3, 2)))


def test_for_over_an_empty_tensor_runs_no_iteration():
    assert run(total, np.zeros(0)) == 0.0


@pytest.mark.parametrize("n", [1, 5])
def test_for_over_a_staged_range_keeps_the_weight_dtype(n):
    result = run(weighted, np.int64(n), np.float32(1.5))
    assert result == weighted(n, np.float32(1.5))
    assert result.dtype == np.float32  # the index is a Python int: weak


def test_a_loop_that_runs_zero_times_gives_back_the_python_float_staged_code_held():
    assert type(weighted(0, np.float32(1.5))) is float  # Python: the loop did not run
    got = autostage.convert(weighted)(np.int64(0), np.float32(1.5))  # (held as a float32)
    assert type(got) is float and got == weighted(0, np.float32(1.5))


@pytest.mark.parametrize("n", [0, 1, 6, 7])
def test_range_with_a_negative_step(n):
    assert run(countdown, np.int64(n)) == countdown(n)


def test_enumerate_and_zip_stop_at_the_shortest():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0])
    assert run(dot_enumerate, a, b) == dot_enumerate(a, b)


@pytest.mark.parametrize("t", [5, 7, 3])
def test_early_return_inside_a_staged_for(t):
    xs = np.array([3, 4, 5])
    assert run(first_index, xs, np.int64(t)) == first_index(xs, t)


@pytest.mark.parametrize("limit", [0.5, 2.5, 100.0])
def test_break_inside_a_staged_for(limit):
    xs = np.array([1.0, 2.0, 3.0])
    assert run(sum_until, xs, np.float64(limit)) == sum_until(xs, limit)


def test_python_int_changed_by_a_tensor_is_promoted():
    assert run(python_int_becomes_float, np.float64(3.0)) == python_int_becomes_float(3.0)


@pytest.mark.parametrize("n", [3, 10])
def test_break_and_while_else(n):
    assert run(while_else, np.int64(n)) == while_else(n)


# --- errors -----------------------------------------------------------------------------------


def dtype_changes(n, x):
    y = n
    while y < 10:
        y = y * x
    return y


def rank_changes(n, v):
    y = n
    i = n
    while i < 10:
        y = y + v
        i = i + 1
    return y


def assigned_in_the_loop_only(xs):
    for x in xs:
        last = x
    return last


def assigned_in_the_loop_unused_after(xs):
    s = 0.0
    for x in xs:
        tmp = x * 2
        s = s + tmp
    return s


def test_loop_variable_dtype_change_names_it_both_types_and_the_line():
    with pytest.raises(StagingTypeError) as e:
        run(dtype_changes, np.int64(1), np.float64(2.0))
    message = str(e.value)
    assert "loop variable 'y' changes from i64[] to f64[]" in message
    assert line_of(dtype_changes, "while y < 10") in message
    assert "cast it before the loop" in message


def test_loop_variable_rank_change_is_an_error():
    with pytest.raises(StagingTypeError, match=r"loop variable 'y' changes from f64\[\] to "
                                               r"f64\[\?\]"):
        run(rank_changes, np.float64(0.0), np.ones(3))


def test_variable_assigned_only_in_the_loop_and_used_after_is_an_error():
    with pytest.raises(StagingUnboundError) as e:
        run(assigned_in_the_loop_only, np.ones(3))
    assert "variable 'last'" in str(e.value)
    assert line_of(assigned_in_the_loop_only, "for x in xs") in str(e.value)


def test_variable_assigned_only_in_the_loop_and_unused_after_is_fine():
    xs = np.array([1.0, 2.0])
    assert run(assigned_in_the_loop_unused_after, xs) == 6.0


def test_range_with_a_staged_step_is_an_error():
    def f(n):
        s = 0
        for i in range(0, 10, n):
            s = s + i
        return s

    with pytest.raises(StagingTypeError, match="staged step"):
        run(f, np.int64(2))


# --- early exits, definedness proofs and raising bodies on both targets -----------------------

TARGETS = ["interpreter", "cpu"]


def first_above_nested(x, t):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > t:
                return x[i, j]
    return -1.0


def nested_without_final_return(x, t):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > t:
                return x[i, j]


def flag_not_tied_to_value(x):
    found = False
    for v in x:
        if v > 0:
            found = True
        else:
            val = v
    if found:
        return val
    return 0.0


def list_assigned_in_the_loop_only(n, a):
    out = []
    for _i in range(n):
        out.append(a)
        last = out[:]  # (a copy: `last = out` too is refused, one list under two names)
    return last


def body_raises_at_run_time(n, lst):
    s = 0
    for i in range(n):
        print("step", i)
        s += lst[5]
    return s


def halve_until_small(x, tol):
    steps = 0
    while (size := np.abs(x).sum()) > tol:
        x = x * 0.5
        steps += 1
    else:
        steps = -steps
    return x, steps, size


def newton_with_walrus(a):
    x = a
    while (step := (x * x - a) / (2 * x)) > 1e-12 or step < -1e-12:
        x = x - step
        if x < 0:
            break
    return x, step


def halve_until_read_by_closure(x):
    def current():
        return s

    while (s := x.sum()) > 1.0:
        x = x * 0.5
    return x, current()


@pytest.mark.parametrize("target", TARGETS)
def test_a_while_test_binding_a_name_is_staged(target):
    """``while (y := f(x)) > tol`` is one staged loop whose body computes ``y`` first: the
    name is a loop variable, and its value after the loop is the last test's."""
    fn = autostage.convert(halve_until_small, target=target)
    for x, tol in [(np.ones(4), 1.0), (np.full(3, 5.0), 0.1), (np.ones(2), 10.0)]:
        got, want = fn(x, np.float64(tol)), halve_until_small(x, tol)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:]
    read = autostage.convert(halve_until_read_by_closure, target=target)
    got, want = read(np.ones(3)), halve_until_read_by_closure(np.ones(3))
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] == 0.75
    module, result = staged(newton_with_walrus, np.float64(2.0))
    assert result == newton_with_walrus(np.float64(2.0))
    assert ops(module).count("while") == 1


@pytest.mark.parametrize("target", TARGETS)
def test_return_inside_nested_staged_loops(target):
    import autostage

    fn = autostage.convert(first_above_nested, target=target)
    x = np.arange(12.0).reshape(3, 4)
    for t in (5.0, 50.0, -1.0):
        assert fn(x, np.float64(t)) == first_above_nested(x, t)


@pytest.mark.parametrize("target", TARGETS)
def test_a_path_without_return_in_nested_loops_is_still_an_error(target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(nested_without_final_return, target=target)(
            np.ones((2, 2)), np.float64(0.0))
    assert "the return value is assigned only on some paths" in str(e.value)
    assert line_of(nested_without_final_return, "for i in") in str(e.value)


@pytest.mark.parametrize("target", TARGETS)
def test_a_flag_set_on_other_paths_proves_nothing(target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(flag_not_tied_to_value, target=target)(np.ones(2))
    # 'val' is returned, so the message is about the return value, and names no line of the
    # caller's as its use
    assert "the return value is assigned only on some paths" in str(e.value)
    assert "and is returned by flag_not_tied_to_value;" in str(e.value)
    assert "test_staging_loops.py" not in str(e.value).split(" and is ")[1]


@pytest.mark.parametrize("target", TARGETS)
def test_a_list_assigned_in_the_loop_only_is_unbound_after_it(target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:  # it used to be an empty list when n == 0
        autostage.convert(list_assigned_in_the_loop_only, target=target)(
            np.int64(0), np.float64(1.0))
    assert "variable 'last'" in str(e.value)


@pytest.mark.parametrize("target", TARGETS)
def test_an_exception_tracing_a_loop_body_is_raised_when_the_body_runs(target, capsys):
    import autostage

    fn = autostage.convert(body_raises_at_run_time, target=target)
    assert fn(np.int64(0), [1]) == 0  # Python: no iteration, no IndexError
    capsys.readouterr()
    with pytest.raises(IndexError, match="list index out of range"):
        fn(np.int64(3), [1])
    assert capsys.readouterr().out == "step 0\n"  # printed first, as Python does


def first_above_while_true(x, t):
    i = 0
    while True:  # left by the return only: after the loop, do_return is set
        if x[i] > t:
            return x[i]
        i += 1


def found_by_a_flag_loop(x, t):
    done = False
    i = 0
    while not done:  # ends only once done is set, and val with it
        if x[i] > t:
            val = x[i] * 2.0
            done = True
        i += 1
    return val, i


def while_true_with_break(x, t):
    i = 0
    while True:
        if x[i] > t:
            return x[i]
        if i == 1:
            break  # leaves without a return value: Python returns None
        i += 1


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_left_only_by_return_returns_its_value(target):
    import autostage

    x = np.array([1.0, 3.0, 5.0])
    fn = autostage.convert(first_above_while_true, target=target)
    for t in (0.0, 2.0, 4.0):
        assert fn(x, np.float64(t)) == first_above_while_true(x, t)
    with pytest.raises(IndexError):  # runs off the end, as Python does
        fn(x, np.float64(9.0))


@pytest.mark.parametrize("target", TARGETS)
def test_a_variable_assigned_with_the_flag_that_ends_the_loop_is_assigned_after_it(target):
    import autostage

    x = np.array([1.0, 3.0, 5.0])
    fn = autostage.convert(found_by_a_flag_loop, target=target)
    for t in (0.0, 2.0, 4.0):
        assert fn(x, np.float64(t)) == found_by_a_flag_loop(x, t)


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_left_by_break_too_still_may_return_none(target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(while_true_with_break, target=target)(np.arange(3.0), np.float64(9))
    assert "some paths return None" in str(e.value)


# --- a variable that is None on some paths (issue 8, helper c) -------------------------------


def running_max(x):
    mx = None
    for v in x:
        if mx is None or v > mx:
            mx = v
    return mx


def running_max_used_in_the_body(x):
    total = None
    for v in x:
        total = v if total is None else total + v
        total = total * 2
    return total


def maybe_none_after_if(x):
    y = None
    if x[0] > 0:
        y = x[0]
    return y + 1


def really_unassigned(x):
    for v in x:
        if v > 0:
            y = v
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "name", "text"), [
    (running_max, "mx", "for v in x"),
    (running_max_used_in_the_body, "total", "for v in x"),
    (maybe_none_after_if, "y", "if x[0] > 0")])
def test_a_variable_that_is_none_on_some_paths_says_so(fn, name, text, target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(fn, target=target)(np.arange(3.0))
    message = str(e.value)
    assert message.startswith(f"variable {name!r} is None on some paths of the staged if/loop "
                              f"at {line_of(fn, text)} and a staged f64[] value on others")
    assert "assigned only on some paths" not in message
    assert f"give {name!r} a value of the same dtype" in message and "-np.inf" in message


@pytest.mark.parametrize("target", TARGETS)
def test_a_really_unassigned_variable_keeps_its_message(target):
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(really_unassigned, target=target)(np.arange(3.0))
    assert "variable 'y' is assigned only on some paths" in str(e.value)
    assert "None" not in str(e.value)


def first_above(x, t):
    res = None
    for v in x:
        if v > t:
            res = v
            break
    return res is None


def counted_if_set(x):
    y = None
    if x[0] > 0:
        y = x[0]
    if y is not None:
        return 1
    return 0


def unassigned_is_none(x):
    for v in x:
        if v > 0:
            y = v
    return y is None


def found_a_float(x, t):
    res = None
    for v in x:
        if v > t:
            res = v
            break
    return isinstance(res, float)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("fn", "name", "use"), [
    (first_above, "res", "return res is None"),
    (found_a_float, "res", "return isinstance(res, float)"),
    (counted_if_set, "y", "if y is not None"),
    (unassigned_is_none, "y", "return y is None")])
def test_is_none_of_a_variable_none_on_some_paths_is_refused(fn, name, use, target):
    """``res is None`` was Python's identity of the staged stand-in: False whatever the run
    (``first_above`` said a value was found where none was, ``counted_if_set`` counted 1 for a
    negative ``x[0]``), and ``isinstance(res, float)`` False likewise. The answer is known
    only at run time: the variable's clear error, at the test's line."""
    import autostage

    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(fn, target=target)(*(
            (np.array([1.0, 2.0]), 5.0) if fn in (first_above, found_a_float)
            else (np.array([-1.0, 2.0]),)))
    assert f"variable {name!r} is" in str(e.value)
    assert f"is used at {line_of(fn, use)}" in str(e.value)


def _leaves_int64(x, k):
    c = k
    for _ in range(x.shape[0]):
        c = c // -1
    return c


def _returns_constants_in_a_loop(x, f):
    j = 0
    while j < x.shape[0]:
        j += 1
        if j != -1:
            return (f * 2, 0.0)
    return (float(x.mean()), 1.0)


def test_loop_state_messages_name_the_cause():
    # (they said "changes from Python int to Python int" and named the internal 'retval_')
    with pytest.raises(StagingTypeError, match=r"variable 'c' becomes the Python int "
                       r"9223372036854775808 in the for loop at .*, which does not fit in int64"):
        autostage.convert(_leaves_int64)(np.ones(3, np.int32), -2**63)
    with pytest.raises(StagingTypeError, match=r"^the return value changes from the Python value "
                       r"None to .*set a flag and break"):
        autostage.convert(_returns_constants_in_a_loop)(np.ones(3), 2.0)


def _bfs_over_growing_list(adj, start):
    order = [start]
    visited = np.zeros(adj.shape[0], dtype=np.bool_)
    visited[start] = True
    for u in order:  # Python also visits the items appended below
        for v in range(adj.shape[0]):
            if adj[u, v] and not visited[v]:
                visited[v] = True
                order.append(v)
    return order


def _bfs_with_index(adj, start):
    order = [start]
    visited = np.zeros(adj.shape[0], dtype=np.bool_)
    visited[start] = True
    i = 0
    while i < len(order):
        u = order[i]
        for v in range(adj.shape[0]):
            if adj[u, v] and not visited[v]:
                visited[v] = True
                order.append(v)
        i += 1
    return order


def _pop_while_iterating(a):
    lst = []
    for v in a:
        lst.append(v)
    seen = []
    for v in lst:  # Python stops early: the list shrinks
        seen.append(v)
        lst.pop()
    return seen


def _write_ahead_while_iterating(a):
    lst = []
    for v in a:
        lst.append(v)
    out = []
    for i, v in enumerate(lst):  # Python reads the item written in the iteration before
        if i + 1 < len(lst):
            lst[i + 1] = lst[i + 1] + v
        out.append(v)
    return out


def _iterate_unchanged(a):
    lst = []
    for v in a:
        lst.append(v * 2)
    total = 0.0
    for i, v in enumerate(lst):
        total += v + i
    return total


_ADJ = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.bool_)


@pytest.mark.parametrize("fn, args, line", [
    (_bfs_over_growing_list, (_ADJ, 0), "for u in order"),
    (_pop_while_iterating, (np.array([1, 1, 1, 1]),), "for v in lst:"),
    (_write_ahead_while_iterating, (np.array([1, 1, 1, 1]),), "for i, v in enumerate(lst)"),
])
def test_a_list_changed_by_staged_code_in_a_loop_iterating_it_is_refused(fn, args, line):
    # The loop read the list it started with (BFS gave [0, 1, 2], Python [0, 1, 2, 3]), where
    # Python reads each next item from the list as it is then.
    with pytest.raises(autostage.StagingError, match="changed .* in the body of a for loop "
                       "that iterates it") as info:
        autostage.convert(fn)(*args)
    assert line_of(fn, line) in str(info.value)


def test_a_list_iterated_with_an_index_as_the_refusal_says_grows_as_in_python():
    assert autostage.convert(_bfs_with_index)(_ADJ, 0) == _bfs_with_index(_ADJ, 0) == [0, 1, 2, 3]
    a = np.array([1.0, 2.0, 3.0])
    assert autostage.convert(_iterate_unchanged)(a) == _iterate_unchanged(a)
