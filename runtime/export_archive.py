"""The export archive on disk: one zip file with ``manifest.json`` and the members it lists.

Writing is atomic (a temporary file in the same directory, fsync, ``os.replace``), so a reader
sees the old archive or the new one, never half of one; members are written in a fixed order with
a fixed date, so that the same export gives the same bytes. The manifest records the SHA-256 of
every other member. Reading checks, in this order, that the file is a zip archive, that it is an
autostage export (``format``), of a version this autostage reads, that the manifest fits the
schema (``export_schema``), and that every member is there with its recorded digest; each failure
is an ``ExportError`` naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
import zlib
from pathlib import Path

from autostage.runtime import export_schema

import autostage  # its version only (the package's public names load lazily)

FORMAT = "autostage-export"
VERSION = 1
MANIFEST = "manifest.json"
_DATE = (1980, 1, 1, 0, 0, 0)  # the zip epoch: the same export gives the same bytes


class ExportError(ValueError):
    """An export that cannot be written or read: a function with something an export cannot
    describe, or a file that is not an intact export this autostage reads.

    Example: ``autostage.load("model.autostage")`` on a file cut short by a full disk raises
    ``ExportError: model.autostage is not a zip archive (truncated, or not an autostage
    export)``. Fix: save the function again (``autostage.save``); for a function that cannot be
    exported, the message names what to change and where.
    """


def write(path: str | os.PathLike, manifest: dict, files: dict[str, bytes]) -> None:
    """Writes the archive atomically; the manifest gets each member's SHA-256."""
    path = Path(path)
    manifest = dict(manifest, members={name: _digest(data) for name, data in files.items()})
    text = json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False).encode()
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:  # (a missing directory...: named as open(path) names it, not mkstemp)
        raise _naming(e, path) from None
    try:
        # mkstemp's file is private (0600); the archive gets the mode of the one it replaces
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "wb") as file:
            with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
                for name, data in [(MANIFEST, text), *sorted(files.items())]:
                    info = zipfile.ZipInfo(name, date_time=_DATE)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    archive.writestr(info, data)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.replace(temporary, path)
        except OSError as e:  # (path is a directory...)
            raise _naming(e, path) from None
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _naming(error: OSError, path: Path) -> OSError:
    """``error`` (of the same class and errno) naming ``path`` instead of the temporary file."""
    return type(error)(error.errno, error.strerror, str(path))


def _sync_directory(directory: Path) -> None:
    """Makes the rename itself durable (where the platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Archive:
    """An opened, checked export: its manifest and its members' bytes."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"no such export: {self.path}")
        if not zipfile.is_zipfile(self.path):
            raise self.error("is not a zip archive (truncated, or not an autostage export)")
        try:
            with zipfile.ZipFile(self.path) as archive:
                self.manifest = self._manifest(archive)
                self.members = self._members(archive)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise self.error(f"is a damaged zip archive ({e})") from None

    def error(self, what: str) -> ExportError:
        return ExportError(f"{self.path} {what}")

    def _manifest(self, archive: zipfile.ZipFile) -> dict:
        try:
            raw = archive.read(MANIFEST)
        except KeyError:
            raise self.error(f"is not an autostage export (a zip archive without {MANIFEST})"
                             ) from None
        try:
            manifest = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self.error(f"has a manifest that is not JSON ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else None
            raise self.error(f"is not an autostage export (its manifest's format is {found!r},"
                             f" not {FORMAT!r})")
        version = manifest.get("version")
        if type(version) is not int or version < 1:
            raise self.error(f"has an invalid format version {version!r}")
        if version > VERSION:
            raise self.error(
                f"was written by a newer autostage (format version {version}, by autostage "
                f"{manifest.get('autostage_version', '?')}); this autostage "
                f"({autostage_version()}) reads format version {VERSION}: upgrade autostage to "
                "load it")
        try:
            export_schema.check(manifest)
        except ValueError as e:
            raise self.error(f"has a manifest that does not fit format version {VERSION}: {e}"
                             ) from None
        return manifest

    def _members(self, archive: zipfile.ZipFile) -> dict[str, bytes]:
        listed = self.manifest["members"]
        present = set(archive.namelist()) - {MANIFEST}
        missing = sorted(set(listed) - present)
        if missing:
            raise self.error(f"is missing the member {missing[0]!r} its manifest lists")
        extra = sorted(present - set(listed))
        if extra:
            raise self.error(f"has a member its manifest does not list: {extra[0]!r}")
        members = {}
        for name, digest in listed.items():
            data = archive.read(name)  # a CRC error: zipfile.BadZipFile
            if _digest(data) != digest:
                raise self.error(f"has a damaged member {name!r}: its SHA-256 is not the one "
                                 "its manifest records")
            members[name] = data
        return members

    def member(self, name: str) -> bytes:
        """A member the manifest refers to (listed and checked)."""
        data = self.members.get(name)
        if data is None:
            raise self.error(f"refers to the member {name!r}, which it does not list")
        return data


def autostage_version() -> str:
    return autostage.__version__


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
