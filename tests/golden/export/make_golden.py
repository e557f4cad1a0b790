"""Writes the golden export archives of format version 1 (``v1/*.autostage``).

``tests/unit/runtime/test_export.py`` loads each one and checks its results against NumPy, so
that archives written by this release keep loading in later ones. Regenerate them only when a
new format version is released, into a new folder (``v2/``), keeping the old ones; never rewrite
the files of a released version (that would hide a reader that no longer reads them)::

    python tests/golden/export/make_golden.py          # writes tests/golden/export/v1/
"""

from __future__ import annotations

import pathlib

import numpy as np

import autostage

HERE = pathlib.Path(__file__).resolve().parent / "v1"
COUNTER = autostage.Variable(np.zeros(3), name="counter")


def elementwise(x, y):
    return np.tanh(x) * 2.0 + y * y - 1.0


def newton_sqrt(a, tol):
    x = a
    steps = 0
    while np.abs(x * x - a) > tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def accumulate(x):
    COUNTER.assign_add(x)
    return COUNTER.read() * 2.0


def stats(x):
    return {"mean": np.mean(x), "max": np.max(x), "centered": x - np.mean(x), "n": x.shape[0]}


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    f = autostage.convert(elementwise, input_signature=[
        autostage.TensorSpec([None], np.float64), autostage.TensorSpec([None], np.float64)])
    autostage.save(f, HERE / "elementwise.autostage")
    f = autostage.convert(newton_sqrt)
    f(np.float64(2.0), 1e-12)
    autostage.save(f, HERE / "while_loop.autostage")
    COUNTER.assign(np.zeros(3))
    f = autostage.convert(accumulate, input_signature=[autostage.TensorSpec([3], np.float64)])
    f(np.array([1.0, 2.0, 3.0]))  # the saved counter: [1, 2, 3]
    autostage.save(f, HERE / "variable_update.autostage")
    f = autostage.convert(stats, input_signature=[autostage.TensorSpec([None], np.float32)])
    autostage.save(f, HERE / "dict_output.autostage")


if __name__ == "__main__":
    main()
