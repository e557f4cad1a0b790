"""Python's cyclic garbage collector held back while autostage traces and compiles.

A first call allocates some 10^5 container objects that live until its compile ends (the
trace, Numba's typed IR, llvmlite's instructions). At Python's default thresholds (700, 10, 10)
they set off hundreds of young collections and a few full ones, and a full collection walks
every object of the process (Numba's registries, NumPy, the user's data): 0.15-0.35 s of the
1.5-4 s that a realistic program's first call compiled on a 2-core AMD EPYC (gc.callbacks
timings, benchmarks/compile_time.py's GRU encoder with attention, L-BFGS, k-means).

While any compile runs, the youngest generation collects every ``YOUNG_THRESHOLD`` allocations
instead of 700 (its objects are scanned once, not re-scanned as they age); the thresholds that
were set come back when the last compile ends, unless something else changed them meanwhile.
Reference counting frees everything else as usual, and ``gc.disable()`` by the user is kept.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 20_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None  # the thresholds to restore, None if not ours to restore


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Raises the young generation's threshold for the duration (nested and threaded calls
    share one raise)."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            before = gc.get_threshold()
            _saved = None
            if 0 < before[0] < YOUNG_THRESHOLD:  # (0: collection off; above: left alone)
                _saved = before
                gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                if gc.get_threshold() == (YOUNG_THRESHOLD, *_saved[1:]):
                    gc.set_threshold(*_saved)
                _saved = None
