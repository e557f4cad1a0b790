"""Realistic numerics and model programs of issue 10, written as a user would write them (before
checking what autostage supports): recurrent cells with fused gates, search, optimisation, ODE
integration, dynamic programming, clustering, filtering. Each ``scenario_*(wrap)`` builds its data
(seeded), wraps the user function with ``wrap`` and returns what is observable.
"""

from __future__ import annotations

import math

import numpy as np


def _rng(seed):
    return np.random.default_rng(seed)


# --- recurrent cells -----------------------------------------------------------------------


def lstm_sequence(xs, w, u, b):
    hidden = u.shape[0]
    h = np.zeros(hidden)
    c = np.zeros(hidden)
    outputs = []
    for t in range(xs.shape[0]):
        gates = xs[t] @ w + h @ u + b
        i, f, g, o = np.split(gates, 4)
        i = 1.0 / (1.0 + np.exp(-i))
        f = 1.0 / (1.0 + np.exp(-f))
        o = 1.0 / (1.0 + np.exp(-o))
        c = f * c + i * np.tanh(g)
        h = o * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs), c


def scenario_lstm_split(wrap):
    rng = _rng(10)
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=(3, 16)) * 0.5
    u, b = rng.normal(size=(4, 16)) * 0.5, np.zeros(16)
    return wrap(lstm_sequence)(xs, w, u, b)


def gru_step(x, h, w, u, b):
    zr = x @ w[:, :2 * h.shape[0]] + h @ u[:, :2 * h.shape[0]] + b[:2 * h.shape[0]]
    z, r = np.split(1.0 / (1.0 + np.exp(-zr)), 2)
    n = np.tanh(x @ w[:, 2 * h.shape[0]:] + (r * h) @ u[:, 2 * h.shape[0]:]
                + b[2 * h.shape[0]:])
    return (1.0 - z) * n + z * h


def gru_run(xs, h, w, u, b):
    for t in range(xs.shape[0]):
        h = gru_step(xs[t], h, w, u, b)
    return h


def scenario_gru_split(wrap):
    rng = _rng(11)
    xs, h = rng.normal(size=(6, 3)), np.zeros(4)
    w, u, b = rng.normal(size=(3, 12)), rng.normal(size=(4, 12)), rng.normal(size=12) * 0.1
    return wrap(gru_run)(xs, h, w, u, b)


def elman_rnn(xs, w_in, w_rec):
    h = np.zeros(w_rec.shape[0])
    states = [h]
    for x in xs:
        h = np.tanh(w_in @ x + w_rec @ h)
        states.append(h)
    return np.array(states)


def scenario_elman_rows(wrap):
    rng = _rng(12)
    return wrap(elman_rnn)(rng.normal(size=(4, 2)), rng.normal(size=(3, 2)),
                           rng.normal(size=(3, 3)) * 0.5)


# --- search and decoding -------------------------------------------------------------------


def beam_search(log_probs, beam_width):
    steps, vocab = log_probs.shape
    scores = np.zeros(1)
    for t in range(steps):
        candidates = (scores[:, None] + log_probs[t][None, :]).ravel()
        order = np.argsort(-candidates)[:beam_width]
        scores = candidates[order]
    return scores


def beam_search_repeat(log_probs, beam_width):
    steps, vocab = log_probs.shape
    scores = np.zeros(beam_width)
    for t in range(steps):
        expanded = np.repeat(scores, vocab) + np.tile(log_probs[t], beam_width)
        best = np.argsort(expanded)[::-1][:beam_width]
        scores = expanded[best]
    return scores


def scenario_beam_search(wrap):
    lp = np.log(_rng(13).dirichlet(np.ones(5), size=4))
    return wrap(beam_search)(lp, 3), wrap(beam_search_repeat)(lp, 3)


def viterbi(log_start, log_trans, log_emit, observations):
    n_states = log_start.shape[0]
    T = observations.shape[0]
    dp = np.zeros((T, n_states))
    back = np.zeros((T, n_states), dtype=np.int64)
    dp[0] = log_start + log_emit[:, observations[0]]
    for t in range(1, T):
        scores = dp[t - 1][:, None] + log_trans
        back[t] = np.argmax(scores, axis=0)
        dp[t] = np.max(scores, axis=0) + log_emit[:, observations[t]]
    path = [int(np.argmax(dp[T - 1]))]
    for t in range(T - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return path[::-1], float(np.max(dp[T - 1]))


def scenario_viterbi(wrap):
    rng = _rng(14)
    start = np.log(np.array([0.6, 0.4]))
    trans = np.log(np.array([[0.7, 0.3], [0.4, 0.6]]))
    emit = np.log(rng.dirichlet(np.ones(3), size=2))
    obs = np.array([0, 1, 2, 2, 1, 0])
    return wrap(viterbi)(start, trans, emit, obs)


# --- optimisation --------------------------------------------------------------------------


def lbfgs(x, a, b, m, iters):
    s_hist = []
    y_hist = []
    g = a @ x - b
    for _ in range(iters):
        q = g.copy()
        alphas = []
        for i in range(len(s_hist) - 1, -1, -1):
            rho = 1.0 / (y_hist[i] @ s_hist[i])
            alpha = rho * (s_hist[i] @ q)
            q = q - alpha * y_hist[i]
            alphas.append(alpha)
        if len(s_hist) > 0:
            q = q * (s_hist[-1] @ y_hist[-1]) / (y_hist[-1] @ y_hist[-1])
        for i in range(len(s_hist)):
            rho = 1.0 / (y_hist[i] @ s_hist[i])
            beta = rho * (y_hist[i] @ q)
            q = q + s_hist[i] * (alphas[len(s_hist) - 1 - i] - beta)
        x_new = x - 0.5 * q
        g_new = a @ x_new - b
        s_hist.append(x_new - x)
        y_hist.append(g_new - g)
        if len(s_hist) > m:
            s_hist.pop(0)
            y_hist.pop(0)
        x, g = x_new, g_new
        if np.linalg.norm(g) < 1e-10:
            break
    return x


def scenario_lbfgs(wrap):
    rng = _rng(15)
    m = rng.normal(size=(4, 4))
    a = m @ m.T + 4 * np.eye(4)
    return wrap(lbfgs)(np.zeros(4), a, rng.normal(size=4), 3, 20)


def newton_system(x0, iters):
    x = x0
    for _ in range(iters):
        f = np.array([x[0] ** 2 + x[1] ** 2 - 4.0, math.exp(x[0]) + x[1] - 1.0])
        jac = np.array([[2 * x[0], 2 * x[1]], [math.exp(x[0]), 1.0]])
        step = np.linalg.solve(jac, f)
        x = x - step
        if np.abs(step).max() < 1e-12:
            break
    return x


def scenario_newton_nested_array(wrap):
    return wrap(newton_system)(np.array([1.0, -1.0]), 30)


def logistic_regression(x, y, lr, epochs):
    w = np.zeros(x.shape[1])
    b = 0.0
    losses = []
    for _ in range(epochs):
        z = x @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        losses.append(loss.item())
        w = w - lr * x.T @ (p - y) / x.shape[0]
        b = b - lr * float(np.mean(p - y))
    return w, b, losses


def scenario_logistic_item(wrap):
    rng = _rng(16)
    x = rng.normal(size=(30, 3))
    y = (x @ np.array([1.0, -1.0, 0.5]) > 0).astype(np.float64)
    return wrap(logistic_regression)(x, y, 0.5, 8)


def softmax_classifier(x, y, k, lr, steps):
    w = np.zeros((x.shape[1], k))
    onehot = np.eye(k)[y]
    for _ in range(steps):
        logits = x @ w
        logits = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p = p / p.sum(axis=1, keepdims=True)
        w = w - lr * x.T @ (p - onehot) / x.shape[0]
    loss = -np.mean(np.sum(onehot * np.log(p + 1e-12), axis=1))
    return w, loss


def scenario_softmax_eye(wrap):
    rng = _rng(17)
    x = rng.normal(size=(20, 3))
    y = np.argmax(x @ rng.normal(size=(3, 3)), axis=1)
    return wrap(softmax_classifier)(x, y, 3, 0.5, 10)


def power_iteration(a, iters):
    v = np.ones(a.shape[0]) / math.sqrt(a.shape[0])
    lam = 0.0
    for _ in range(iters):
        w = a @ v
        lam = float(v @ w)
        v = w / np.linalg.norm(w)
    return lam, v


def scenario_power_iteration(wrap):
    m = _rng(18).normal(size=(5, 5))
    return wrap(power_iteration)(m @ m.T, 50)


def conjugate_gradient(a, b, tol, max_iter):
    x = np.zeros_like(b)
    r = b - a @ x
    p = r.copy()
    rs = r @ r
    k = 0
    while k < max_iter and math.sqrt(rs) > tol:
        ap = a @ p
        alpha = rs / (p @ ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        k += 1
    return x, k


def scenario_conjugate_gradient(wrap):
    rng = _rng(19)
    m = rng.normal(size=(6, 6))
    return wrap(conjugate_gradient)(m @ m.T + 6 * np.eye(6), rng.normal(size=6), 1e-10, 100)


def gauss_seidel(a, b, sweeps):
    n = b.shape[0]
    x = np.zeros(n)
    for _ in range(sweeps):
        for i in range(n):
            s = b[i] - a[i, :i] @ x[:i] - a[i, i + 1:] @ x[i + 1:]
            x[i] = s / a[i, i]
    return x


def scenario_gauss_seidel(wrap):
    a = np.array([[4.0, 1.0, 0.0], [1.0, 5.0, 2.0], [0.0, 2.0, 6.0]])
    return wrap(gauss_seidel)(a, np.array([1.0, 2.0, 3.0]), 25)


# --- ODE integration ------------------------------------------------------------------------


def lotka_volterra(y):
    return np.array([1.1 * y[0] - 0.4 * y[0] * y[1], 0.1 * y[0] * y[1] - 0.4 * y[1]])


def rk4(y0, dt, steps):
    y = y0
    trajectory = [y0]
    for _ in range(steps):
        k1 = lotka_volterra(y)
        k2 = lotka_volterra(y + 0.5 * dt * k1)
        k3 = lotka_volterra(y + 0.5 * dt * k2)
        k4 = lotka_volterra(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        trajectory.append(y)
    return np.array(trajectory)


def scenario_rk4_trajectory(wrap):
    return wrap(rk4)(np.array([10.0, 5.0]), 0.05, 40)


def adaptive_euler_heun(y0, t_end, tol):
    t = 0.0
    h = 0.1
    y = y0
    ts = [t]
    ys = [y]
    while t < t_end:
        h = min(h, t_end - t)
        k1 = -2.0 * y + math.sin(t)
        k2 = -2.0 * (y + h * k1) + math.sin(t + h)
        err = abs(h * (k2 - k1) / 2.0)
        if err <= tol:
            t = t + h
            y = y + h * (k1 + k2) / 2.0
            ts.append(t)
            ys.append(y)
        h = 0.9 * h * math.sqrt(tol / max(err, 1e-16))
    return np.array(ts), np.array(ys)


def scenario_adaptive_ode(wrap):
    return wrap(adaptive_euler_heun)(1.0, 2.0, 1e-4)


# --- dynamic programming and integer algorithms ---------------------------------------------


def edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    d = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return int(d[n, m])


def scenario_edit_distance(wrap):
    a = np.array([ord(c) for c in "kitten"])
    b = np.array([ord(c) for c in "sitting"])
    return wrap(edit_distance)(a, b)


def sieve(n):
    is_prime = np.ones(n + 1, dtype=bool)
    is_prime[:2] = False
    for p in range(2, int(math.sqrt(n)) + 1):
        if is_prime[p]:
            is_prime[p * p::p] = False
    return np.nonzero(is_prime)[0]


def scenario_sieve(wrap):
    return wrap(sieve)(np.int64(50))


# --- clustering, statistics, signal processing ----------------------------------------------


def kmeans(points, centers, iters):
    k = centers.shape[0]
    for _ in range(iters):
        d = np.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=2)
        labels = np.argmin(d, axis=1)
        counts = np.bincount(labels, minlength=k)
        new_centers = []
        for c in range(k):
            members = points[labels == c]
            new_centers.append(members.mean(axis=0) if counts[c] > 0 else centers[c])
        centers = np.array(new_centers)
    return centers, labels


def scenario_kmeans(wrap):
    rng = _rng(20)
    pts = np.concatenate([rng.normal(size=(10, 2)), rng.normal(size=(10, 2)) + 4.0])
    return wrap(kmeans)(pts, pts[[0, 15]].copy(), 5)


def layer_norm_attention(q, k, v, mask, gamma, beta):
    scores = q @ k.T / math.sqrt(q.shape[1])
    scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ v
    mu = out.mean(axis=-1, keepdims=True)
    var = out.var(axis=-1, keepdims=True)
    return gamma * (out - mu) / np.sqrt(var + 1e-5) + beta


def scenario_masked_attention(wrap):
    rng = _rng(21)
    q, k, v = rng.normal(size=(4, 8)), rng.normal(size=(4, 8)), rng.normal(size=(4, 8))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    return wrap(layer_norm_attention)(q, k, v, mask, np.ones(8), np.zeros(8))


def conv1d(signal, kernel):
    n, m = signal.shape[0], kernel.shape[0]
    out = np.zeros(n - m + 1)
    for i in range(n - m + 1):
        out[i] = np.sum(signal[i:i + m] * kernel[::-1])
    return out


def median_filter(signal, width):
    half = width // 2
    padded = np.pad(signal, half, mode="edge")
    return np.array([np.median(padded[i:i + width]) for i in range(signal.shape[0])])


def scenario_conv_and_median(wrap):
    rng = _rng(22)
    s = rng.normal(size=12)
    return wrap(conv1d)(s, np.array([0.25, 0.5, 0.25])), wrap(median_filter)(s, 3)


def kalman_1d(zs, q, r):
    x, p = 0.0, 1.0
    estimates = []
    for z in zs:
        p = p + q
        gain = p / (p + r)
        x = x + gain * (z - x)
        p = (1 - gain) * p
        estimates.append(x)
    return np.array(estimates), p


def scenario_kalman(wrap):
    zs = 1.0 + 0.1 * _rng(23).normal(size=10)
    return wrap(kalman_1d)(zs, 1e-3, 0.01)


def pca(x, k):
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / (x.shape[0] - 1)
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(vals)[::-1][:k]
    return vals[order], np.abs(xc @ vecs[:, order])


def scenario_pca(wrap):
    return wrap(pca)(_rng(24).normal(size=(12, 3)) @ np.diag([3.0, 1.0, 0.2]), 2)


def histogram_equalize(img, levels):
    hist = np.bincount(img.ravel(), minlength=levels)
    cdf = np.cumsum(hist)
    cdf = (cdf - cdf.min()) * (levels - 1) / (cdf.max() - cdf.min())
    return cdf[img].astype(np.int64)


def scenario_histogram_equalization(wrap):
    return wrap(histogram_equalize)(_rng(25).integers(0, 8, size=(4, 5)), 8)


def row_norms_comprehension(x):
    norms = [math.sqrt(float(row @ row)) for row in x]
    centered = [x[i] - x[i].mean() for i in range(x.shape[0])]
    return np.array(norms), np.stack(centered, axis=1), sum(norms)


def scenario_row_comprehensions(wrap):
    return wrap(row_norms_comprehension)(_rng(26).normal(size=(4, 3)))


def lookup_embeddings(tokens, table):
    total = np.zeros(table.shape[1])
    for t in tokens:
        total = total + EMBEDDINGS[t] * table[t, 0]
    return total / tokens.shape[0]


EMBEDDINGS = np.arange(12.0).reshape(4, 3) / 10.0


def scenario_global_table_lookup(wrap):
    return wrap(lookup_embeddings)(np.array([0, 3, 1, 3]), np.ones((4, 3)) * 2.0)


SCENARIOS = [
    scenario_lstm_split, scenario_gru_split, scenario_elman_rows, scenario_beam_search,
    scenario_viterbi, scenario_lbfgs, scenario_newton_nested_array, scenario_logistic_item,
    scenario_softmax_eye, scenario_power_iteration, scenario_conjugate_gradient,
    scenario_gauss_seidel, scenario_rk4_trajectory, scenario_adaptive_ode,
    scenario_edit_distance, scenario_sieve, scenario_kmeans, scenario_masked_attention,
    scenario_conv_and_median, scenario_kalman, scenario_pca, scenario_histogram_equalization,
    scenario_row_comprehensions, scenario_global_table_lookup,
]


# --- small matrices (their sizes known to the trace) ------------------------------------------


def tracking_filter(zs, f, h, q, r, x0, p0):
    x, p = x0, p0
    out = []
    for z in zs:
        x = f @ x
        p = f @ p @ f.T + q
        s = h @ p @ h.T + r
        k = p @ h.T @ np.linalg.inv(s)
        x = x + k @ (z - h @ x)
        p = (np.eye(p.shape[0]) - k @ h) @ p
        out.append(x)
    return np.stack(out), p


def scenario_tracking_filter(wrap):
    rng = _rng(31)
    f = np.array([[1.0, 1.0], [0.0, 1.0]])
    return wrap(tracking_filter)(rng.standard_normal((30, 2)), f, np.eye(2), 0.01 * np.eye(2),
                                 0.1 * np.eye(2), np.zeros(2), np.eye(2))


def running_stats(x):
    n = x.shape[0]
    mean = np.zeros(x.shape[1])
    m2 = np.zeros(x.shape[1])
    for i in range(n):
        delta = x[i] - mean
        mean += delta / (i + 1)
        m2 += delta * (x[i] - mean)
    return mean, m2 / max(n - 1, 1)


def scenario_running_stats(wrap):
    rng = _rng(32)
    stats = wrap(running_stats)
    return stats(rng.standard_normal((7, 3))), stats(np.zeros((0, 3))), stats(
        rng.standard_normal((40, 3)))


SCENARIOS += [scenario_tracking_filter, scenario_running_stats]


# --- filtering, curve fitting and sequence models of issue 11 (fuzzing beyond the seeds) ---------


def particle_filter_step(particles, weights, observation, noise, u0, obs_std):
    """Propagate with pre-drawn noise, reweight, and resample systematically (a while loop over
    two cursors) when the effective sample size drops below half."""
    n = particles.shape[0]
    particles = 0.9 * particles + noise
    weights = weights * np.exp(-0.5 * ((observation - particles) / obs_std) ** 2)
    weights = weights / np.sum(weights)
    ess = 1.0 / np.sum(weights ** 2)
    if ess < n / 2:
        positions = (np.arange(n) + u0) / n
        cumsum = np.cumsum(weights)
        cumsum[-1] = 1.0
        idx = np.zeros(n, dtype=np.int64)
        i = 0
        j = 0
        while i < n:
            if positions[i] < cumsum[j]:
                idx[i] = j
                i += 1
            else:
                j += 1
        particles = particles[idx]
        weights = np.full(n, 1.0 / n)
    return particles, weights, np.sum(particles * weights), ess


def multinomial_resample(particles, weights, rng):
    n = particles.shape[0]
    return particles[rng.choice(n, size=n, p=weights)]


def scenario_particle_filter(wrap):
    rng = _rng(41)
    particles, noise = rng.normal(size=32), rng.normal(scale=0.3, size=32)
    weights = np.full(32, 1 / 32)
    step = wrap(particle_filter_step)
    # One trace for both: ess stays high with the wide likelihood (no resampling).
    resampled = step(particles, weights, 0.7, noise, 0.37, np.float64(0.5))
    kept = step(particles, weights, 0.7, noise, 0.37, np.float64(100.0))
    drawn = wrap(multinomial_resample)(particles, _rng(42).dirichlet(np.ones(32)), _rng(43))
    return resampled, kept, drawn


def gauss_newton_exp_fit(t, y, a0, b0, tol, max_iter):
    """y ~ a * exp(b * t) by Gauss-Newton, until the step is small."""
    params = np.array([a0, b0])
    it = 0
    step_norm = np.inf
    while step_norm > tol and it < max_iter:
        a, b = params[0], params[1]
        e = np.exp(b * t)
        jac = np.stack([e, a * t * e], axis=1)
        step = np.linalg.solve(jac.T @ jac, jac.T @ (y - a * e))
        params = params + step
        step_norm = np.linalg.norm(step)
        it += 1
    resid = y - params[0] * np.exp(params[1] * t)
    return params, it, float(np.sum(resid ** 2))


def scenario_gauss_newton(wrap):
    t = np.linspace(0.0, 1.0, 30)
    y = 2.0 * np.exp(-1.3 * t) + 0.01 * _rng(44).normal(size=30)
    return wrap(gauss_newton_exp_fit)(t, y, 1.0, -1.0, 1e-10, 50)


def viterbi_backpointer_list(log_init, log_trans, log_emit, obs):
    score = log_init + log_emit[:, obs[0]]
    backs = []
    for t in range(1, len(obs)):
        cand = score.reshape(-1, 1) + log_trans
        backs.append(cand.argmax(axis=0))
        score = cand.max(axis=0) + log_emit[:, obs[t]]
    state = int(score.argmax())
    path = [state]
    for bp in reversed(backs):
        state = int(bp[state])
        path.append(state)
    return path[::-1], score.max()


def scenario_viterbi_backpointer_list(wrap):
    rng = _rng(45)
    log_init = np.log(rng.dirichlet(np.ones(4)))
    log_trans = np.log(rng.dirichlet(np.ones(4), size=4))
    log_emit = np.log(rng.dirichlet(np.ones(6), size=4))
    return wrap(viterbi_backpointer_list)(log_init, log_trans, log_emit,
                                          rng.integers(0, 6, size=12))


def lstm_with_loss(xs, targets, wx, wh, b, wy, by, h0, c0):
    """Char-level LSTM forward and mean softmax cross-entropy; hidden states in a list."""
    h, c = h0, c0
    hs = [h0]
    loss = 0.0
    for x, tgt in zip(xs, targets, strict=True):
        i, f, o, g = np.split(wx[x] + hs[-1] @ wh + b, 4)
        i, f, o = 1 / (1 + np.exp(-i)), 1 / (1 + np.exp(-f)), 1 / (1 + np.exp(-o))
        c = f * c + i * np.tanh(g)
        h = o * np.tanh(c)
        hs.append(h)
        logits = h @ wy + by
        m = logits.max()
        loss -= (logits - m - np.log(np.exp(logits - m).sum()))[tgt]
    return np.stack(hs[1:]), loss / len(xs)


def scenario_lstm_loss(wrap):
    rng = _rng(46)
    vocab, hidden = 10, 8
    wx = rng.normal(scale=0.3, size=(vocab, 4 * hidden))
    wh = rng.normal(scale=0.3, size=(hidden, 4 * hidden))
    wy = rng.normal(scale=0.3, size=(hidden, vocab))
    return wrap(lstm_with_loss)(rng.integers(0, vocab, size=7), rng.integers(0, vocab, size=7),
                                wx, wh, rng.normal(scale=0.1, size=4 * hidden), wy,
                                np.zeros(vocab), np.zeros(hidden), np.zeros(hidden))


SCENARIOS += [scenario_particle_filter, scenario_gauss_newton, scenario_viterbi_backpointer_list,
              scenario_lstm_loss]


# --- written before checking what is supported (seventh session): a batched GRU encoder ------


def gru_encoder(xs, h0, w_z, w_r, w_n, u_z, u_r, u_n, b):
    """A time-major batch GRU: xs is (time, batch, inputs); all states and the last one."""
    h = h0
    states = []
    for t in range(len(xs)):
        x = xs[t]
        z = 1.0 / (1.0 + np.exp(-(x @ w_z + h @ u_z + b[0])))
        r = 1.0 / (1.0 + np.exp(-(x @ w_r + h @ u_r + b[1])))
        n = np.tanh(x @ w_n + (r * h) @ u_n + b[2])
        h = (1.0 - z) * n + z * h
        states.append(h)
    return np.stack(states), h


def attention_readout(states, query):
    """Dot-product attention of one query per batch row over the encoder's states."""
    scores = np.einsum("tbh,bh->bt", states, query)
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return np.einsum("bt,tbh->bh", weights, states), weights


def scenario_gru_encoder_attention(wrap):
    rng = _rng(41)
    steps, batch, inputs, hidden = 40, 24, 20, 32
    xs = rng.normal(size=(steps, batch, inputs))
    ws = [rng.normal(size=(inputs, hidden)) * 0.3 for _ in range(3)]
    us = [rng.normal(size=(hidden, hidden)) * 0.2 for _ in range(3)]
    b = rng.normal(size=(3, hidden)) * 0.1
    encode, read = wrap(gru_encoder), wrap(attention_readout)
    states, last = encode(xs, np.zeros((batch, hidden)), *ws, *us, b)
    context, weights = read(states, last)
    states[0] += 1.0  # the caller owns the results: changing one leaves the others
    short, _ = encode(xs[:3], last, *ws, *us, b)  # a second call, another length
    return states, last, context, weights, short


SCENARIOS += [scenario_gru_encoder_attention]


# --- written before checking what is supported (tenth session) -------------------------------
# A backtest, an image resize and a k-nearest-neighbour classifier. As first written, the
# backtest's running peak was `np.maximum.accumulate(equity)` (refused: not staged yet) and
# `max(best, equity[t])` of a Python float and a NumPy float (refused: the result's type would
# depend on the values); the resize wrote into `np.zeros((out_h, out_w))` in nested loops (then
# refused, since the tenth session staged).


def backtest(prices, fast, slow, fee):
    """A moving-average crossover strategy: equity curve, worst drawdown, trade days."""
    n = len(prices)
    cash = 1.0
    units = 0.0
    equity = np.empty(n)
    trades = []
    for t in range(n):
        if t >= slow:
            f = prices[t - fast:t].mean()
            s = prices[t - slow:t].mean()
            if f > s and units == 0.0:
                units = cash * (1 - fee) / prices[t]
                cash = 0.0
                trades.append(t)
            elif f < s and units > 0.0:
                cash = units * prices[t] * (1 - fee)
                units = 0.0
                trades.append(-t)
        equity[t] = cash + units * prices[t]
    peak = np.empty(n)
    best = -np.inf
    for t in range(n):
        best = max(best, float(equity[t]))
        peak[t] = best
    drawdown = (peak - equity) / peak
    return equity, drawdown.max(), trades


def resize_bilinear(img, out_h, out_w):
    h, w = img.shape
    out = np.zeros((out_h, out_w))
    sy = (h - 1) / max(out_h - 1, 1)
    sx = (w - 1) / max(out_w - 1, 1)
    for i in range(out_h):
        y = i * sy
        y0 = int(np.floor(y))
        y1 = min(y0 + 1, h - 1)
        dy = y - y0
        for j in range(out_w):
            x = j * sx
            x0 = int(x)
            x1 = min(x0 + 1, w - 1)
            dx = x - x0
            top = img[y0, x0] * (1 - dx) + img[y0, x1] * dx
            bot = img[y1, x0] * (1 - dx) + img[y1, x1] * dx
            out[i, j] = top * (1 - dy) + bot * dy
    return out


def knn_predict(train_x, train_y, query, k):
    preds = np.empty(len(query), dtype=train_y.dtype)
    for q in range(len(query)):
        d = ((train_x - query[q]) ** 2).sum(axis=1)
        nearest = np.argsort(d)[:k]
        votes = np.bincount(train_y[nearest], minlength=train_y.max() + 1)
        preds[q] = np.argmax(votes)
    return preds


def scenario_backtest(wrap):
    prices = 100 * np.exp(np.cumsum(_rng(47).normal(0, 0.01, 300)))
    return wrap(backtest)(prices, 5, 20, 0.001)


def scenario_resize_bilinear(wrap):
    return wrap(resize_bilinear)(_rng(48).random((13, 17)), 20, 9)


def scenario_knn(wrap):
    rng = _rng(49)
    return wrap(knn_predict)(rng.normal(size=(60, 3)), rng.integers(0, 3, 60),
                             rng.normal(size=(9, 3)), 5)


SCENARIOS += [scenario_backtest, scenario_resize_bilinear, scenario_knn]
