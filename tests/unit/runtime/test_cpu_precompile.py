"""``autostage.precompile``: the code programs share, compiled before a program needs it. After
it, a new program (in a new process sharing the cache) compiles its own function and nothing of
the shared code the corpus covers; the corpus' converted functions give Python's results."""

import copy
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from compile_events import RECORDER

import autostage
from autostage import precompiling

_PRECOMPILE_SOME = textwrap.dedent("""
    from autostage import precompiling
    wanted = {"_products", "_reductions", "_window", "_activations"}
    print(precompiling.compile_cases(
        (fn, args) for fn, args in precompiling.cases()
        if fn.__name__ in wanted and args[0].dtype == "float64")
        + precompiling.compile_signatures())
""")

_PROGRAM = textwrap.dedent("""
    import json, numpy as np
    from numba.core import event
    import autostage
""") + RECORDER + textwrap.dedent("""
    def train(x, y, w, lr, steps):
        losses = []
        for _ in range(steps):
            logits = x @ w
            logits = logits - logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p = p / p.sum(axis=1, keepdims=True)
            losses.append(float(-(y * np.log(p + 1e-9)).sum() / x.shape[0]))
            w = w - lr * (x.T @ (p - y)) / x.shape[0]
            if len(losses) > 5:
                losses.pop(0)
        return w, losses[-1], len(losses)

    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 30))
    y = np.eye(20)[rng.integers(0, 20, 40)]
    args = (x, y, np.zeros((30, 20)), 0.5, 12)
    with event.install_listener("numba:compile", Recorder()):
        got = autostage.convert(train)(*args)
    want = train(*args)
    print(json.dumps([names, np.allclose(got[0], want[0]), float(got[1]), float(want[1]),
                      got[2] == want[2]]))
""")


def _run(path, script, env):
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=900, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_a_program_after_precompiling_compiles_only_its_own_code(tmp_path):
    env = {"AUTOSTAGE_CACHE_DIR": str(tmp_path / "cache"), "AUTOSTAGE_TIERED": "0",
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PATH": "/usr/bin:/bin"}
    assert _run(tmp_path / "precompile.py", _PRECOMPILE_SOME, env) == "11"  # 4 + 7 signatures
    compiled, close, got_loss, want_loss, same_count = json.loads(
        _run(tmp_path / "program.py", _PROGRAM, env))
    assert close and same_count and got_loss == pytest.approx(want_loss, rel=1e-12)
    # (list items are read in line through intrinsics: nothing of Numba's compiled per program)
    assert compiled == ["f_train"], compiled


@pytest.mark.slow
def test_the_corpus_gives_pythons_results():
    count = 0
    for fn, args in precompiling.cases():
        # (each run its own copy: the sampling case draws from its Generator)
        got, want = autostage.convert(fn)(*copy.deepcopy(args)), fn(*copy.deepcopy(args))
        for g, w in zip(got, want, strict=True):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape, fn.__name__
            # (float32 programs: rounding in recurrences, also in the Python floats they return)
            single = any(getattr(a, "dtype", None) == np.float32 for a in args)
            tol = 1e-3 if single else 1e-9
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=fn.__name__)
        count += 1
    assert count == len(list(precompiling.cases())) == 32
