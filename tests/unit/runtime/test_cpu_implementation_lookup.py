"""Numba's "does this implementation take ``loc``" is answered once per function
(``implementation_lookup``), with the answers Numba's own check gives."""

import gc
import inspect

from autostage.runtime.backends.cpu import implementation_lookup
from numba.core import base


def _with_loc(context, builder, sig, args, loc=None):
    return loc


def _without_loc(context, builder, sig, args):
    return None


def test_answers_are_numbas_and_asked_once_per_function():
    asked = []

    def has_loc(fn):
        asked.append(fn)
        return "loc" in inspect.signature(fn).parameters

    remembered = implementation_lookup._remembering(has_loc)
    assert [remembered(_with_loc), remembered(_without_loc)] == [True, False]
    assert [remembered(_with_loc), remembered(_without_loc)] == [True, False]
    assert asked == [_with_loc, _without_loc]
    unhashable = type("Unhashable", (), {"__hash__": None, "__call__": lambda self: 0})()
    assert remembered(unhashable) is False and remembered(unhashable) is False  # (not kept)


def test_installed_in_numba_and_functions_made_per_type_are_not_kept():
    implementation_lookup.install()
    implementation_lookup.install()  # (idempotent: one layer)
    assert base._has_loc.remembers and base._has_loc(_with_loc) and not base._has_loc(_without_loc)

    def made(context, builder, sig, args, loc):
        return loc

    assert base._has_loc(made)
    held = len(implementation_lookup._answers)
    del made
    gc.collect()
    assert len(implementation_lookup._answers) == held - 1
