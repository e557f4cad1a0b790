"""Generators, try/except/else/finally, with statements, raise inside loops."""

import contextlib


def _countdown(n):
    while n > 0:
        yield n
        n -= 1


def _pairs(values):
    yield from zip(values, values[1:], strict=False)


def _checked_items(values):
    for v in values:
        if v is None:
            raise ValueError("missing item")
        yield v


class _InsufficientStock(Exception):
    def __init__(self, item, wanted, available):
        super().__init__(f"{item}: wanted {wanted}, only {available}")
        self.item = item


class _Recorder:
    def __init__(self, log, suppress=False):
        self.log = log
        self.suppress = suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append(f"exit {exc_type.__name__ if exc_type else None}")
        return self.suppress


def consume_countdown(n):
    return list(_countdown(n)), sum(_countdown(n))


def consecutive_differences(values):
    out = []
    for a, b in _pairs(values):
        out.append(b - a)
    return out


def manual_next(values):
    it = iter(values)
    first = next(it)
    second = next(it, "default")
    third = next(it, "default")
    return first, second, third


def exhausted_iterator():
    gen = _countdown(1)
    next(gen)
    return next(gen)


def parse_all(texts):
    values = []
    errors = 0
    for t in texts:
        try:
            v = int(t)
        except ValueError:
            errors += 1
        else:
            values.append(v)
        finally:
            print("parsed", t)
    return values, errors


def return_through_finally(x):
    log = []
    try:
        log.append("try")
        return 10 / x, log
    except ZeroDivisionError:
        log.append("except")
        return None, log
    finally:
        log.append("finally")


def break_through_finally(values):
    total = 0
    cleanups = 0
    for v in values:
        try:
            if v < 0:
                break
            if v == 0:
                continue
            total += v
        finally:
            cleanups += 1
    return total, cleanups


def validate_items(values):
    for i, v in enumerate(values):
        if not isinstance(v, (int, float)):
            raise TypeError(f"item {i} is {type(v).__name__}")
    return len(values)


def load_config(text):
    try:
        key, value = text.split("=")
    except ValueError as e:
        raise RuntimeError(f"bad config line: {text!r}") from e
    return {key.strip(): value.strip()}


def reserve(stock, item, qty):
    try:
        available = stock[item]
        if available < qty:
            raise _InsufficientStock(item, qty, available)
        stock[item] = available - qty
        return "reserved"
    except KeyError:
        return "unknown item"


def reserve_many(stock, orders):
    failed = []
    for item, qty in orders:
        try:
            reserve(stock, item, qty)
        except _InsufficientStock as e:
            failed.append((e.item, str(e)))
    return failed


def with_recorder(fail, suppress):
    log = []
    with _Recorder(log, suppress) as rec:
        log.append("body")
        if fail:
            raise KeyError("inside with")
        log.append(rec.suppress)
    return log


def suppressed_errors(values):
    results = []
    for v in values:
        with contextlib.suppress(ZeroDivisionError):
            results.append(12 // v)
    return results


def nested_try(a, b):
    log = []
    try:
        try:
            log.append(a / b)
        except ZeroDivisionError:
            log.append("inner zero")
            raise
        finally:
            log.append("inner finally")
    except ArithmeticError as e:
        log.append(type(e).__name__)
    return log


def consume_checked(values):
    total = 0
    try:
        for v in _checked_items(values):
            total += v
    except ValueError as e:
        return f"stopped at {total}: {e}"
    return total


def retry(failures, attempts):
    log = []
    attempt = 0
    while True:
        attempt += 1
        try:
            if attempt <= failures:
                raise ConnectionError(f"attempt {attempt} failed")
            log.append("connected")
            break
        except ConnectionError as e:
            log.append(str(e))
            if attempt >= attempts:
                raise TimeoutError("giving up") from e
    return attempt, log


def uncaught_conversion(text):
    return int(text) + 1


def generator_expression_total(rows):
    return sum(x * y for x, y in rows), max((len(str(r)) for r in rows), default=0)


def reraise_different(values):
    try:
        return values[10]
    except IndexError:
        raise LookupError("no tenth value") from None


def return_inside_with(values):
    log = []
    with _Recorder(log):
        for v in values:
            if v > 10:
                return v, log
        log.append("not found")
    return None, log


def break_inside_with_in_loop(batches):
    log = []
    for batch in batches:
        with _Recorder(log):
            if not batch:
                break
            log.append(sum(batch))
    return log


def continue_in_except(texts):
    numbers = []
    for t in texts:
        try:
            n = int(t)
        except ValueError:
            continue
        if n < 0:
            break
        numbers.append(n)
    return numbers


def return_in_loop_in_finally_try(values):
    log = []
    try:
        i = 0
        while True:
            if values[i] == "stop":
                return i, log
            log.append(values[i])
            i += 1
    except IndexError:
        log.append("ran off the end")
    finally:
        log.append("cleanup")
    return -1, log


CASES = [
    (consume_countdown, (4,)),
    (consume_countdown, (0,)),
    (consecutive_differences, ([1, 4, 9, 16],)),
    (manual_next, ([1, 2],)),
    (manual_next, ([],)),
    (exhausted_iterator, ()),
    (parse_all, (["1", "x", "3"],)),
    (return_through_finally, (4,)),
    (return_through_finally, (0,)),
    (return_through_finally, ("a",)),
    (break_through_finally, ([1, 0, 2, -1, 5],)),
    (break_through_finally, ([1, 2],)),
    (break_through_finally, ([1, "2"],)),
    (validate_items, ([1, 2.5],)),
    (validate_items, ([1, "2"],)),
    (load_config, ("name = value",)),
    (load_config, ("novalue",)),
    (reserve, ({"apple": 3}, "apple", 2)),
    (reserve, ({"apple": 3}, "pear", 2)),
    (reserve, ({"apple": 3}, "apple", 5)),
    (reserve_many, ({"apple": 3, "pear": 1}, [("apple", 2), ("pear", 2), ("apple", 1)])),
    (with_recorder, (False, False)),
    (with_recorder, (True, True)),
    (with_recorder, (True, False)),
    (suppressed_errors, ([1, 0, 5, 0],)),
    (nested_try, (1, 2)),
    (nested_try, (1, 0)),
    (consume_checked, ([1, 2, 3],)),
    (consume_checked, ([1, 2, None, 3],)),
    (retry, (2, 5)),
    (retry, (3, 3)),
    (uncaught_conversion, ("41",)),
    (uncaught_conversion, ("4.1",)),
    (generator_expression_total, ([(1, 2), (3, 4)],)),
    (generator_expression_total, ([],)),
    (reraise_different, ([1, 2],)),
    (reraise_different, (list(range(12)),)),
    (return_inside_with, ([1, 20, 3],)),
    (return_inside_with, ([1, 2],)),
    (break_inside_with_in_loop, ([[1, 2], [3], [], [4]],)),
    (continue_in_except, (["1", "x", "2", "-1", "3"],)),
    (return_in_loop_in_finally_try, (["a", "b", "stop", "c"],)),
    (return_in_loop_in_finally_try, (["a"],)),
]
