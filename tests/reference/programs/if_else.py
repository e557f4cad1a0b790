"""if / elif / else on Python values and NumPy scalars and arrays."""

import numpy as np


def sign(x):
    if x > 0:
        s = 1
    elif x < 0:
        s = -1
    else:
        s = 0
    return s


def classify_bmi(weight, height):
    bmi = weight / (height * height)
    if bmi < 18.5:
        label = "underweight"
    elif bmi < 25.0:
        label = "normal"
    elif bmi < 30.0:
        label = "overweight"
    else:
        label = "obese"
    return label, round(bmi, 2)


def clamp(x, lo, hi):
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


def fizzbuzz_word(n):
    if n % 15 == 0:
        word = "FizzBuzz"
    elif n % 3 == 0:
        word = "Fizz"
    elif n % 5 == 0:
        word = "Buzz"
    else:
        word = str(n)
    return word


def order_pair(a, b):
    swapped = False
    if a > b:
        a, b = b, a
        swapped = True
    return a, b, swapped


def count_word(counts, word):
    if word in counts:
        counts[word] += 1
    else:
        counts[word] = 1
    return counts[word]


def relu(x):
    if x > 0:
        y = x
    else:
        y = x * 0
    return y


def smoothstep(x):
    if x <= 0.0:
        y = 0.0
    elif x >= 1.0:
        y = 1.0
    else:
        y = x * x * (3.0 - 2.0 * x)
    return y


def quadrant(point):
    x, y = point
    if x >= 0:
        if y >= 0:
            q = 1
        else:
            q = 4
    else:
        if y >= 0:
            q = 2
        else:
            q = 3
    return q


def scale_or_flip(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    return y


def upcast_float32(x):
    if x.dtype == np.float32:
        x = x.astype(np.float64)
    else:
        x = x + 1
    return x, x.dtype.name


def truthiness(value):
    if value:
        kind = "truthy"
    else:
        kind = "falsy"
    return kind, type(value).__name__


def checked_sqrt(x):
    if x < 0:
        raise ValueError(f"negative input: {x}")
    return x**0.5


def is_positive_array(x):
    if x > 0:
        answer = "positive"
    else:
        answer = "not positive"
    return answer


def shipping_cost(weight, express, country):
    cost = 5.0
    if weight > 10:
        cost += (weight - 10) * 0.5
    if express:
        cost *= 2
    if country != "NL":
        cost += 7.5
    return cost


CASES = [
    (sign, (5,)),
    (sign, (-3.5,)),
    (sign, (0,)),
    (sign, (np.float64(-0.0),)),
    (classify_bmi, (50.0, 1.8)),
    (classify_bmi, (70.0, 1.75)),
    (classify_bmi, (85.0, 1.75)),
    (classify_bmi, (110.0, 1.7)),
    (classify_bmi, (70.0, 0.0)),
    (clamp, (5, 0, 10)),
    (clamp, (-5, 0, 10)),
    (clamp, (15.5, 0, 10)),
    (fizzbuzz_word, (30,)),
    (fizzbuzz_word, (9,)),
    (fizzbuzz_word, (10,)),
    (fizzbuzz_word, (7,)),
    (order_pair, (3, 1)),
    (order_pair, ("a", "b")),
    (order_pair, (1, "b")),
    (count_word, ({"a": 1}, "a")),
    (count_word, ({"a": 1}, "b")),
    (relu, (2.5,)),
    (relu, (np.float64(-2.5),)),
    (relu, (np.int32(-7),)),
    (smoothstep, (-1.0,)),
    (smoothstep, (0.25,)),
    (smoothstep, (np.float32(0.7),)),
    (smoothstep, (3,)),
    (quadrant, ((1, 2),)),
    (quadrant, ((1, -2),)),
    (quadrant, ((-1, 2),)),
    (quadrant, ((-1.0, -2.0),)),
    (scale_or_flip, (np.array([1.0, -2.0, 3.5]),)),
    (scale_or_flip, (np.array([-1, -2], dtype=np.int32),)),
    (upcast_float32, (np.array([1.5, 2.5], dtype=np.float32),)),
    (upcast_float32, (np.array([1, 2], dtype=np.int16),)),
    (truthiness, (0,)),
    (truthiness, ("text",)),
    (truthiness, ([],)),
    (truthiness, (np.float64(0.0),)),
    (truthiness, (np.array([3]),)),
    (truthiness, (np.array([1, 2]),)),
    (checked_sqrt, (16,)),
    (checked_sqrt, (2.0,)),
    (checked_sqrt, (-4,)),
    (is_positive_array, (np.float64(3.0),)),
    (is_positive_array, (np.int64(0),)),
    (is_positive_array, (np.array([1.0, 2.0]),)),
    (shipping_cost, (4, False, "NL")),
    (shipping_cost, (12, True, "DE")),
    (shipping_cost, (12.5, False, "BE")),
]
