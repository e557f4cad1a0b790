"""The op kinds of the IR, one module per family; importing this package registers them all."""

from autostage.runtime.ops import constant  # noqa: F401
