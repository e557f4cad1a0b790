"""What is known of each integer scalar of a function: an interval, and the array sizes it is
below.

Two consumers: ``int_ranges`` drops the int64 overflow tests that cannot fail, and the cpu
lowering of an int index (``lower_indexing``) drops the bounds test that cannot fail (``x[i]``
in ``for i in range(len(x))``) and the wrap of an index that is never negative. Each such test
is a branch, a call and a raise in the compiled code: ~20-40 ms of Numba's compile per site.

Intervals (exact ints):

* a constant: itself; a size along a static axis: that size; any other size (``dim``,
  ``size``): [0, 2**63 - 1] (a broadcast view's sizes may be that large with no memory behind
  them); a list's length: [0, 2**56] (its items are in memory, and no machine addresses 2**57
  bytes); a cast of a narrower integer or a bool: that type's range;
* ``add``, ``subtract``, ``multiply``, ``negative``, ``absolute``, ``floor_divide`` and
  ``remainder`` by a positive divisor, ``minimum``, ``maximum``, ``where``: computed from their
  operands' intervals when the exact result stays within the result's type (else its type's
  range: the value may have wrapped), or clipped to that range after an overflow test of the
  same operands in the region or one enclosing it (``int_overflows``: Python's ints are exact,
  so ``n + 1`` raises rather than wrap);
* a counter (``counters.py``: a loop's index, ``count += 1``) stays within [-2**62, 2**62]: it
  starts within 2**32 of zero and changes by one per step, so it needs more than 2**62 - 2**32
  steps, decades at one per clock cycle, to leave that interval;
* a value carried around a ``while``: the interval of its start, widened (to the counters'
  interval, or its type's range) on a side where the body's next value may leave it: a
  ``range`` loop's index that counts up from 0 stays >= 0;
* the body of a ``while`` runs only for carried values its test (the value its ``cond`` region
  yields) was true of: from a test ``e < b`` (also ``b > e``, ``e <= b``, ``e > b``, ``e >= b``,
  and ``&`` of tests), the body's value computed the same way from the same carried values
  (``e`` itself, or ``1 + i`` in both regions of ``range(1, n)``) is below ``b``: at most
  ``b``'s upper bound minus one;
* anything else (an argument, a list item): its type's range.

Sizes a value is at most, plus an amount (symbols of ``shape_facts``, given one, and of
lists' lengths): a ``dim`` or a ``list_length`` is its size plus 0; from a loop's test
``e < b``, ``e`` is at most what ``b`` is, minus one; ``minimum`` takes its operands', ``e + c``
``e``'s plus ``c``'s upper bound, ``e - c`` ``e``'s minus ``c``'s lower bound, when their
interval is exact (no wrap): ``i < n + 1`` with ``x.shape[0] == n`` makes ``x[i - 1]`` in
range. ``within`` then decides an index: >= 0, and at most the size of the axis it indexes
minus one (a static axis: by its interval); ``within_list`` a list's index likewise.
"""

from __future__ import annotations

import numpy as np
from autostage.runtime import ir
from autostage.runtime.passes import counters
from autostage.runtime.passes.shape_facts import ShapeFacts
from autostage.runtime.types import ListType, TensorType

Interval = tuple[int, int]
Bounds = dict  # size symbol -> c: a value at most that size plus c
LIST_LENGTH_LIMIT = 2**56  # the most items a list in memory can hold (see the docstring)
COUNTER_LIMIT = 2**62  # how far from zero a counter can get in any run (see the docstring)
_SIZE = (0, 2**63 - 1)
_UNBOUNDED = (-(2**200), 2**200)  # floats and arrays: no test this module decides reads them
EXACT = {"add": lambda a, b: (a[0] + b[0], a[1] + b[1]),
          "subtract": lambda a, b: (a[0] - b[1], a[1] - b[0]),
          "multiply": lambda a, b: _corners(lambda x, y: x * y, a, b),
          "negative": lambda a: (-a[1], -a[0]),
          "absolute": lambda a: (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])),
                                 max(abs(a[0]), abs(a[1]))),
          "minimum": lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
          "maximum": lambda a, b: (max(a[0], b[0]), max(a[1], b[1]))}
_KEYED = frozenset({"add", "subtract", "multiply", "negative", "minimum", "maximum", "dim"})
# A test's operands in the order ``e < b`` / ``e <= b`` reads them; the facts of the reverse.
_TESTS = {"less": ("<", False), "less_equal": ("<=", False),
          "greater": ("<", True), "greater_equal": ("<=", True)}
_ROUNDS = 3  # widenings of a loop's carried intervals before all take their widest


class IntFacts:
    """The intervals of one function's integer scalars, and the sizes they are below."""

    def __init__(self, function: ir.Function, shapes: ShapeFacts | None = None,
                 assumed: dict[ir.Value, Interval] | None = None) -> None:
        """``assumed``: intervals of values the walk does not compute (the parameters, values
        from outside ``function``), taken as given (``overflow_versioning``)."""
        self._shapes = shapes
        self._counters = counters.counters_of(function)
        self._ranges: dict[ir.Value, Interval] = dict(assumed or {})
        # value -> {size symbol: c}: the value is at most that size plus c (c = -1: below it)
        self._bounds: dict[ir.Value, Bounds] = {}
        self._loops: list[_LoopTests] = []  # the loops whose body is being walked, innermost last
        self._lists: dict[ir.Value, tuple] = {}  # a loop's carried list -> its length's symbol
        self._tested: set[tuple] = set()  # (op, operands...) an overflow test guards from here
        self._region(function.body)

    def interval(self, value: ir.Value) -> Interval:
        """``value``'s interval: as known, else its type's range (unbounded for floats and
        arrays)."""
        known = self._ranges.get(value)
        if known is not None:
            return known
        return _range_of_type(value) or _UNBOUNDED

    def nonnegative(self, value: ir.Value) -> bool:
        return self.interval(value)[0] >= 0

    def within_list(self, index: ir.Value, items: ir.Value) -> bool:
        """Whether ``0 <= index < len(items)`` in every run."""
        return self.nonnegative(index) and self._bounds.get(index, {}).get(
            self._length(items), 0) <= -1

    def _length(self, items: ir.Value) -> tuple:
        """The symbol of a list's length (a list value never changes: ``ops/lists.py``; the
        values a loop carries in one iteration share one)."""
        return self._lists.get(items, ("length", items))

    def within(self, index: ir.Value, array: ir.Value, axis: int) -> bool:
        """Whether ``0 <= index < array.shape[axis]`` in every run."""
        low, high = self.interval(index)
        if low < 0:
            return False
        size = array.type.shape[axis]
        if size is not None:
            return high < size
        return self._shapes is not None and self._bounds.get(index, {}).get(
            self._shapes.dims(array)[axis], 0) <= -1

    # -- the walk ---------------------------------------------------------------------------------

    def _region(self, region: ir.Region) -> None:
        guarded = []
        for op in region.ops:
            test = op.operands[0].producer if op.name == "raise_if" else None
            if isinstance(test, ir.Op) and test.name == "int_overflows":
                key = (test.attrs.get("op"), *test.operands)
                if key not in self._tested:
                    self._tested.add(key)
                    guarded.append(key)
            if op.name == "while":
                self._while(op)
                continue
            for inner in op.regions:
                self._region(inner)
            if op.name == "cond":
                self._branches(op)
            elif len(op.results) == 1 and _range_of_type(op.results[0]) is not None:
                self._record(op)
        self._tested.difference_update(guarded)  # the tests guard this region, not the next

    def _record(self, op: ir.Op) -> None:
        value = op.results[0]
        interval = _interval(op, self)
        bounds = self._bounds_of(op, interval)
        if value in self._counters:
            interval = _intersect(interval or _range_of_type(value),
                                  (-COUNTER_LIMIT, COUNTER_LIMIT))
        self._set(value, interval, bounds)
        self._narrow(value)

    def _branches(self, op: ir.Op) -> None:
        """A ``cond``'s integer results: the hull of what its branches yield."""
        for k, value in enumerate(op.results):
            if _range_of_type(value) is not None:
                yielded = [self.interval(region.results[k]) for region in op.regions]
                self._set(value, (min(y[0] for y in yielded), max(y[1] for y in yielded)),
                          {})
                self._narrow(value)

    def _narrow(self, value: ir.Value) -> None:
        """Narrows ``value`` by the tests of the loops whose body holds it."""
        for loop in self._loops:
            loop.apply(self, value)

    def _set(self, value: ir.Value, interval: Interval | None, bounds: Bounds) -> None:
        if interval is None:
            self._ranges.pop(value, None)
        else:
            self._ranges[value] = interval
        if bounds:
            self._bounds[value] = bounds
        else:
            self._bounds.pop(value, None)

    def _bounds_of(self, op: ir.Op, interval: Interval | None) -> Bounds:
        """The sizes ``op``'s result is at most, plus what: a ``minimum``'s operands', ``a + b``
        ``a``'s plus ``b``'s upper bound (and the other way round), ``a - b`` ``a``'s minus
        ``b``'s lower bound; none where ``interval`` is not exact (the result may wrap)."""
        if interval is None or op.name not in ("add", "subtract", "minimum"):
            return {}
        if op.name == "minimum":
            return _tighter(*(self._upper(v) for v in op.operands))
        a, b = op.operands
        if op.name == "subtract":
            return _shifted(self._upper(a), -self.interval(b)[0])
        return _tighter(_shifted(self._upper(a), self.interval(b)[1]),
                        _shifted(self._upper(b), self.interval(a)[1]))

    def _upper(self, value: ir.Value) -> Bounds:
        """The sizes ``value`` is at most, plus what: its known bounds, the size it is itself (a
        ``dim``, a list's length: plus 0), a ``minimum``'s operands'."""
        own = {}
        if self._shapes is not None:
            size = self._shapes.size(value)
            if size is not None and not isinstance(size, int):
                own[size] = 0
        op = value.producer
        if isinstance(op, ir.Op) and op.name == "list_length":
            own[self._length(op.operands[0])] = 0
        if isinstance(op, ir.Op) and op.name == "minimum":
            own = _tighter(own, *(self._upper(v) for v in op.operands))
        return _tighter(self._bounds.get(value, {}), own)

    def _while(self, op: ir.Op) -> None:
        """The carried values' intervals: their starts', widened where the body's next values
        leave them, until none does; the body walked under its test's facts."""
        cond, body = op.regions
        ints = [k for k, v in enumerate(op.operands) if _range_of_type(v) is not None]
        carried = {k: self.interval(op.operands[k]) for k in ints}
        for k, value in enumerate(op.operands):
            if isinstance(value.type, ListType):
                self._lists[cond.args[k]] = self._lists[body.args[k]] = ("length", op, k)
        loop = _LoopTests(op)
        for round_ in range(_ROUNDS + 1):
            for k in ints:
                for value in (cond.args[k], body.args[k]):
                    self._set(value, carried[k], {})
            self._region(cond)
            loop.read_test(self, cond)
            for value in body.args:
                loop.apply(self, value)
            self._loops.append(loop)
            self._region(body)
            self._loops.pop()
            if round_ == _ROUNDS:
                break
            widened = {k: self._widened(carried[k], self.interval(body.results[k]),
                                        op.results[k], last=round_ == _ROUNDS - 1)
                       for k in ints}
            if widened == carried:
                break
            carried = widened
        for k in ints:
            self._set(op.results[k], carried[k], {})
        for k, value in enumerate(op.results):
            if k not in carried:
                self._set(value, None, {})

    def _widened(self, assumed: Interval, next_: Interval, value: ir.Value,
                 last: bool) -> Interval:
        """``assumed``, each side the next value leaves widened to the widest a value carried
        as ``value`` can be (all sides at the ``last`` round)."""
        widest = (-COUNTER_LIMIT, COUNTER_LIMIT) if value in self._counters else (
            _range_of_type(value))
        if last:
            return widest if next_[0] < assumed[0] or next_[1] > assumed[1] else assumed
        return (assumed[0] if next_[0] >= assumed[0] else widest[0],
                assumed[1] if next_[1] <= assumed[1] else widest[1])


class _LoopTests:
    """The facts a ``while``'s test gives its body, by the way each tested value is computed
    from the carried values (a key: the same computation in the body has the same key)."""

    def __init__(self, op: ir.Op) -> None:
        self._inside = _defined_in(op)
        self._cond, self._body = op.regions
        self._facts: dict[tuple, list[tuple[str, Interval, Bounds]]] = {}

    def read_test(self, facts: IntFacts, cond: ir.Region) -> None:
        self._facts = {}
        self._read(facts, cond.results[0], cond.args)

    def _read(self, facts: IntFacts, test: ir.Value, args: list) -> None:
        op = test.producer
        if not isinstance(op, ir.Op):
            return
        if op.name in ("bitwise_and", "logical_and") and test.type.dtype == np.bool_:
            for operand in op.operands:
                self._read(facts, operand, args)
            return
        if op.name not in _TESTS or len(op.operands) != 2 or not _same_ints(*op.operands):
            return
        relation, reverse = _TESTS[op.name]
        e, b = op.operands[::-1] if reverse else op.operands
        for value, bound, side in ((e, b, relation), (b, e, ">" if relation == "<" else ">=")):
            key = self._key(value, args)
            if key is not None:
                self._facts.setdefault(key, []).append(
                    (side, facts.interval(bound), facts._upper(bound)
                     if side in ("<", "<=") else {}))

    def apply(self, facts: IntFacts, value: ir.Value) -> None:
        """Narrows ``value`` (an integer scalar of the body) by the test's facts of its key."""
        if not self._facts or _range_of_type(value) is None:
            return
        key = self._key(value, self._body.args)
        for side, (low, high), sizes in self._facts.get(key, ()) if key is not None else ():
            own_low, own_high = facts.interval(value)
            bounds = facts._bounds.get(value, {})
            if side == "<":
                own_high, bounds = min(own_high, high - 1), _tighter(bounds, _shifted(sizes, -1))
            elif side == "<=":
                own_high, bounds = min(own_high, high), _tighter(bounds, sizes)
            elif side == ">":
                own_low = max(own_low, low + 1)
            else:
                own_low = max(own_low, low)
            facts._set(value, (own_low, own_high), bounds)

    def _key(self, value: ir.Value, args: list) -> tuple | None:
        """How ``value`` is computed from the carried values (their positions), constants and
        values from outside the loop; None when by anything else."""
        for k, arg in enumerate(args):
            if arg is value:
                return ("arg", k)
        if value not in self._inside:
            return ("outside", id(value))
        op = value.producer
        if not isinstance(op, ir.Op):
            return None
        if op.name == "constant":
            constant = np.asarray(op.attrs["value"])
            return ("constant", constant.item(), str(value.type)) if constant.ndim == 0 else None
        if op.name not in _KEYED:
            return None
        keys = tuple(self._key(v, args) for v in op.operands)
        if None in keys:
            return None
        return (op.name, op.attrs.get("axis"), str(value.type), keys)


def _tighter(*bounds: Bounds) -> Bounds:
    """All of ``bounds`` at once: for each size, the least of their amounts."""
    out: Bounds = {}
    for each in bounds:
        for size, c in each.items():
            out[size] = min(c, out.get(size, c))
    return out


def _shifted(bounds: Bounds, amount: int) -> Bounds:
    """``bounds`` of a value plus at most ``amount`` (none for an unbounded amount)."""
    if abs(amount) >= 2**63:
        return {}
    return {size: c + amount for size, c in bounds.items()}


def _same_ints(a: ir.Value, b: ir.Value) -> bool:
    """Whether ``a`` and ``b`` are integer scalars of one dtype (compared exactly: NumPy
    compares int64 with uint64 as floats, whose rounding may make ``<=`` true of ``b + 1``)."""
    return _range_of_type(a) is not None and _range_of_type(b) is not None and (
        a.type.dtype == b.type.dtype and a.type.dtype.kind in "iu")


def _defined_in(op: ir.Op) -> set[ir.Value]:
    """The values defined inside ``op``'s regions (arguments and results, nested too)."""
    out: set[ir.Value] = set()
    for region in op.regions:
        out.update(region.args)
        for inner in region.ops:
            out.update(inner.results)
            out |= _defined_in(inner)
    return out


def _interval(op: ir.Op, facts: IntFacts) -> Interval | None:
    """The interval of ``op``'s integer scalar result, or None when it is its type's range."""
    name, result = op.name, op.results[0]
    if name == "constant":
        value = np.asarray(op.attrs["value"])
        return (int(value), int(value)) if value.ndim == 0 else None
    if name == "dim":
        array, axis = op.operands[0], op.attrs["axis"]
        static = array.type.shape[axis] if axis < array.type.ndim else None
        return _SIZE if static is None else (static, static)
    if name == "size":
        return _SIZE
    if name == "list_length":
        return (0, LIST_LENGTH_LIMIT)
    operands = [facts.interval(v) for v in op.operands]
    if name == "cast":
        exact = operands[0]
    elif name in EXACT and len(operands) == (1 if name in ("negative", "absolute") else 2):
        exact = EXACT[name](*operands)
    elif name in ("floor_divide", "remainder") and len(operands) == 2 and operands[1][0] > 0:
        a, b = operands
        exact = _corners(lambda x, y: x // y, a, b) if name == "floor_divide" else (
            0, min(b[1] - 1, a[1]) if a[0] >= 0 else b[1] - 1)
    elif name == "where" and len(operands) == 3:
        exact = (min(operands[1][0], operands[2][0]), max(operands[1][1], operands[2][1]))
    else:
        return None
    low, high = _range_of_type(result)
    if (name, *op.operands) in facts._tested:  # past its overflow test: exact, within int64
        return _intersect(exact, (low, high))
    return exact if low <= exact[0] and exact[1] <= high else None


def _intersect(a: Interval, b: Interval) -> Interval:
    return (max(a[0], b[0]), min(a[1], b[1]))


def _range_of_type(value: ir.Value) -> Interval | None:
    """The range of an integer (or bool) scalar's type; None for any other value."""
    t = value.type
    if not (isinstance(t, TensorType) and t.ndim == 0 and t.dtype.kind in "iub"):
        return None
    if t.dtype.kind == "b":
        return (0, 1)
    info = np.iinfo(t.dtype)
    return (int(info.min), int(info.max))


def _corners(f, a: Interval, b: Interval) -> Interval:
    """The interval of ``f`` over two intervals, for an ``f`` monotone in each operand on it
    (products; floor division by positive divisors): its values at the corners."""
    values = [f(x, y) for x in a for y in b]
    return (min(values), max(values))
