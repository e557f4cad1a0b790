"""Gradients of the reference programs, against finite differences of the plain programs.

Every stageable reference program (``programs/``, ``staged_programs/``) that takes float arrays
and returns a float scalar (or a float array, weighted by fixed random weights and summed) is
differentiated with ``autostage.grad`` (interpreter
target) with respect to all its float array arguments; the directional derivative along a random
direction must match central finite differences of the plain Python program. A program whose
gradient autostage refuses (a ``GradientError`` naming the op) must be listed in ``REFUSED`` with
the reason; a listed program that starts to work fails the test, so the list only shrinks.
"""

from __future__ import annotations

import contextlib
import copy
import io
import warnings

import harness  # tests/reference is on sys.path (pytest rootdir-relative import)
import numpy as np
import pytest
from autostage.runtime.autodiff import GradientError
from autostage.runtime.tracing import StagingError
from test_staged import NOT_STAGEABLE, REFERENCE_NUMPY_CASES, STAGED_CASES

import autostage

# case id -> why its gradient is refused (a GradientError).
_WRITES_ARGUMENT = ("writes into the argument it is differentiated by: the backward pass reads "
                    "the values the writes replace, so the writes cannot go into the caller's "
                    "array as they happen (a StagingError naming the argument)")
_HELPER_WRITES = ("writes into its argument, called from the test's weighting function: a "
                  "helper's writes into an array it is given are not differentiated, so under "
                  "a GradientTape they are not written back (a StagingError naming the line)")
REFUSED: dict[str, str] = {
    "arrays.py::gram_schmidt[0]": "a staged loop reads the list it appends to (basis vectors "
                                  "read back by index): only appending is differentiated yet",
    "arrays.py::in_place_input_update[0]": _WRITES_ARGUMENT,
    "for_loops.py::double_in_place[1]": _WRITES_ARGUMENT,
    "slices.py::prefix_sums_in_place[1]": _WRITES_ARGUMENT,
    "arrays.py::laplace_step[0]": _HELPER_WRITES,
    "arrays.py::insertion_sort_in_place[0]": _HELPER_WRITES,
    "slices.py::swap_items[1]": _HELPER_WRITES,
}
# case id -> why finite differences cannot check it (the function is not smooth at the inputs:
# a kink or a jump lies within the finite-difference step).
_ZERO = ("evaluated where its branch condition (a sum or norm equal to 0) switches: not "
         "differentiable there")
NOT_SMOOTH: dict[str, str] = {
    "early_returns.py::normalize[1]": _ZERO, "branches.py::normalize_or_keep[1]": _ZERO,
    "branches.py::standardize[0]": "a constant column: std is 0 there, where np.std has no "
                                   "derivative (the gradient is NaN, as in JAX)",
    "exits_and_lists.py::first_above_2d[0]": "an element equals the threshold: which element "
                                             "is returned jumps under any perturbation",
    "effects.py::assert_probability[0]": "asserts that its input sums to exactly one: a "
                                         "perturbed input fails the assertion",
    "asserts.py::probability_vector[0]": "asserts that its input sums to one within 1e-9: a "
                                         "perturbed input fails the assertion",
    "recursion.py::merge_sort[0]": "two equal elements (1.0): sorting has a kink at a tie "
                                   "(tie-free inputs: tests/unit/runtime/test_staged_recursion.py)",
    "recursion.py::range_sum[1]": "1e16 and -1e16 cancel: a finite-difference step is lost in "
                                  "rounding (the gradient is exactly ones)",
}


def _float_arrays(args: tuple) -> list[int]:
    return [i for i, a in enumerate(args)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0]


def _quiet(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))


def _scalar_program(case):
    """The program itself if it returns a float scalar; for a float array result, the sum of
    the result weighted by fixed random weights (a scalar that sees every element); else None."""
    if case.id in NOT_STAGEABLE or not _float_arrays(case.args):
        return None
    try:
        value = _quiet(case.fn, *case.args, **case.kwargs)
    except Exception:
        return None
    if isinstance(value, float | np.floating):
        return case.fn if np.isfinite(value) else None
    if not (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size
            and np.all(np.isfinite(value))):
        return None
    weight = np.random.default_rng(0).standard_normal(value.shape)
    program = case.fn

    def weighted(*args, **kwargs):
        return np.sum(program(*args, **kwargs) * weight)

    weighted.__name__ = weighted.__qualname__ = f"weighted_{program.__name__}"
    return weighted


CASES = [(c, f) for c in (*STAGED_CASES, *REFERENCE_NUMPY_CASES)
         if (f := _scalar_program(c)) is not None]


@pytest.mark.parametrize("case,program", CASES, ids=[c.id for c, _ in CASES])
def test_gradient_matches_finite_differences(case, program):
    argnums = tuple(_float_arrays(case.args))
    grad = autostage.grad(autostage.convert(program, target="interpreter"), argnums=argnums)
    try:
        found = _quiet(grad, *case.args, **case.kwargs)
    except (GradientError, StagingError) as e:
        assert case.id in REFUSED, f"{case.id}: gradient refused but not listed: {e}"
        return
    assert case.id not in REFUSED, f"{case.id} is listed in REFUSED but now works"
    rng = np.random.default_rng(abs(hash(case.id)) % 2**32)
    directions = {i: rng.standard_normal(case.args[i].shape) for i in argnums}
    predicted = sum(float(np.sum(g * directions[i])) for g, i in zip(found, argnums, strict=True))

    def shifted(eps: float) -> float:
        args = list(copy.deepcopy(case.args))
        for i in argnums:
            args[i] = args[i] + eps * directions[i].astype(args[i].dtype)
        return float(_quiet(program, *args, **case.kwargs))

    if case.id in NOT_SMOOTH:
        return
    # The step that suits the program's precision: float32 code (argument or cast inside)
    # needs a larger one. A smooth function agrees with its gradient at one of them.
    numeric = [(shifted(eps) - shifted(-eps)) / (2 * eps) for eps in (1e-6, 1e-4, 1e-2)]
    assert any(abs(predicted - n) <= 1e-3 * max(1.0, abs(n)) for n in numeric), (
        f"{case.id}: gradient . direction = {predicted!r}, finite differences {numeric!r}")


def test_enough_programs_are_differentiated():
    assert len(CASES) >= 40, [c.id for c, _ in CASES]
    _ = harness
