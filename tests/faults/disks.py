"""Disks that fail for real: a small tmpfs to fill up, a read-only view of a folder. Mounting
needs root (and a kernel that lets this process mount); tests skip, saying so, otherwise."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NEEDS_ROOT = "needs root to mount a small tmpfs (a disk the test can fill) or a read-only bind mount"


def _mount(*args: str) -> None:
    if os.geteuid() != 0:
        pytest.skip(NEEDS_ROOT)
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here (mount {' '.join(args)}): {done.stderr.strip()}")


def _unmount(path: Path) -> None:
    done = subprocess.run(["umount", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:  # still busy: detach it now, the kernel frees it when unused
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextmanager
def small_disk(path: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` for the block."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path))
    try:
        yield path
    finally:
        _unmount(path)


@contextmanager
def read_only_view(folder: Path, path: Path) -> Iterator[Path]:
    """`folder`'s files seen, read-only, at `path` (a read-only bind mount) for the block."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("--bind", str(folder), str(path))
    try:
        _mount("-o", "remount,bind,ro", str(path))
        yield path
    finally:
        _unmount(path)


def fill(disk: Path) -> Path:
    """Write a file until `disk` has no byte left; delete the file to free the space."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (b"\0" * 65536, b"\0" * 4096, b"\0"):
            while _written(descriptor, chunk):
                pass
    finally:
        os.close(descriptor)
    return filler


def _written(descriptor: int, chunk: bytes) -> bool:
    try:
        os.write(descriptor, chunk)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        return False
    return True
