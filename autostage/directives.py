"""Directives: calls that tell the compiler how to convert the code around them.

A directive is an ordinary function, so code that uses one still runs unconverted (where it does
nothing). The directives converter finds the calls in a function being converted, records their
arguments on the statement they apply to (``anno.Basic.DIRECTIVES``) and removes them.
"""

from __future__ import annotations

from typing import Any


def set_loop_options(*, maximum_iterations: Any = None, parallel_iterations: Any = None) -> None:
    """Sets options of the loop whose body this call stands in, as a statement of its own.

    Example::

        while x > 0:
            autostage.set_loop_options(maximum_iterations=100)
            x = step(x)

    Args:
      maximum_iterations: an upper bound on the number of iterations of a staged loop.
      parallel_iterations: how many iterations a backend may run at once, where it can.

    The options are fixed at conversion time: use keyword arguments only, directly in the loop's
    body. Unconverted, the call does nothing.
    """
    del maximum_iterations, parallel_iterations
