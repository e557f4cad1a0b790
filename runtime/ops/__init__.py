"""The op kinds of the IR, one module per family; importing this package registers them all.

Every op is defined here and only here: its type rule, NumPy reference, effects, verifier rule,
printing hints and fusibility live in its ``OpDef`` (``runtime/op_registry.py``); backends add
their lowerings to it. Every module of the package is imported, found by listing it (as the CPU
backend finds its ``lower_*`` modules), so adding an op is adding its module and its lowering
(README, "How to add an op"); a module imports the op modules it builds on itself.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
