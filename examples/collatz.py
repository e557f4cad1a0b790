"""Example: data-dependent control flow that autostage analyses (and, later, stages)."""


def collatz_steps(n):
    """Number of Collatz steps from n down to 1."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def first_above(values, threshold):
    """Index of the first value above threshold, or -1."""
    found = -1
    for i, v in enumerate(values):
        if v > threshold:
            found = i
            break
    return found
