"""Calls: user functions, methods, static/class methods, lambdas, closures, recursion, callables,
*args/**kwargs, defaults and keyword-only arguments."""

import functools
import math


def _square(x):
    return x * x


def _variadic(*args, **kwargs):
    return len(args), sum(args), sorted(kwargs.items())


def _scaled(a, b=2, *, scale=1.0, offset=0):
    return (a + b) * scale + offset


def _is_even(n):
    if n == 0:
        return True
    return _is_odd(n - 1)


def _is_odd(n):
    if n == 0:
        return False
    return _is_even(n - 1)


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):  # pragma: no cover - the decorator runs at import time
        print("calling", fn.__name__, args)
        return fn(*args)

    return wrapper  # pragma: no cover - the decorator runs at import time


@_logged
def _hypotenuse(a, b):
    return math.sqrt(a * a + b * b)


class _Account:
    fee = 1

    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.log = []

    @classmethod
    def from_record(cls, record):
        owner, amount = record.split(":")
        return cls(owner, int(amount))

    @staticmethod
    def valid_amount(amount):
        return isinstance(amount, int) and amount > 0

    def deposit(self, amount):
        if not _Account.valid_amount(amount):
            raise ValueError(f"invalid amount: {amount!r}")
        self.balance += amount
        self.log.append(("deposit", amount))
        return self

    def withdraw(self, amount):
        if amount + self.fee > self.balance:
            raise RuntimeError(f"{self.owner}: insufficient funds")
        self.balance -= amount + self.fee
        self.log.append(("withdraw", amount))
        return self


class _Savings(_Account):
    fee = 0

    def __init__(self, owner, balance=0, rate=0.01):
        super().__init__(owner, balance)
        self.rate = rate

    def add_interest(self):
        self.balance = round(self.balance * (1 + self.rate), 2)
        return self.balance


class _Polynomial:
    def __init__(self, *coeffs):
        self.coeffs = coeffs

    def __call__(self, x):
        result = 0
        for c in self.coeffs:
            result = result * x + c
        return result


def sum_of_squares(values):
    total = 0
    for v in values:
        total += _square(v)
    return total


def bank_session(record, operations):
    account = _Account.from_record(record)
    for op, amount in operations:
        if op == "deposit":
            account.deposit(amount)
        else:
            account.withdraw(amount)
    return account.balance, account.log


def savings_growth(years):
    account = _Savings("sam", 1000, rate=0.05)
    history = []
    for _ in range(years):
        history.append(account.add_interest())
    account.withdraw(100)
    return history, account.balance


def factorial(n):
    if n < 0:
        raise ValueError("factorial of a negative number")
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def parity_words(values):
    return ["even" if _is_even(v) else "odd" for v in values]


def _make_multiplier(k):
    def multiply(x):
        return x * k

    return multiply


def apply_multipliers(values, factors):
    fns = [_make_multiplier(k) for k in factors]
    out = []
    for f in fns:
        out.append([f(v) for v in values])
    return out


def _apply_twice(f, x):
    return f(f(x))


def use_apply_twice(x):
    return _apply_twice(_square, x), _apply_twice(lambda v: v + 3, x), _apply_twice(str, x)


def variadic_calls(values, options):
    return _variadic(*values, **options), _variadic(), _variadic(1, 2, key="v", **options)


def keyword_calls(a):
    return [
        _scaled(a),
        _scaled(a, 3),
        _scaled(a, scale=2.0),
        _scaled(b=1, a=a, offset=5),
        _scaled(*(a, 4), **{"scale": 0.5}),
    ]


def keyword_only_misuse(a):
    return _scaled(a, 1, 2.0)


def missing_argument():
    return _scaled(b=3)


def evaluate_polynomial(coeffs, xs):
    p = _Polynomial(*coeffs)
    return [p(x) for x in xs], callable(p)


def higher_order(words):
    lengths = list(map(len, words))
    long_words = list(filter(lambda w: len(w) > 3, words))
    ordered = sorted(words, key=lambda w: (-len(w), w))
    return lengths, long_words, ordered, max(words, key=len)


def _compose(*fns):
    def composed(x):
        for f in reversed(fns):
            x = f(x)
        return x

    return composed


def use_compose(x):
    pipeline = _compose(abs, _square, lambda v: v - 10)
    return pipeline(x)


def memo_fibonacci(n, cache=None):
    if cache is None:
        cache = {}
    if n in cache:
        return cache[n]
    result = n if n < 2 else memo_fibonacci(n - 1, cache) + memo_fibonacci(n - 2, cache)
    cache[n] = result
    return result


def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


def nested_sum(items):
    total = 0
    for item in items:
        if isinstance(item, (list, tuple)):
            total += nested_sum(item)
        else:
            total += item
    return total


def decorated_call(a, b):
    return round(_hypotenuse(a, b), 6)


def shadowed_builtin(values):
    max = values[0]
    for v in values:
        if v > max:
            max = v
    return max


def string_methods(text):
    words = text.strip().split()
    title = " ".join(w.capitalize() for w in words)
    return title.replace(" ", "_").lower().startswith("hello"), title.count("o"), title


def bound_method_reference(values):
    out = []
    add = out.append
    for v in values:
        add(v * 2)
    return out


class _Shape:
    def __init__(self, name):
        self.name = name

    def describe(self):
        return f"shape {self.name}"

    @property
    def label(self):
        if len(self.name) > 3:
            return self.name[:3] + "."
        return self.name


class _Square(_Shape):
    def __init__(self, side):
        super().__init__("square")
        self.side = side

    def describe(self):
        base = super().describe()
        if self.side > 1:
            return base + f" of side {self.side}"
        return base


class _Vector:
    def __init__(self, *items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __abs__(self):
        return sum(v * v for v in self.items) ** 0.5

    def __index__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)


def describe_shapes(sides):
    out = []
    for s in sides:
        sq = _Square(s)
        out.append((sq.describe(), sq.label, _Shape.describe(sq)))
    out.append(_Shape("box").label)
    return out


def builtins_on_custom_objects(items):
    v = _Vector(*items)
    return len(v), abs(v), list(range(v)), max(v, default=None), sum(v, 10), sorted(v)


def builtin_keywords(values):
    return (
        max(values, key=lambda v: -v, default="empty"),
        min(values, default=0),
        sum(values, start=0.5),
        list(enumerate(values, start=10)),
        int("ff", 16),
        isinstance(values, (list, tuple)),
        float("1e-3"),
        bool(values),
    )


def locally_shadowed_print(values):
    lines = []
    print = lines.append
    for v in values:
        print(f"value {v}")
    return lines


def partial_application(values):
    import functools

    scale = functools.partial(_scaled, b=0, scale=3.0)
    return [scale(v) for v in values]


CASES = [
    (sum_of_squares, ([1, 2, 3],)),
    (sum_of_squares, ([1.5, "x"],)),
    (bank_session, ("ann:100", [("deposit", 50), ("withdraw", 30)])),
    (bank_session, ("ann:100", [("deposit", -5)])),
    (bank_session, ("ann:100", [("withdraw", 100)])),
    (bank_session, ("ann", [])),
    (savings_growth, (3,)),
    (factorial, (10,)),
    (factorial, (0,)),
    (factorial, (-1,)),
    (parity_words, ([0, 7, 10],)),
    (apply_multipliers, ([1, 2], [3, 0.5])),
    (use_apply_twice, (3,)),
    (use_apply_twice, ("a",)),
    (variadic_calls, ([1, 2, 3], {"x": 1})),
    (variadic_calls, ([1], {"key": 2})),
    (keyword_calls, (1,)),
    (keyword_only_misuse, (1,)),
    (missing_argument, ()),
    (evaluate_polynomial, ((1, -2, 1), [0, 1, 2, 3.5])),
    (higher_order, (["tree", "a", "house", "is"],)),
    (higher_order, ([],)),
    (use_compose, (2,)),
    (use_compose, (20,)),
    (memo_fibonacci, (30,)),
    (ackermann, (2, 3)),
    (nested_sum, ([1, [2, 3, (4, 5)], [[6]]],)),
    (nested_sum, ([1, ["2"]],)),
    (decorated_call, (3, 4)),
    (shadowed_builtin, ([3, 9, 2],)),
    (shadowed_builtin, ([],)),
    (string_methods, ("  hello big world ",)),
    (bound_method_reference, ([1, 2, 3],)),
    (describe_shapes, ([1, 2],)),
    (builtins_on_custom_objects, ((3, 4),)),
    (builtins_on_custom_objects, ((),)),
    (builtin_keywords, ([3, 1, 2],)),
    (builtin_keywords, ([],)),
    (locally_shadowed_print, ([1, 2],)),
    (partial_application, ([1, 2.5],)),
]
