"""Recursion headroom for the tree walks of conversion, bounded by the depth of the code.

The parser, analyses, converters and unparser walk syntax trees recursively, a few Python frames
per level. CPython itself compiles expressions far deeper than Python's default recursion limit
allows such a walk (a sum of 1,000 terms is a tree 1,000 levels deep), so conversion raises the
limit for its own duration, by an amount proportional to the tree's depth (measured without
recursion) and never beyond ``MAX_DEPTH`` levels: deeper code is refused with a clear error.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import threading
from collections.abc import Iterator

MAX_DEPTH = 3000  # syntax-tree levels conversion accepts (CPython's parser allows about 4,000)
FRAMES_PER_LEVEL = 12  # Python frames the deepest walk spends per tree level, with margin

_lock = threading.Lock()


def depth(tree: ast.AST) -> int:
    """The number of levels of ``tree`` (a leaf is 1), measured without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def source_depth(source: str) -> int:
    """The depth of the syntax tree of ``source`` (parsed by CPython's parser, no recursion in
    Python); 0 if it does not parse on its own."""
    try:
        return depth(ast.parse(source))
    except SyntaxError:
        return 0


@contextlib.contextmanager
def headroom(levels: int) -> Iterator[None]:
    """Raises the recursion limit so that a walk ``levels`` deep fits above the current frame;
    the old limit is restored afterwards unless someone else changed it meanwhile."""
    frames = len(_stack_frames()) + levels * FRAMES_PER_LEVEL + 200
    with _lock:
        old = sys.getrecursionlimit()
        new = max(old, frames)
        sys.setrecursionlimit(new)
    try:
        yield
    finally:
        with _lock:
            if sys.getrecursionlimit() == new:
                sys.setrecursionlimit(old)


def _stack_frames() -> list:
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames
