"""global and nonlocal, closures capturing loop variables, globals defined after the function."""

TOTAL = 0
_EVENTS = []
_SETTINGS = {"scale": 2}
THRESHOLD = 10


def accumulate_global(n):
    global TOTAL
    TOTAL = 0
    for i in range(n):
        if i % 2:
            TOTAL += i
    return TOTAL


def read_late_global(x):
    return x * LATE_FACTOR + len(LATE_NAMES)


def nonlocal_counter(n):
    count = 0

    def bump(step):
        nonlocal count
        count += step
        return count

    seen = []
    for i in range(n):
        seen.append(bump(i))
    return count, seen


def late_binding_closures(n):
    fns = []
    for i in range(n):
        fns.append(lambda: i * 10)  # noqa: B023 - late binding is the behaviour under test
    return [f() for f in fns]


def default_arg_closures(n):
    fns = []
    for i in range(n):
        fns.append(lambda i=i: i * 10)
    return [f() for f in fns]


def two_level_nonlocal(values):
    total = 0

    def outer(v):
        def inner():
            nonlocal total
            total += v

        if v > 0:
            inner()

    for v in values:
        outer(v)
    return total


def record_events(names):
    _EVENTS.clear()
    for name in names:
        if name:
            _EVENTS.append(name.upper())
    return list(_EVENTS), len(_EVENTS)


def local_shadows_global(x):
    THRESHOLD = 3
    if x > THRESHOLD:
        return "above local threshold"
    return "below"


def read_before_local_assignment(x):
    if x > THRESHOLD:  # noqa: F823 - the assignment below makes THRESHOLD local
        x = THRESHOLD  # pragma: no cover - the read above raises
    THRESHOLD = 0  # pragma: no cover
    return x + THRESHOLD  # pragma: no cover


def _make_accumulator(start):
    items = [start]

    def add(v):
        items.append(v)
        return sum(items)

    return add


def use_accumulator(values):
    acc = _make_accumulator(100)
    results = []
    for v in values:
        results.append(acc(v))
    return results


def global_set_in_branch(flag, value):
    global _LAST_VALUE
    _LAST_VALUE = "unset"
    if flag:
        _LAST_VALUE = value
    return _LAST_VALUE


def free_variable_unbound():
    def report():
        return status

    result = report()
    status = "ready"  # pragma: no cover - report() raises
    return result, status  # pragma: no cover


def closure_sees_updates():
    factor = 1

    def scale(x):
        return x * factor

    first = scale(5)
    factor = 3
    return first, scale(5)


def counter_factory_loop(n):
    counters = []
    for i in range(n):

        def make(start):
            value = start

            def tick():
                nonlocal value
                value += 1
                return value

            return tick

        counters.append(make(i * 100))
    return [c() + c() for c in counters]


def settings_lookup(key):
    scale = _SETTINGS["scale"]
    if key in _SETTINGS:
        return _SETTINGS[key] * scale
    _SETTINGS[key] = 0
    del _SETTINGS[key]
    return None


class _Config:
    default_size = 4

    def __init__(self, size=None):
        self.size = size if size is not None else self.default_size

    def area(self):
        return self.size * self.size


def class_attribute_scope(sizes):
    return [_Config(s).area() for s in sizes], _Config().area()


LATE_FACTOR = 3
LATE_NAMES = ("a", "b")
_LAST_VALUE = None

CASES = [
    (accumulate_global, (6,)),
    (accumulate_global, (0,)),
    (read_late_global, (2,)),
    (read_late_global, (1.5,)),
    (nonlocal_counter, (4,)),
    (late_binding_closures, (3,)),
    (default_arg_closures, (3,)),
    (two_level_nonlocal, ([1, -2, 3],)),
    (record_events, (["a", "", "b"],)),
    (local_shadows_global, (5,)),
    (local_shadows_global, (2,)),
    (read_before_local_assignment, (50,)),
    (use_accumulator, ([1, 2, 3],)),
    (global_set_in_branch, (True, 5)),
    (global_set_in_branch, (False, 7)),
    (free_variable_unbound, ()),
    (closure_sees_updates, ()),
    (counter_factory_loop, (3,)),
    (settings_lookup, ("scale",)),
    (settings_lookup, ("other",)),
    (class_attribute_scope, ([1, 3],)),
]
