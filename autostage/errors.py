"""Errors of the compiler, and exceptions from converted code mapped back to the user's source.

Converted functions live in generated files; when an exception leaves one, ``add_user_frames``
adds a note listing the user's own file, line and source for every generated frame, so the
traceback shows the line the user wrote, not only the generated code.
"""

from __future__ import annotations

import os
import types

from autostage import tracebacks
from autostage.pyct.errors import ConversionError
from autostage.pyct.origin_info import LineLocation, OriginInfo
from autostage.runtime import ir, tracing

__all__ = ["ConversionError", "add_user_frames", "register_source_map", "report",
           "user_frames"]

_NOTE_HEADER = "autostage: in the user code that was converted (most recent call last):"

# Generated file -> {LineLocation: OriginInfo}, filled by the conversion loader.
_source_maps: dict[str, dict[LineLocation, OriginInfo]] = {}


def register_source_map(filename: str, source_map: dict[LineLocation, OriginInfo]) -> None:
    _source_maps[filename] = source_map


def is_generated(code: types.CodeType) -> bool:
    """Whether a code object belongs to converted code."""
    return code.co_filename in _source_maps


def is_generated_file(filename: str) -> bool:
    """Whether ``filename`` holds converted code loaded or registered in this process."""
    return filename in _source_maps


def user_frames(tb: types.TracebackType | None) -> list[OriginInfo]:
    """The user-code lines a traceback went through, outermost first, one per user call.

    The generated functions of one converted call (loop bodies, branches) are one user frame:
    only the innermost line is kept, as Python's own traceback would show it.
    """
    frames: list[OriginInfo] = []
    current_file = None
    while tb is not None:
        code = tb.tb_frame.f_code
        source_map = _source_maps.get(code.co_filename)
        origin = None if source_map is None else source_map.get(
            LineLocation(code.co_filename, tb.tb_lineno))
        if origin is not None:
            same_call = code.co_filename == current_file and code.co_name != origin.function_name
            if same_call:
                frames[-1] = origin
            else:
                frames.append(origin)
            current_file = code.co_filename
        tb = tb.tb_next
    return frames


def add_user_frames(exc: BaseException) -> None:
    """Adds (or refreshes) a note on ``exc`` listing the user lines its traceback went through.

    Never raises: reporting must not replace the user's exception. Near the recursion limit (the
    usual place of a RecursionError) building the note may itself fail; ``exc`` then goes on
    without it. A line repeated by recursion is listed three times, then counted, as Python's
    own traceback does.
    """
    try:
        frames = user_frames(exc.__traceback__)
        if frames:
            _replace_note(exc, "\n".join([_NOTE_HEADER, *_note_lines(frames)]))
    except (RecursionError, MemoryError):
        pass


def report(exc: BaseException) -> None:
    """Prepares ``exc`` to leave autostage: the note of user lines, then the traceback filtered
    to the user's frames (``tracebacks``; ``AUTOSTAGE_TRACEBACK=full`` keeps all). Never
    raises."""
    add_user_frames(exc)
    try:
        tracebacks.filter_traceback(exc, _source_maps)
    except (RecursionError, MemoryError):
        pass


_REPEATS_SHOWN = 3  # as in Python's traceback


def _note_lines(frames: list[OriginInfo]) -> list[str]:
    lines: list[str] = []
    i = 0
    while i < len(frames):
        origin = frames[i]
        where = (origin.loc.filename, origin.loc.lineno, origin.function_name)
        run = 1
        while i + run < len(frames) and (
                frames[i + run].loc.filename, frames[i + run].loc.lineno,
                frames[i + run].function_name) == where:
            run += 1
        entry = [f'  File "{origin.loc.filename}", line {origin.loc.lineno}, in '
                 f"{origin.function_name}"]
        if origin.source_code_line:
            entry.append(f"    {origin.source_code_line.strip()}")
        lines += entry * min(run, _REPEATS_SHOWN)
        if run > _REPEATS_SHOWN:
            lines.append(f"  [Previous line repeated {run - _REPEATS_SHOWN} more times]")
        i += run
    return lines


def _replace_note(exc: BaseException, note: str) -> None:
    notes = getattr(exc, "__notes__", None)
    if notes:
        notes[:] = [n for n in notes if not n.startswith(_NOTE_HEADER)]
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: no notes; keep the mapping readable on the exception
        exc.__notes__ = [*(notes or []), note]


def _staging_location(frame: types.FrameType) -> ir.Location | None:
    """The user's line for a frame of converted code, so staged ops point at user code."""
    code = frame.f_code
    source_map = _source_maps.get(code.co_filename)
    if source_map is None:
        return None
    origin = source_map.get(LineLocation(code.co_filename, frame.f_lineno))
    if origin is None:
        return None
    return ir.Location(origin.loc.filename, origin.loc.lineno, origin.function_name)


tracing.location_resolvers.append(_staging_location)
tracing.internal_dirs.append(os.path.dirname(os.path.abspath(__file__)))
tracing.internal_frame_tests.append(lambda frame: is_generated(frame.f_code))
