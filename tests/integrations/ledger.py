"""The tools' run count every adapter test reads: kept in a file, so that several processes
(the agent that paused, the one that resumed, a replay) add to one count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import signoff


class Ledger:
    """Counts the tools' runs in a file, so that several processes add to one count."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, tool: str, args: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool, "args": args, "key": signoff.idempotency_key()}) + "\n")

    def runs(self, tool: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]
        return [row for row in rows if tool is None or row["tool"] == tool]
