"""Comparisons shared by the suites that stage a package's functions as written (filterpy,
sgp4, nolds, properscoring): the staged outcome must be Python's, type for type and bit for bit
(or within a stated relative tolerance), and a refusal must name the package's line."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

import autostage


def assert_same(got: object, want: object, rtol: float = 0.0, largest: bool = True) -> None:
    """``got`` is ``want``: the same types, nested tuples and lists item by item, an exception
    by its message, a string equal, an array or number of the same shape and dtype with the same
    values (within ``rtol``: relative to the largest element where ``largest``, the rounding of
    a product rather than of each element; else element by element)."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, Exception):
        assert str(got) == str(want)
        return
    if isinstance(want, tuple | list):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, rtol, largest)
        return
    if isinstance(want, str):
        assert got == want
        return
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    if rtol:
        atol = rtol * np.max(np.abs(want)) if largest else 0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


def copied(args: Sequence) -> tuple:
    """The arguments, arrays copied (each side writes into its own)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def assert_refused(fn: Callable, args: Sequence, error: type, words: str, where: str,
                   target: str, kwargs: dict | None = None) -> None:
    """Staging ``fn(*args, **kwargs)`` raises ``error`` whose message holds ``words`` and
    ``where`` (the package's file and line)."""
    with pytest.raises(error) as raised:
        autostage.convert(fn, target=target)(*args, **(kwargs or {}))
    message = str(raised.value)
    assert words in message and where in message
