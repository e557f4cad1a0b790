"""Small models: RNNs over time, training loops with hand-derived gradients, beam search."""

import numpy as np


def _tanh_cell(x_t, h, w_x, w_h, b):
    return np.tanh(x_t @ w_x + h @ w_h + b)


def dynamic_rnn(xs, h0, w_x, w_h, b):
    # Loop over time (axis 0 of xs, its length is not part of the trace key), appending each
    # output to a list that becomes a staged tensor list, then np.stack.
    h = h0
    outputs = []
    for t in range(xs.shape[0]):
        h = _tanh_cell(xs[t], h, w_x, w_h, b)
        outputs.append(h)
    return np.stack(outputs), h


def rnn_until_saturated(xs, h0, w_x, w_h, b, limit):
    # Stops early once any unit saturates; returns the number of steps taken.
    h = h0
    steps = 0
    for x_t in xs:
        h = _tanh_cell(x_t, h, w_x, w_h, b)
        steps += 1
        if np.max(np.abs(h)) > limit:
            break
    return h, steps


def masked_rnn(xs, lengths, w_x, w_h, b):
    # Per-sequence lengths: rows past their length keep their previous state.
    h = np.zeros((xs.shape[1], w_h.shape[0]), dtype=xs.dtype)
    for t in range(xs.shape[0]):
        new_h = _tanh_cell(xs[t], h, w_x, w_h, b)
        alive = (t < lengths)[:, None]
        h = np.where(alive, new_h, h)
    return h


def linear_regression(x, y, lr, n_steps):
    # Gradient of mean squared error, derived by hand; the loss is printed every 5 steps.
    w = np.zeros(x.shape[1], dtype=x.dtype)
    b = x.dtype.type(0)
    n = x.shape[0]
    for step in range(n_steps):
        pred = x @ w + b
        err = pred - y
        loss = np.mean(err * err)
        if step % 5 == 0:
            print("step", step, "loss", loss)
        grad_w = 2.0 * (x.T @ err) / n
        grad_b = 2.0 * np.sum(err) / n
        w = w - lr * grad_w
        b = b - lr * grad_b
    return w, b


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logistic_regression(x, y, lr, n_steps, tol):
    w = np.zeros(x.shape[1])
    losses = []
    for step in range(n_steps):
        p = _sigmoid(x @ w)
        eps = 1e-12
        loss = -np.mean(y * np.log(p + eps) + (1.0 - y) * np.log(1.0 - p + eps))
        losses.append(loss)
        grad = x.T @ (p - y) / x.shape[0]
        if np.linalg.norm(grad) < tol:
            print("converged at step", step)
            break
        w -= lr * grad
    return w, np.stack(losses)


def momentum_sgd(grad_scale, x0, lr, beta, n_steps):
    # Minimises sum(grad_scale * x**2) with momentum; a staged loop over a NumPy step count.
    x = x0
    v = np.zeros_like(x0)
    i = np.int64(0)
    while i < n_steps:
        g = 2.0 * grad_scale * x
        v = beta * v + g
        x = x - lr * v
        i += 1
    return x


def beam_search(log_probs, k):
    # log_probs: (steps, vocab). Keeps the k best partial sequences at each step.
    scores = np.zeros(1, dtype=log_probs.dtype)
    seqs = np.zeros((1, 0), dtype=np.int64)
    for t in range(log_probs.shape[0]):
        cand = scores[:, None] + log_probs[t][None, :]
        flat = cand.reshape(-1)
        order = np.argsort(-flat, kind="stable")[:k]
        parent = order // log_probs.shape[1]
        token = order % log_probs.shape[1]
        seqs = np.concatenate([seqs[parent], token[:, None]], axis=1)
        scores = np.take_along_axis(flat, order, axis=0)
    return seqs, scores


def greedy_decode(logits, eos):
    # Manual argmax per step; stop at the end-of-sequence token.
    tokens = []
    total = logits.dtype.type(0)
    for t in range(logits.shape[0]):
        row = logits[t]
        best = 0
        for j in range(1, row.shape[0]):
            if row[j] > row[best]:
                best = j
        tokens.append(best)
        total = total + row[best]
        if best == eos:
            break
    return np.array(tokens), total


def kmeans_1d(x, centers, n_iter):
    for _ in range(n_iter):
        d = np.abs(x[:, None] - centers[None, :])
        assign = np.argmin(d, axis=1)
        new_centers = centers.copy()
        for c in range(centers.shape[0]):
            mask = assign == c
            if np.any(mask):
                new_centers[c] = np.mean(x[mask])
        if np.all(new_centers == centers):
            break
        centers = new_centers
    return centers


def attention_step(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=-1, keepdims=True)
    return w @ v


_RNG = np.random.default_rng(0)
_XS, _H0, _WX, _WH, _B = (_RNG.standard_normal(s) * 0.5 for s in [(5, 3), (4,), (3, 4), (4, 4),
                                                                   (4,)])
_XS32, _H032, _WX32, _WH32, _B32 = ((_RNG.standard_normal(s) * 0.5).astype(np.float32)
                                    for s in [(4, 3), (4,), (3, 4), (4, 4), (4,)])
_XB, _WXB, _WHB, _BB = (_RNG.standard_normal(s) * 0.5 for s in [(4, 2, 3), (3, 4), (4, 4), (4,)])
_X_LIN = np.array([[1.0, 2.0], [2.0, 0.5], [3.0, 1.0], [4.0, -1.0]])
_Y_LIN = np.array([3.0, 2.5, 4.0, 3.5])
_X_LOG = np.array([[1.0, 0.5], [1.0, -1.5], [1.0, 2.0], [1.0, -0.5], [1.0, 1.0]])
_Y_LOG = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
_LOGP = np.log(np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.25, 0.25, 0.5]]))

CASES = [
    (dynamic_rnn, (_XS, _H0, _WX, _WH, _B)),
    (dynamic_rnn, (_XS[:1], _H0, _WX, _WH, _B)),
    (dynamic_rnn, (_XS32, _H032, _WX32, _WH32, _B32)),
    (rnn_until_saturated, (_XS, _H0, _WX, _WH, _B, np.float64(0.9))),
    (rnn_until_saturated, (_XS, _H0, _WX, _WH, _B, np.float64(2.0))),
    (masked_rnn, (_XB, np.array([4, 2]), _WXB, _WHB, _BB)),
    (linear_regression, (_X_LIN, _Y_LIN, 0.05, 12)),
    (linear_regression, (_X_LIN.astype(np.float32), _Y_LIN.astype(np.float32), 0.05, 6)),
    (logistic_regression, (_X_LOG, _Y_LOG, 0.5, 30, 1e-3)),
    (logistic_regression, (_X_LOG, _Y_LOG, 0.5, 30, 0.5)),
    (momentum_sgd, (np.array([1.0, 0.5]), np.array([2.0, -3.0]), 0.1, 0.9, np.int64(25))),
    (momentum_sgd, (np.array([1.0], dtype=np.float32), np.array([2.0], dtype=np.float32),
                    np.float32(0.1), np.float32(0.5), np.int64(3))),
    (beam_search, (_LOGP, 2)),
    (beam_search, (_LOGP[:1], 3)),
    (greedy_decode, (np.array([[0.1, 2.0, 0.3], [0.5, 0.2, 0.1], [3.0, 0.0, 1.0]]), 0)),
    (greedy_decode, (np.array([[0.1, 2.0, 0.3], [0.5, 0.2, 0.9]], dtype=np.float32), 0)),
    (kmeans_1d, (np.array([0.0, 0.2, 0.1, 5.0, 5.2, 4.9]), np.array([0.0, 1.0]), 10)),
    (kmeans_1d, (np.array([1.0, 2.0]), np.array([0.0, 10.0, 20.0]), 3)),
    (attention_step, (_XS[:2], _XS, _XS[:, :2])),
]
