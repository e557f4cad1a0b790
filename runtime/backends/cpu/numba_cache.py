"""Numba's disk cache of a generated module, with each data file tied to its index entry.

Numba keeps one index (``.nbi``: signature -> data file name) and numbered data files (``.nbc``:
the pickled compiled code) per function, and trusts any data file under an indexed name: a data
file overwritten with another function's makes that function's code run, silently. Here the
data file's name carries the SHA-256 of its content, written before the index that names it, and
loading checks the content against the name: a mismatch (or a file in Numba's own numbering) is
a miss, compiled again, with a ``CacheIntegrityWarning`` for a damaged file. Concurrent writers of
one entry write differently named files, never each other's. Index and data files are read only
if they are regular files of this user that nobody else can write (checked on the open file).
Saving never fails a compile: a deleted ``__pycache__`` is created again (0700); other errors
are logged and the entry is simply not saved.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import logging
import os
import pickle
import re
import stat
import types
import uuid
import warnings
from collections.abc import Iterator
from typing import BinaryIO

from autostage.runtime.backends.cpu import direct, int_wrap, llvm_worker, symbol_links
from numba.core import caching
from numba.core.dispatcher import Dispatcher

logger = logging.getLogger(__name__)
_DIGEST = re.compile(r"\.([0-9a-f]{64})\.nbc$")


class CacheIntegrityWarning(UserWarning):
    """A file of Numba's cache of generated code did not match its index entry (damaged, or
    replaced by another file); autostage compiled the code again instead of running it.

    Nothing to fix unless it repeats: then something rewrites files in the cache directory.
    """


def tie_data_files(module: types.ModuleType,
                   writes_in_line: tuple[types.ModuleType, ...] = ()) -> None:
    """Makes every cached Numba function of ``module`` use ``TiedCacheFile``, compile with
    wrapping integers (``int_wrap``) and through ``direct`` where it can (their stamps are part
    of the key). Numba keys the cache by ``module``'s file alone: the sources of
    ``writes_in_line``, modules whose intrinsics its code contains, are made part of the key."""
    # Code whose cache is tied may call shared helpers by symbol (loading checks them): from
    # before any of these functions compiles, Numba records where each one can be found again.
    symbol_links.install()
    sources = hashlib.sha256()
    for used in writes_in_line:
        with open(used.__file__, "rb") as f:
            sources.update(f.read())
    digest = sources.hexdigest()
    for value in list(vars(module).values()):
        if isinstance(value, Dispatcher) and isinstance(value._cache, caching.Cache):
            int_wrap.compile_wrapping(value)
            value._compiler.pipeline_class = direct.Compiler
            old = value._cache._cache_file
            if type(old) is caching.IndexDataCacheFile:
                stamp = (old._source_stamp, int_wrap.STAMP, direct.stamp(),
                         *([digest] if writes_in_line else []))
                value._cache._cache_file = TiedCacheFile(
                    old._cache_path, old._index_name[:-len(".nbi")], stamp)
                # (code compiled on llvm_worker is saved once it is complete)
                value._cache.save_overload = functools.partial(
                    _save_when_complete, value._cache.save_overload)


def _save_when_complete(save, signature: object, compiled: object) -> None:
    llvm_worker.after(compiled.library, lambda: save(signature, compiled))


class TiedCacheFile(caching.IndexDataCacheFile):
    """Numba's index/data cache file whose data files are named by their content hash."""

    def __init__(self, cache_path: str, filename_base: str, source_stamp: object):
        super().__init__(cache_path, filename_base, source_stamp)
        self._base = filename_base

    def save(self, key: object, data: object) -> None:
        payload = self._dump(data)
        name = f"{self._base}.{hashlib.sha256(payload).hexdigest()}.nbc"
        try:
            if not os.path.isdir(self._cache_path):  # deleted while this process runs
                os.makedirs(self._cache_path, mode=0o700, exist_ok=True)
                os.chmod(self._cache_path, 0o700)
            with self._open_for_write(self._data_path(name)) as f:
                f.write(payload)
            overloads = self._load_index()  # the data first: an index never names a missing file
            overloads[key] = name
            self._save_index(overloads)
        except OSError as e:
            logger.warning("autostage: could not save compiled code to Numba's cache in %s "
                           "(%s); it is compiled again by the next process", self._cache_path, e)

    def load(self, key: object) -> object:
        try:
            name = self._load_index().get(key)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            return None  # unreadable index: a miss, rewritten on save
        if not isinstance(name, str):
            return None
        match = _DIGEST.search(name)
        if match is None or os.sep in name:  # Numba's own numbering: not tied, compile again
            return None
        path = self._data_path(name)
        try:
            payload = _read_private(path)
        except OSError:
            return None
        if hashlib.sha256(payload).hexdigest() != match.group(1):
            warnings.warn(f"autostage: {path} does not match its entry in Numba's cache index "
                          "(damaged or replaced); compiling again", CacheIntegrityWarning,
                          stacklevel=2)
            try:
                os.unlink(path)
            except OSError:
                pass
            return None
        data = pickle.loads(payload)
        # A caller of helpers linked by symbol: loaded only once they are (else compiled again).
        return data if symbol_links.loadable(data) else None

    def _load_index(self) -> dict:
        try:
            data = _read_private(self._index_path)
        except FileNotFoundError:
            return {}
        except PermissionError as e:
            warnings.warn(f"autostage: not reading Numba's cache index {self._index_path}: {e}",
                          CacheIntegrityWarning, stacklevel=2)
            return {}
        stream = io.BytesIO(data)
        try:
            version = pickle.load(stream)
        except Exception:  # noqa: BLE001 - another version's format: not ours to read
            return {}
        if version != self._version:
            return {}
        stamp, overloads = pickle.loads(stream.read())
        return overloads if stamp == self._source_stamp else {}

    @contextlib.contextmanager
    def _open_for_write(self, filepath: str) -> Iterator[BinaryIO]:
        """Writes a private (0600) temporary file and renames it to ``filepath`` (atomic)."""
        temp = f"{filepath}.tmp.{uuid.uuid4().hex[:16]}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        try:
            with open(fd, "wb") as f:
                yield f
            os.replace(temp, filepath)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise


def _read_private(path: str) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link) of this user that nobody else
    can write; ``PermissionError`` otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with open(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise PermissionError(f"{path} is not a regular file of this user")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(f"{path} is writable by group or others")
        return f.read()
