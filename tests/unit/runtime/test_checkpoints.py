"""Checkpoint: values matched by object-graph path (not creation order or names), restore into
a separately built model, all-or-nothing restores with every mismatch listed, atomic saves (a
process killed mid-save leaves the old checkpoint), damaged files refused clearly."""

import os
import signal
import subprocess
import sys
import textwrap
import types
import zipfile

import numpy as np
import pytest
from autostage.runtime.checkpoints import Checkpoint, CheckpointError
from autostage.runtime.modules import Module
from autostage.runtime.state import Variable

import autostage


class Dense(Module):
    def __init__(self, n_in, n_out, seed, reverse=False):
        super().__init__()
        rng = np.random.default_rng(seed)
        w, b = rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out)
        if reverse:  # other creation order and names: matching must not depend on them
            self.b = Variable(b, name="second")
            self.w = Variable(w, name="first")
        else:
            self.w = Variable(w, name="w")
            self.b = Variable(b, name="b")


class MLP(Module):
    def __init__(self, seed=0, reverse=False):
        super().__init__()
        layers = [Dense(3, 4, seed, reverse), Dense(4, 2, seed + 1, reverse)]
        self.layers = layers[::-1][::-1] if not reverse else [layers[0], layers[1]]
        self.steps = Variable(np.int64(0), trainable=False)

    @autostage.convert
    def __call__(self, x):
        for layer in self.layers:
            x = np.tanh(x @ layer.w + layer.b)
        return x


def test_round_trip_into_a_separately_built_model(tmp_path):
    source, target = MLP(seed=0), MLP(seed=7, reverse=True)
    source.steps.assign(12)
    x = np.array([[0.5, -1.0, 2.0]])
    path = tmp_path / "model.ckpt"
    assert Checkpoint(model=source).save(path) == str(path)
    assert not np.allclose(target(x), source(x))
    assert Checkpoint(model=target).restore(path) is None
    np.testing.assert_array_equal(target(x), source(x))
    assert target.steps.read() == 12 and target.layers[1].w.name == "first"
    assert sorted(Checkpoint(model=target).variables()) == [
        "model/layers/0/b", "model/layers/0/w", "model/layers/1/b", "model/layers/1/w",
        "model/steps"]
    assert os.listdir(tmp_path) == ["model.ckpt"]  # no temporary file left


def test_plain_objects_dicts_shared_variables_and_cycles(tmp_path):
    def build(offset):
        state = types.SimpleNamespace(lr=Variable(0.1 + offset), history=[])
        table = {"a/b": Variable(np.arange(3.0) + offset), 2: Variable(offset)}
        state.self = state  # a cycle
        state.table = table
        state.alias = table["a/b"]  # reachable twice: saved once, under its first path
        return state

    saved, restored = build(0.0), build(5.0)
    Checkpoint(opt=saved, step=Variable(3)).save(tmp_path / "c")
    names = Checkpoint(opt=restored, step=Variable(0)).variables()
    assert sorted(names) == ["opt/alias", "opt/lr", "opt/table/2", "step"]
    step = Variable(0)
    Checkpoint(opt=restored, step=step).restore(tmp_path / "c")
    assert restored.table["a/b"].read().tolist() == [0.0, 1.0, 2.0]
    assert (restored.lr.read(), restored.table[2].read(), step.read()) == (0.1, 0.0, 3)


def test_mismatches_are_listed_and_nothing_is_assigned(tmp_path):
    Checkpoint(model=MLP(seed=0)).save(tmp_path / "c")

    class Wider(Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(3, 5, 1)]
            self.extra = Variable(1.0)
            self.steps = Variable(np.int32(0))

    other = Wider()
    before = [v.read() for v in other.variables]
    with pytest.raises(CheckpointError) as caught:
        Checkpoint(model=other).restore(tmp_path / "c")
    assert str(caught.value) == (
        f"cannot restore {str(tmp_path / 'c')!r} into these objects (nothing was assigned):\n"
        "  in the file, not in the objects: model/layers/1/b, model/layers/1/w\n"
        "  in the objects, not in the file: model/extra\n"
        "  model/layers/0/b: the file has float64[4], the Variable is float64[5]\n"
        "  model/layers/0/w: the file has float64[3, 4], the Variable is float64[3, 5]\n"
        "  model/steps: the file has int64[], the Variable is int32[]")
    assert isinstance(caught.value, ValueError)
    assert all(np.array_equal(a, v.read()) for a, v in zip(before, other.variables, strict=True))


def test_damaged_files_give_a_clear_error(tmp_path):
    path = tmp_path / "c"
    Checkpoint(model=MLP()).save(path)
    data = path.read_bytes()
    (tmp_path / "cut").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"'.*cut' is not a readable autostage checkpoint "
                                              r"\(BadZipFile: File is not a zip file\)"):
        Checkpoint(model=MLP()).restore(tmp_path / "cut")
    offset = data.index(b"\x93NUMPY") + 200  # inside the first array's data
    flipped = data[:offset] + bytes([data[offset] ^ 0xFF]) + data[offset + 1:]
    (tmp_path / "flipped").write_bytes(flipped)
    with pytest.raises(CheckpointError, match=r"\(BadZipFile: Bad CRC-32"):
        Checkpoint(model=MLP()).restore(tmp_path / "flipped")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("index.json", '{"format": "something else"}')
    with pytest.raises(CheckpointError, match=r"\(ValueError: no autostage checkpoint index\)"):
        Checkpoint(model=MLP()).restore(tmp_path / "other.zip")
    with pytest.raises(FileNotFoundError):
        Checkpoint(model=MLP()).restore(tmp_path / "absent")


def test_checkpoints_refuse_staged_code_and_empty_roots(tmp_path):
    with pytest.raises(ValueError, match="at least one named object"):
        Checkpoint()
    v = Variable(1.0)

    @autostage.convert(target="interpreter")
    def saves(x):
        Checkpoint(v=v).save(tmp_path / "c")
        return x

    with pytest.raises(autostage.runtime.tracing.StagingError,
                       match="Checkpoint.save runs outside staged code"):
        saves(np.float64(1.0))


_KILLED_SAVE = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from autostage.runtime import checkpoints
    from autostage.runtime.state import Variable

    path = sys.argv[1]
    v = Variable(np.arange(1000.0))
    ckpt = checkpoints.Checkpoint(v=v)
    ckpt.save(path)  # the old, complete checkpoint
    v.assign(np.full(1000, -1.0))
    real = checkpoints._write

    def write_half_then_die(file, values):
        real(file, values)
        file.flush()
        os.ftruncate(file.fileno(), file.tell() // 2)  # half the new file is on disk
        os.kill(os.getpid(), signal.SIGKILL)

    checkpoints._write = write_half_then_die
    ckpt.save(path)
    print("not killed")
""")


def test_a_process_killed_while_saving_leaves_the_old_checkpoint(tmp_path):
    path = tmp_path / "ckpt"
    run = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(path)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr
    assert "not killed" not in run.stdout
    (temporary,) = set(os.listdir(tmp_path)) - {"ckpt"}
    assert temporary.startswith(".ckpt.") and temporary.endswith(".tmp")
    v = Variable(np.zeros(1000))
    Checkpoint(v=v).restore(path)
    assert v.read().tolist() == list(np.arange(1000.0))
    with pytest.raises(CheckpointError, match="not a readable autostage checkpoint"):
        Checkpoint(v=v).restore(tmp_path / temporary)  # the half-written temporary file
