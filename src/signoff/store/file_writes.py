"""Being told by the kernel when a file is written: Linux inotify through ctypes, no dependency.

`FileWrites.watch(path)` returns None wherever the kernel cannot tell (another OS, no inotify, a
network filesystem, whose other clients' writes the local kernel never sees, a file that is not
there); its caller then polls. A notice says only "written since you last looked": callers keep
their own check of what changed as the truth, and a slow poll besides.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import struct
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVE_SELF = 0x00000800
IN_DELETE_SELF = 0x00000400
IN_IGNORED = 0x00008000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = 0o2000000
WATCHED = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF
GONE = IN_MOVE_SELF | IN_DELETE_SELF | IN_IGNORED
EVENT_HEADER = struct.Struct("iIII")
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs", "ncpfs"}
    | {"fuse.sshfs", "fuse.s3fs", "fuse.rclone", "fuse.glusterfs", "fuse.ceph", "davfs"}
)
"""Filesystems whose files other machines write: their writes raise no event here."""


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library's inotify calls (the process's own symbols: no library search, which would
    run a subprocess), once per process; None where there are none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # when a store first watches its file, not for every command

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


def filesystem_type(path: Path) -> str | None:
    """The type of the filesystem `path` is on, from /proc/self/mounts (the longest mount point
    that contains it); None if that cannot be read."""
    try:
        mounts = Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    best, found = -1, None
    text = str(path)
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = text == point or text.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, found = len(point), fields[2]
    return found


class FileWrites:
    """Notices of writes to one file (by any process on this machine), read through `wait`."""

    def __init__(self, libc: ctypes.CDLL, descriptor: int, path: Path) -> None:
        self._libc = libc
        self._fd = descriptor
        self.path = path
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._closing = threading.Lock()
        self._closed = False
        self._watched: tuple[int, int] | None = None
        self.lost = True
        """No watch on the file now (it was removed or replaced): `rewatch()` tries again."""
        self.rewatch()

    @classmethod
    def watch(cls, path: str | Path) -> FileWrites | None:
        """Notices for `path`, or None where this platform or filesystem gives none."""
        libc = _libc()
        resolved = Path(path).resolve()
        if libc is None or not resolved.exists() or filesystem_type(resolved) in NETWORK_FILESYSTEMS:
            return None
        descriptor = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if descriptor < 0:
            return None
        watcher = cls(libc, descriptor, resolved)
        if watcher.lost:
            watcher.close()
            return None
        return watcher

    def rewatch(self) -> bool:
        """Watch the file now at `path` if the watched one is gone or was replaced by another
        (a new inode under the same name). True if a watch is in place."""
        try:
            info = os.stat(self.path)
        except OSError:
            self.lost = True
            return False
        identity = (info.st_dev, info.st_ino)
        if identity == self._watched and not self.lost:
            return True
        if self._libc.inotify_add_watch(self._fd, os.fsencode(self.path), WATCHED) < 0:
            self.lost = True
            return False
        self._watched, self.lost = identity, False
        return True

    def wait(self, timeout: float) -> bool:
        """Block until the file is written or `interrupt()` is called, at most `timeout` seconds.
        True if a write (or anything that may hide one: a lost watch, a full event queue) was
        noticed; every pending notice is consumed."""
        ready, _, _ = select.select([self._fd, self._wake_read], [], [], max(0.0, timeout))  # µs, not ms
        written = False
        for descriptor in ready:
            if descriptor == self._fd:
                written = self._consume() or written
            else:
                self._drain(self._wake_read)
        return written

    def interrupt(self) -> None:
        """End a `wait` in another thread now."""
        with self._closing, contextlib.suppress(BlockingIOError):  # a full pipe wakes it already
            if not self._closed:
                os.write(self._wake_write, b"x")

    def _consume(self) -> bool:
        data = self._drain(self._fd)
        written = False
        offset = 0
        while offset + EVENT_HEADER.size <= len(data):
            _, mask, _, name_length = EVENT_HEADER.unpack_from(data, offset)
            offset += EVENT_HEADER.size + name_length
            written = True  # a write, or a full queue (IN_Q_OVERFLOW) that may hide one
            if mask & GONE:
                self.lost = True
        return written

    @staticmethod
    def _drain(descriptor: int) -> bytes:
        chunks = []
        while True:
            try:
                chunk = os.read(descriptor, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        with self._closing:
            if self._closed:
                return
            self._closed = True
            for descriptor in (self._fd, self._wake_read, self._wake_write):
                os.close(descriptor)
