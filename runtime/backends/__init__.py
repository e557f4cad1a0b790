"""Backends that run a staged IR module: the NumPy interpreter lives in runtime/interpreter.py."""
