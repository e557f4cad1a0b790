"""The NumPy surface (docs/numpy_surface.csv): every case of ``cases_*.py`` on every target.

All interpreter cases and the first two cases of each call on cpu run by default; the other cpu
cases (more dtypes and shapes, each a Numba compilation) are marked slow.
"""

from __future__ import annotations

import pytest
import surface_harness

CPU_DEFAULT = 2


def _params() -> list:
    params = []
    for case in surface_harness.load_cases():
        for target in surface_harness.TARGETS:
            slow = target == "cpu" and case.index >= CPU_DEFAULT
            marks = [pytest.mark.slow] if slow else []
            if case.xfail:
                marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
            params.append(pytest.param(case, target, id=f"{case.id}-{target}", marks=marks))
    return params


@pytest.mark.parametrize("case,target", _params())
def test_surface_call(case, target):
    surface_harness.check(case, target)
