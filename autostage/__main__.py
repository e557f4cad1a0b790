"""``python -m autostage``: the same command as ``autostage``."""

import sys

from autostage.cli import main

sys.exit(main())
