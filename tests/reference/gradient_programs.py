"""Gradient programs written the way a user writes them: plain NumPy models, losses, solvers and
training loops, using ``autostage.grad`` / ``value_and_grad`` / ``GradientTape`` /
``stop_gradient`` / ``custom_gradient`` / ``checkpoint`` / ``Variable`` where a user would.

Each program is ordinary Python: the scalar losses run as plain NumPy (and are checked against
finite differences by ``test_gradient_programs.py``), the training loops and solvers that call
``autostage.grad`` run plain (the gradient is then a staged function called eagerly) and
converted. Programs using ``GradientTape`` only run converted (a tape needs staged code).
"""

from __future__ import annotations

import numpy as np

import autostage

# --------------------------------------------------------------------------------------------
# Small building blocks
# --------------------------------------------------------------------------------------------


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def relu(z):
    return np.maximum(z, 0.0)


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def logsumexp(z, axis=-1):
    m = np.max(z, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(z - m), axis=axis))


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


# --------------------------------------------------------------------------------------------
# Classic models and losses
# --------------------------------------------------------------------------------------------


def logistic_regression_loss(w, b, x, y):
    p = sigmoid(x @ w + b)
    eps = 1e-12
    return -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))


def softmax_regression_loss(W, b, x, labels):
    logits = x @ W + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    n = x.shape[0]
    return -np.mean(log_probs[np.arange(n), labels])


def mlp_forward(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    h = relu(h @ params["W2"] + params["b2"])
    return h @ params["W3"] + params["b3"]


def mlp_loss(params, x, y):
    pred = mlp_forward(params, x)
    return np.mean((pred - y) ** 2)


def attention_loss(q, k, v, target):
    d = q.shape[-1]
    scores = q @ k.T / np.sqrt(d)
    weights = softmax(scores, axis=-1)
    out = weights @ v
    return 0.5 * np.sum((out - target) ** 2)


def layer_norm_loss(x, gamma, beta, w):
    return np.sum(layer_norm(x, gamma, beta) * w)


def transformer_block_loss(params, x):
    q = x @ params["Wq"]
    k = x @ params["Wk"]
    v = x @ params["Wv"]
    a = softmax(q @ k.T / np.sqrt(q.shape[1])) @ v
    h = layer_norm(x + a, params["gamma"], params["beta"])
    ff = h + np.tanh(h @ params["W_ff"])
    return np.mean(ff @ params["head"])


def polyval(coeffs, x):
    y = np.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


def poly_fit_loss(coeffs, x, y):
    return np.mean((polyval(coeffs, x) - y) ** 2)


# --------------------------------------------------------------------------------------------
# Piecewise functions with branches on data
# --------------------------------------------------------------------------------------------


def huber_loss(pred, target, delta=1.0):
    r = pred - target
    total = 0.0
    for i in range(len(r)):
        a = np.abs(r[i])
        if a <= delta:
            total = total + 0.5 * r[i] ** 2
        else:
            total = total + delta * (a - 0.5 * delta)
    return total / len(r)


def huber_loss_vectorized(pred, target, delta=1.0):
    r = pred - target
    a = np.abs(r)
    return np.mean(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def piecewise_cost(x, a):
    s = np.dot(a, x)
    if s < -1.0:
        y = -s - 0.5
    elif s < 1.0:
        y = 0.5 * s * s
    else:
        y = s - 0.5
    return y + 0.1 * np.sum(x ** 2)


def clipped_objective(x, lo, hi):
    m = np.mean(x)
    if m > hi:
        return np.sum((x - hi) ** 2)
    if m < lo:
        return np.sum((x - lo) ** 2)
    return np.sum(np.sin(x))


def leaky_layer(x, w):
    z = x @ w
    if np.sum(z) > 0:
        out = np.sum(z ** 2)
    else:
        out = 0.01 * np.sum(z)
    return out


# --------------------------------------------------------------------------------------------
# Iterative solvers to a tolerance (staged while loops), Newton
# --------------------------------------------------------------------------------------------


def fixed_point_state(W, u, tol=1e-12, max_iter=200):
    h = np.zeros(u.shape[0])
    diff = 1.0
    it = 0
    while diff > tol and it < max_iter:
        h_new = np.tanh(W @ h + u)
        diff = np.max(np.abs(h_new - h))
        h = h_new
        it += 1
    return h


def deq_loss(W, u, target):
    h = fixed_point_state(W, u)
    return np.sum((h - target) ** 2)


def newton_sqrt(a, tol=1e-12):
    x = a
    while np.max(np.abs(x * x - a)) > tol:
        x = 0.5 * (x + a / x)
    return x


def sqrt_loss(a):
    weights = np.arange(1, a.shape[0] + 1)
    return np.sum(newton_sqrt(a) * weights)


def cubic_root(a, b, tol=1e-13):
    """The real root of x**3 + a*x - b = 0 (a > 0), by Newton's method to a tolerance."""
    x = b / (1.0 + a)
    step = 1.0
    while abs(step) > tol:
        f = x ** 3 + a * x - b
        step = f / (3 * x ** 2 + a)
        x = x - step
    return x


def energy(x, theta):
    return np.cosh(x) - theta * x


def newton_argmin(theta, x0, steps=8):
    """argmin_x energy(x, theta) by Newton's method; the derivatives come from autostage.grad
    (and grad of grad for the second derivative)."""
    dE = autostage.grad(energy)
    d2E = autostage.grad(dE)
    x = x0
    for _ in range(steps):
        x = x - dE(x, theta) / d2E(x, theta)
    return x


# --------------------------------------------------------------------------------------------
# MAML: gradient of a loss after an inner gradient step (grad of grad)
# --------------------------------------------------------------------------------------------


def task_loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def maml_objective(w, xs_train, ys_train, xs_test, ys_test, inner_lr=0.1):
    total = 0.0
    n_tasks = xs_train.shape[0]
    for t in range(n_tasks):
        g = autostage.grad(task_loss)(w, xs_train[t], ys_train[t])
        w_adapted = w - inner_lr * g
        total = total + task_loss(w_adapted, xs_test[t], ys_test[t])
    return total / n_tasks


def maml_step_tape(w, x_tr, y_tr, x_te, y_te, inner_lr=0.1, outer_lr=0.05):
    with autostage.GradientTape() as outer:
        outer.watch(w)
        with autostage.GradientTape() as inner:
            inner.watch(w)
            inner_loss = task_loss(w, x_tr, y_tr)
        g = inner.gradient(inner_loss, w)
        w_fast = w - inner_lr * g
        outer_loss = task_loss(w_fast, x_te, y_te)
    meta_grad = outer.gradient(outer_loss, w)
    return w - outer_lr * meta_grad, outer_loss


# --------------------------------------------------------------------------------------------
# Recurrent networks
# --------------------------------------------------------------------------------------------


def rnn_forward(Wx, Wh, b, xs):
    h = np.zeros(Wh.shape[0])
    outs = []
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h + b)
        outs.append(h)
    return np.stack(outs)


def rnn_loss(Wx, Wh, b, xs, targets):
    hs = rnn_forward(Wx, Wh, b, xs)
    return np.mean((hs - targets) ** 2)


def rnn_loss_dynamic_length(Wx, Wh, b, xs, targets, length):
    """The same RNN over the first ``length`` steps (``length`` an np.int64: a staged loop)."""
    h = np.zeros(Wh.shape[0])
    outs = []
    for t in range(length):
        h = np.tanh(Wx @ xs[t] + Wh @ h + b)
        outs.append(h)
    hs = np.stack(outs)
    return np.mean((hs - targets[:length]) ** 2)


def gru_cell(params, h, x):
    z = sigmoid(params["Wz"] @ x + params["Uz"] @ h + params["bz"])
    r = sigmoid(params["Wr"] @ x + params["Ur"] @ h + params["br"])
    h_tilde = np.tanh(params["Wh"] @ x + params["Uh"] @ (r * h) + params["bh"])
    return (1 - z) * h + z * h_tilde


def gru_sequence_loss(params, xs, target):
    h = np.zeros(params["bz"].shape[0])
    for x in xs:
        h = gru_cell(params, h, x)
    return np.sum((h - target) ** 2)


def lstm_loss(W, U, b, xs, y):
    hidden = U.shape[1]
    h = np.zeros(hidden)
    c = np.zeros(hidden)
    outputs = []
    for t in range(len(xs)):
        gates = W @ xs[t] + U @ h + b
        i = sigmoid(gates[:hidden])
        f = sigmoid(gates[hidden:2 * hidden])
        o = sigmoid(gates[2 * hidden:3 * hidden])
        g = np.tanh(gates[3 * hidden:])
        c = f * c + i * g
        h = o * np.tanh(c)
        outputs.append(h)
    H = np.stack(outputs)
    return np.mean((H.sum(axis=1) - y) ** 2)


# --------------------------------------------------------------------------------------------
# Physics: explicit Euler over a staged loop
# --------------------------------------------------------------------------------------------


def simulate_projectile(v0, dt, n_steps, drag=0.1):
    pos = np.zeros(2)
    vel = v0
    g = np.array([0.0, -9.81])
    for _ in range(n_steps):
        acc = g - drag * np.linalg.norm(vel) * vel
        pos = pos + dt * vel
        vel = vel + dt * acc
    return pos


def projectile_miss(v0, target, n_steps=120):
    pos = simulate_projectile(v0, 0.01, n_steps)
    return np.sum((pos - target) ** 2)


def projectile_x(v0, n_steps=120):
    return simulate_projectile(v0, 0.01, n_steps)[0]


# --------------------------------------------------------------------------------------------
# Hessian-vector products
# --------------------------------------------------------------------------------------------


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def hessian_vector_product(x, v):
    def grad_dot_v(x):
        return np.dot(autostage.grad(rosenbrock)(x), v)
    return autostage.grad(grad_dot_v)(x)


def hessian_vector_product_args(x, v):
    """The same HVP with ``v`` passed as an argument of the differentiated function (not
    captured by the closure)."""
    def grad_dot_v(x, v):
        return np.dot(autostage.grad(rosenbrock)(x), v)
    return autostage.grad(grad_dot_v)(x, v)


def hvp_tape(x, v):
    with autostage.GradientTape() as outer:
        outer.watch(x)
        with autostage.GradientTape() as inner:
            inner.watch(x)
            y = rosenbrock(x)
        g = inner.gradient(y, x)
        gv = np.sum(g * v)
    return outer.gradient(gv, x)


def hvp_quadratic_form(x, v):
    """v^T H v: a scalar built from a Hessian-vector product (third derivatives to check)."""
    return np.dot(v, hessian_vector_product(x, v))


def hvp_quadratic_form_args(x, v):
    return np.dot(v, hessian_vector_product_args(x, v))


# --------------------------------------------------------------------------------------------
# custom_gradient: gradient clipping
# --------------------------------------------------------------------------------------------


@autostage.custom_gradient
def clip_gradient(x):
    def grad_fn(dy):
        return np.clip(dy, -1.0, 1.0)
    return x, grad_fn


def clipped_loss(w, x, y):
    pred = clip_gradient(x @ w)
    return np.sum((pred - y) ** 2)


@autostage.custom_gradient
def clip_by_norm(x):
    def grad_fn(dy):
        norm = np.sqrt(np.sum(dy * dy))
        if norm > 1.0:
            return dy / norm
        return dy
    return x * 1.0, grad_fn


def norm_clipped_loss(w, x, y):
    h = clip_by_norm(np.tanh(x @ w))
    return np.sum((h - y) ** 2)


# --------------------------------------------------------------------------------------------
# stop_gradient: a DQN loss with the target computed from the same network
# --------------------------------------------------------------------------------------------


def q_values(params, s):
    h = np.tanh(s @ params["W1"] + params["b1"])
    return h @ params["W2"]


def dqn_loss(params, s, a, r, s_next, gamma=0.9):
    q = q_values(params, s)
    q_taken = q[np.arange(s.shape[0]), a]
    target = r + gamma * np.max(q_values(params, s_next), axis=1)
    target = autostage.stop_gradient(target)
    return np.mean((q_taken - target) ** 2)


def dqn_loss_target_network(params, target_params, s, a, r, s_next, gamma=0.9):
    q = q_values(params, s)
    q_taken = q[np.arange(s.shape[0]), a]
    target = r + gamma * np.max(q_values(target_params, s_next), axis=1)
    return np.mean((q_taken - target) ** 2)


# --------------------------------------------------------------------------------------------
# checkpointed residual blocks
# --------------------------------------------------------------------------------------------


def residual_block(h, W, b):
    return h + np.tanh(h @ W + b)


def deep_resnet_loss(Ws, bs, x, y):
    h = x
    for W, b in zip(Ws, bs, strict=True):
        h = autostage.checkpoint(residual_block)(h, W, b)
    return np.mean((h - y) ** 2)


# --------------------------------------------------------------------------------------------
# Pytrees of parameters, float32
# --------------------------------------------------------------------------------------------


def autoencoder_loss(params, x):
    W_enc, b_enc = params["encoder"]
    W_dec, b_dec = params["decoder"]
    code = np.tanh(x @ W_enc + b_enc)
    recon = code @ W_dec + b_dec
    return np.mean((recon - x) ** 2) + 1e-3 * np.sum(W_enc ** 2)


def linear_tuple_loss(params, x, y):
    w, b = params
    return np.mean((x @ w + b - y) ** 2)


def train_float32_classifier(w, b, x, y, lr=0.5, steps=20):
    """Logistic regression in float32 trained with value_and_grad (weights stay float32)."""
    loss_and_grads = autostage.value_and_grad(logistic_regression_loss, argnums=(0, 1))
    losses = []
    for _ in range(steps):
        loss, (dw, db) = loss_and_grads(w, b, x, y)
        w = w - lr * dw
        b = b - lr * db
        losses.append(loss)
    return w, b, np.stack(losses)


# --------------------------------------------------------------------------------------------
# Training loops (early stopping), tapes, Variables
# --------------------------------------------------------------------------------------------


def mse(w, x, y):
    r = x @ w - y
    return np.mean(r * r)


def train_until_converged(w, x, y, lr=0.1, tol=1e-6, max_steps=500):
    loss = mse(w, x, y)
    step = 0
    while loss > tol and step < max_steps:
        g = autostage.grad(mse)(w, x, y)
        w = w - lr * g
        loss = mse(w, x, y)
        step += 1
    return w, loss, step


def train_with_early_stopping(params, x_tr, y_tr, x_val, y_val, lr=0.05, patience=5,
                              max_epochs=300):
    best = np.inf
    best_params = params
    bad_epochs = 0
    epoch = 0
    while bad_epochs < patience and epoch < max_epochs:
        loss, grads = autostage.value_and_grad(mlp_loss)(params, x_tr, y_tr)
        params = {k: params[k] - lr * grads[k] for k in params}
        val = mlp_loss(params, x_val, y_val)
        if val < best - 1e-6:
            best = val
            best_params = params
            bad_epochs = 0
        else:
            bad_epochs += 1
        epoch += 1
    return best_params, best, epoch


def train_linear_with_patience(params, x_tr, y_tr, x_val, y_val, lr=0.05, patience=3,
                               max_epochs=400):
    """Early stopping on a validation loss; the parameters are a tuple ``(w, b)``."""
    best = np.inf
    best_params = params
    bad_epochs = 0
    epoch = 0
    while bad_epochs < patience and epoch < max_epochs:
        grads = autostage.grad(linear_tuple_loss)(params, x_tr, y_tr)
        params = (params[0] - lr * grads[0], params[1] - lr * grads[1])
        val = linear_tuple_loss(params, x_val, y_val)
        if val < best - 1e-9:
            best = val
            best_params = params
            bad_epochs = 0
        else:
            bad_epochs += 1
        epoch += 1
    return best_params, best, epoch


def train_logistic_with_tape(w, b, x, y, lr=0.5, tol=0.3, max_steps=200):
    loss = logistic_regression_loss(w, b, x, y)
    step = 0
    while loss > tol and step < max_steps:
        with autostage.GradientTape() as tape:
            tape.watch(w)
            tape.watch(b)
            loss = logistic_regression_loss(w, b, x, y)
        dw, db = tape.gradient(loss, [w, b])
        w = w - lr * dw
        b = b - lr * db
        step += 1
    return w, b, loss, step


def fit_polynomial(coeffs, x, y, lr=0.1, steps=200):
    """Gradient descent on poly_fit_loss (``steps`` an np.int64: a staged loop)."""
    first = poly_fit_loss(coeffs, x, y)
    for _ in range(steps):
        loss, g = autostage.value_and_grad(poly_fit_loss)(coeffs, x, y)
        coeffs = coeffs - lr * g
    return coeffs, first, poly_fit_loss(coeffs, x, y)


class LinearModel:
    def __init__(self, n_in, n_out, seed=0):
        rng = np.random.default_rng(seed)
        self.W = autostage.Variable(rng.standard_normal((n_in, n_out)) * 0.1)
        self.b = autostage.Variable(np.zeros(n_out))

    def __call__(self, x):
        return x @ self.W.read() + self.b.read()

    def variables(self):
        return [self.W, self.b]


def make_train_step(model, lr=0.1, target="cpu"):
    @autostage.convert(target=target)
    def train_step(x, y):
        with autostage.GradientTape() as tape:
            loss = np.mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.variables())
        for v, g in zip(model.variables(), grads, strict=True):
            v.assign(v.read() - lr * g)
        return loss
    return train_step


def make_train_step_inline(model, lr=0.1, target="cpu"):
    """As make_train_step, with the Variables read in the step itself (not in model.__call__)."""
    @autostage.convert(target=target)
    def train_step(x, y):
        with autostage.GradientTape() as tape:
            pred = x @ model.W.read() + model.b.read()
            loss = np.mean((pred - y) ** 2)
        grads = tape.gradient(loss, model.variables())
        for v, g in zip(model.variables(), grads, strict=True):
            v.assign(v.read() - lr * g)
        return loss
    return train_step


class TwoLayerNet:
    def __init__(self, n_in, n_hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.W1 = autostage.Variable(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in))
        self.b1 = autostage.Variable(np.zeros(n_hidden))
        self.w2 = autostage.Variable(rng.standard_normal(n_hidden) / np.sqrt(n_hidden))

    def __call__(self, x):
        h = np.tanh(x @ self.W1.read() + self.b1.read())
        return h @ self.w2.read()

    def trainable_variables(self):
        return (self.W1, self.b1, self.w2)


def fit_two_layer_net(model, x, y, lr=0.2, tol=1e-3, max_steps=2000):
    """Converted by the caller: a staged while loop, a tape in its body, assign_add updates."""
    loss = np.mean((model(x) - y) ** 2)
    first = loss
    step = 0
    while loss > tol and step < max_steps:
        with autostage.GradientTape() as tape:
            loss = np.mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables())
        for v, g in zip(model.trainable_variables(), grads, strict=True):
            v.assign_add(-lr * g)
        step += 1
    return first, loss, step


# --------------------------------------------------------------------------------------------
# More losses users write
# --------------------------------------------------------------------------------------------


def embedding_loss(E, ids, w):
    vectors = E[ids]  # repeated ids: their gradients add up
    pooled = np.mean(vectors, axis=0)
    return np.tanh(pooled @ w)


def gmm_nll(means, log_stds, logits, x):
    """Negative log-likelihood of 1-d data under a Gaussian mixture."""
    log_weights = logits - logsumexp(logits)
    stds = np.exp(log_stds)
    z = (x[:, None] - means[None, :]) / stds[None, :]
    log_comp = -0.5 * z ** 2 - log_stds[None, :] - 0.5 * np.log(2 * np.pi)
    return -np.mean(logsumexp(log_comp + log_weights[None, :], axis=1))


def ridge_validation_loss(log_lam, x_tr, y_tr, x_val, y_val):
    lam = np.exp(log_lam)
    d = x_tr.shape[1]
    w = np.linalg.solve(x_tr.T @ x_tr + lam * np.eye(d), x_tr.T @ y_tr)
    return np.mean((x_val @ w - y_val) ** 2)


def smoothing_kernel_loss(kernel, signal, target):
    smoothed = np.convolve(signal, kernel, mode="same")
    return np.mean((smoothed - target) ** 2)


def policy_gradient_loss(logits, actions, rewards, gamma=0.9):
    T = rewards.shape[0]
    discounts = gamma ** np.arange(T)
    returns = np.cumsum((rewards * discounts)[::-1])[::-1] / discounts
    log_probs = logits - logsumexp(logits, axis=1)[:, None]
    chosen = log_probs[np.arange(T), actions]
    return -np.sum(chosen * returns)


def trimmed_mean_loss(x, w):
    values = np.sort(x * w)
    k = len(values) // 5
    return np.mean(values[k:len(values) - k] ** 2)


def cosine_similarity_loss(a, b):
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.mean(1.0 - cos)


def softplus_margin_loss(w, x, y):
    margins = y * (x @ w)
    return np.mean(np.logaddexp(0.0, -margins)) + 0.01 * np.dot(w, w)


# --------------------------------------------------------------------------------------------
# Variable model, forward pass written in the training loop
# --------------------------------------------------------------------------------------------


def fit_two_layer_net_inline(model, x, y, lr=0.2, tol=1e-3, max_steps=2000):
    """fit_two_layer_net with the forward pass written out in the loop (Variables read there)."""
    W1, b1, w2 = model.trainable_variables()
    loss = np.mean((np.tanh(x @ W1.read() + b1.read()) @ w2.read() - y) ** 2)
    first = loss
    step = 0
    while loss > tol and step < max_steps:
        with autostage.GradientTape() as tape:
            h = np.tanh(x @ W1.read() + b1.read())
            loss = np.mean((h @ w2.read() - y) ** 2)
        grads = tape.gradient(loss, [W1, b1, w2])
        for v, g in zip([W1, b1, w2], grads, strict=True):
            v.assign_add(-lr * g)
        step += 1
    return first, loss, step


# --------------------------------------------------------------------------------------------
# More programs: in-place updates, linear algebra, RL objectives, tapes with options
# --------------------------------------------------------------------------------------------


def trajectory_loss(v0, target_traj, dt=0.05):
    """Euler steps writing each position into a preallocated array (``traj[i] = pos``)."""
    n = target_traj.shape[0]
    traj = np.zeros((n, 2))
    pos = np.zeros(2)
    vel = v0.copy()
    for i in range(n):
        vel[1] -= 9.81 * dt
        pos += dt * vel
        traj[i] = pos
    return np.mean((traj - target_traj) ** 2)


def exponential_smoothing_loss(alpha, x, target):
    """out[i] = alpha * x[i] + (1 - alpha) * out[i - 1], written in place."""
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return np.sum((out - target) ** 2)


def einsum_attention_loss(q, k, v):
    scores = np.einsum("id,jd->ij", q, k) / np.sqrt(q.shape[1])
    w = softmax(scores, axis=1)
    out = np.einsum("ij,jd->id", w, v)
    return np.sum(out ** 2)


def gaussian_nll(L_raw, mu, x):
    """Negative log-likelihood of rows of x under N(mu, L L^T), L lower-triangular."""
    L = np.tril(L_raw)
    cov = L @ L.T + 0.1 * np.eye(L.shape[0])
    diff = x - mu
    sign, logdet = np.linalg.slogdet(cov)
    sol = np.linalg.solve(cov, diff.T)
    maha = np.sum(diff.T * sol, axis=0)
    return 0.5 * np.mean(maha) + 0.5 * logdet


def inverse_quadratic_loss(A, b):
    M = A @ A.T + np.eye(A.shape[0])
    return b @ np.linalg.inv(M) @ b


def ppo_clip_loss(logp_new, logp_old, advantages, eps=0.2):
    ratio = np.exp(logp_new - logp_old)
    clipped = np.clip(ratio, 1 - eps, 1 + eps)
    return -np.mean(np.minimum(ratio * advantages, clipped * advantages))


def dropout_mlp_loss(W, x, y, seed=0, rate=0.5):
    rng = np.random.default_rng(seed)
    h = np.tanh(x @ W)
    mask = rng.random(h.shape) > rate
    h = h * mask / (1 - rate)
    return np.mean((h.sum(axis=1) - y) ** 2)


def generalized_mean(x, p):
    return np.mean(x ** p) ** (1.0 / p)


def straight_through_quantize_loss(w, x, y):
    w_q = w + autostage.stop_gradient(np.round(w * 4) / 4 - w)  # forward: quantized weights
    return np.mean((x @ w_q - y) ** 2)


def vector_jacobian_product(x, cotangent):
    with autostage.GradientTape() as tape:
        tape.watch(x)
        y = np.sin(x) * np.sum(x ** 2)
    return tape.gradient(y, x, output_gradients=cotangent)


def gan_step(g_params, d_params, z, real, lr=0.05):
    """One simultaneous GAN step: one persistent tape, two gradients."""
    with autostage.GradientTape(persistent=True) as tape:
        tape.watch(g_params)
        tape.watch(d_params)
        fake = np.tanh(z @ g_params)
        d_real = sigmoid(real @ d_params)
        d_fake = sigmoid(fake @ d_params)
        d_loss = -np.mean(np.log(d_real) + np.log(1 - d_fake))
        g_loss = -np.mean(np.log(d_fake))
    g_grad = tape.gradient(g_loss, g_params)
    d_grad = tape.gradient(d_loss, d_params)
    return g_params - lr * g_grad, d_params - lr * d_grad, g_loss, d_loss


def power_iteration_rayleigh(A, v0, n_iter=30):
    """A loop reading the matrix each iteration; differentiate the Rayleigh quotient w.r.t. A."""
    v = v0 / np.linalg.norm(v0)
    for _ in range(n_iter):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v @ A @ v


def train_with_break(w, x, y, lr=0.1, tol=1e-4):
    losses = []
    for _ in range(200):
        loss, g = autostage.value_and_grad(mse)(w, x, y)
        losses.append(loss)
        if loss < tol:
            break
        w = w - lr * g
    return w, len(losses)


def loss_after_training(lr, w0, x, y, steps=15):
    """Validation-free hyperparameter objective: the loss after `steps` gradient steps, to be
    differentiated w.r.t. the learning rate (a staged loop containing a gradient)."""
    w = w0
    for _ in range(steps):
        w = w - lr * autostage.grad(mse)(w, x, y)
    return mse(w, x, y)


def train_with_aux(w, x, y, lr=0.3, steps=30):
    def loss_with_preds(w):
        pred = sigmoid(x @ w)
        return -np.mean(y * np.log(pred) + (1 - y) * np.log(1 - pred)), pred

    for _ in range(steps):
        (loss, pred), g = autostage.value_and_grad(loss_with_preds, has_aux=True)(w)
        w = w - lr * g
    accuracy = np.mean((pred > 0.5) == (y > 0.5))
    return w, loss, accuracy


def temperature_softmax_loss(params, x, labels):
    logits = x @ params["W"] / params["temperature"]
    log_probs = logits - logsumexp(logits, axis=1)[:, None]
    return -np.mean(log_probs[np.arange(x.shape[0]), labels])


def dropout_mlp_loss_rng(W, x, y, rng, rate=0.5):
    """dropout_mlp_loss with the generator passed in (as autostage asks)."""
    h = np.tanh(x @ W)
    mask = rng.random(h.shape) > rate
    h = h * mask / (1 - rate)
    return np.mean((h.sum(axis=1) - y) ** 2)


def trajectory_loss_staged(v0, target_traj, n, dt=0.05):
    """trajectory_loss over a staged number of steps (``n`` an np.int64)."""
    traj = np.zeros((target_traj.shape[0], 2))
    pos = np.zeros(2)
    vel = v0.copy()
    for i in range(n):
        vel[1] -= 9.81 * dt
        pos += dt * vel
        traj[i] = pos
    return np.mean((traj[:n] - target_traj[:n]) ** 2)


def autoregressive_decoder_loss(W, U, h0, targets):
    """Each step feeds the previous output back (``outputs[-1]``): a loop that reads the list
    it appends to."""
    outputs = [h0]
    for _ in range(targets.shape[0]):
        prev = outputs[-1]
        outputs.append(np.tanh(prev @ W + np.tanh(outputs[0] @ U)))
    return np.mean((np.stack(outputs[1:]) - targets) ** 2)


def running_average_loss(alpha, xs):
    """An average over the history so far (``len(history)``, ``history[-1]``)."""
    history = [xs[0]]
    total = 0.0
    for t in range(1, xs.shape[0]):
        mean = (history[-1] * (len(history) - 1) + xs[t]) / len(history)
        history.append(alpha * mean + (1 - alpha) * history[-1])
        total = total + np.sum(history[-1] ** 2)
    return total


def bouncing_ball_x(v0, restitution, n_steps=150, dt=0.01):
    """A ball bouncing on the floor: a staged if (the bounce) in a staged loop."""
    pos = np.array([0.0, 1.0])
    vel = v0.copy()
    for _ in range(n_steps):
        vel[1] = vel[1] - 9.81 * dt
        pos = pos + dt * vel
        if pos[1] < 0.0:
            pos[1] = -pos[1]
            vel[1] = -restitution * vel[1]
    return pos[0] * pos[1] + np.sum(vel ** 2)


def landing_distance(v0, drag, dt=0.01, max_steps=1000):
    """Explicit Euler until the projectile hits the ground (break in a staged loop)."""
    pos = np.array([0.0, 0.0])
    vel = v0
    for _ in range(max_steps):
        vel = vel + dt * (np.array([0.0, -9.81]) - drag * vel)
        pos = pos + dt * vel
        if pos[1] < 0.0:
            break
    return pos[0]


def method_style_loss(w, x):
    """The same NumPy through array methods: .dot, .clip, .mean, .T, .reshape, .std."""
    z = x.dot(w).clip(-1.0, 1.0)
    return z.mean() + w.T.reshape(-1).std() + (x * x).sum(axis=0).max()


def concat_split_loss(params, x):
    flat = np.concatenate([params["a"].ravel(), params["b"]])
    first, second = np.split(flat, [4])
    return np.sum(np.tanh(x @ first.reshape(2, 2)) * second[:2]) + np.hstack([first, second]).var()


def masked_mean_loss(x, w):
    z = x * w
    positive = z[z > 0]
    return np.mean(positive ** 2) + np.sum(np.abs(z))


def cholesky_logdet_loss(A, b):
    S = A @ A.T + np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    logdet = 2 * np.sum(np.log(np.diag(L)))
    return logdet + b @ np.linalg.solve(S, b) + np.linalg.det(S) * 1e-3


def product_and_angles_loss(x, y):
    return np.prod(np.abs(x) + 0.5) + np.sum(np.arctan2(y, x)) + np.sum(np.hypot(x, y))


def take_along_axis_loss(logits, idx):
    log_probs = logits - logsumexp(logits, axis=1)[:, None]
    return -np.mean(np.take_along_axis(log_probs, idx[:, None], axis=1))


class VariableRNN:
    def __init__(self, n_in, n_hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.Wx = autostage.Variable(rng.standard_normal((n_hidden, n_in)) * 0.5)
        self.Wh = autostage.Variable(rng.standard_normal((n_hidden, n_hidden)) * 0.3)


def rnn_variable_train_step(model, xs, targets, length, lr=0.05):
    """Converted by the caller: a Variable RNN trained with a tape; ``length`` is a Python int
    (the loop unrolls) or an np.int64 (a staged loop inside the tape)."""
    with autostage.GradientTape() as tape:
        h = np.zeros(model.Wh.shape[0])
        loss = 0.0
        for t in range(length):
            h = np.tanh(model.Wx.read() @ xs[t] + model.Wh.read() @ h)
            loss = loss + np.sum((h - targets[t]) ** 2)
    grads = tape.gradient(loss, [model.Wx, model.Wh])
    for v, g in zip([model.Wx, model.Wh], grads, strict=True):
        v.assign(v.read() - lr * g)
    return loss


def rnn_sum_loss(Wx, Wh, xs, targets, length):
    """The loss of rnn_variable_train_step as a function of its weights."""
    h = np.zeros(Wh.shape[0])
    loss = 0.0
    for t in range(length):
        h = np.tanh(Wx @ xs[t] + Wh @ h)
        loss = loss + np.sum((h - targets[t]) ** 2)
    return loss


def hidden_activation_gradient(x, W1, W2, watch_hidden=False):
    """d output / d hidden activations (a saliency map on the hidden layer), from a tape."""
    with autostage.GradientTape() as tape:
        tape.watch(x)
        h = np.tanh(x @ W1)
        if watch_hidden:
            tape.watch(h)
        out = np.sum(np.tanh(h @ W2))
    return tape.gradient(out, h)
