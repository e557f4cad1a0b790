"""Variables defined on some paths only, read afterwards (defined, or UnboundLocalError)."""


def message_if_flag(flag):
    if flag:
        message = "flag is set"
    return message


def negate_nonpositive(x):
    if x > 0:
        print("positive input")
    else:
        y = -x
    return y


def last_square(n):
    for i in range(n):
        last = i * i
    return last


def last_seen(values):
    i = 0
    while i < len(values):
        found = values[i]
        i += 1
    return found


def defined_in_both(x):
    if x % 2:
        parity = "odd"
    else:
        parity = "even"
    return parity


def kind_without_else(x):
    if x < 0:
        kind = "negative"
    elif x == 0:
        kind = "zero"
    return kind


def nested_definition(a, b):
    if a:
        if b:
            result = "both"
    else:
        result = "not a"
    return result


def first_bad(values):
    for v in values:
        if v < 0:
            bad = v
            break
    return bad


def delete_then_read(flag):
    x = 10
    if flag:
        del x
    return x


def print_if_defined(flag):
    if flag:
        value = 42
    print("value:", value)
    return "printed"


def parse_or_report(text):
    try:
        number = int(text)
    except ValueError:
        print("not a number:", text)
    return number


def late_tag(n):
    for i in range(n):
        if i > 2:
            tag = f"item{i}"
    return tag


def missing_global():
    return undefined_setting * 2  # noqa: F821 - the NameError is the behaviour under test


def comprehension_variable_leak():
    squares = [k * k for k in range(3)]
    return squares, k  # noqa: F821 - comprehension variables do not leak


def used_only_where_defined(flag, x):
    if flag:
        scaled = x * 10
        result = scaled + 1
    else:
        result = 0
    return result


def increment_if_started(started):
    if started:
        total = 0
    total = total + 1
    return total


def best_candidate(scores, minimum):
    for name, score in scores.items():
        if score >= minimum:
            best = name
            minimum = score
    return best, minimum


def closure_over_branch_variable(flag):
    if flag:
        value = 3

    def get():
        return value * 2

    return get()


def count_changes(values):
    changes = 0
    first = True
    for v in values:
        if not first and v != prev:  # noqa: F821 - prev is set by the previous iteration
            changes += 1
        prev = v  # noqa: F841 - read in the next iteration
        first = False
    return changes


def pick_operation(kind):
    if kind == "add":

        def op(a, b):
            return a + b
    elif kind == "sub":

        def op(a, b):
            return a - b

    return op(5, 3)


def nested_function_bad_call(flag, args):
    if flag:

        def scale(x):
            return x * 10

        return scale(*args)
    return "no call"


def delete_in_loop(values):
    for v in values:
        current = v * 2
        if v < 0:
            del current
    return current


CASES = [
    (message_if_flag, (True,)),
    (message_if_flag, (False,)),
    (negate_nonpositive, (-3,)),
    (negate_nonpositive, (3,)),
    (last_square, (4,)),
    (last_square, (0,)),
    (last_seen, (["a", "b"],)),
    (last_seen, ([],)),
    (defined_in_both, (3,)),
    (defined_in_both, (4,)),
    (kind_without_else, (-1,)),
    (kind_without_else, (0,)),
    (kind_without_else, (1,)),
    (nested_definition, (True, True)),
    (nested_definition, (True, False)),
    (nested_definition, (False, True)),
    (first_bad, ([1, -2, -3],)),
    (first_bad, ([1, 2],)),
    (delete_then_read, (False,)),
    (delete_then_read, (True,)),
    (print_if_defined, (True,)),
    (print_if_defined, (False,)),
    (parse_or_report, ("12",)),
    (parse_or_report, ("twelve",)),
    (late_tag, (5,)),
    (late_tag, (2,)),
    (missing_global, ()),
    (comprehension_variable_leak, ()),
    (used_only_where_defined, (True, 2)),
    (used_only_where_defined, (False, 2)),
    (increment_if_started, (True,)),
    (increment_if_started, (False,)),
    (best_candidate, ({"ann": 7, "bob": 9, "cy": 8}, 5)),
    (best_candidate, ({"ann": 7, "bob": 9}, 10)),
    (closure_over_branch_variable, (True,)),
    (closure_over_branch_variable, (False,)),
    (count_changes, ([1, 1, 2, 2, 2, 3, 1],)),
    (count_changes, ([],)),
    (pick_operation, ("add",)),
    (pick_operation, ("sub",)),
    (pick_operation, ("mul",)),
    (nested_function_bad_call, (True, (1,))),
    (nested_function_bad_call, (True, (1, 2))),
    (nested_function_bad_call, (False, ())),
    (delete_in_loop, ([1, 2],)),
    (delete_in_loop, ([1, -2],)),
]
