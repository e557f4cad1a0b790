"""Tensor lists, print and assert in staged code (runtime/staging/tensor_lists.py, io.py,
side_effects.py; the ops in runtime/ops/lists.py, io.py): lists appended in staged loops are
stacked at run time; print/assert run at run time, every call, in program order."""

import inspect
import sys

import numpy as np
import pytest
from autostage.runtime import interpreter
from autostage.runtime.staging import PythonSideEffectError
from autostage.runtime.tensor import StagingTypeError
from autostage.runtime.tracing import StagingError
from test_staging_support import ops, run, staged, trace

import autostage


def rnn(xs, decay):
    out = []
    h = 0.0
    for x in xs:
        h = h * decay + x
        out.append(h)
    return np.stack(out)


def grow_and_pop(n):
    ys = []
    i = 0
    while i < n:
        ys.append(i * 2.0)
        i = i + 1
    last = ys.pop()
    return np.stack(ys), last, len(ys)


def appended_in_a_branch(x, v):
    out = [v]
    if x > 0:
        out.append(v * 2)
    return np.stack(out)


def show(x, n):
    print("start", x)
    i = 0
    while i < n:
        print("step", i, x * i, sep=":", end=";")
        i = i + 1
    print(" end", x)
    return x


def python_only_print(x):
    print("hello")
    return x


def checked(x):
    assert x > 0, "x must be positive"
    return x


def checked_with_value(x):
    assert x > 0, x
    return x


@pytest.mark.parametrize("n", [1, 4])
def test_dynamic_rnn_append_and_stack(n):
    xs = np.arange(n, dtype=np.float32)
    module, result = staged(rnn, xs, np.float32(0.5))
    np.testing.assert_array_equal(result, rnn(xs, np.float32(0.5)))
    assert result.dtype == np.float32
    names = ops(module)
    assert {"list_new", "list_append", "list_stack", "while"} <= set(names)


def test_append_pop_and_len():
    stacked, last, length = run(grow_and_pop, np.int64(4))
    expected = grow_and_pop(4)
    np.testing.assert_array_equal(stacked, expected[0])
    assert (last, length) == expected[1:]


def viterbi_path(back, last):
    path = [int(last)]
    for t in range(back.shape[0] - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    path.reverse()
    return np.array(path), len(path), path[0]


@pytest.mark.parametrize("rows", [4, 1])
def test_reverse_of_a_list_appended_in_a_staged_loop(rows):
    # was refused: list.reverse() is called on a tensor list ... where autostage cannot stage it
    back = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])[:rows]
    path, length, first = run(viterbi_path, back, np.int64(1))
    expected = viterbi_path(back, 1)
    np.testing.assert_array_equal(path, expected[0])
    assert path.dtype == expected[0].dtype and (length, first) == expected[1:]


def reversed_under_two_names(xs):
    out = []
    for x in xs:
        out.append(x)
    alias = out
    out.reverse()
    return alias


def test_reverse_of_a_staged_list_held_by_two_names_is_refused():
    with pytest.raises(StagingError, match=r"several names hold it \(`alias`, `out`\)"):
        run(reversed_under_two_names, np.arange(3.0))


def test_pop_from_an_empty_list_raises_at_run_time():
    with pytest.raises(IndexError, match="pop from empty list"):
        run(grow_and_pop, np.int64(0))


@pytest.mark.parametrize("x", [-1.0, 1.0])
def test_list_appended_in_one_branch(x):
    v = np.array([1.0, 2.0])
    np.testing.assert_array_equal(run(appended_in_a_branch, np.float64(x), v),
                                  appended_in_a_branch(x, v))


def test_np_array_of_a_tensor_list_stacks_it():
    def f(n):
        ys = []
        i = 0
        while i < n:
            ys.append(i)
            i = i + 1
        return np.array(ys)

    result = run(f, np.int64(3))
    assert result.dtype == np.int64 and result.tolist() == [0, 1, 2]


def test_print_runs_at_run_time_in_order_every_call(capsys):
    module, _ = trace(show, np.float64(1.5), np.int64(2))
    assert capsys.readouterr().out == ""  # nothing printed while tracing
    expected = "start 1.5\nstep:0:0.0;step:1:1.5; end 1.5\n"
    for _ in range(2):
        interpreter.run(module, [np.float64(1.5), np.int64(2)])
        assert capsys.readouterr().out == expected
    show(np.float64(1.5), 2)
    assert capsys.readouterr().out == expected


def test_print_of_python_values_in_staged_code_runs_at_run_time(capsys):
    module, _ = trace(python_only_print, np.float64(1.5))
    assert capsys.readouterr().out == ""
    interpreter.run(module, [np.float64(1.5)])
    assert capsys.readouterr().out == "hello\n"


def test_assert_passes_and_fails_at_run_time():
    module, result = staged(checked, np.float64(1.0))
    assert result == 1.0
    assert "assert" in ops(module)
    with pytest.raises(AssertionError) as e:
        interpreter.run(module, [np.float64(-1.0)])
    assert e.value.args == ("x must be positive",)


def test_assert_with_a_staged_message_holds_the_value():
    with pytest.raises(AssertionError) as e:
        run(checked_with_value, np.float64(-2.0))
    assert e.value.args == (np.float64(-2.0),)


def failing_assert_with_staged_message(x):
    n = x.shape[0]
    print("before", n)
    assert len([]) > 0, ("n is", n)  # false whatever the data; the message holds a staged n
    return n


def raise_of_a_staged_value(x):
    n = x.shape[0]
    print("before")
    raise ValueError(n)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_error_raised_whatever_the_data_with_staged_values_in_it(target, capsys):
    """Both used to leak symbolic tensors: the assert raised at trace time with their text
    ("('n is', <staged Tensor ...>)") and without the print before it; the ValueError held a
    Tensor, whose str() raises. The assert now fails at run time as Python's; the raise, whose
    arguments exist only at run time, is a clear refusal naming its line."""
    import autostage

    with pytest.raises(AssertionError) as e:
        autostage.convert(target=target)(failing_assert_with_staged_message)(np.ones(4))
    assert str(e.value) == "('n is', 4)"
    assert capsys.readouterr().out == "before 4\n"
    line = inspect.getsourcelines(raise_of_a_staged_value)[1] + 3
    with pytest.raises(StagingTypeError, match=rf"the ValueError raised at \S+:{line} holds "
                                               "a staged value itself"):
        autostage.convert(target=target)(raise_of_a_staged_value)(np.ones(4))


class BadInput(ValueError):
    """An exception whose ``__init__`` builds its message: its ``args`` are not its parameters."""

    def __init__(self, msg, code=1):
        super().__init__(f"[E{code}] {msg}")
        self.code = code


class Located(ValueError):
    def __init__(self, msg, where):
        super().__init__(msg)
        self.where = where


def raise_bad_input(x):
    if x[0] < 0:
        raise BadInput("negative first value", code=3)
    return x * 2


def raise_located(x):
    if x[0] < 0:
        raise Located(f"negative: {x[0]}", where=(0, "x"))
    return x * 2


def raise_located_at_a_staged_index(x):
    if x[0] < 0:
        raise Located("negative", where=x.shape[0])
    return x * 2


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_an_exception_class_with_its_own_init_is_raised_as_traced(target):
    """The staged raise used to call the class again with the traced exception's ``args``:
    ``BadInput("[E3] negative first value")``, whose message became "[E1] [E3] ..." and code 1
    (silently), and ``Located(msg)`` a TypeError for the missing ``where``. It is now the
    exception as its ``__init__`` left it, with the run's message; an attribute holding a staged
    value (known only at run time) is a clear refusal."""
    f = autostage.convert(target=target)(raise_bad_input)
    for _ in range(2):
        with pytest.raises(BadInput) as e:
            f(np.array([-1.0, 2.0]))
        assert (str(e.value), e.value.args, e.value.code) == (
            "[E3] negative first value", ("[E3] negative first value",), 3)
        # the user's line, not "error in the compiled code" (the cpu helper raising it had no
        # frame in the generated file)
        line = inspect.getsourcelines(raise_bad_input)[1] + 2
        assert any(f"test_staging_lists_io.py:{line} (in raise_bad_input)" in note
                   for note in e.value.__notes__), e.value.__notes__
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    g = autostage.convert(target=target)(raise_located)
    for v in (-1.0, -2.5):
        with pytest.raises(Located) as e:
            g(np.array([v, 2.0]))
        assert (str(e.value), e.value.where) == (f"negative: {v}", (0, "x"))
    line = inspect.getsourcelines(raise_located_at_a_staged_index)[1] + 2
    with pytest.raises(StagingTypeError, match=rf"the Located raised at \S+:{line} has an "
                                               r"attribute made from a staged value \('where'\)"):
        autostage.convert(target=target)(raise_located_at_a_staged_index)(np.ones(4))


def raise_from_a_cause(x):
    if x[0] < 0:
        raise ValueError(f"bad {x[0]}") from KeyError("root")
    return x


def raise_from_none(x):
    if x[0] < 0:
        raise ValueError("bad") from None
    return x


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_staged_raise_from_keeps_its_cause(target):
    """``raise E from cause`` used to reach the caller without its ``__cause__`` and ``from
    None`` without ``__suppress_context__`` (so the traceback lost "The above exception was the
    direct cause ..." or showed a context Python hides)."""
    with pytest.raises(ValueError) as e:
        autostage.convert(target=target)(raise_from_a_cause)(np.array([-1.0]))
    assert (str(e.value), repr(e.value.__cause__), e.value.__suppress_context__) == (
        "bad -1.0", "KeyError('root')", True)
    with pytest.raises(ValueError) as e:
        autostage.convert(target=target)(raise_from_none)(np.array([-1.0]))
    assert (str(e.value), e.value.__cause__, e.value.__suppress_context__) == ("bad", None, True)


def exits_on_bad_input(x):
    if x[0] < 0:
        print("bad input")
        sys.exit(2)
    return x * 2


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_sys_exit_in_a_staged_branch_exits_only_when_it_runs(target, capsys):
    """``sys.exit()`` raises SystemExit, which is no Exception: tracing the branch let it out,
    so the first call ended the process whatever the data, without the print before it. It is
    a staged raise now, like any exception of a branch."""
    f = autostage.convert(target=target)(exits_on_bad_input)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(SystemExit) as e:
        f(np.array([-1.0, 2.0]))
    assert e.value.code == 2
    assert capsys.readouterr().out == "bad input\n"


def test_python_container_changed_in_a_staged_branch_is_an_error():
    seen = []

    def f(x):
        if x > 0:
            seen.extend([1])
        return x

    with pytest.raises(PythonSideEffectError) as e:
        run(f, np.float64(1.0))
    lines, start = inspect.getsourcelines(f)
    assert "the Python list 'seen'" in str(e.value)
    assert f":{start + 1}" in str(e.value)


def test_python_container_changed_in_a_staged_loop_is_an_error():
    log = {}

    def f(n):
        i = 0
        while i < n:
            log[1] = 2
            i = i + 1
        return i

    with pytest.raises(PythonSideEffectError, match="the Python dict 'log'"):
        run(f, np.int64(3))


def print_containers(x):
    print(x.shape, (x[0], 2), [x.sum()])


def test_print_of_containers_with_staged_items_matches_python(capsys):
    import autostage

    x = np.arange(3.0)
    print_containers(x)
    expected = capsys.readouterr().out
    autostage.convert(print_containers, target="interpreter")(x)
    assert capsys.readouterr().out == expected == "(3,) (np.float64(0.0), 2) [np.float64(3.0)]\n"


# --- lists popped in expressions, slices and reversed(), on both targets ----------------------

TARGETS = ["interpreter", "cpu"]


def pop_and_slices(n, k):
    items = [1.0, 2.0, 3.0, 4.0]
    acc = []
    for _i in range(n):
        acc.append(items.pop() + len(items))
    total = 0.0
    for v in reversed(acc[k:]):
        total = total * 10 + v
    return total, acc[-k:], acc[::-2], acc[k:-1:1], items


@pytest.mark.parametrize("target", TARGETS)
def test_pops_slices_and_reversed_of_tensor_lists(target):
    import autostage

    fn = autostage.convert(pop_and_slices, target=target)
    for n, k in ((0, 0), (1, 1), (3, -2), (4, 1), (4, 7), (2, -9)):
        got, expected = fn(np.int64(n), np.int64(k)), pop_and_slices(n, k)
        assert got[0] == expected[0]
        assert [list(map(float, g)) for g in got[1:]] == list(expected[1:])


def extend_a_tensor_list(n):
    out = []
    for i in range(n):
        out.append(i * 1.0)
        out.extend([2.0])
    return out


def slice_with_a_staged_step(n):
    out = []
    for i in range(n):
        out.append(i * 1.0)
    return out[::n]


def length_of_reversed(n):
    out = []
    for i in range(n):
        out.append(i * 1.0)
    return len(reversed(out))


@pytest.mark.parametrize("target", TARGETS)
def test_list_methods_autostage_cannot_stage_are_clear_errors(target):
    import autostage

    with pytest.raises(StagingTypeError) as e:
        autostage.convert(extend_a_tensor_list, target=target)(np.int64(2))
    assert "list.extend() is called on a tensor list at" in str(e.value)
    assert f"{inspect.getsourcefile(extend_a_tensor_list)}:" in str(e.value)
    with pytest.raises(StagingTypeError, match="sliced with a staged step"):
        autostage.convert(slice_with_a_staged_step, target=target)(np.int64(2))
    with pytest.raises(TypeError, match="has no len()"):  # as Python's reverse iterator
        autostage.convert(length_of_reversed, target=target)(np.int64(2))


def prints_history(x):
    history = []
    for v in x:
        history.append(v * 2)
    print(history)
    return len(history)


def test_printing_a_staged_list_is_a_clear_error_suggesting_what_prints_the_same():
    """The message suggested print(np.stack(lst)), which prints an array, not Python's list."""
    with pytest.raises(StagingTypeError, match=r"printing a list built in staged code at .*:"
                                               r"\d+ is not supported"):
        autostage.convert(prints_history)(np.ones(2))


def monotonic_stack(x):
    stack = []
    for v in x:
        while stack and stack[-1] < v:
            stack.pop()
        stack.append(v)
    return stack


def merge_peaks(x, min_dist):
    peaks = []
    last = -min_dist - 1
    for i in range(1, len(x) - 1):
        if x[i] > x[i - 1] and x[i] >= x[i + 1]:
            if i - last >= min_dist:
                peaks.append(i)
                last = i
            elif x[i] > x[last]:
                peaks[-1] = i
                last = i
    return peaks


def assign_into_an_empty_list(x):
    out = []
    if x[0] > 0:
        out[0] = 1.0
    return out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_guarded_reads_and_writes_of_a_list_empty_when_first_traced(target):
    # `stack and stack[-1]` before the first append, and `peaks[-1] = i` on a path that runs
    # only after one, were refused ("a list that is empty at this point") until the
    # twenty-ninth session
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    assert autostage.convert(monotonic_stack, target=target)(x) == monotonic_stack(x)
    peaks = autostage.convert(merge_peaks, target=target)
    for y, d in ((np.array([0, 3, 1, 4, 1, 5, 0, 2, 0]), 3),
                 (np.array([0, 3, 1, 4, 1, 5, 0, 2, 0, 7, 1, 9, 1]), 2), (np.zeros(5), 1)):
        assert peaks(y, d) == merge_peaks(y, d)
    empty = autostage.convert(assign_into_an_empty_list, target=target)
    assert empty(np.array([-1.0])) == []
    with pytest.raises(IndexError, match="list assignment index out of range"):
        empty(np.array([1.0]))  # where Python raises it


def pieces_of(x, n):
    out = []
    for i in range(n):
        out.append(x[i * 2:(i + 1) * 2])
    return out


def first_piece_of(x, n):
    return pieces_of(x, n)[0]


def write_through_a_piece(x, n):
    out = []
    for i in range(n):
        out.append(x[i * 2:(i + 1) * 2])
    piece = out[0]
    piece[0] = -1.0
    return x.sum()


def copied_pieces_of(x, n):
    out = []
    for i in range(n):
        out.append(x[i * 2:(i + 1) * 2].copy())
    return np.stack(out).sum(axis=1), out


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_a_staged_list_of_views_of_an_argument_is_refused_where_python_shares_them(target):
    # (a list of slices of x built in a staged loop came back as copies: a write into a piece
    # left x unchanged, where Python changes it)
    x = np.arange(10.0)
    for fn, text in ((pieces_of, "a list pieces_of returns holds the argument `x`"),
                     (first_piece_of, "first_piece_of returns the argument `x` or a view of it"),
                     (write_through_a_piece, "this write at .* changes the argument `x`")):
        with pytest.raises(StagingError, match=text):
            autostage.convert(fn, target=target)(x, 5)
    got = autostage.convert(pieces_of, target=target)(x, 3)  # unrolled: a Python list of views
    assert all(np.shares_memory(p, x) for p in got)
    sums, copies = autostage.convert(copied_pieces_of, target=target)(x, 5)
    np.testing.assert_array_equal(sums, copied_pieces_of(x, 5)[0], strict=True)
    assert not any(np.shares_memory(c, x) for c in copies)


def print_braces(x):
    print("{0}", "{}", {1: 2}, x[0], "}{")
    assert x[0] > 0, "{0} must be positive"
    return x * 2


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_printed_text_with_braces_on_every_target(target, capsys):
    # (the cpu target formatted its print callback's source with str.format: literal braces in
    # the printed text raised IndexError "Replacement index 0 out of range")
    fn = autostage.convert(print_braces, target=target)
    fn(np.array([1.0]))
    assert capsys.readouterr().out == "{0} {} {1: 2} 1.0 }{\n"
    with pytest.raises(AssertionError) as e:
        fn(np.array([-1.0]))
    assert e.value.args == ("{0} must be positive",)
