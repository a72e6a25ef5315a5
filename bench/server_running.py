"""A `signoff serve` for the server benchmarks: a SQLite store with an admin, an agent (`bot`) and a
person (`alice`) and their tokens, served on a free port until the block ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from serving import signoff_serve
from signoff.store import SQLiteStore


@dataclass
class Running:
    url: str
    db: Path
    agent_token: str
    person_token: str
    admin: str
    admin_token: str
    pid: int


@contextmanager
def serving(
    workdir: Path, name: str, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[Running]:
    db = workdir / f"{name}.db"
    store = SQLiteStore(db)
    store.add_user("admin", role="admin", actor="bench")
    store.add_user("bot", role="agent", actor="bench")
    store.add_user("alice", role="member", actor="bench")
    agent_token, _ = store.issue_credential("token", "bot", actor="bench")
    person_token, _ = store.issue_credential("token", "alice", actor="bench")
    admin_token, _ = store.issue_credential("token", "admin", actor="bench")
    store.close()
    with signoff_serve(db, startup=30, env=env, cwd=cwd) as (url, process):
        yield Running(url, db, agent_token, person_token, "admin", admin_token, process.pid)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
