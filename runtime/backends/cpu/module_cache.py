"""The on-disk cache of generated modules: content-hashed ``.py`` files Numba can cache against.

Numba's ``cache=True`` only works for functions whose source is a real file imported as a module
(see shared/TOOLCHAIN.md). So each generated source is written once to
``<cache dir>/cpu_<python>_<numba>/stage_<sha256 prefix>.py`` and imported by name; Numba then
keeps its compiled code in ``__pycache__`` beside it, and a new process importing the same file
skips compilation. Rules that keep this safe and robust:

- first writer wins: a temp file is ``os.link``-ed to the final name and never rewritten (Numba's
  cache stamp includes the file's mtime), so concurrent processes never see half a file;
- a file whose content does not match its hash (damaged) is replaced atomically, never trusted;
- code is imported only from a directory the user owns that nobody else can write (else another
  user could inject code): otherwise a warning and a private temporary directory instead.

The cache directory is ``AUTOSTAGE_CACHE_DIR`` or ``$XDG_CACHE_HOME/autostage`` (default
``~/.cache/autostage``).
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import importlib
import os
import shutil
import stat
import sys
import tempfile
import threading
import types
import warnings
from pathlib import Path

import numba

PREFIX = "stage_"
_lock = threading.Lock()
_directory: Path | None = None
_directory_source: str | None = None  # the setting _directory was made from


class CacheDirectoryWarning(UserWarning):
    """The cache directory is not private to this user, so generated code is not imported from it.

    Example: ``AUTOSTAGE_CACHE_DIR=/tmp/shared`` where ``/tmp/shared`` is writable by others.
    Fix: point ``AUTOSTAGE_CACHE_DIR`` at a directory you own with mode 0700 (or unset it).
    Compiled code then lives in a private temporary directory, so it is not reused by later runs.
    """


def cache_root() -> Path:
    """The configured cache root (not yet checked or created)."""
    configured = os.environ.get("AUTOSTAGE_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autostage"


def version_tag() -> str:
    """Python and Numba versions: compiled code of one is useless to the other."""
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return f"cpu_{py}_numba{numba.__version__.replace('.', '_').replace('+', '_')}"


def directory() -> Path:
    """The private directory generated modules live in (created 0700), on ``sys.path``."""
    global _directory, _directory_source
    root = cache_root()
    with _lock:
        if _directory is None or _directory_source != str(root):
            _directory = _private_directory(root)
            _directory_source = str(root)
            if str(_directory) not in sys.path:
                sys.path.append(str(_directory))  # appended: never shadows real modules
        return _directory


def _private_directory(root: Path) -> Path:
    """``root/<version tag>`` if it is (or can be made) private; else a temp dir and a warning."""
    target = root / version_tag()
    try:
        for path in (root, target):
            _make_private(path)
            problem = _unsafe(path)
            if problem:
                raise PermissionError(f"{path} {problem}")
        return target
    except OSError as e:
        fallback = Path(tempfile.mkdtemp(prefix="autostage-cpu-"))  # created 0700
        atexit.register(shutil.rmtree, fallback, True)
        warnings.warn(f"autostage: not using cache directory {root}: {e}; compiled code goes to "
                      f"the private temporary directory {fallback} (not reused across runs)",
                      CacheDirectoryWarning, stacklevel=4)
        return fallback


def _make_private(path: Path) -> None:
    if not path.exists():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; make it exact


def _unsafe(path: Path) -> str:
    """Why ``path`` is not safe to import code from ("" if it is)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


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
        return path.read_text(encoding="utf-8") == source
    except (OSError, UnicodeDecodeError):
        return False


def load(source: str) -> types.ModuleType:
    """Writes (if needed) and imports the module of ``source``; the same module object for the
    same source within a process."""
    name = module_name(source)
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    path = write(source)
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    if Path(module.__file__).resolve() != path.resolve():  # pragma: no cover - defensive
        raise ImportError(f"autostage: {name} was imported from {module.__file__}, not {path}")
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
