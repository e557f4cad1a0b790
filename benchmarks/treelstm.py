"""TreeLSTM: the AutoGraph paper's recursive model, trained one tree per SGD step.

The sentiment TreeLSTM (Tai et al. 2015, binary/constituency form, as in the seed paper):
synthetic SST-like binary trees of 5-40 leaves given as index arrays (children, word ids, a
label per node), embeddings 300 (fixed), hidden 150, 5 classes, a softmax loss at every node,
batch size 1, one SGD step per tree. The model is plain recursive NumPy code (``node``); the
variants, timed alternately in this process on the same trees from the same weights:

- ``autostage``: ``autostage.grad`` of the recursive loss under ``convert`` (staged recursion:
  one trace serves every tree shape), the SGD update in NumPy;
- ``pytorch eager``: the same recursion on torch tensors with autograd (a CPU build of torch);
- ``numpy forward``: the undecorated function, forward pass only (no gradient): a floor for
  eager code.

Reported: SGD steps per second, and the time ratio autostage / PyTorch (goal: <= 0.33x, i.e.
>= 3x PyTorch eager's steps/s; the seed's Lantern result is 2.38x its steps/s). Losses and
gradients of the first tree are checked against PyTorch's (float32, rtol 1e-3), and so are the
weights after the epoch. Every variant runs on one thread (BLAS, PyTorch), as in gradients.py.

    .venv/bin/python benchmarks/treelstm.py [--smoke] [--repeats R] [--target cpu|interpreter]
"""

from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy and PyTorch load their BLAS

import harness  # noqa: E402 - after the thread settings
import numpy as np  # noqa: E402

import autostage  # noqa: E402

REPEATS = 3
SIZES = dict(vocab=2000, embed=300, hidden=150, classes=5, trees=20, leaves=(5, 40))
SMOKE_SIZES = dict(vocab=20, embed=6, hidden=4, classes=5, trees=3, leaves=(2, 6))
LEARNING_RATE = np.float32(0.01)


# -- the model, as a user writes it -------------------------------------------------------------

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def node(tree, embeddings, weights, i):
    """(h, c, loss summed over the subtree) of node ``i``."""
    left, right, words, labels = tree
    w_leaf, b_leaf, u, b_node, w_out, b_out = weights
    n = w_out.shape[0]  # the hidden size
    if left[i] < 0:  # a leaf: input, output and update gates from the word's embedding
        gates = embeddings[words[i]] @ w_leaf + b_leaf
        c = sigmoid(gates[:n]) * np.tanh(gates[2 * n:])
        o = sigmoid(gates[n:2 * n])
        below = np.float32(0.0)
    else:  # input, two forget, output and update gates from both children
        h_left, c_left, loss_left = node(tree, embeddings, weights, left[i])
        h_right, c_right, loss_right = node(tree, embeddings, weights, right[i])
        gates = np.concatenate((h_left, h_right)) @ u + b_node
        c = (sigmoid(gates[:n]) * np.tanh(gates[4 * n:])
             + sigmoid(gates[n:2 * n]) * c_left + sigmoid(gates[2 * n:3 * n]) * c_right)
        o = sigmoid(gates[3 * n:4 * n])
        below = loss_left + loss_right
    h = o * np.tanh(c)
    logits = h @ w_out + b_out
    top = np.max(logits)
    loss = top + np.log(np.sum(np.exp(logits - top))) - logits[labels[i]]
    return h, c, below + loss


def tree_loss(weights, embeddings, tree):
    return node(tree, embeddings, weights, tree[0].shape[0] - 1)[2]


# -- data ---------------------------------------------------------------------------------------

def make_tree(rng, leaves: int, vocab: int, classes: int) -> tuple[np.ndarray, ...]:
    """A random binary tree over ``leaves`` words: adjacent constituents merged at random
    (children before parents, the root last), a label per node."""
    size = 2 * leaves - 1
    left, right = np.full(size, -1), np.full(size, -1)
    words = np.zeros(size, dtype=np.int64)
    words[:leaves] = rng.integers(0, vocab, leaves)
    spans, nxt = list(range(leaves)), leaves
    while len(spans) > 1:
        k = int(rng.integers(0, len(spans) - 1))
        left[nxt], right[nxt] = spans[k], spans[k + 1]
        spans[k:k + 2] = [nxt]
        nxt += 1
    return left, right, words, rng.integers(0, classes, size)


def make_inputs(sizes: dict) -> tuple:
    rng = np.random.default_rng(0)
    e, h, k = sizes["embed"], sizes["hidden"], sizes["classes"]
    embeddings = (0.1 * rng.standard_normal((sizes["vocab"], e))).astype(np.float32)
    weights = tuple((scale * rng.standard_normal(shape)).astype(np.float32) for shape, scale in (
        ((e, 3 * h), 0.05), ((3 * h,), 0.0), ((2 * h, 5 * h), 0.05), ((5 * h,), 0.0),
        ((h, k), 0.1), ((k,), 0.0)))
    low, high = sizes["leaves"]
    trees = [make_tree(rng, int(rng.integers(low, high + 1)), sizes["vocab"], k)
             for _ in range(sizes["trees"])]
    return weights, embeddings, trees


# -- variants -----------------------------------------------------------------------------------

def autostage_epoch(target: str):
    gradient = autostage.grad(harness.staged(tree_loss, target))

    def epoch(weights, embeddings, trees):
        for tree in trees:
            grads = gradient(weights, embeddings, tree)
            weights = tuple(w - LEARNING_RATE * g for w, g in zip(weights, grads, strict=True))
        return weights
    return epoch, gradient


def numpy_forward(weights, embeddings, trees):
    return [tree_loss(weights, embeddings, tree) for tree in trees]


def torch_variant():
    import torch
    torch.set_num_threads(1)

    def node_t(tree, embeddings, weights, i):
        left, right, words, labels = tree
        w_leaf, b_leaf, u, b_node, w_out, b_out = weights
        n = w_out.shape[0]
        if left[i] < 0:
            gates = embeddings[words[i]] @ w_leaf + b_leaf
            c = torch.sigmoid(gates[:n]) * torch.tanh(gates[2 * n:])
            o = torch.sigmoid(gates[n:2 * n])
            below = 0.0
        else:
            h_l, c_l, loss_l = node_t(tree, embeddings, weights, left[i])
            h_r, c_r, loss_r = node_t(tree, embeddings, weights, right[i])
            gates = torch.cat((h_l, h_r)) @ u + b_node
            c = (torch.sigmoid(gates[:n]) * torch.tanh(gates[4 * n:])
                 + torch.sigmoid(gates[n:2 * n]) * c_l + torch.sigmoid(gates[2 * n:3 * n]) * c_r)
            o = torch.sigmoid(gates[3 * n:4 * n])
            below = loss_l + loss_r
        h = o * torch.tanh(c)
        logits = h @ w_out + b_out
        return h, c, below + torch.logsumexp(logits, 0) - logits[labels[i]]

    def loss_and_grads(weights, embeddings, tree):
        params = [torch.tensor(w, requires_grad=True) for w in weights]
        plain = tuple(a.tolist() for a in tree)  # Python ints: PyTorch indexes fastest by them
        loss = node_t(plain, torch.from_numpy(embeddings), params, len(plain[0]) - 1)[2]
        loss.backward()
        return loss.item(), tuple(p.grad.numpy() for p in params)

    def epoch(weights, embeddings, trees):
        params = [torch.tensor(w, requires_grad=True) for w in weights]
        emb = torch.from_numpy(embeddings)
        for tree in trees:
            plain = tuple(a.tolist() for a in tree)
            loss = node_t(plain, emb, params, len(plain[0]) - 1)[2]
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= float(LEARNING_RATE) * p.grad
                    p.grad = None
        return tuple(p.detach().numpy() for p in params)
    return epoch, loss_and_grads


# -- the run --------------------------------------------------------------------------------------

def run(args) -> harness.Report:
    sizes = SMOKE_SIZES if args.smoke else SIZES
    weights, embeddings, trees = make_inputs(sizes)
    epoch, gradient = autostage_epoch(args.target)
    variants = {"autostage": epoch, "numpy forward": numpy_forward}
    failures = []
    have_torch = harness.installed("torch")
    if have_torch:
        torch_epoch, torch_grads = torch_variant()
        variants["pytorch eager"] = torch_epoch
        loss, grads = torch_grads(weights, embeddings, trees[0])
        staged_loss = autostage.value_and_grad(harness.staged(tree_loss, args.target))
        why = harness.mismatch(staged_loss(weights, embeddings, trees[0]), (loss, grads),
                               1e-3, 1e-5, check_dtype=False)
        if why:
            failures.append(f"treelstm first tree loss/gradients vs pytorch: {why}")
        why = harness.mismatch(epoch(weights, embeddings, trees),
                               torch_epoch(weights, embeddings, trees), 1e-3, 1e-5,
                               check_dtype=False)
        if why:
            failures.append(f"treelstm weights after the epoch vs pytorch: {why}")
    else:
        gradient(weights, embeddings, trees[0])  # trace and compile before timing
    seconds = harness.median_seconds(
        {k: (lambda f=f: f(weights, embeddings, trees)) for k, f in variants.items()},
        args.repeats, args.smoke)
    nodes = sum(t[0].shape[0] for t in trees)
    harness.print_variant_table(
        f"TreeLSTM: {len(trees)} trees ({nodes} nodes), embed {sizes['embed']}, hidden "
        f"{sizes['hidden']}, one SGD step per tree; target={args.label}, median of "
        f"{args.repeats}", seconds,
        baseline="pytorch eager" if have_torch else "numpy forward",
        rate=("steps/s", len(trees)))
    rows = []
    if have_torch:
        ratio = seconds["pytorch eager"] / seconds["autostage"]
        rows.append(harness.Row("treelstm sgd vs pytorch eager", seconds["autostage"],
                                seconds["pytorch eager"], None, args.label,
                                "<=0.33x pytorch", ratio >= 3.0,  # 3x its steps/s
                                numba_label="pytorch eager"))
    return harness.Report(rows, failures)


def main(argv=None) -> int:
    args = harness.parse_args(__doc__.partition("\n")[0], argv, repeats=REPEATS)
    harness.note_optional_frameworks()
    return harness.finish(run(args))


if __name__ == "__main__":
    sys.exit(main())
