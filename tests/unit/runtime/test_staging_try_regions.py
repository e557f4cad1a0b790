"""try/except, try/finally and with around staged code (runtime/staging/try_regions.py with the
operators' try_region/with_region): a handler that would miss an exception raised by staged code at
run time is a StagingTryError naming the try line, the op line and the exception; handlers of
trace-time exceptions only, and context managers that never swallow, stay allowed."""

import contextlib
import inspect

import numpy as np
import pytest
from autostage.runtime.staging.try_regions import StagingTryError

import autostage

TARGETS = ["interpreter", "cpu"]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{start + offset}"


def index_or_default(x, i):
    try:
        return x[i]
    except IndexError:
        return -1.0


def lookup_or_default(x, i):
    try:
        v = x[i]
    except LookupError:  # IndexError is a LookupError
        v = x[0]
    return v


def suppressed(x, i):
    r = -1.0
    with contextlib.suppress(IndexError):
        r = x[i]
    return r


class Recorder:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True  # swallows everything


def unknown_manager(x, i):
    r = -1.0
    with Recorder():
        r = x[i]
    return r


def raise_in_loop(x, n):
    try:
        for k in range(n):
            if x[0] > k:
                raise ValueError("too big")
    except ValueError:
        return -1.0
    return 0.0


def finally_prints(x, i):
    try:
        y = x[i]
    finally:
        print("cleanup")
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, text, caught, raiser", [
    (index_or_default, "try:", "catches IndexError", "x[i]"),
    (lookup_or_default, "try:", "catches LookupError", "x[i]"),
    (suppressed, "with contextlib", "may swallow IndexError", "x[i]"),
    (unknown_manager, "with Recorder", "may swallow any exception", "x[i]"),
    (raise_in_loop, "try:", "catches ValueError", "raise ValueError"),
])
def test_a_handler_of_run_time_exceptions_is_refused(target, fn, text, caught, raiser):
    with pytest.raises(StagingTryError) as e:
        autostage.convert(fn, target=target)(np.zeros(3), np.int64(7))
    message = str(e.value)
    assert f"statement at {line_of(fn, text)} {caught}" in message
    assert f"op at {line_of(fn, raiser)}" in message
    assert "staged code has no exception handling" in message
    assert isinstance(e.value, TypeError)


@pytest.mark.parametrize("target", TARGETS)
def test_a_finally_with_a_staged_side_effect_after_a_raising_body_is_refused(target, capsys):
    with pytest.raises(StagingTryError) as e:
        autostage.convert(finally_prints, target=target)(np.ones(3), np.int64(1))
    message = str(e.value)
    assert f"finally clause at {line_of(finally_prints, 'print(')}" in message
    assert f"'print' op at {line_of(finally_prints, 'print(')}" in message
    assert "IndexError" in message


def trace_time_handler(x, i, options):
    try:
        scale = options["scale"]
    except KeyError:
        scale = 2.0
    return x[i] * scale


def trace_time_raise_handled(x, i, lst):
    try:
        y = lst[7]
    except IndexError:
        y = x[i]
    return y


def finally_without_effects(x, i):
    try:
        y = x[i]
    finally:
        z = 1
    return y + z


def errstate(x, i):
    with np.errstate(divide="ignore"):
        y = x[i] * 2.0
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", [
    (trace_time_handler, (np.ones(3), np.int64(1), {})),
    (trace_time_handler, (np.ones(3), np.int64(1), {"scale": 3.0})),
    (trace_time_raise_handled, (np.arange(3.0), np.int64(2), [])),
    (finally_without_effects, (np.arange(3.0), np.int64(2))),
    (errstate, (np.arange(3.0), np.int64(2))),
])
def test_handlers_staged_code_cannot_reach_keep_python_semantics(target, fn, args):
    assert autostage.convert(fn, target=target)(*args) == fn(*args)


@pytest.mark.parametrize("target", TARGETS)
def test_an_exception_staged_code_raises_outside_any_handler_still_raises(target):
    # the handler does not catch IndexError: allowed, and the run-time error is Python's
    def f(x, i, options):
        try:
            v = x[i]
        except KeyError:
            v = 0.0
        return v

    with pytest.raises(IndexError):
        autostage.convert(f, target=target)(np.zeros(3), np.int64(7), {})


# --- autostage's own errors are never caught by the user's handlers ----------------------------
# A staging error (here a StagingTypeError, a TypeError: a loop variable that changes dtype) is
# about the program, not its data: Python would have run the try body, so a handler that catches
# it would run a path Python never takes.


def _retyped_in_loop(x):
    s = 0
    for i in range(x.shape[0]):
        s = x[i] > 0
    return s


def caught_by_type_error(x):
    try:
        s = 0
        for i in range(x.shape[0]):
            s = x[i] > 0
        return s
    except TypeError:
        return "handler"


def caught_by_exception(x):
    try:
        s = 0
        for i in range(x.shape[0]):
            s = x[i] > 0
        return s
    except (ValueError, Exception) as e:
        return str(e)


def caught_by_bare_except(x):
    try:
        s = 0
        for i in range(x.shape[0]):
            s = x[i] > 0
        return s
    except:  # noqa: E722
        return "handler"


def caught_in_a_call(x):
    try:
        return _retyped_in_loop(x)
    except TypeError:
        return "handler"


def suppressed_type_error(x):
    with contextlib.suppress(TypeError):
        s = 0
        for i in range(x.shape[0]):
            s = x[i] > 0
        return s
    return "suppressed"


def swallowed_by_a_manager(x):
    with Recorder():
        s = 0
        for i in range(x.shape[0]):
            s = x[i] > 0
        return s
    return "swallowed"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [caught_by_type_error, caught_by_exception, caught_by_bare_except,
                                caught_in_a_call, suppressed_type_error, swallowed_by_a_manager])
def test_staging_errors_are_not_caught_by_user_handlers(fn, target):
    from autostage.runtime.tensor import StagingTypeError

    with pytest.raises(StagingTypeError, match="loop variable 's'") as info:
        autostage.convert(target=target)(fn)(np.array([1.0, -1.0]))
    source = _retyped_in_loop if fn is caught_in_a_call else fn
    assert line_of(source, "for i in range") in str(info.value)


def test_a_manager_still_exits_when_a_staging_error_passes_through():
    log = []

    class Logged:
        def __enter__(self):
            return self

        def __exit__(self, kind, exc, tb):
            log.append(kind.__name__)
            return True

    def fn(x):
        with Logged():
            s = 0
            for i in range(x.shape[0]):
                s = x[i] > 0
            return s

    from autostage.runtime.tensor import StagingTypeError
    with pytest.raises(StagingTypeError):
        autostage.convert(target="interpreter")(fn)(np.array([1.0]))
    assert log == ["StagingTypeError"]


# --- what each op may raise is its OpDef.raises (runtime/effects.py raises) --------------------


def zeros_or_empty(x, n):
    try:
        z = np.zeros(n)  # a staged negative size raises ValueError
    except ValueError:
        z = np.zeros(0)
    return z


def arange_or_empty(x, step):
    try:
        r = np.arange(0, 5, step)  # a staged zero step raises ZeroDivisionError
    except ZeroDivisionError:
        r = x
    return r


def reversed_or_same(x, step):
    try:
        r = x[::step]  # a staged zero step raises ValueError
    except ValueError:
        r = x
    return r


def drawn_in_finally(x, i):
    try:
        y = x[i]
    finally:
        np.random.rand()  # advances NumPy's global random state
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, text, caught, raiser", [
    (zeros_or_empty, "try:", "catches ValueError", "np.zeros(n)"),
    (arange_or_empty, "try:", "catches ZeroDivisionError", "np.arange"),
    (reversed_or_same, "try:", "catches ValueError", "x[::step]"),
])
def test_ops_declare_what_they_raise(target, fn, text, caught, raiser):
    with pytest.raises(StagingTryError) as e:
        autostage.convert(fn, target=target)(np.zeros(3), np.int64(-1))
    assert f"statement at {line_of(fn, text)} {caught}" in str(e.value)
    assert f"op at {line_of(fn, raiser)}" in str(e.value)


@pytest.mark.parametrize("target", TARGETS)
def test_a_random_draw_in_a_finally_is_a_side_effect(target):
    with pytest.raises(StagingTryError, match="stages a 'random_draw' op"):
        autostage.convert(drawn_in_finally, target=target)(np.zeros(3), np.int64(1))


def first_or_default(x):
    try:
        v = x[0]  # x has 3 elements in every trace of this test: it cannot raise
    except IndexError:
        v = -1.0
    return v


@pytest.mark.parametrize("target", TARGETS)
def test_an_index_the_static_sizes_show_in_range_raises_nothing(target):
    spec = autostage.TensorSpec([3], np.float64)
    f = autostage.convert(first_or_default, target=target, input_signature=[spec])
    assert f(np.arange(1.0, 4.0)) == first_or_default(np.arange(1.0, 4.0))


def _after_an_early_return(x, z=0.0):  # (filterpy's update: `if H is None:` first)
    if z is None:
        return x
    y = x + 1
    try:
        k = np.linalg.inv(y)
    except Exception:
        k = y
    return k


@pytest.mark.parametrize("target", TARGETS)
def test_the_refusal_names_the_try_line_after_an_early_return(target):
    """The try's statements moved into the early return's generated branch: it named the
    branch's first line."""
    fn = _after_an_early_return
    with pytest.raises(StagingTryError) as e:
        autostage.convert(fn, target=target)(np.eye(2))
    assert str(e.value).startswith(f"the try statement at {line_of(fn, '    try:')} catches "
                                   f"Exception, which the 'numpy_linalg' op at "
                                   f"{line_of(fn, 'np.linalg.inv')} may raise")


class _Timed:
    def __enter__(self):
        self.entered = True
        return self

    def __exit__(self, *exc):
        self.exited = True  # (returns None: lets every exception through)


class _Swallowing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


def _index_in_timed_block(x, i):
    with _Timed():
        y = x[i]
    return y * 2


def _index_in_swallowing_block(x, i):
    y = 0.0
    with _Swallowing():
        y = x[i]
    return y


@pytest.mark.parametrize("target", TARGETS)
def test_a_context_manager_whose_exit_returns_none_lets_run_time_errors_through(target):
    """An ``__exit__`` that returns None swallows nothing: a run-time IndexError in its block
    propagates, as in Python (it was refused as a manager that "may swallow any exception");
    one that may return True is still refused."""
    f = autostage.convert(_index_in_timed_block, target=target)
    assert f(np.array([1.0, 2.0]), np.int64(1)) == 4.0
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        f(np.array([1.0, 2.0]), np.int64(5))
    with pytest.raises(StagingTryError, match="may swallow any exception"):
        autostage.convert(_index_in_swallowing_block, target=target)(np.ones(2), np.int64(1))
