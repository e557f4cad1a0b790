"""Makes the reference harness (``tests/reference/harness.py``) importable from here."""

import pathlib
import sys

_REFERENCE = str(pathlib.Path(__file__).resolve().parent.parent)
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)
