"""The audit log: append-only and hash-chained (DESIGN §8).

Each entry's hash covers its own fields and the previous entry's hash, and the store keeps the
newest (seq, hash) in a head row written in the same transaction. `verify_chain` walks the log:
an edited entry breaks its own hash, a deleted one leaves a gap in `seq` or a broken link, and
a deleted tail no longer reaches the head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._util import canonical_json


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    seq: int
    at: str
    actor: str
    channel: str
    action: str
    request_id: str | None
    data: dict[str, Any]
    prev_hash: str
    hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "actor": self.actor,
            "channel": self.channel,
            "action": self.action,
            "request_id": self.request_id,
            "data": self.data,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


def entry_payload(
    *, at: str, actor: str, channel: str, action: str, request_id: str | None, data_text: str
) -> str:
    """The canonical text of an entry's own fields; `data_text` is `canonical_json(data)`."""
    return canonical_json([at, actor, channel, action, request_id])[:-1] + "," + data_text + "]"


def entry_hash(*, seq: int, prev_hash: str, payload: str) -> str:
    """sha256 of `seq|prev_hash|payload`, hex. The stores compute the same in SQL when appending
    (PostgreSQL's sha256(), a registered function in SQLite), so the chain is extended in one
    statement under the head row's lock."""
    return hashlib.sha256(f"{seq}|{prev_hash}|{payload}".encode()).hexdigest()


@dataclass(frozen=True)
class AuditProblem:
    seq: int
    problem: str


@dataclass
class AuditReport:
    entries: int = 0
    head_seq: int = 0
    problems: list[AuditProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "head_seq": self.head_seq,
            "problems": [{"seq": p.seq, "problem": p.problem} for p in self.problems],
        }


def verify_chain(entries: Iterable[AuditEntry], *, head_seq: int, head_hash: str) -> AuditReport:
    report = AuditReport(head_seq=head_seq)
    expected_seq = 1
    prev_hash = ""
    for entry in entries:
        report.entries += 1
        if entry.seq != expected_seq:
            missing = (
                f"{expected_seq}" if entry.seq == expected_seq + 1 else f"{expected_seq}..{entry.seq - 1}"
            )
            report.problems.append(AuditProblem(entry.seq, f"entries {missing} are missing (deleted)"))
        if entry.prev_hash != prev_hash:
            report.problems.append(AuditProblem(entry.seq, "does not link to the entry before it"))
        payload = entry_payload(
            at=entry.at,
            actor=entry.actor,
            channel=entry.channel,
            action=entry.action,
            request_id=entry.request_id,
            data_text=canonical_json(entry.data),
        )
        recomputed = entry_hash(seq=entry.seq, prev_hash=entry.prev_hash, payload=payload)
        if recomputed != entry.hash:
            report.problems.append(
                AuditProblem(entry.seq, "was edited: its hash does not match its contents")
            )
        expected_seq = entry.seq + 1
        prev_hash = entry.hash
    last_seq = expected_seq - 1
    if last_seq != head_seq or prev_hash != head_hash:
        if last_seq < head_seq:
            report.problems.append(
                AuditProblem(last_seq + 1, f"entries {last_seq + 1}..{head_seq} are missing (deleted)")
            )
        else:
            report.problems.append(AuditProblem(last_seq, "the log does not end at the recorded head"))
    return report
