"""``Checkpoint``: saves and restores Variables, matched by their path in the object graph.

``Checkpoint(model=m, step=v)`` names root objects; each Variable reachable from them (through
Modules, lists, tuples, dicts and plain user objects' attributes: ``modules.walk``) is saved
under its path, ``model/layers/0/w``, so a separately built copy of the model restores whatever
order its Variables were created in and whatever their names. A Variable reachable twice is
saved once, under the first path of the walk; cycles end (each object is visited once).

File: one zip archive (uncompressed) holding ``index.json`` (format, version, and per path the
entry, dtype and shape) and one ``.npy`` entry per Variable, written and read with
``allow_pickle=False``, so loading never runs code from the file. ``save`` writes a temporary
file in the same directory, flushes and fsyncs it, then renames it over ``path``
(``os.replace``): a process killed while saving leaves the previous checkpoint whole.
``restore`` reads and checks everything before it assigns anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import zipfile
from typing import Any

import numpy as np
from autostage.runtime import modules, tracing
from autostage.runtime.state import Variable

FORMAT = "autostage-checkpoint"
VERSION = 1
_INDEX = "index.json"


class CheckpointError(ValueError):
    """A checkpoint file does not fit the objects restored into, or is not a checkpoint.

    Example: ``Checkpoint(model=MLP(hidden=8)).restore(path)`` where the file was saved from
    ``MLP(hidden=16)``: the shapes of ``model/layers/0/w`` differ. Fix: build the model with the
    configuration it was saved with; nothing was assigned.
    """


class Checkpoint:
    """The Variables reachable from named root objects, saved to and restored from one file.

    Example::

        ckpt = autostage.Checkpoint(model=model, step=step)
        ckpt.save("run/ckpt.npz")
        autostage.Checkpoint(model=MLP(), step=autostage.Variable(0)).restore("run/ckpt.npz")
    """

    def __init__(self, **objects: Any):
        if not objects:
            raise ValueError("Checkpoint needs at least one named object: Checkpoint(model=m)")
        self._objects = objects

    def variables(self) -> dict[str, Variable]:
        """Each Variable reachable from the root objects, by path (``model/layers/0/w``)."""
        found: dict[str, Variable] = {}
        seen: set = set()
        for name in sorted(self._objects):
            for path, var in modules.walk(self._objects[name], (name,), plain_objects=True,
                                          seen=seen):
                key = "/".join(_escape(step) for step in path)
                if key in found:  # ``d[0]`` and ``d["0"]`` both read ``d/0``
                    raise CheckpointError(f"two Variables have the path {key!r}: use dict "
                                          "keys that read differently as text")
                found[key] = var
        return found

    def save(self, path: str | os.PathLike) -> str:
        """Writes the Variables' values to ``path`` (atomically: see the module docstring).

        Returns:
          ``path`` as a string.
        """
        _refuse_in_trace("save")
        path = os.fspath(path)
        values = {key: np.array(var) for key, var in self.variables().items()}
        directory = os.path.dirname(os.path.abspath(path))
        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                         dir=directory)
        try:
            with os.fdopen(fd, "wb") as file:
                _write(file, values)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(temporary)
            raise
        _fsync_directory(directory)
        return path

    def restore(self, path: str | os.PathLike) -> None:
        """Assigns each Variable the value saved under its path; all or nothing.

        Raises:
          CheckpointError: the file is not a readable checkpoint, or its paths, dtypes or shapes
            differ from the objects' (the message lists every difference); nothing is assigned.
          FileNotFoundError: there is no file at ``path``.
        """
        _refuse_in_trace("restore")
        path = os.fspath(path)
        saved = _read(path)
        variables = self.variables()
        problems = _mismatches(saved, variables)
        if problems:
            raise CheckpointError(f"cannot restore {path!r} into these objects (nothing was "
                                  "assigned):\n  " + "\n  ".join(problems))
        for key, var in variables.items():
            var.assign(saved[key])


def _escape(step: object) -> str:
    """A path step as text; ``/`` and ``~`` escaped as in a JSON pointer (``~1``, ``~0``)."""
    return str(step).replace("~", "~0").replace("/", "~1")


def _refuse_in_trace(what: str) -> None:
    if tracing.is_tracing():
        raise tracing.StagingError(f"Checkpoint.{what} runs outside staged code (it would run "
                                   "once, at trace time): call it between calls of the staged "
                                   "function")


def _write(file: Any, values: dict[str, np.ndarray]) -> None:
    index = {"format": FORMAT, "version": VERSION, "variables": {}}
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        for number, (key, value) in enumerate(values.items()):
            entry = f"{number}.npy"
            index["variables"][key] = {"entry": entry, "dtype": value.dtype.str,
                                       "shape": list(value.shape)}
            # (zip64 where an entry may pass 2 GiB: its size is not known before it is written)
            with archive.open(entry, "w", force_zip64=value.nbytes > 2**30) as member:
                np.lib.format.write_array(member, value, allow_pickle=False)
        archive.writestr(_INDEX, json.dumps(index, indent=1))


def _read(path: str) -> dict[str, np.ndarray]:
    """The saved values by path, checked against the index."""
    try:
        with zipfile.ZipFile(path) as archive:
            index = json.loads(archive.read(_INDEX))
            if not isinstance(index, dict) or index.get("format") != FORMAT:
                raise ValueError("no autostage checkpoint index")
            if index.get("version") != VERSION:
                raise ValueError(f"format version {index.get('version')!r}; this autostage "
                                 f"reads version {VERSION}")
            values = {}
            for key, entry in index["variables"].items():
                with archive.open(entry["entry"]) as member:
                    value = np.lib.format.read_array(member, allow_pickle=False)
                if value.dtype.str != entry["dtype"] or list(value.shape) != entry["shape"]:
                    raise ValueError(f"the entry of {key!r} does not match its index")
                values[key] = value
            return values
    except FileNotFoundError:
        raise
    except (OSError, EOFError, KeyError, TypeError, ValueError, AttributeError,
            zipfile.BadZipFile) as error:  # (json, zip and npy errors: ValueError, KeyError...)
        raise CheckpointError(f"{path!r} is not a readable autostage checkpoint "
                              f"({type(error).__name__}: {error})") from error


def _mismatches(saved: dict[str, np.ndarray], variables: dict[str, Variable]) -> list[str]:
    """One line per path that is saved but not in the objects, in the objects but not saved,
    or saved with another dtype or shape."""
    unmatched = sorted(set(saved) - set(variables))
    missing = sorted(set(variables) - set(saved))
    problems = [f"in the file, not in the objects: {', '.join(unmatched)}"] if unmatched else []
    if missing:
        problems.append(f"in the objects, not in the file: {', '.join(missing)}")
    for key in sorted(set(saved) & set(variables)):
        value, var = saved[key], variables[key]
        if value.dtype != var.dtype or value.shape != var.shape:
            problems.append(f"{key}: the file has {value.dtype}{list(value.shape)}, the "
                            f"Variable is {var.dtype}{list(var.shape)}")
    return problems


def _fsync_directory(directory: str) -> None:
    """Makes the rename itself durable (POSIX; elsewhere a no-op)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
