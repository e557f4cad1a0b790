"""autostage: run imperative Python + NumPy code with data-dependent control flow as compiled,
typed programs.

The compiler (``autostage.pyct``, ``autostage.converters``) rewrites user functions; the runtime
(``autostage.runtime``) stages and runs them. See DESIGN.md for the layers.
"""

__version__ = "0.1.0"
