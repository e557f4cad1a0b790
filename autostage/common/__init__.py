"""The base layer: small standard-library utilities that both ``pyct`` and the runtime use.

``pyct`` may import nothing else of autostage and the runtime nothing of the compiler, so what
both need lives here, importing only the standard library (``tests/unit/test_layering.py``).
"""
