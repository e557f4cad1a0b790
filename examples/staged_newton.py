"""Example: NumPy code with data-dependent control flow, staged by @autostage.convert."""

import numpy as np

import autostage


@autostage.convert(target="interpreter")
def newton_sqrt(a, tol):
    """Square roots of the entries of ``a`` by Newton's method, until every step is small."""
    x = np.ones_like(a)
    steps = 0
    while np.max(np.abs(x * x - a)) > tol:
        x = 0.5 * (x + a / x)
        steps += 1
    if steps > 10:
        print("slow convergence:", steps, "steps")
    return x, steps


if __name__ == "__main__":
    a = np.array([2.0, 9.0, 1e4], dtype=np.float32)
    root, steps = newton_sqrt(a, np.float32(1e-3))
    print(root, root.dtype, steps)
    print(newton_sqrt.ir(a, np.float32(1e-3)))
