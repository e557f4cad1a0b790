"""In-place operators on views: the converter's ``x[k] op= v`` is written back, any other
view changed in place is a clear error (staged code would leave the viewed array unchanged)."""

import numpy as np
import pytest
from autostage.runtime.tracing import StagingError

import autostage

TARGETS = ("interpreter", "cpu")


def view_changed(a):
    x = a.copy()
    v = x[1:3]
    v += 1
    return x


def view_changed_in_a_loop(a):
    x = a.copy()
    for i in range(a.shape[0]):
        row = x[i]
        row *= 2.0
    return x


def view_changed_then_written_elsewhere(a):
    x = a.copy()
    v = x[1:3]
    v += 1
    x[0:2] = v
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args,offset", [  # offset: the line of `op=` after the def line
    (view_changed, (np.zeros(4),), 3),
    (view_changed_in_a_loop, (np.ones((3, 2)),), 4),
    (view_changed_then_written_elsewhere, (np.zeros(4),), 3),
])
def test_a_view_changed_in_place_is_refused(fn, args, offset, target):
    line = fn.__code__.co_firstlineno + offset
    with pytest.raises(StagingError) as raised:
        autostage.convert(fn, target=target)(*args)
    message = str(raised.value)
    assert f"{__file__}:{line}: this in-place operator changes a view" in message
    assert f"(made at {__file__}:{line - 1})" in message
    assert "`v = v.copy()`" in message


def augmented_items(a, i):
    x = a.copy()
    x[1:3] += 1
    x[i] -= 2
    x[i:] *= 3
    return x


def augmented_items_in_a_loop(a):
    x = a.copy()
    for i in range(a.shape[0]):
        x[i] += a[i]
        x[:i] *= 0.5
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn,args", [
    (augmented_items, (np.arange(5.0), np.int64(2))),
    (augmented_items, (np.arange(5), np.int64(-1))),
    (augmented_items_in_a_loop, (np.arange(4.0),)),
])
def test_augmented_item_assignments_keep_pythons_values(fn, args, target):
    got, want = autostage.convert(fn, target=target)(*args), fn(*args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
