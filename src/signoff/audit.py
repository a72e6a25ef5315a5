"""The audit log: append-only and hash-chained (DESIGN §8).

Each entry's hash covers its own fields and the previous entry's hash, and the store keeps the
newest (seq, hash) in a head row written in the same transaction. `verify_chain` walks the log:
an edited entry breaks its own hash, a deleted one leaves a gap in `seq` or a broken link, and
a deleted tail no longer reaches the head.

Someone who can write the database can still rewrite the whole chain consistently. An anchor,
the head's (seq, hash) kept somewhere else, catches that: the log must still hold that entry
with that hash. `check_request` cross-checks a request's row against the entries that set its
args and ended it, so that a status or final args changed in the requests table show.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._util import canonical_json
from .execution import args_digest
from .requests import STATUS_FOR_DECISION, RequestStatus
from .templates import redact_args


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    """One entry of the hash-chained audit log: who did what to which request, through which channel."""

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


_ANCHOR = re.compile(r"^\s*(\d{1,19}):([0-9a-f]{64})?\s*$")


@dataclass(frozen=True)
class AuditAnchor:
    """The head of the log at some moment, written `SEQ:HASH`, to keep somewhere else."""

    seq: int
    hash: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.hash}"

    @classmethod
    def parse(cls, text: str) -> AuditAnchor:
        """`SEQ:HASH` as `signoff audit anchor` prints it; ValueError if it is not one."""
        match = _ANCHOR.match(text)
        seq = int(match.group(1)) if match else -1
        digest = (match.group(2) or "") if match else ""
        if match is None or seq >= 2**63 or (seq == 0) != (digest == ""):
            raise ValueError(
                f"not an audit anchor: {text!r} (use SEQ:HASH as `signoff audit anchor` prints it, "
                "e.g. 42:<64 hex digits>)"
            )
        return cls(seq, digest)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash, "anchor": str(self)}


@dataclass(frozen=True)
class AuditProblem:
    seq: int
    """The entry the problem is about (0: not about one entry)."""
    problem: str
    request_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"seq": self.seq, "problem": self.problem}
        if self.request_id is not None:
            found["request_id"] = self.request_id
        return found


MAX_PROBLEMS = 1000
"""A report lists at most this many problems and counts the rest."""


@dataclass
class AuditReport:
    """What `verify_audit` found: how much of the chain it checked and every break in it."""

    entries: int = 0
    head_seq: int = 0
    requests: int = 0
    """Requests cross-checked against their entries."""
    anchor: AuditAnchor | None = None
    """The anchor checked, if one was given."""
    problems: list[AuditProblem] = field(default_factory=list)
    left_out: int = 0
    """Problems found beyond the first `MAX_PROBLEMS`."""
    unsealed: int = 0
    """Entries written but not yet sealed into the chain (PostgreSQL's queue; never on SQLite):
    not checked by this verification, and not a problem unless they wait long."""
    unsealed_since: str | None = None
    """When the oldest of them was written."""
    requests_unsealed: int = 0
    """Requests left out of the cross-check because an entry of theirs is not sealed yet."""
    purged_through: int = 0
    """The live log starts after this entry: a purge dropped those before it (0: none did)."""
    exported: int = 0
    """Entries checked in purges' exports."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, seq: int, problem: str, request_id: str | None = None) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(AuditProblem(seq, problem, request_id))
        else:
            self.left_out += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "head_seq": self.head_seq,
            "requests": self.requests,
            "anchor": str(self.anchor) if self.anchor is not None else None,
            "problems": [problem.to_dict() for problem in self.problems],
            "problems_left_out": self.left_out,
            "unsealed": self.unsealed,
            "unsealed_since": self.unsealed_since,
            "requests_unsealed": self.requests_unsealed,
            "purged_through": self.purged_through,
            "exported": self.exported,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditReport:
        anchor = data.get("anchor")
        return cls(
            entries=int(data["entries"]),
            head_seq=int(data["head_seq"]),
            requests=int(data.get("requests") or 0),
            anchor=AuditAnchor.parse(anchor) if anchor else None,
            problems=[
                AuditProblem(int(item["seq"]), item["problem"], item.get("request_id"))
                for item in data["problems"]
            ],
            left_out=int(data.get("problems_left_out") or 0),
            unsealed=int(data.get("unsealed") or 0),
            unsealed_since=data.get("unsealed_since"),
            requests_unsealed=int(data.get("requests_unsealed") or 0),
            purged_through=int(data.get("purged_through") or 0),
            exported=int(data.get("exported") or 0),
        )


def verify_chain(
    entries: Iterable[AuditEntry],
    *,
    head_seq: int | None,
    head_hash: str | None,
    anchor: AuditAnchor | None = None,
    report: AuditReport | None = None,
    start_seq: int = 0,
    start_hash: str = "",
) -> AuditReport:
    """Walk `entries` (the log in order, up to the head): every hash, every link, the head, and
    the anchor when given. `head_seq` None: the head row is gone; the walk checks the rest. The
    chain starts after entry `start_seq` with hash `start_hash` (where a purge dropped it through)."""
    report = report if report is not None else AuditReport()
    report.head_seq = head_seq or 0
    report.anchor = anchor
    anchor_seen = anchor is None or anchor.seq == 0
    expected_seq = start_seq + 1
    prev_hash = start_hash
    for entry in entries:
        report.entries += 1
        if entry.seq != expected_seq:
            missing = (
                f"{expected_seq}" if entry.seq == expected_seq + 1 else f"{expected_seq}..{entry.seq - 1}"
            )
            report.add(entry.seq, f"entries {missing} are missing (deleted)")
        if entry.prev_hash != prev_hash:
            report.add(entry.seq, "does not link to the entry before it")
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
            report.add(entry.seq, "was edited: its hash does not match its contents")
        if anchor is not None and entry.seq == anchor.seq:
            anchor_seen = True
            if entry.hash != anchor.hash:
                report.add(
                    entry.seq,
                    f"does not match the anchor {anchor}: the log was rewritten after it was anchored",
                )
        expected_seq = entry.seq + 1
        prev_hash = entry.hash
    last_seq = expected_seq - 1
    if head_seq is not None and (last_seq != head_seq or prev_hash != head_hash):
        if last_seq < head_seq:
            report.add(last_seq + 1, f"entries {last_seq + 1}..{head_seq} are missing (deleted)")
        else:
            report.add(last_seq, "the log does not end at the recorded head")
    if anchor is not None and not anchor_seen:
        report.add(
            anchor.seq,
            f"the anchored entry {anchor.seq} is gone: the log was cut back or rewound after it was "
            f"anchored (it now ends at {last_seq})",
        )
    return report


ARGS_ACTIONS = ("request.created", "request.updated", "request.ready")
"""The entries that record a request's args (redacted), newest last."""
ENDING_ACTIONS = ("request.decided", "request.expired", "request.cancelled")
"""The entries that record a request's one terminal transition."""
OPEN_STATUSES = frozenset({RequestStatus.DRAFTING.value, RequestStatus.PENDING.value})


def check_request(row: Mapping[str, Any], trail: Sequence[Mapping[str, Any]], report: AuditReport) -> None:
    """Compare a request's row (`id`, `status`, `args`, `rule`, `decision`, `final_args`) with its
    entries in `trail` (`seq`, `action`, `audit_actor`, `data`; args, endings and the runs'
    starts, in order). Each run's `args_digest` must be that of the decided args.

    The log keeps redacted args, so a redacted argument is compared as the log shows it: a
    change to its value cannot be seen, a change to any other argument can.
    """
    request_id = str(row["id"])
    status = row["status"]
    if not isinstance(status, str) or (status not in OPEN_STATUSES and status not in _TERMINAL):
        report.add(0, f"request {request_id} has an unknown status {status!r}", request_id)
        return
    rule = row.get("rule")
    redact = rule.get("redact") if isinstance(rule, dict) else None
    redact = redact if isinstance(redact, list) else []
    args_entries = [entry for entry in trail if entry["action"] in ARGS_ACTIONS]
    endings = [entry for entry in trail if entry["action"] in ENDING_ACTIONS]

    if not args_entries:
        report.add(0, f"request {request_id} has no audit entry recording its creation", request_id)
    elif _shown(row.get("args"), redact) != _data(args_entries[-1]).get("args"):
        report.add(
            args_entries[-1]["seq"],
            f"request {request_id}: its args in the requests table differ from those this entry recorded",
            request_id,
        )

    if status in OPEN_STATUSES:
        if endings:
            ending = endings[0]
            report.add(
                ending["seq"],
                f"request {request_id} is {status} in the requests table, but this entry ended it "
                f"({_ended_as(ending)})",
                request_id,
            )
        return
    if not endings:
        report.add(
            0, f"request {request_id} is {status}, but no audit entry records how it ended", request_id
        )
        return
    for extra in endings[1:]:
        report.add(extra["seq"], f"request {request_id} was ended a second time", request_id)
    ending = endings[0]
    ended_as = _ended_as(ending)
    if ended_as != status:
        report.add(
            ending["seq"],
            f"request {request_id} is {status} in the requests table, but this entry recorded it {ended_as}",
            request_id,
        )
        return
    _check_runs(row, [entry for entry in trail if entry["action"] == RUN_STARTED], report)
    decision = row.get("decision")
    said_by = decision.get("actor") if isinstance(decision, dict) else None
    if ending["action"] != "request.expired" and said_by != ending["audit_actor"]:
        report.add(
            ending["seq"],
            f"request {request_id}: the requests table says {said_by!r} ended it, this entry says "
            f"{ending['audit_actor']!r}",
            request_id,
        )
    data = _data(ending)
    expected = {"approve": data.get("original_args"), "edit": data.get("final_args")}.get(
        str(data.get("type")) if ending["action"] == "request.decided" else ""
    )
    final_args = row.get("final_args")
    if _shown(final_args, redact) != expected:
        report.add(
            ending["seq"],
            f"request {request_id}: its final args in the requests table differ from those this "
            "entry recorded",
            request_id,
        )


_TERMINAL = frozenset(status.value for status in RequestStatus) - OPEN_STATUSES
RUN_STARTED = "execution.started"


def _check_runs(row: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], report: AuditReport) -> None:
    """Every run started with the args it was approved for (runs recorded before claims carried
    a digest say nothing, and are not checked)."""
    final_args, args = row.get("final_args"), row.get("args")
    decided = final_args if final_args is not None else args
    if not isinstance(decided, dict):
        return
    expected = args_digest(decided)
    for run in runs:
        claimed = _data(run).get("args_digest")
        if claimed is not None and claimed != expected:
            report.add(
                run["seq"],
                f"request {row['id']}: this run started with args (digest {claimed}) other than those "
                f"decided ({expected})",
                str(row["id"]),
            )


def _data(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    data = entry.get("data")
    return data if isinstance(data, Mapping) else {}


def _shown(args: Any, redact: list[str]) -> Any:
    """Args as the log keeps them (redacted); anything that is not an object, as it is."""
    return redact_args(args, redact) if isinstance(args, dict) else args


def _ended_as(ending: Mapping[str, Any]) -> str:
    """The status an ending entry recorded."""
    if ending["action"] == "request.expired":
        return RequestStatus.EXPIRED.value
    if ending["action"] == "request.cancelled":
        return RequestStatus.CANCELLED.value
    kind = _data(ending).get("type")
    found = STATUS_FOR_DECISION.get(kind) if isinstance(kind, str) else None
    return found.value if found is not None else f"decided with an unknown type {kind!r}"
