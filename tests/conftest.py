"""Test-suite settings: the IR verifier runs after every pass (AUTOSTAGE_VERIFY), no tiered start
(AUTOSTAGE_TIERED=0: every call runs compiled code, as the tests mean to check); hypothesis
does not judge speed (no deadline, no too-slow health check), since on a loaded 2-core CI
machine that measures the machine, not the code.

The heap is frozen before each test (``gc.freeze``): every trace snapshots the live random-state
objects through ``gc.get_objects()`` (runtime/staging/random_freeze.py), whose cost grows with
the heap, and the suite's caches keep ~1M objects alive by its end: without the freeze a trace
late in the run cost ~0.2 s more than early on (CI ran twice as long). Frozen objects are not
scanned (as for a user who calls ``gc.freeze()``), so a test drawing from a generator made
before it started (at import time) must be marked ``sees_old_objects``. Every
``_UNFREEZE_EVERY`` tests the heap is unfrozen and collected, so that cyclic garbage is freed.
"""

import gc
import os

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("AUTOSTAGE_VERIFY", "1")
# Compiled code is what the suite tests: a tiered start would run a trace's first calls as Python
# (tests/unit/runtime/test_tiered_start.py turns it on where it is the subject).
os.environ.setdefault("AUTOSTAGE_TIERED", "0")

settings.register_profile("autostage", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("autostage")

_UNFREEZE_EVERY = 500
_count = [0]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sees_old_objects: the test needs objects made before it to stay visible to "
        "gc.get_objects() (not frozen)")


@pytest.fixture(autouse=True)
def _frozen_heap(request):
    _count[0] += 1
    if _count[0] % _UNFREEZE_EVERY == 0:
        gc.unfreeze()
        gc.collect()
    if request.node.get_closest_marker("sees_old_objects"):
        gc.unfreeze()
    else:
        gc.freeze()
    yield
