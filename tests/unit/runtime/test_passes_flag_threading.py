"""Flag threading: a cond on an early-return or break flag moves into the cond that set it,
and folding keeps the branch each path takes (same results and stdout, checked by
``optimized`` on every argument set)."""

import numpy as np
from test_passes_support import optimized, staged

X = np.array([3, 1, 2, 5], dtype=np.int64)


def early_return_then_write(a):  # quantecon's next_k_array: return on one path, write on the rest
    if a[0] + 1 < a[1]:
        a[0] += 1
        return a
    a[0] = 0
    a[1] += 1
    print("carried")
    return a


def break_or_assign(x):  # a sift-down: `j` assigned on the one path that does not break
    i = 0
    total = 0
    while True:
        c = 2 * i + 1
        if c >= x.shape[0]:
            break
        elif x[c] > 0:
            j = c
        else:
            break
        total += x[j]
        i = j
    return total


def _conds(text: str) -> int:
    return text.count("= cond ")


def test_the_rest_after_an_early_return_lands_on_the_path_that_did_not_return():
    module = staged(early_return_then_write, X)
    before = _conds(optimized(module, [], (X.copy(),), (np.array([1, 5, 0, 0]),)))
    after = optimized(staged(early_return_then_write, X),
                      ["flag_threading", "constant_folding", "dce"],
                      (X.copy(),), (np.array([1, 5, 0, 0]),))
    assert before == 2 and _conds(after) == 1
    assert "logical_not" not in after.split("= cond ")[1]  # no flag tested after the cond
    assert after.count("print") == 1


def test_a_break_flag_folds_in_the_loop_body():
    """``while not break_``: the body reads break_ as False, so the `if not break_` after the
    staged if that may break is threaded into it, even from its nested if."""
    args = [(X.copy(),), (np.array([1, -1, 2, 3, 4, 5, 6]),), (np.array([2, 3, 4, 5, 6, 7, 8]),)]
    before = optimized(staged(break_or_assign, X), [], *args)
    after = optimized(staged(break_or_assign, X), ["flag_threading", "constant_folding", "dce"],
                      *args)
    assert _conds(after) < _conds(before)
    body = after.split("body(")[1]
    assert "logical_not" not in body
