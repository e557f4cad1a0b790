"""The GPU column: RNN, SGD and a matrix product on the cuda target, against GPU peers.

Needs an NVIDIA GPU (run through the ``device`` tool when a task is lent one; there is none in
CI). Workloads are those of ``dynamic_rnn.py`` (batch 128, sequence 128, input 64, hidden 256,
float32) and ``sgd.py`` (784->10 softmax regression, batch 200, 200 steps in one call), and one
1024x1024 float32 product. Variants, in this process, median of ``--repeats`` timed calls after
a warm-up call:

* autostage: ``convert(fn, target="cuda")`` — NumPy arguments in, NumPy results out (the
  copies to and from the GPU are inside the time);
* torch: the same algorithm written with PyTorch on the GPU, inputs already on the GPU, results
  copied back to NumPy (cuBLAS products);
* cupy: the user's NumPy function itself called on CuPy arrays (NumPy dispatch), results copied
  back;
* numpy: the user's function, eager, on this machine's CPU.

Results are checked against NumPy (rtol 1e-3, atol 1e-4). Prints a table of milliseconds and
each variant's time as a ratio of autostage's.

    python benchmarks/cuda_gpu.py [--repeats R] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import time

import dynamic_rnn
import numpy as np
import sgd

import autostage

RTOL, ATOL = 1e-3, 1e-4


def _timed(fn, repeats: int) -> float:
    fn()  # warm-up: compilation, first transfers
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _close(got, want) -> bool:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return all(np.allclose(np.asarray(g), np.asarray(w), rtol=RTOL, atol=ATOL)
               for g, w in zip(got, want, strict=True))


def matmul(a, b):
    return a @ b


def _workloads(smoke: bool):
    rng = np.random.default_rng(0)
    f32 = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)  # noqa: E731
    batch, steps = (4, 3) if smoke else (128, 128)
    hidden = 16 if smoke else dynamic_rnn.HIDDEN
    features = 8 if smoke else dynamic_rnn.INPUT
    rnn_args = dynamic_rnn.make_inputs(batch, steps, features, hidden)
    n_feat = 16 if smoke else sgd.FEATURES
    x = f32(sgd.BATCH * sgd.BATCHES, n_feat)
    y = np.eye(sgd.CLASSES, dtype=np.float32)[rng.integers(0, sgd.CLASSES, len(x))]
    sgd_args = (x, y, np.zeros((n_feat, sgd.CLASSES), np.float32),
                np.zeros(sgd.CLASSES, np.float32), np.int64(3 if smoke else 200),
                sgd.LEARNING_RATE)
    size = 32 if smoke else 1024
    mm_args = (f32(size, size), f32(size, size))
    return [("rnn", dynamic_rnn.rnn, rnn_args, _torch_rnn),
            ("sgd", sgd.sgd, sgd_args, _torch_sgd),
            ("matmul", matmul, mm_args, lambda torch, a, b: a @ b)]


def _torch_rnn(torch, xs, h0, w, u, b):
    h, outputs = h0, []
    for t in range(xs.shape[0]):
        h = torch.tanh(xs[t] @ w + h @ u + b)
        outputs.append(h)
    return torch.stack(outputs)


def _torch_sgd(torch, x, y, w, b, steps, lr):
    batch = 200
    n_batches = x.shape[0] // batch
    for step in range(int(steps)):
        start = (step % n_batches) * batch
        xb, yb = x[start:start + batch], y[start:start + batch]
        logits = xb @ w + b
        logits = logits - logits.max(dim=1, keepdim=True).values
        p = torch.exp(logits)
        p = p / p.sum(dim=1, keepdim=True)
        grad = (p - yb) / batch
        w = w - float(lr) * (xb.T @ grad)
        b = b - float(lr) * grad.sum(dim=0)
    return w, b


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    import cupy
    import torch

    device = torch.device("cuda")
    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, "
          f"cupy {cupy.__version__}")
    failed = False
    rows = []
    for name, fn, inputs, torch_fn in _workloads(args.smoke):
        want = fn(*inputs)
        staged = autostage.convert(fn, target="cuda")
        on_gpu = [torch.as_tensor(a, device=device) if isinstance(a, np.ndarray) else a
                  for a in inputs]
        on_cupy = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]

        def torch_call(on_gpu=on_gpu, torch_fn=torch_fn):
            out = torch_fn(torch, *on_gpu)
            return tuple(o.cpu().numpy() for o in out) if isinstance(out, tuple) else (
                out.cpu().numpy())

        def cupy_call(on_cupy=on_cupy, fn=fn):
            out = fn(*on_cupy)
            return tuple(cupy.asnumpy(o) for o in out) if isinstance(out, tuple) else (
                cupy.asnumpy(out))

        variants = {"autostage": lambda s=staged, a=inputs: s(*a), "torch": torch_call,
                    "cupy": cupy_call, "numpy (CPU)": lambda f=fn, a=inputs: f(*a)}
        times = {}
        for label, call in variants.items():
            if not _close(call(), want):
                print(f"MISMATCH: {name} {label}")
                failed = True
            times[label] = _timed(call, args.repeats)
        rows.append((name, times))
    print(f"{'workload':10} " + " ".join(f"{k:>22}" for k in rows[0][1]))
    for name, times in rows:
        base = times["autostage"]
        cells = [f"{t * 1e3:9.2f} ms ({t / base:5.2f}x)" for t in times.values()]
        print(f"{name:10} " + " ".join(f"{c:>22}" for c in cells))
    print("(x: the variant's time / autostage's; above 1 means autostage is faster)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
