"""Gradients: in-graph SGD with ``autostage.grad``, an RNN training step, a while-loop gradient.

Three workloads, each timed alternately in this process against its references (median time per
call; ratios in one run):

1. **SGD with grad**: the softmax regression of sgd.py (784->10, batch 200, 1000 steps in one
   staged call), its gradient from ``autostage.grad(loss)`` inside the staged loop, against the
   same loop with the hand-derived gradient (sgd.py's ``sgd``, staged) — goal <= 1.1x — and JAX
   ``jit`` of ``grad`` in a ``lax.fori_loop`` (when jax is installed). Results equal NumPy eager's
   hand-derived loop (rtol 1e-3).
2. **RNN training step**: a tanh cell 64->256, batch 128, sequence 128, outputs appended to a
   list and stacked, loss on the stacked outputs; ``autostage.value_and_grad`` for all weights
   against the staged forward pass alone (the cheap-gradient principle: goal <= 3x), JAX
   (``lax.scan`` + ``value_and_grad``, jit) and PyTorch eager autograd (when installed).
   Values and gradients (float64) must match JAX's, or PyTorch's without JAX (rtol 1e-4).
3. **While-loop gradient**: a fixed-point iteration run to a tolerance (a data-dependent trip
   count, which JAX cannot reverse-differentiate); ``autostage.grad`` against the finite
   differences it replaces (2n forward runs for n parameters) and JAX ``jacfwd`` (forward mode).

Every variant runs on one thread (BLAS, XLA, PyTorch): on this 2-core machine a multi-threaded
BLAS next to any other process slows down by up to 50x (seen here), which would measure the
machine's load, not the code. ``--default-threads`` instead leaves each library its own default
(every core: NumPy's OpenBLAS, which compiled products call, XLA's and PyTorch's thread pools),
which is what a user gets. On a CPU with AVX-512, OpenBLAS (used by NumPy, SciPy and so by
compiled code) runs its AVX-512 kernels (``OPENBLAS_CORETYPE=SkylakeX``): this machine's
environment sets ``OPENBLAS_CORETYPE=Haswell`` (AVX2), which multiplies 128x256 by 256x256
matrices at half the speed (0.35 vs 0.18 ms), while XLA and PyTorch use AVX-512 anyway.
``--blas-env`` keeps the environment's setting.

    .venv/bin/python benchmarks/gradients.py [--smoke] [--repeats R] [--target cpu|interpreter]
                                             [--blas-env] [--default-threads]
"""

from __future__ import annotations

import os
import sys

DEFAULT_THREADS = "--default-threads" in sys.argv
if DEFAULT_THREADS:
    sys.argv.remove("--default-threads")
else:
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")  # before NumPy, SciPy and PyTorch load their BLAS
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")


def _has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return any(line.startswith("flags") and " avx512f " in line + " "
                       and " avx512vl " in line + " " for line in cpuinfo)
    except OSError:
        return False


BLAS_ENV = "--blas-env" in sys.argv  # keep the environment's OPENBLAS_CORETYPE
if BLAS_ENV:
    sys.argv.remove("--blas-env")
elif _has_avx512():  # OpenBLAS's AVX-512 kernels, for every OpenBLAS variant
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"

import harness  # noqa: E402 - after the thread settings
import numpy as np  # noqa: E402 - after the thread settings
from sgd import BATCH, CLASSES, LEARNING_RATE, make_inputs, sgd  # noqa: E402 - after the thread settings

import autostage  # noqa: E402 - after the thread settings

REPEATS = 5
SMOKE_FEATURES, FEATURES = 16, 784
SMOKE_STEPS, STEPS = 3, 1000
RNN = dict(inputs=64, hidden=256, batch=128, steps=128)
SMOKE_RNN = dict(inputs=4, hidden=8, batch=3, steps=5)
FIXED_POINT_N, SMOKE_FIXED_POINT_N = 64, 4


# -- 1. SGD with autostage.grad ------------------------------------------------------------------

def softmax_loss(w, b, xb, yb):
    logits = xb @ w + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_p = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.sum(yb * log_p) / xb.shape[0]


loss_grads = autostage.grad(softmax_loss, argnums=(0, 1))


def sgd_with_grad(x, y, w, b, steps, lr):
    """The user's loop of sgd.py, with the gradient from autostage.grad."""
    batch = 200
    n_batches = x.shape[0] // batch
    for step in range(steps):
        start = (step % n_batches) * batch
        gw, gb = loss_grads(w, b, x[start:start + batch], y[start:start + batch])
        w = w - lr * gw
        b = b - lr * gb
    return w, b


def jax_sgd():
    import jax
    import jax.numpy as jnp

    def loss(w, b, xb, yb):
        logits = xb @ w + b
        logits = logits - jnp.max(logits, axis=1, keepdims=True)
        log_p = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
        return -jnp.sum(yb * log_p) / xb.shape[0]

    grads = jax.grad(loss, argnums=(0, 1))

    @jax.jit
    def train(x, y, w, b, steps, lr):
        n_batches = x.shape[0] // BATCH

        def step(i, wb):
            w, b = wb
            start = (i % n_batches) * BATCH
            xb = jax.lax.dynamic_slice_in_dim(x, start, BATCH)
            yb = jax.lax.dynamic_slice_in_dim(y, start, BATCH)
            gw, gb = grads(w, b, xb, yb)
            return w - lr * gw, b - lr * gb
        return jax.lax.fori_loop(0, steps, step, (w, b))

    return lambda *a: tuple(np.asarray(v) for v in train(*a[:4], int(a[4]), a[5]))


def run_sgd(args) -> tuple[list, list]:
    features, steps = (SMOKE_FEATURES, SMOKE_STEPS) if args.smoke else (FEATURES, STEPS)
    inputs = (*make_inputs(features), np.int64(steps), LEARNING_RATE)
    variants = {
        "autostage grad": harness.staged(sgd_with_grad, args.target),
        "autostage hand": harness.staged(sgd, args.target),
    }
    if harness.installed("jax"):
        variants["jax jit(grad)"] = jax_sgd()
    expected = sgd(*inputs)
    failures = _check(variants, inputs, expected, "sgd", rtol=1e-3, atol=1e-5)
    seconds = harness.median_seconds({k: (lambda f=f: f(*inputs)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"sgd with autostage.grad: softmax regression {features}->{CLASSES}, batch {BATCH}, "
        f"{steps} steps, target={args.label}, median of {args.repeats}", seconds,
        baseline="autostage hand", rate=("steps/s", steps))
    row = harness.Row(f"sgd grad vs hand x{steps}", seconds["autostage grad"],
                      seconds["autostage hand"], None, args.label, "<=1.1x hand",
                      seconds["autostage grad"] <= 1.1 * seconds["autostage hand"],
                      numba_label="autostage hand")
    return [row], failures


# -- 2. RNN training step ------------------------------------------------------------------------

def rnn_loss(w_x, w_h, b, xs, h0):
    h = h0
    outputs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w_x + h @ w_h + b)
        outputs.append(h)
    hs = np.stack(outputs)
    return np.mean(hs * hs)


def rnn_inputs(sizes):
    rng = np.random.default_rng(0)
    n, m, batch, steps = sizes["inputs"], sizes["hidden"], sizes["batch"], sizes["steps"]
    return (rng.standard_normal((n, m)) / np.sqrt(n), rng.standard_normal((m, m)) / np.sqrt(m),
            np.zeros(m), rng.standard_normal((steps, batch, n)), np.zeros((batch, m)))


def jax_rnn():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(w_x, w_h, b, xs, h0):
        def cell(h, x):
            h = jnp.tanh(x @ w_x + h @ w_h + b)
            return h, h
        _, hs = jax.lax.scan(cell, h0, xs)
        return jnp.mean(hs * hs)

    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    return lambda *a: _numpy_tree(step(*a))


def torch_rnn():
    import torch
    if not DEFAULT_THREADS:
        torch.set_num_threads(1)

    def step(w_x, w_h, b, xs, h0):
        params = [torch.tensor(p, requires_grad=True) for p in (w_x, w_h, b)]
        xs_t, h = torch.from_numpy(xs), torch.from_numpy(h0)
        outputs = []
        for t in range(xs_t.shape[0]):
            h = torch.tanh(xs_t[t] @ params[0] + h @ params[1] + params[2])
            outputs.append(h)
        hs = torch.stack(outputs)
        loss = torch.mean(hs * hs)
        loss.backward()
        return loss.item(), tuple(p.grad.numpy() for p in params)

    return step


def _numpy_tree(value):
    if isinstance(value, tuple | list):
        return tuple(_numpy_tree(v) for v in value)
    return np.asarray(value)


def run_rnn(args) -> tuple[list, list]:
    sizes = SMOKE_RNN if args.smoke else RNN
    inputs = rnn_inputs(sizes)
    forward = harness.staged(rnn_loss, args.target)
    train = autostage.value_and_grad(harness.staged(rnn_loss, args.target), argnums=(0, 1, 2))
    variants = {"autostage grad": train, "autostage forward": forward}
    references = {}
    if harness.installed("jax"):
        references["jax scan+grad"] = jax_rnn()
    if harness.installed("torch"):
        references["pytorch eager"] = torch_rnn()
    variants.update(references)
    expected = references[next(iter(references))](*inputs) if references else None
    failures = []
    if expected is not None:
        failures = _check({k: v for k, v in variants.items() if k != "autostage forward"},
                          inputs, expected, "rnn", rtol=1e-4, atol=1e-8)
    seconds = harness.median_seconds({k: (lambda f=f: f(*inputs)) for k, f in variants.items()},
                                     args.repeats, args.smoke)
    harness.print_variant_table(
        f"RNN training step: tanh cell {sizes['inputs']}->{sizes['hidden']}, batch "
        f"{sizes['batch']}, sequence {sizes['steps']}, list of outputs; target={args.label}, "
        f"median of {args.repeats}", seconds, baseline="autostage forward")
    row = harness.Row("rnn grad step vs forward", seconds["autostage grad"],
                      seconds["autostage forward"], None, args.label, "<=3x forward",
                      seconds["autostage grad"] <= 3 * seconds["autostage forward"],
                      numba_label="autostage forward")
    return [row], failures


# -- 3. gradient of a data-dependent while loop -------------------------------------------------

def fixed_point(w, b):
    """x = tanh(W x + b) iterated to a tolerance; the loss is the sum of the fixed point."""
    x = np.zeros(b.shape[0])
    change = 1.0
    while change > 1e-10:
        new = np.tanh(w @ x + b)
        change = np.max(np.abs(new - x))
        x = new
    return np.sum(x)


def fixed_point_steps(w, b) -> int:
    """How many iterations ``fixed_point`` runs (the stacks of its gradient hold one row each)."""
    x, change, steps = np.zeros(b.shape[0]), 1.0, 0
    while change > 1e-10:
        new = np.tanh(w @ x + b)
        change, x, steps = np.max(np.abs(new - x)), new, steps + 1
    return steps


def finite_difference_gradient(w, b, eps=1e-6):
    grad = np.zeros_like(b)
    for i in range(b.shape[0]):
        step = np.zeros_like(b)
        step[i] = eps
        grad[i] = (fixed_point(w, b + step) - fixed_point(w, b - step)) / (2 * eps)
    return grad


def jax_fixed_point():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(w, b):
        def cond(state):
            return state[1] > 1e-10

        def body(state):
            x, _ = state
            new = jnp.tanh(w @ x + b)
            return new, jnp.max(jnp.abs(new - x))
        x, _ = jax.lax.while_loop(cond, body, (jnp.zeros_like(b), jnp.asarray(1.0)))
        return jnp.sum(x)

    return jax.jit(jax.jacfwd(loss, argnums=1))


def run_fixed_point(args) -> tuple[list, list]:
    n = SMOKE_FIXED_POINT_N if args.smoke else FIXED_POINT_N
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((n, n)) * 0.5 / np.sqrt(n), rng.standard_normal(n)
    grad = autostage.grad(harness.staged(fixed_point, args.target), argnums=1)
    variants = {"autostage grad": lambda: grad(w, b),
                "finite differences (numpy)": lambda: finite_difference_gradient(w, b)}
    if harness.installed("jax"):
        jacfwd = jax_fixed_point()
        variants["jax jacfwd"] = lambda: np.asarray(jacfwd(w, b))
    expected = finite_difference_gradient(w, b)
    failures = [f"fixed point {k}: {why}" for k, f in variants.items()
                if (why := harness.mismatch(f(), expected, 1e-5, 1e-7, check_dtype=False))]
    seconds = harness.median_seconds(variants, args.repeats, args.smoke)
    harness.print_variant_table(
        f"gradient of a fixed-point iteration to tolerance, {n} parameters; target="
        f"{args.label}, median of {args.repeats}", seconds,
        baseline="finite differences (numpy)")
    steps = fixed_point_steps(w, b)
    print(f"memory at peak (tracemalloc; the loop ran {steps} iterations, and the gradient keeps "
          "each one's carried values and costly residuals):")
    for label in ("autostage grad", "finite differences (numpy)"):
        print(f"  {label:<28} {harness.peak_bytes(variants[label]) / 1024:>9.1f} KiB")
    print("  jax jacfwd: not measured (XLA's allocator is not traced)")
    row = harness.Row(f"while-loop gradient n={n} vs finite diff", seconds["autostage grad"],
                      seconds["finite differences (numpy)"], None, args.label,
                      "< finite diff", seconds["autostage grad"]
                      < seconds["finite differences (numpy)"], numba_label="finite diff")
    return [row], failures


def _check(variants, inputs, expected, name, rtol, atol) -> list[str]:
    failures = []
    for label, fn in variants.items():  # also the warm-up: traces and compiles
        why = harness.mismatch(fn(*inputs), expected, rtol, atol, check_dtype=False)
        if why:
            failures.append(f"{name} {label}: {why}")
    return failures


def run(args) -> harness.Report:
    rows, failures = [], []
    for part in (run_sgd, run_rnn, run_fixed_point):
        part_rows, part_failures = part(args)
        rows += part_rows
        failures += part_failures
    return harness.Report(rows, failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    print(f"OpenBLAS kernels: OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')!r}; "
          f"threads: {'each library default' if DEFAULT_THREADS else 'one per library'}")
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
