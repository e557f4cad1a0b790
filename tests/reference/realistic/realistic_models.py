"""Realistic model programs, written as a user would write them (before checking what autostage
supports). Each ``scenario_*(wrap)`` builds its data, wraps the user function(s) with ``wrap``
(identity, ``to_graph`` or ``convert(target=...)``) and returns everything observable: results of
several calls, with model weights or configuration changed between calls as a training loop does.
"""

from __future__ import annotations

import json
import time

import numpy as np

# ---------------------------------------------------------------------------------------------
# Class-based models whose weights change between calls


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return x @ self.w + self.b


def scenario_linear_sgd(wrap):
    """Fit y = x @ w_true with SGD; the staged forward pass must see each new weight."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3))
    y = x @ np.array([1.0, -2.0, 0.5])
    model = Linear(np.zeros(3), np.float64(0.0))
    forward = wrap(model)
    losses = []
    for _ in range(5):
        pred = forward(x)
        err = pred - y
        losses.append(float(np.mean(err ** 2)))
        model.w = model.w - 0.1 * (x.T @ err) / len(y)  # a new array each step
        model.b = model.b - 0.1 * np.mean(err)
    return losses, forward(x)


def scenario_in_place_weights(wrap):
    """``model.w *= 2`` updates the weight array in place between calls."""
    model = Linear(np.array([1.0, 2.0]), np.float64(1.0))
    forward = wrap(model)
    x = np.array([[1.0, 1.0], [2.0, 0.0]])
    first = forward(x)
    model.w *= 2
    return first, forward(x)


class MLP:
    def __init__(self, w1, w2, temperature):
        self.w1 = w1
        self.w2 = w2
        self.temperature = temperature  # a Python float the user changes between calls

    def forward(self, x):
        h = np.maximum(x @ self.w1, 0.0)
        logits = h @ self.w2 / self.temperature
        if logits.max() > 10.0:  # data-dependent branch
            logits = logits - logits.max()
        return logits


def scenario_mlp_temperature(wrap):
    rng = np.random.default_rng(1)
    model = MLP(rng.normal(size=(4, 8)), rng.normal(size=(8, 3)), 1.0)
    forward = wrap(model.forward)
    x = rng.normal(size=(5, 4))
    out = [forward(x)]
    model.temperature = 0.5
    out.append(forward(x))
    model.w2 = model.w2 * 3.0
    out.append(forward(x))
    return out


CONFIG = {"scale": 2.0}


def scaled_sum(x):
    return np.sum(x) * CONFIG["scale"]


def scenario_global_config(wrap):
    f = wrap(scaled_sum)
    x = np.arange(4.0)
    first = f(x)
    CONFIG["scale"] = 3.0
    try:
        return first, f(x)
    finally:
        CONFIG["scale"] = 2.0


# ---------------------------------------------------------------------------------------------
# Training loops


def train_logistic(w, x, y, lr, max_steps):
    """Gradient descent until the loss stops improving (early exit) or max_steps."""
    prev = np.inf
    step = 0
    for step in range(max_steps):  # noqa: B007 - the last step is returned
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        if prev - loss < 1e-4:
            break
        prev = loss
        w = w - lr * x.T @ (p - y) / y.shape[0]
    return w, step, prev


def scenario_training_loop(wrap):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(20, 3))
    y = (x[:, 0] > 0).astype(np.float64)
    train = wrap(train_logistic)
    return train(np.zeros(3), x, y, np.float64(0.5), np.int64(200))


# ---------------------------------------------------------------------------------------------
# Decoders with early exit


def greedy_decode(table, start, eos, max_len):
    """Follow argmax transitions from ``start``; stop after emitting ``eos``."""
    tokens = []
    tok = start
    for _ in range(max_len):
        tok = np.argmax(table[tok])
        tokens.append(tok)
        if tok == eos:
            break
    return np.array(tokens)


def scenario_greedy_decoder(wrap):
    table = np.array([[0.1, 0.7, 0.2, 0.0],
                      [0.0, 0.1, 0.8, 0.1],
                      [0.3, 0.0, 0.1, 0.6],
                      [1.0, 0.0, 0.0, 0.0]])
    decode = wrap(greedy_decode)
    return (decode(table, np.int64(0), np.int64(3), np.int64(10)),
            decode(table, np.int64(1), np.int64(0), np.int64(2)))


def first_confident(probs, threshold):
    """Index of the first step whose best probability passes ``threshold``, else -1."""
    for i in range(probs.shape[0]):
        best = probs[i].max()
        if best > threshold:
            return i
    return -1


def scenario_early_return_decoder(wrap):
    probs = np.array([[0.5, 0.5], [0.6, 0.4], [0.95, 0.05]])
    find = wrap(first_confident)
    return find(probs, np.float64(0.9)), find(probs, np.float64(0.99))


def best_running_scores(scores, max_steps):
    """Add each step's scores to the sorted running scores; stop when the best stops
    improving."""
    best = np.zeros(scores.shape[1])
    steps = 0
    while steps < max_steps:
        cand = np.sort(best + scores[steps % scores.shape[0]])[::-1]
        if cand[0] <= best[0] + 1e-9:
            break
        best = cand
        steps += 1
    return best, steps


def scenario_beam(wrap):
    scores = np.array([[0.5, 0.2, 0.1], [0.3, 0.3, 0.0], [-1.0, -2.0, -3.0]])
    return wrap(best_running_scores)(scores, np.int64(6))


# ---------------------------------------------------------------------------------------------
# Simulations with random draws (seeded)


def random_walk(rng, n):
    pos = 0.0
    path = []
    for _ in range(n):
        pos = pos + rng.normal()
        path.append(pos)
    return np.array(path)


def scenario_random_walk(wrap):
    walk = wrap(random_walk)
    rng = np.random.default_rng(3)
    return walk(rng, np.int64(5)), walk(rng, np.int64(5))  # the second call: fresh draws


def noisy_sum(x):
    return np.sum(x + np.random.rand(x.shape[0]))


def scenario_global_random(wrap):
    f = wrap(noisy_sum)
    np.random.seed(4)
    return f(np.zeros(3)), f(np.zeros(3))


# ---------------------------------------------------------------------------------------------
# Python numbers out of staged code: timing wrappers, statistics, flags from shapes


def timed(fn, *args):
    """A timing wrapper around a (staged) call: the clock is read outside the function."""
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def normalize(x):
    return (x - x.mean()) / (x.std() + 1e-12)


def scenario_timing_wrapper(wrap):
    f = wrap(normalize)
    runs = [timed(f, np.arange(float(n))) for n in (3, 4, 4)]
    return [out for out, _ in runs], [seconds >= 0.0 for _, seconds in runs]


def summarize(x, threshold):
    """Counts and fractions as Python numbers, as a reporting function returns them."""
    count = 0
    longest = 0
    run = 0
    for v in x:
        if v > threshold:
            count += 1
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    n = x.shape[0]
    return {"n": n, "count": count, "fraction": count / n, "longest_run": longest,
            "any": count > 0, "mean": x.mean()}


def scenario_statistics(wrap):
    stats = wrap(summarize)
    x = np.array([0.5, 2.0, 3.0, -1.0, 4.0, 5.0, 6.0])
    results = [stats(x, np.float64(1.0)), stats(x[:3], np.float64(2.5))]
    report = []
    for r in results:
        plain = {k: v for k, v in r.items() if k != "mean"}  # mean: a NumPy float64
        report.append((json.dumps(plain, sort_keys=True),
                       {k: type(v).__name__ for k, v in r.items()},
                       r["count"] * 2**62 // 2**61,  # Python ints downstream: exact, no wrap
                       r["fraction"] / 3))
    try:
        results[0]["count"] / (results[0]["n"] - 7)
    except ZeroDivisionError as e:
        report.append(str(e))
    return report


class WindowedModel:
    """Flags computed from shapes are Python bools: arithmetic on them is int arithmetic, and
    ``~flag`` (an index from the end) is ``-1 - flag``."""

    def __init__(self, window):
        self.window = window

    def __call__(self, x):
        n = x.shape[0]
        is_long = n > self.window
        stride = 1 + is_long  # 2 for long inputs
        last = x[~is_long]  # x[-2] for long inputs, x[-1] otherwise
        pooled = x[::stride].mean()
        return pooled + last, stride, is_long, ~is_long


def scenario_python_bool_model(wrap):
    model = wrap(WindowedModel(4))
    return [model(np.arange(float(n))) for n in (3, 6, 9, 2)]


SCENARIOS = [
    scenario_linear_sgd, scenario_in_place_weights, scenario_mlp_temperature,
    scenario_global_config, scenario_training_loop, scenario_greedy_decoder,
    scenario_early_return_decoder, scenario_beam, scenario_random_walk, scenario_global_random,
    scenario_timing_wrapper, scenario_statistics, scenario_python_bool_model,
]
