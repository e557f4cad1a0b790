"""The on-disk cache of generated modules: content-hashed ``.py`` files Numba can cache against.

Numba's ``cache=True`` only works for functions whose source is a real file imported as a module
(see shared/TOOLCHAIN.md). So each generated source is written once to
``<cache dir>/cpu_<python>_<numba>/stage_<sha256 prefix>.py`` and loaded under that name; Numba
then keeps its compiled code in ``__pycache__`` beside it, and a new process loading the same file
skips compilation. Rules that keep this safe and robust:

- first writer wins: a temp file is ``os.link``-ed to the final name and never rewritten (Numba's
  cache stamp includes the file's mtime), so concurrent processes never see half a file;
- a file whose content does not match its hash (damaged) is replaced atomically, never trusted;
- the code run is the source generated in this process, compiled from memory: no ``.pyc`` is
  read or written, so a damaged or planted one changes nothing;
- one module per source per process: threads wanting the same one wait for the first to load it
  (never see it half-initialised); ``release`` forgets a module nobody uses any more;
- code is imported only from a directory checked on every write (``cache_directory``: owned by
  the user, nobody else can write it or any directory on the way, recreated if deleted),
  otherwise a warning and a private temporary directory instead;
- Numba's data files are tied to their index entry by a content hash (``numba_cache``).

The cache directory is ``AUTOSTAGE_CACHE_DIR`` or ``$XDG_CACHE_HOME/autostage`` (default
``~/.cache/autostage``).
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

import numba
from autostage.runtime import config
from autostage.runtime.backends.cpu import numba_cache

from autostage.common import cache_directory
from autostage.common.cache_directory import CacheDirectoryWarning

__all__ = ["CacheDirectoryWarning", "directory", "load", "release", "write"]

PREFIX = "stage_"
_lock = threading.Lock()
_directory: Path | None = None
_directory_source: str | None = None  # the setting _directory was made from
_fallback = False  # _directory is a private temporary directory (the setting was unsafe)
_loaded: dict[str, types.ModuleType] = {}  # name -> module, fully executed
_users: dict[str, int] = {}  # name -> how many runners use it (load minus release)
_loading: dict[str, threading.Lock] = {}  # name -> lock held while it is loaded


def cache_root() -> Path:
    """The configured cache root (not yet checked or created)."""
    return Path(config.cache_root())


def version_tag() -> str:
    """Python and Numba versions: compiled code of one is useless to the other."""
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return f"cpu_{py}_numba{numba.__version__.replace('.', '_').replace('+', '_')}"


def directory() -> Path:
    """The private directory generated modules live in (created 0700), on ``sys.path``; checked
    again on every call (created again if deleted, given up if it has become unsafe)."""
    global _directory, _directory_source, _fallback
    root = cache_root()
    with _lock:
        if _fallback and _directory_source == str(root):
            if not _directory.is_dir():  # our temporary directory was deleted: a new one
                _directory = cache_directory.fallback(root, FileNotFoundError(
                    f"the temporary directory {_directory} was deleted"), stacklevel=5)
        else:
            target = root / version_tag()
            try:
                cache_directory.check(root, target)
                _directory, _fallback = target, False
            except OSError as e:
                _directory, _fallback = cache_directory.fallback(root, e, stacklevel=5), True
        _directory_source = str(root)
        if str(_directory) not in sys.path:
            sys.path.append(str(_directory))  # appended: never shadows real modules
        return _directory


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:32]


def module_name(source: str) -> str:
    return PREFIX + source_hash(source)


def write(source: str) -> Path:
    """The file holding ``source``: reused when present and intact, else written (atomically)."""
    folder = directory()
    path = folder / f"{module_name(source)}.py"
    if _intact(path, source):
        return path
    fd, temp = tempfile.mkstemp(prefix=".tmp_", suffix=".py", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            os.link(temp, path)  # first writer wins; an existing file is never touched here
        except FileExistsError:
            if not _intact(path, source):  # damaged: replace it and everything Numba cached
                purge_numba_cache(path)
                os.replace(temp, path)
                temp = None
    finally:
        if temp is not None:
            os.unlink(temp)
    return path


def _intact(path: Path, source: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))  # a link: not ours
        with open(fd, encoding="utf-8") as f:
            return f.read() == source
    except (OSError, UnicodeDecodeError):
        return False


def load(source: str) -> types.ModuleType:
    """Writes (if needed) and loads the module of ``source``: the same module object for the
    same source within a process, never one another thread is still executing. Each call is a
    use that ``release`` ends."""
    name = module_name(source)
    with _lock:
        lock = _loading.setdefault(name, threading.Lock())
    with lock:
        module = _loaded.get(name)
        if module is None:
            module = _execute(name, write(source), source)
            _loaded[name] = module
        with _lock:
            _users[name] = _users.get(name, 0) + 1
    return module


def release(module: types.ModuleType) -> None:
    """Ends one use of ``module`` (from ``load``); the last one forgets it (its compiled code is
    freed once nothing else refers to it; a later ``load`` reads it from disk again)."""
    name = module.__name__
    with _lock:
        count = _users.get(name, 0) - 1
        if count > 0:
            _users[name] = count
            return
        _users.pop(name, None)
        if _loaded.get(name) is module:
            del _loaded[name]
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _execute(name: str, path: Path, source: str) -> types.ModuleType:
    """Runs ``source`` as module ``name`` whose file is ``path``: compiled from the source in
    memory (which ``write`` made sure the file holds), never from a ``.pyc``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    code = compile(source, str(path), "exec", dont_inherit=True)
    sys.modules[name] = module  # Numba looks it up by name (its cache, the environment)
    try:
        exec(code, module.__dict__)
        numba_cache.tie_data_files(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def numba_cache_files(path: Path) -> list[str]:
    """Numba's index (``.nbi``) and data (``.nbc``) files of the module at ``path``."""
    return glob.glob(str(path.parent / "__pycache__" / f"{path.stem}.*.nb[ic]"))


def purge_numba_cache(path: Path) -> None:
    """Removes Numba's cached index and data files of the module at ``path`` (a damaged entry:
    the next compile writes them again)."""
    for file in numba_cache_files(path):
        try:
            os.unlink(file)
        except FileNotFoundError:
            pass
