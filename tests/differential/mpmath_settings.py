"""A pytest plugin for mpmath's suites: each test starts from mpmath's default settings.

mpmath's source repository has a ``conftest.py`` that resets ``mp.dps``/``mp.pretty`` and
``iv.dps``/``iv.pretty`` before every test; the wheel does not ship it. Without it, settings
leak from test to test (``test_hp`` leaves ``mp.prec`` at 13291, ``test_basic_ops`` leaves
rounding upward), 50 tests fail even plain (and drop out of the comparison), and
``test_primezeta`` runs for minutes. This is that fixture, plus the rounding mode.
"""

import pytest


@pytest.fixture(autouse=True)
def mpmath_defaults():
    from mpmath import iv, mp

    mp.dps = 15
    mp.pretty = False
    mp.rounding = "n"
    iv.dps = 15
    iv.pretty = False
