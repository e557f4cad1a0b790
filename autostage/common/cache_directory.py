"""Where generated modules live: a directory only this user can change, checked on every use.

Code is imported (and Numba's pickled index unpickled) from the cache directory, so another user
able to change what it holds could run code in this process. A directory is safe when it is ours
(or root's), nobody else can write it, and the same holds for every directory on the way to it:
a parent writable by others lets them rename the cache away and put their own in its place
(a sticky parent such as ``/tmp`` does not: others may not rename entries they do not own).
Symbolic links on the way must be ours or root's, and where they lead is checked too.

The chain is checked each time a module is written (not only once per process): a directory
deleted meanwhile is created again (0700); one that has become unsafe, or cannot be created, is
given up with a ``CacheDirectoryWarning`` for a private temporary directory, which is removed at
exit (by the process that made it only) or, if that process was killed, by the next process
that makes one.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

FALLBACK_PREFIX = "autostage-cpu-"


class CacheDirectoryWarning(UserWarning):
    """The cache directory is not private to this user, so generated code is not imported from it.

    Example: ``AUTOSTAGE_CACHE_DIR=/tmp/shared`` where ``/tmp/shared`` is writable by others (or
    a parent of the directory is). Fix: point ``AUTOSTAGE_CACHE_DIR`` at a directory you own with
    mode 0700, inside directories only you (or root) can write (or unset it). Compiled code then
    lives in a private temporary directory, so it is not reused by later runs.
    """


def _trusted_owner(uid: int) -> bool:
    return uid in (0, os.getuid()) if hasattr(os, "getuid") else True


def _writable_by_others(st: os.stat_result) -> bool:
    return bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def unsafe_parents(path: Path) -> str:
    """Why some directory on the way to ``path`` (not ``path`` itself) lets another user replace
    what it holds; "" if none does. Follows symbolic links (which must be ours or root's)."""
    seen: set[str] = set()
    return _unsafe_parents(Path(os.path.abspath(path)), seen)


def _unsafe_parents(path: Path, seen: set[str]) -> str:
    for parent in reversed(path.parents):
        text = str(parent)
        if text in seen:
            continue
        seen.add(text)
        st = os.lstat(parent)
        if stat.S_ISLNK(st.st_mode):
            if not _trusted_owner(st.st_uid):
                return f"{parent} is a symbolic link owned by another user (uid {st.st_uid})"
            target = Path(os.path.realpath(parent))
            problem = _unsafe_parents(target / "x", seen)  # the target and its parents
            if problem:
                return problem
            continue
        problem = _unsafe_parent(parent, st)
        if problem:
            return problem
    return ""


def _unsafe_parent(path: Path, st: os.stat_result) -> str:
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if not _trusted_owner(st.st_uid):
        return f"{path} is owned by another user (uid {st.st_uid})"
    if _writable_by_others(st) and not st.st_mode & stat.S_ISVTX:
        return (f"{path} is writable by group or others without the sticky bit (mode "
                f"{stat.S_IMODE(st.st_mode):04o}): another user could replace what it holds")
    return ""


def unsafe(path: Path) -> str:
    """Why ``path`` itself is not safe to import code from ("" if it is)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if not _trusted_owner(st.st_uid):
            return f"is a symbolic link owned by another user (uid {st.st_uid})"
        st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by another user (uid {st.st_uid})"
    if _writable_by_others(st):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


def make_private(path: Path) -> None:
    """Creates ``path`` (and missing parents) with mode 0700 if it does not exist."""
    if not os.path.lexists(path):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask; make it exact


def check(root: Path, target: Path) -> None:
    """Creates ``root`` and ``target`` (inside it) if missing and raises ``PermissionError``
    saying why if either, or a directory on the way, is not safe."""
    for path in (root, target, target / "__pycache__"):  # __pycache__: Numba's index and data
        make_private(path)
        problem = unsafe(path)
        if problem:
            raise PermissionError(f"{path} {problem}")
    problem = unsafe_parents(root)
    if problem:
        raise PermissionError(problem)


def fallback(root: Path, reason: Exception, stacklevel: int) -> Path:
    """A new private temporary directory (removed at exit), with a warning naming ``reason``."""
    sweep()
    folder = Path(tempfile.mkdtemp(prefix=f"{FALLBACK_PREFIX}{os.getpid()}-"))  # 0700
    atexit.register(remove, folder, os.getpid())
    warnings.warn(f"autostage: not using cache directory {root}: {reason}; compiled code goes to "
                  f"the private temporary directory {folder} (not reused across runs)",
                  CacheDirectoryWarning, stacklevel=stacklevel)
    return folder


def remove(folder: Path, owner_pid: int) -> None:
    """Removes ``folder`` if this is the process that made it (a forked child inherits the
    parent's exit handlers, and must not remove the directory its parent still uses)."""
    if os.getpid() == owner_pid:
        shutil.rmtree(folder, ignore_errors=True)


def sweep() -> None:
    """Removes the temporary directories of this user's autostage processes that are gone
    (killed before their exit handlers ran)."""
    base = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in base.glob(f"{FALLBACK_PREFIX}*-*"):
            pid = entry.name[len(FALLBACK_PREFIX):].split("-", 1)[0]
            if not pid.isdigit() or _alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(entry)
                if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                    shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but another user's
        return True
    return True
