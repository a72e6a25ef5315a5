"""How much free disk the database must have for `/healthz` to say ok: a size (`100MiB`, the
default) or a share of the disk (`1%`); `0` turns the check off. A disk that is nearly full
still takes `/healthz`'s tiny write, so the write alone says ok until the moment writes fail."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import LowDiskSpace
from ..store.disk import DiskSpace
from .limits import parse_size

DEFAULT_MIN_FREE = 100 * 1024**2


@dataclass(frozen=True)
class MinFreeDisk:
    size: int = DEFAULT_MIN_FREE
    """Bytes, when the threshold is a size."""
    share: float | None = None
    """A fraction of the disk's size (0.01 for `1%`), when it is a share."""

    @classmethod
    def parse(cls, text: str) -> MinFreeDisk:
        """`100MiB`, `2G`, `1048576`, `1%`, `0.5%`; ValueError for anything else."""
        text = text.strip()
        if text.endswith("%"):
            try:
                percent = float(text[:-1])
            except ValueError:
                raise ValueError(f"not a share of the disk: {text!r} (use e.g. 1%)") from None
            if not math.isfinite(percent) or not 0 <= percent <= 100:
                raise ValueError(f"a share of the disk is 0% to 100%, not {text!r}")
            return cls(size=0, share=percent / 100)
        return cls(size=parse_size(text))

    def required(self, space: DiskSpace) -> int:
        """The free bytes the disk must have."""
        if self.share is not None:
            return math.ceil(space.total * self.share)
        return self.size

    def __str__(self) -> str:
        return f"{self.share * 100:g}%" if self.share is not None else human_size(self.size)


def human_size(size: int) -> str:
    """`104857600` as `100 MiB`, `1610612736` as `1.5 GiB`."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def check_disk(space: DiskSpace | None, minimum: MinFreeDisk) -> None:
    """`LowDiskSpace`, saying how much is free and how much must be, when the disk has less."""
    if space is None:
        return
    required = minimum.required(space)
    if space.free < required:
        raise LowDiskSpace(
            f"the database's disk has {human_size(space.free)} free of {human_size(space.total)}, "
            f"less than the {minimum} this server requires (signoff serve --min-free-disk)"
        )


__all__ = ["DEFAULT_MIN_FREE", "MinFreeDisk", "check_disk"]
