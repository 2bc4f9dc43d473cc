"""Writing a planned rewrite without ever losing someone else's edit.

A ReadSnapshot records the file as --fix read it (inode, size, mtime, link count, content
hash); every write compares the file with it again at the last moment and raises
WriteRefused (the message says why) rather than risk overwriting a change made meanwhile.
Symlinks are written through (the link stays a link); hard-linked files are rewritten in
place (the links stay one file); other files are replaced atomically, keeping their mode.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass

from compat._check import sources


@dataclass(frozen=True)
class ReadSnapshot:
    """The file as --fix read it; compared again right before the file is written."""

    identity: tuple            # (st_dev, st_ino)
    size: int
    mtime_ns: int
    nlink: int
    digest: bytes

    @classmethod
    def of(cls, info, data: bytes) -> "ReadSnapshot":
        return cls((info.st_dev, info.st_ino), info.st_size, info.st_mtime_ns, info.st_nlink,
                   hashlib.sha256(data).digest())


class WriteRefused(Exception):
    """A planned write that must not happen; the message says why."""


def _verify(target: str, read: ReadSnapshot) -> None:
    """Raise WriteRefused unless `target` is still exactly what was read."""
    try:
        info = os.stat(target)
    except OSError as exc:
        raise WriteRefused(f"not written: {sources.describe_os_error(exc, target)}") from None
    if (info.st_dev, info.st_ino) != read.identity:
        raise WriteRefused("replaced since it was read: not written (run compat-check again)")
    if (info.st_size, info.st_mtime_ns) != (read.size, read.mtime_ns):
        raise WriteRefused("changed since it was read: not written (run compat-check again)")
    try:
        data, _ = sources.read_regular(target, 0)
    except (sources.Unreadable, sources.NotRegular) as exc:
        raise WriteRefused(f"not written: {exc}") from None
    if hashlib.sha256(data).digest() != read.digest:
        raise WriteRefused("its content changed since it was read: not written "
                       "(run compat-check again)")


def _read_only(path: str, access: int) -> bool:
    """No write bit at all (read-only on purpose, even for root), or not writable by us."""
    return not os.stat(path).st_mode & 0o222 or not os.access(path, access)


def read_only_directory(directory: str) -> bool:
    """No new file can be made in `directory` (an atomic replace needs one)."""
    try:
        return _read_only(directory, os.W_OK | os.X_OK)
    except OSError:
        return False  # gone or unreadable: the write itself says why


def _check_writable(target: str) -> None:
    try:
        if _read_only(target, os.W_OK):
            raise WriteRefused("the file is read-only: not written")
        directory = os.path.dirname(target)
        if _read_only(directory, os.W_OK | os.X_OK):
            raise WriteRefused(f"its directory {directory} is read-only: not written")
    except OSError as exc:
        raise WriteRefused(f"not written: {exc.strerror or exc}") from None


def _write_in_place(target: str, data: bytes, read: ReadSnapshot) -> None:
    """Overwrite the file itself, so that every hard link to it sees the new content."""
    fd = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
    with open(fd, "r+b", closefd=True) as handle:
        info = os.fstat(fd)
        current = handle.read()
        if ((info.st_dev, info.st_ino), info.st_size, info.st_mtime_ns) != (
                read.identity, read.size, read.mtime_ns) or \
                hashlib.sha256(current).digest() != read.digest:
            raise WriteRefused("changed since it was read: not written (run compat-check again)")
        handle.seek(0)
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(fd)


def _replace(target: str, data: bytes, read: ReadSnapshot) -> None:
    """Write a temporary file next to `target` and rename it over `target`."""
    info = os.stat(target)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".compat-check-",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                pass  # not permitted: the file becomes ours, as any editor would make it
        _verify(target, read)  # the last moment before the rename
        os.replace(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def write_checked(path: str, data: bytes, read: ReadSnapshot) -> None:
    """Write `data` over `path` if it is unchanged since `read`; raise WriteRefused otherwise.

    Symlinks are written through (the link stays a link), hard-linked files in place.
    """
    target = os.path.realpath(path)
    _verify(target, read)
    _check_writable(target)
    try:
        if read.nlink > 1:
            _write_in_place(target, data, read)
        else:
            _replace(target, data, read)
    except OSError as exc:
        raise WriteRefused(f"not written: {exc.strerror or exc}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Replace `path` (through symlinks) with `data`, keeping its mode; no change checks."""
    with open(path, "rb") as handle:
        before = handle.read()
    info = os.stat(path)
    _replace(os.path.realpath(path), data, ReadSnapshot.of(info, before))
