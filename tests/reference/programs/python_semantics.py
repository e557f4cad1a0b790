"""Python semantics that conversion must keep: generators and coroutines defined inside converted
functions, private names in methods, walrus targets, comprehension scopes, deep recursion."""


class _Wallet:
    __fee = 1

    def __init__(self, balance):
        self.__balance = balance
        self.__log = []

    def __charge(self, amount):
        if amount > self.__balance:
            raise ValueError(f"cannot pay {amount} from {self.__balance}")
        self.__balance -= amount + self.__fee
        self.__log.append(amount)

    def pay_all(self, amounts):
        for amount in amounts:
            if amount:
                self.__charge(amount)
        return self.__balance, list(self)

    def __iter__(self):
        for amount in self.__log:
            if amount:
                yield amount


def _drive(coroutine):
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value


def nested_generator(flag, n):
    def numbers(v):
        if v:
            yield -1
        for i in range(n):
            if i % 2:
                continue
            yield i
        return "unused"

    return list(numbers(flag)), sum(numbers(not flag))


def nested_generator_with_state(n):
    def running(limit):
        total = 0
        while True:
            total += 1
            if total > limit:
                break
            received = yield total
            if received:
                total += received
        return total

    gen = running(n)
    out = [next(gen)]
    try:
        while True:
            out.append(gen.send(len(out)))
    except StopIteration as stop:
        out.append(("done", stop.value))
    return out


def generator_reads_later_values(n):
    x = "start"

    def current():
        yield x

    it = current()
    for i in range(n):
        x = i
    return next(it), x


def nested_coroutines(v):
    async def add(a):
        if a > 1:
            return a + v
        return -1

    async def chain(a):
        first = await add(a)
        return first * 2

    return _drive(add(v)), _drive(chain(v))


def private_names(balance, amounts):
    wallet = _Wallet(balance)
    return wallet.pay_all(amounts)


def walrus_targets(d, key, xs):
    if (found := d.get(key)) is None:
        found = 0
    total = 0
    for x in (items := list(xs)):
        total += x
    picked = (y := found) if total else (y := -found)
    both = total and (z := total * 2)
    kept = [v for v in items if (last := v) > 1]
    return found, total, items, picked, y, both, kept, last, z


def comprehension_scopes(xs):
    out = [c for c in xs]
    seen = {c: c * 2 for c in xs}
    try:
        for c in xs:
            out.append(c + 10)
            if c > 2:
                raise KeyError(c)
    except KeyError as e:
        out.append(("stopped", e.args))
    return out, seen, c


def _depth(n):
    if n == 0:
        return 0
    return 1 + _depth(n - 1)


def _ternary_depth(n):
    return 0 if n == 0 else 1 + _ternary_depth(n - 1)


def deep_recursion(n):
    return _depth(n), _ternary_depth(n)


CASES = [
    (nested_generator, (True, 5)),
    (nested_generator, (False, 3)),
    (nested_generator_with_state, (4,)),
    (nested_generator_with_state, (0,)),
    (generator_reads_later_values, (3,)),
    (generator_reads_later_values, (0,)),
    (nested_coroutines, (3,)),
    (nested_coroutines, (1,)),
    (private_names, (20, [3, 0, 4])),
    (private_names, (5, [3, 4])),
    (walrus_targets, ({1: 5}, 1, [1, 2, 3])),
    (walrus_targets, ({1: 5}, 2, [])),
    (comprehension_scopes, ([1, 2, 3, 4],)),
    (comprehension_scopes, ([1],)),
    (deep_recursion, (380,)),  # converted: two frames per call (see notes), within the limit
]
