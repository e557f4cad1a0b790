"""Test-suite settings: the IR verifier runs after every pass (AUTOSTAGE_VERIFY); hypothesis
does not judge speed (no deadline, no too-slow health check), since on a loaded 2-core CI
machine that measures the machine, not the code."""

import os

from hypothesis import HealthCheck, settings

os.environ.setdefault("AUTOSTAGE_VERIFY", "1")

settings.register_profile("autostage", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("autostage")
