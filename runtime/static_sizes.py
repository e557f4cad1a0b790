"""Which sizes of array arguments a trace knows: the small ones, until they vary.

Code that knows a size compiles to better loops: a 784x10 weight matrix's 10 columns become a
product kernel with ten accumulators, a 2x2 matrix's loops unroll. Code that does not know it
serves every size. A trace is therefore specialised on each array argument's sizes up to
``config.STATIC_SIZES`` (16), the rest unknown, as TensorFlow's relaxed shapes and JAX's static
shapes do, with a bound on retracing:

* the trace key of an ``np.ndarray`` argument with such sizes is ``(dtype, ndim, Sizes)``
  (``Sizes``: the size of each axis up to the limit, None for larger ones), and the trace's
  parameter type has those sizes;
* a call whose sizes the first trace with sizes admits (each size it knows is the call's; the
  call's other sizes are ones the trace left unknown: 40 steps, then 3) runs that trace, as a
  call of larger sizes would: a shorter sequence costs no trace;
* when a call differs from an earlier trace only in sizes that trace knows (a batch of 5, then
  one of 7), the function stops specialising: that call and every later one key on dtypes and
  ranks alone, so varying sizes cost one more trace, not one per size.

Known sizes only make code more specific; every value and error is the one the unknown-size
code gives:

* the code sees what it saw without them: ``x.shape[0]``, ``len(x)``, ``x.size`` of an argument,
  or of anything computed from one, stay staged integers (``Trace.sizes_staged``), so
  ``np.zeros(x.shape[0])`` is still a staged array and ``range(n)`` a staged loop; sizes of
  constants stay Python ints;
* a size mismatch found while tracing is raised where the program reaches it, as at run time;
* a trace with sizes refused for an ``if`` whose branches both raise (which the sizes alone may
  cause: both index out of range, in code the call never runs) traces again without sizes
  (``StagedFunction._miss``); other errors are raised after the one trace.
"""

from __future__ import annotations


class Sizes(tuple):
    """The known sizes of an argument in a trace key (None: unknown)."""

    __slots__ = ()


def of(shape: tuple[int, ...], limit: int) -> Sizes | None:
    """The sizes of ``shape`` a trace knows (at most ``limit``), or None when none is."""
    if not shape or limit <= 0 or min(shape) > limit:
        return None
    return Sizes(d if d <= limit else None for d in shape)


def generic(key: tuple) -> tuple:
    """``key`` with no sizes: each ``(dtype, ndim, Sizes)`` component as ``(dtype, ndim)``."""
    return tuple(part[:2] if _specialised(part) else part for part in key)


def specialised(key: tuple) -> bool:
    """Whether ``key`` has known sizes."""
    return any(_specialised(part) for part in key)


def admits(traced: tuple, key: tuple) -> bool:
    """Whether the trace of ``traced`` serves a call keyed ``key`` (the two alike but for
    sizes): every size ``traced`` knows is ``key``'s; what it leaves unknown may be anything."""
    return all(a == b or _admits(a, b) for a, b in zip(traced, key, strict=True))


def _admits(traced: object, part: object) -> bool:
    if not _specialised(part) or traced[:2] != part[:2]:
        return False
    if not _specialised(traced):  # every size unknown to the trace
        return True
    return all(known is None or known == size for known, size in zip(traced[2], part[2],
                                                                      strict=True))


def shape(part: tuple, ndim: int) -> tuple:
    """The parameter shape of a leaf keyed by ``part``: its known sizes, or all unknown."""
    return tuple(part[2]) if _specialised(part) else (None,) * ndim


def _specialised(part: object) -> bool:
    return type(part) is tuple and len(part) == 3 and type(part[2]) is Sizes
