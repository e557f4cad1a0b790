"""CPython's algorithms compiled by Numba (backends/cpu/python_arith.py) give Python's bits:
int / int correctly rounded (NumPy converts each int to float first), complex / and ** as
CPython computes them (NumPy's and Numba's own differ in the last bits)."""

import math
import random

import numpy as np
from autostage.runtime.backends.cpu import python_arith


def test_int_true_divide_is_pythons_for_int64_operands():
    r = random.Random(8)
    cases = [(2**53 + 1, 3), (-(2**63), 3), (2**63 - 1, -(2**63)), (3, 2**62 + 1),
             (-(2**63), -1), (1, 2**63 - 1), (2**62 + 3, 2**61 - 1), (10**18 + 7, 10**9)]
    for _ in range(20000):
        b = r.randrange(-(2**63), 2**63) if r.random() < 0.7 else r.randrange(-(2**20), 2**20)
        cases.append((r.randrange(-(2**63), 2**63), b or 1))
    wrong = [(a, b) for a, b in cases
             if python_arith.int_true_divide(np.int64(a), np.int64(b)) != a / b]
    assert wrong == []
    assert np.float64(2**53 + 1) / np.float64(3) != (2**53 + 1) / 3  # NumPy's differs


def test_complex_division_and_power_are_pythons():
    r = random.Random(9)

    def number():
        return complex(r.uniform(-9, 9), r.uniform(-9, 9))

    for _ in range(5000):
        a, b = number(), number()
        assert python_arith.complex_true_divide(a, b) == a / b
        for e in (b, complex(r.uniform(-3, 3)), complex(r.randint(-120, 120))):
            try:
                expected = a ** e
            except OverflowError:
                assert math.isinf(abs(python_arith.complex_power(a, e)))
                continue
            assert python_arith.complex_power(a, e) == expected
    # CPython's error states: an infinite result is its OverflowError (checked by the caller)
    assert math.isinf(python_arith.complex_power(complex(1e200, 1.0), complex(2.0, 0.0)).real)
