"""Staged if/else, conditional expressions and logical operators (runtime/staging/control_flow.py,
merge.py, logic.py): results equal plain Python's, and each staging error names the variable and
the user's line."""

import inspect

import numpy as np
import pytest
from autostage.runtime.staging import StagingUnboundError
from autostage.runtime.tensor import StagingTypeError
from test_staging_support import ops, run, staged

import autostage


def line_of(fn, text):
    """The file:line of the first line of ``fn`` containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def abs_diff(x, y):
    if x > y:
        d = x - y
    else:
        d = y - x
    return d


def clip_low(x):
    if x < 0:
        x = 0
    return x


def count_positive(x):
    n = 0
    if x > 0:
        n = n + 1
    return n


def early_return(x):
    if x > 0:
        return 1
    return 2


def nested(x):
    if x > 0:
        if x > 10:
            r = 2.0
        else:
            r = 1.0
    else:
        r = -1.0
    return r


def ternary(x):
    return x * 2 if x > 3 else 0


def logical(x):
    both = x > 0 and x < 10
    either = x < 0 or x > 10
    neither = not (x > 5)
    return both, either, neither


def and_returns_operand(x, y):
    return x > 0 and y


def chained(x):
    return 0 < x < 10


@pytest.mark.parametrize("x,y", [(3.0, 1.0), (1.0, 3.0)])
def test_if_else_picks_the_branch_at_run_time(x, y):
    module, result = staged(abs_diff, np.float64(x), np.float64(y))
    assert "cond" in ops(module)
    assert result == abs_diff(x, y)


def test_python_int_in_one_branch_takes_the_tensor_dtype():
    result = run(clip_low, np.float32(2.5))
    assert result == clip_low(np.float32(2.5))
    assert result.dtype == np.float32


def test_python_int_staged_code_holds_as_float32_is_returned_as_the_int():
    """On the path where Python's `x` is the int 0, staged code holds a float32: the int, known
    while tracing, is returned there (python_paths)."""
    got = autostage.convert(clip_low)(np.float32(-2.5))
    assert type(got) is int and got == clip_low(np.float32(-2.5)) == 0


@pytest.mark.parametrize("x", [-1, 1])
def test_different_python_ints_in_the_branches_become_an_int64_tensor(x):
    result = run(count_positive, np.int64(x))
    assert result == count_positive(x)
    assert result.dtype == np.int64


@pytest.mark.parametrize("x", [-1, 1])
def test_early_return_from_a_staged_if(x):
    assert run(early_return, np.int64(x)) == early_return(x)


@pytest.mark.parametrize("x", [-5.0, 5.0, 50.0])
def test_nested_ifs(x):
    assert run(nested, np.float64(x)) == nested(x)


@pytest.mark.parametrize("x", [1, 5])
def test_conditional_expression(x):
    assert run(ternary, np.int64(x)) == ternary(x)


@pytest.mark.parametrize("x", [-3, 4, 7, 20])
def test_and_or_not(x):
    assert run(logical, np.int64(x)) == logical(x)


@pytest.mark.parametrize("x,y", [(1.0, 2.5), (-1.0, 2.5)])
def test_and_returns_an_operand_like_python(x, y):
    # `a and b` gives b (a float) or a (a bool): different types, so it is a staging error
    # unless both have the same type; with bools it works.
    assert run(lambda a, b: a > 0 and b > 0, np.float64(x), np.float64(y)) == (x > 0 and y > 0)


def bfs(adj, src):
    n = adj.shape[0]
    dist = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    head, tail = 0, 1
    queue[0], dist[src] = src, 0
    while head < tail:
        u = queue[head]
        head += 1
        for v in range(n):
            if adj[u, v] and dist[v] < 0:  # an int64 and a bool: tested, not kept
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist


def counts(x, y):
    r = 0
    for i in range(x.shape[0]):
        if x[i] or y[i] > 2:
            r += 1
        r += 10 if (x[i] and not y[i]) else 0
    k = 0
    while k < 3 and x[k]:
        k += 1
    return r, k


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_and_or_of_different_types_in_tests_take_their_truth(target):
    """``if adj[u, v] and dist[v] < 0:`` (int64 and bool operands) was refused: the value of
    ``a and b`` needs one type, but a test uses only its truth (``and_test``)."""
    adj = (np.random.default_rng(2).random((7, 7)) < 0.3).astype(np.int64)
    np.testing.assert_array_equal(autostage.convert(bfs, target=target)(adj, 0), bfs(adj, 0))
    x, y = np.array([1, 0, 2, 0]), np.array([0.0, 3.0, 0.0, 1.0])
    assert autostage.convert(counts, target=target)(x, y) == counts(x, y)


@pytest.mark.parametrize("x", [-1, 5, 15])
def test_chained_comparison(x):
    assert run(chained, np.int64(x)) == chained(x)


def test_and_evaluates_the_right_operand_only_in_its_branch():
    module, _ = staged(lambda a, b: a > 0 and b / a > 1, np.float64(0.0), np.float64(1.0))
    cond = next(op for op in module.main.body.walk() if op.name == "cond")
    assert "true_divide" in [op.name for op in cond.regions[0].walk()]
    assert "true_divide" not in [op.name for op in module.main.body.ops]


# --- errors -----------------------------------------------------------------------------------


def defined_on_one_branch(x):
    if x > 0:
        y = 1.0
    return y


def mismatched_dtypes(x, z):
    if x > 0:
        y = x
    else:
        y = z
    return y


def mismatched_ranks(x, v):
    if x > 0:
        y = x
    else:
        y = v
    return y


def python_float_into_int(x):
    if x > 0:
        y = x
    else:
        y = 0.5
    return y


def different_python_values(x):
    if x > 0:
        y = "a"
    else:
        y = "b"
    return y


def falls_off_the_end(x):
    if x > 0:
        return x


def test_variable_defined_on_one_branch_is_an_error_naming_it_and_the_line():
    with pytest.raises(StagingUnboundError) as e:
        run(defined_on_one_branch, np.float64(1.0))
    message = str(e.value)
    assert "variable 'y'" in message
    assert line_of(defined_on_one_branch, "if x > 0") in message
    assert isinstance(e.value, UnboundLocalError)


def test_mismatched_dtypes_name_the_variable_both_types_and_the_line():
    with pytest.raises(StagingTypeError) as e:
        run(mismatched_dtypes, np.float64(1.0), np.float32(2.0))
    message = str(e.value)
    assert "variable 'y' is f64[] in one branch and f32[] in the other" in message
    assert line_of(mismatched_dtypes, "if x > 0") in message


def dict_in_each_branch(x, params):
    best = {"w": x * 0.0}
    if x > 0:
        best = params
    return best["w"]


def test_a_dict_that_differs_between_branches_is_refused_as_a_dict():
    """Not as a dtype mismatch (the arrays in it agree): merging would make a new dict where
    Python keeps one of the two objects."""
    with pytest.raises(StagingTypeError) as e:
        autostage.convert(dict_in_each_branch)(np.float64(1.0), {"w": np.float64(2.0)})
    message = str(e.value)
    assert "variable 'best' is a different Python dict at the end of each branch" in message
    assert "not dicts" in message and "dtype" not in message
    assert line_of(dict_in_each_branch, "if x > 0") in message


def test_mismatched_ranks_are_an_error():
    with pytest.raises(StagingTypeError, match=r"variable 'y' is f64\[\] in one branch and "
                       r"f64\[\?\] in the other"):
        run(mismatched_ranks, np.float64(1.0), np.zeros(3))


def test_python_float_where_the_tensor_is_int_is_an_error():
    with pytest.raises(StagingTypeError) as e:
        run(python_float_into_int, np.int64(1))
    assert "variable 'y'" in str(e.value) and "0.5" in str(e.value)
    assert line_of(python_float_into_int, "if x > 0") in str(e.value)


def test_different_python_values_are_an_error():
    with pytest.raises(StagingTypeError, match="variable 'y' is Python str 'a' in one branch "
                       "and Python str 'b' in the other"):
        run(different_python_values, np.int64(1))


def test_a_path_without_return_is_an_error():
    with pytest.raises(StagingUnboundError, match=r"some paths return None \(`return None`, or "
                                                  "no return on the path") as e:
        run(falls_off_the_end, np.float64(1.0))
    assert line_of(falls_off_the_end, "if x > 0") in str(e.value)


def test_non_scalar_condition_is_an_error():
    with pytest.raises(ValueError, match="ambiguous"):
        run(lambda v: 1 if v else 2, np.zeros(3))


def array_or_number(x, v):
    return v if x > 0 else 0.0


def array_or_number_statement(x, v):
    if x > 0:
        y = v
    else:
        y = 0.0
    return y


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
@pytest.mark.parametrize("fn", [array_or_number, array_or_number_statement])
def test_an_array_on_one_path_and_a_number_on_the_other_is_a_clear_error(target, fn):
    import autostage

    with pytest.raises(StagingTypeError) as e:  # it was an internal AttributeError
        autostage.convert(fn, target=target)(np.float64(1.0), np.ones(3))
    assert "f64[3]" in str(e.value) and "Python float 0.0" in str(e.value)  # its size known
    assert f"{inspect.getsourcefile(fn)}:" in str(e.value)


def number_returned_or_assigned_in_else(x):
    if x > 0:
        return 1
    else:
        y = 2
    return y


def number_assigned_only_in_else(x):
    if x > 0:
        pass
    else:
        y = 2
    return y


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_number_assigned_only_in_a_staged_else(target):
    import autostage

    # both used to fail inside merge.py (AttributeError: 'NoneType' object has no attribute
    # 'dtype'): the unassigned side came first and had no type to take
    fn = autostage.convert(number_returned_or_assigned_in_else, target=target)
    assert fn(np.float64(-1.0)) == 2 and fn(np.float64(1.0)) == 1
    with pytest.raises(StagingUnboundError) as e:
        autostage.convert(number_assigned_only_in_else, target=target)(np.float64(-1.0))
    assert "variable 'y' is assigned only on some paths" in str(e.value)
    assert f"{inspect.getsourcefile(number_assigned_only_in_else)}:" in str(e.value)


def _grow(x):  # (TheAlgorithms arithmetic_analysis/newton_raphson.py, intersection.py)
    for _ in range(100):
        if x > 10:
            return x
        x = x * 2
    raise ArithmeticError(f"no convergence from {x}")


def _first_above(x, t):
    found = False
    for i in range(x.shape[0]):
        if x[i] > t:
            r = x[i]
            found = True
            break
    if not found:
        raise ValueError("none above")
    return r * 2


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_value_assigned_where_the_code_does_not_raise_is_assigned_after_the_raise(target):
    """A loop that returns or breaks, then raises: every path that goes on assigned the value
    (the raising if carries it, runtime/staging/raises.py placeholders); it was refused as
    "assigned only on some paths"."""
    grow = autostage.convert(_grow, target=target)
    assert grow(np.float64(1.5)) == _grow(np.float64(1.5)) == 12.0
    with pytest.raises(ArithmeticError, match="no convergence from"):
        grow(np.float64(-1.0))
    first = autostage.convert(_first_above, target=target)
    assert first(np.arange(5.0), 2.5) == _first_above(np.arange(5.0), 2.5) == 6.0
    with pytest.raises(ValueError, match="none above"):
        first(np.arange(5.0), 9.5)


def _assigned_or_breaks(x):  # the read of j is on the paths that assigned it
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        elif x[i] > 1:
            j = i
        else:
            break
        total += x[j]
    return total


def _read_where_unassigned(x):
    for i in range(x.shape[0]):
        if x[i] > 1:
            j = i
        total = x[j]
    return total


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_value_read_only_where_the_branches_assigned_it(target):
    """A staged if that assigns j or breaks: the read after it runs where break_ is False, which
    the conditions of the enclosing staged ifs show to imply j assigned (``logic.holds``); it
    was refused as "assigned only on some paths". A read on a path that may not have assigned
    it stays that error."""
    fn = autostage.convert(_assigned_or_breaks, target=target)
    for x in ([2.0, 3.0, 0.5, 4.0], [2.0, -1.0], [0.5], [3.0, 2.0]):
        assert fn(np.array(x)) == _assigned_or_breaks(np.array(x))
    with pytest.raises(StagingUnboundError, match="variable 'j' is assigned only on some paths"):
        autostage.convert(_read_where_unassigned, target=target)(np.array([2.0, 3.0]))


def _checked_sizes(data, nvals=None):  # (nolds' dfa)
    if nvals is None:
        nvals = [4, 5]
    if np.max(nvals) >= len(data):
        raise ValueError("nvals too large")
    return data.sum() + np.array(nvals).sum()


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_argument_a_branch_may_rebind_is_not_carried_through_a_raising_if(target):
    """A name assigned on every path (a parameter) is no state of a later raising ``if``: the
    Python list argument was made a staged cond's state and refused as changed in place."""
    f = autostage.convert(_checked_sizes, target=target)
    data = np.arange(150.0)
    assert f(data, nvals=[4, 6]) == _checked_sizes(data, nvals=[4, 6]) == 11185.0
    assert f(data) == _checked_sizes(data)
    with pytest.raises(ValueError, match="nvals too large"):
        f(np.arange(5.0), nvals=[4, 6])


def run_lengths(x):
    values, counts = [], []
    if len(x) == 0:
        return [], []  # an early return; the function goes on past the if otherwise
    cur, cnt = x[0], 1
    for v in x[1:]:
        if v == cur:
            cnt += 1
        else:
            values.append(cur)
            counts.append(cnt)
            cur, cnt = v, 1
    values.append(cur)
    counts.append(cnt)
    return values, counts


def test_an_early_return_whose_later_type_is_unknown_says_to_return_once():
    """The message said the other branch gave None (it gives no value yet)."""
    with pytest.raises(StagingTypeError, match=r"^the function returns Python list \[\] in one "
                                               r"branch of the staged if at .*:\d+ and goes on "
                                               r"past it in the other(.|\n)*Return once"):
        autostage.convert(run_lengths)(np.array([1, 1, 2]))


def first_index_above(x, thr):
    for i, v in enumerate(x):  # noqa: B007 - (i is returned after the loop)
        if v > thr:
            break
    else:
        return None
    return i


def test_return_none_on_some_paths_says_none_is_returned_there():
    """The message said some paths return no value where the function says `return None`."""
    with pytest.raises(StagingUnboundError, match=r"some paths return None \(`return None`, or "
                                                  r"no return on the path\), others a staged "
                                                  r"i64\[\] value"):
        autostage.convert(first_index_above)(np.array([1.0, 3.0]), 2.0)


def running_min(x):
    best = float("inf")  # an int64 cannot hold it
    for v in x:
        if v < best:
            best = v
    return best


def test_a_python_number_a_dtype_cannot_hold_suggests_no_cast_that_changes_it():
    """The message suggested np.int64(inf), which raises OverflowError."""
    with pytest.raises(StagingTypeError, match=r"NumPy would not keep dtype int64 for it: make "
                                               r"both the same type \(a value of dtype int64 on "
                                               r"every path, or floats on every path\)"):
        autostage.convert(running_min)(np.array([3, 2]))


def truth_of_an_array(x):
    if x:
        return 1.0
    return 2.0


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_the_truth_value_of_a_staged_array_is_numpys(target):
    """``if x:`` of a one-element array is its element's truth value, as in NumPy (it was
    refused for every array of rank 1 or more); an empty or longer array raises NumPy's
    ValueError when the test runs."""
    f = autostage.convert(truth_of_an_array, target=target)
    for x in (np.array([0.0]), np.array([3.0]), np.array([[1.0]]), np.zeros((1, 1, 1))):
        assert f(x) == truth_of_an_array(x)
    for x, text in ((np.array([]), "empty array is ambiguous"),
                    (np.array([1.0, 2.0]), "more than one element is ambiguous")):
        with pytest.raises(ValueError, match=text):
            truth_of_an_array(x)
        with pytest.raises(ValueError, match=text):
            f(x)
