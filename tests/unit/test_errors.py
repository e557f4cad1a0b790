"""Exceptions from converted code point at the user's own lines; conversion errors too."""

import traceback

import pytest

import autostage
from autostage import errors


def divide_all(xs, d):
    out = []
    for x in xs:
        if x > 0:
            out.append(x / d)  # the failing line
    return out


def outer(xs):
    return divide_all(xs, 0) + [1]


def _line_of(fn, text):
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_traceback_shows_the_user_line():
    converted = autostage.to_graph(outer)
    with pytest.raises(ZeroDivisionError) as info:
        converted([1, 2])
    text = "".join(traceback.format_exception(info.value))
    assert "autostage: in the user code that was converted" in text
    assert f'File "{__file__}", line {_line_of(divide_all, "the failing line")}, in divide_all' \
        in text
    assert "out.append(x / d)  # the failing line" in text
    assert f'File "{__file__}", line {_line_of(outer, "divide_all(xs, 0)")}, in outer' in text
    # outermost first, like a traceback
    assert text.index("in outer\n") < text.index("in divide_all\n")


def test_note_is_refreshed_not_duplicated():
    converted = autostage.to_graph(outer)
    with pytest.raises(ZeroDivisionError) as info:
        converted([1])
    errors.add_user_frames(info.value)
    notes = [n for n in info.value.__notes__ if n.startswith("autostage:")]
    assert len(notes) == 1


def test_exception_type_and_message_are_unchanged():
    converted = autostage.to_graph(divide_all)
    with pytest.raises(ZeroDivisionError) as info:
        converted([3], 0)
    assert str(info.value) == "division by zero"
    # One user frame per call, at the failing line (not the loop and branch lines around it).
    assert info.value.__notes__[-1].count("in divide_all") == 1


def test_conversion_error_names_file_line_and_source():
    from autostage.directives import set_loop_options

    def misuse(n):
        set_loop_options(maximum_iterations=3)
        return n

    with pytest.raises(autostage.ConversionError) as info:
        autostage.to_graph(misuse)
    assert info.value.filename == __file__
    assert info.value.lineno == _line_of(misuse, "set_loop_options(maximum")
    assert "set_loop_options(maximum_iterations=3)" in str(info.value)


def countdown(n):
    if n == 0:
        raise ValueError("bottom")
    return countdown(n - 1) + 1


def test_note_counts_lines_repeated_by_recursion():
    with pytest.raises(ValueError, match="bottom") as info:
        autostage.to_graph(countdown)(50)
    note = info.value.__notes__[-1]
    recursive = f'File "{__file__}", line {_line_of(countdown, "countdown(n - 1) + 1")}'
    assert note.count(recursive) == 3
    assert "  [Previous line repeated 47 more times]\n" in note
    assert note.endswith('raise ValueError("bottom")')
    assert len(note.splitlines()) == 1 + 3 * 2 + 1 + 2


def _at_depth(depth, fn):
    return fn() if depth == 0 else _at_depth(depth - 1, fn)


def _stack_depth():
    import sys

    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_reporting_never_replaces_the_exception_near_the_recursion_limit():
    """Whatever room the stack has left, the user's exception (or a RecursionError from the call
    itself) leaves the converted function; never one raised while building the note."""
    import sys

    converted = autostage.to_graph(countdown)
    room = sys.getrecursionlimit() - _stack_depth()
    seen = set()
    for spare in range(1, 25):
        try:
            _at_depth(room - spare, lambda: converted(2))
        except (ValueError, RecursionError) as e:
            last = traceback.extract_tb(e.__traceback__)[-1]
            assert last.filename != errors.__file__, (spare, e)
            assert not isinstance(e.__context__, ValueError), (spare, e)
            seen.add(type(e))
    assert seen == {ValueError, RecursionError}


def test_the_same_function_text_in_two_files_keeps_each_files_lines(tmp_path):
    """Converted code is loaded from a file named by its text's hash: two files defining the
    same function shared one generated file, and the errors of the one converted first named
    the other's file and line."""
    import importlib.util

    source = "def first_positive(xs):\n    for x in xs:\n        if x > 0:\n" \
             "            return 1 / (x - x)\n    return 0\n"
    converted = []
    for name in ("twin_one", "twin_two"):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        converted.append((path, autostage.to_graph(module.first_positive)))
    for path, fn in converted:
        with pytest.raises(ZeroDivisionError) as info:
            fn([1.0])
        frames = [(f.filename, f.lineno) for f in traceback.extract_tb(info.tb)]
        assert (str(path), 4) in frames, frames
