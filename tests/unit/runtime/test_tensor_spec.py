"""TensorSpec: frozen, hashable, printable, parsable; mismatch messages."""

import numpy as np
import pytest
from autostage.runtime.tensor_spec import TensorSpec
from autostage.runtime.types import TensorType

import autostage


def test_spec_fields_equality_hash_and_printing():
    spec = TensorSpec((None, 3), np.float32)
    assert spec.shape == (None, 3) and spec.dtype == np.float32 and spec.ndim == 2
    assert spec == TensorSpec([None, 3], "f32") and hash(spec) == hash(TensorSpec((None, 3), "f32"))
    assert spec != TensorSpec((None, 3), np.float64)
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=float32)"
    assert str(spec) == "f32[?,3]"
    assert spec.type == TensorType(np.float32, (None, 3))
    assert autostage.TensorSpec is TensorSpec


def test_spec_is_frozen_and_validated():
    spec = TensorSpec((), np.int64)
    with pytest.raises(AttributeError):
        spec.shape = (1,)
    with pytest.raises(ValueError, match="dimensions"):
        TensorSpec((-1,), np.float64)
    with pytest.raises(TypeError, match="cannot stage"):
        TensorSpec((), object)


def test_spec_pickles_and_copies_as_an_equal_spec():
    import copy
    import pickle
    spec = TensorSpec((None, 3), np.float32)
    for clone in (pickle.loads(pickle.dumps(spec)), copy.copy(spec), copy.deepcopy(spec)):
        assert clone == spec and type(clone) is TensorSpec and clone.dtype == np.float32


@pytest.mark.parametrize("text, shape, dtype", [
    ("f64[?]", (None,), np.float64), ("i64[]", (), np.int64), ("f32[?, 3]", (None, 3), np.float32),
    ("bool[2,2]", (2, 2), np.bool_),
])
def test_parse(text, shape, dtype):
    assert TensorSpec.parse(text) == TensorSpec(shape, dtype)


@pytest.mark.parametrize("text", ["f64", "x64[?]", "f64[a]", "[?]"])
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        TensorSpec.parse(text)


def test_mismatch_messages():
    spec = TensorSpec((None, 3), np.float32)
    assert spec.mismatch(np.zeros((2, 3), np.float32)) is None
    assert spec.mismatch(np.zeros((2, 4), np.float32)) == "a float32 array of shape (2, 4)"
    assert spec.mismatch(np.float32(1)) == "a float32 scalar"
    assert spec.mismatch(1.5) == "a Python float (1.5)"
    assert TensorSpec.from_value(np.zeros((2, 5), np.int32)) == TensorSpec((2, 5), np.int32)
