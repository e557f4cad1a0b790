"""Test-suite settings: the IR verifier runs after every pass (AUTOSTAGE_VERIFY)."""

import os

os.environ.setdefault("AUTOSTAGE_VERIFY", "1")
