"""Another git ref's code, to measure beside the work tree's: its `src/`, put on PYTHONPATH."""

from __future__ import annotations

import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root."""


@dataclass(frozen=True)
class Code:
    label: str
    src: Path


def extract(ref: str, into: Path) -> Code:
    """The `src/` of git ref `ref`, as a directory to put on PYTHONPATH."""
    archive = into / "src.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return Code(ref, into / "src")
