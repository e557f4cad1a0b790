"""``TensorSpec``: the dtype and shape a staged argument must have (for ``input_signature``).

A spec describes a NumPy array or scalar argument: its dtype and its shape, where ``None`` is a
dimension of any size. ``input_signature=[TensorSpec((None, 3), np.float32)]`` fixes a staged
function's one trace up front and rejects other arguments with a message naming both. Specs are
frozen and hashable, print short (``f32[?,3]``) and parse back from that form (CLI ``--args``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from autostage.runtime.types import DTYPES, TensorType, as_dtype

_SHORT = re.compile(r"^\s*([a-z]+[0-9]*)\s*\[([^\]]*)\]\s*$")


class TensorSpec:
    """The type a staged argument must have: ``TensorSpec(shape, dtype)``.

    Args:
      shape: a sequence of sizes, ``None`` for a dimension of any size (``()`` for a scalar).
      dtype: anything ``np.dtype`` accepts, or a short name like ``"f32"`` (default float64).
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int | None], dtype: object = np.float64):
        if isinstance(shape, int | np.integer):
            shape = (shape,)
        if shape is None or isinstance(shape, str):
            raise TypeError(f"TensorSpec shape must be a sequence of sizes or None, got {shape!r}")
        dims = []
        for d in shape:
            if d is not None and (not isinstance(d, int | np.integer) or d < 0):
                raise ValueError(f"TensorSpec dimensions are sizes >= 0 or None, got {shape!r}")
            dims.append(None if d is None else int(d))
        object.__setattr__(self, "shape", tuple(dims))
        object.__setattr__(self, "dtype", as_dtype(dtype))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("TensorSpec is immutable")

    def __reduce__(self) -> tuple:
        # Rebuilt through __init__: the default protocol would set the slots and hit __setattr__.
        return (TensorSpec, (self.shape, self.dtype))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape!r}, dtype={self.dtype.name})"

    def __str__(self) -> str:
        return str(self.type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def type(self) -> TensorType:
        """The IR type of the parameter this spec stages."""
        return TensorType(self.dtype, self.shape)

    @classmethod
    def from_value(cls, value: np.ndarray | np.generic) -> TensorSpec:
        """The spec of an array or scalar with every dimension known."""
        value = np.asarray(value)
        return cls(value.shape, value.dtype)

    @classmethod
    def parse(cls, text: str) -> TensorSpec:
        """A spec from its printed form: ``f64[?]``, ``i64[]``, ``f32[?,3]``.

        Raises:
          ValueError: ``text`` is not of that form.
        """
        match = _SHORT.match(text)
        if match is None or match.group(1) not in _SHORT_NAMES:
            raise ValueError(f"expected a type like f64[?,3] or i64[] (dtypes: "
                             f"{', '.join(DTYPES.values())}), got {text!r}")
        inner = match.group(2).strip()
        dims = [] if not inner else [d.strip() for d in inner.split(",")]
        try:
            shape = [None if d in ("?", "None") else int(d) for d in dims]
        except ValueError:
            raise ValueError(f"dimensions are sizes or '?', got {text!r}") from None
        return cls(shape, match.group(1))

    def mismatch(self, value: object) -> str | None:
        """Why ``value`` does not fit this spec (``None`` if it does), in the user's terms."""
        if not isinstance(value, np.ndarray | np.generic):
            return f"a Python {type(value).__name__} ({value!r:.40})"
        what = (f"a {value.dtype} scalar" if value.ndim == 0
                else f"a {value.dtype} array of shape {value.shape}")
        if value.dtype != self.dtype or value.ndim != self.ndim:
            return what
        if any(d is not None and d != n for d, n in zip(self.shape, value.shape, strict=False)):
            return what
        return None


_SHORT_NAMES = frozenset(DTYPES.values())
