"""The `signoff` command line: `signoff pending`, `signoff approve ID`, `signoff explain ...`."""

from __future__ import annotations

from .app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
