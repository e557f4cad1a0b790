"""autostage: run imperative Python + NumPy code with data-dependent control flow as compiled,
typed programs.

The compiler (``autostage.pyct``, ``autostage.converters``) rewrites user functions; the runtime
(``autostage.runtime``) stages and runs them. See DESIGN.md for the layers. The public API is
imported on first use, so that importing ``autostage.pyct`` stays light.
"""

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "convert": "autostage.api",
    "to_graph": "autostage.api",
    "to_code": "autostage.api",
    "do_not_convert": "autostage.api",
    "ConversionError": "autostage.errors",
    "StagingError": "autostage.runtime.tracing",
    "StagingTypeError": "autostage.runtime.tensor",
    "AutostageWarning": "autostage.calls",
    "set_loop_options": "autostage.directives",
    "TensorSpec": "autostage.runtime.tensor_spec",
    "Variable": "autostage.runtime.state",
    "Module": "autostage.runtime.modules",
    "Checkpoint": "autostage.runtime.checkpoints",
    "CheckpointError": "autostage.runtime.checkpoints",
    "StagedFunction": "autostage.runtime.function",
    "RetracingWarning": "autostage.runtime.function",
    "grad": "autostage.gradients",
    "value_and_grad": "autostage.gradients",
    "checkpoint": "autostage.gradients",
    "GradientTape": "autostage.runtime.autodiff.tape",
    "stop_gradient": "autostage.runtime.autodiff.tape",
    "custom_gradient": "autostage.gradients",
    "py_function": "autostage.runtime.staging.py_function",
    "save": "autostage.runtime.export",
    "load": "autostage.runtime.export",
    "ExportError": "autostage.runtime.export",
    "precompile": "autostage.precompiling",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'autostage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_PUBLIC))
