"""The differential tests compare outcomes with the reference suite's harness
(``tests/reference/harness.py``): make it importable from here."""

import pathlib
import sys

_REFERENCE = str(pathlib.Path(__file__).resolve().parent.parent / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)
