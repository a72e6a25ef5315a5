"""Retention (`signoff purge --before DATE`): what a purge dropped, its export, and the check that
an export still links an old anchor to the live log (DESIGN §8, §11).

A purge drops the log's oldest entries only after writing them to an export (JSON Lines, as
`signoff audit export` writes it) and recording, append-only, the sealed entry it went through
(seq and hash) with the export's sha256. The live log's chain then starts at that entry's hash:
`verify_audit` checks it from there, and an anchor older than the purge is checked in the export,
which must be the one recorded (its sha256), link entry by entry and end at the recorded hash.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .audit import AuditAnchor, AuditEntry, AuditReport, verify_chain
from .audit_export import json_lines, read_json_lines
from .errors import InvalidInput


@dataclass(frozen=True, kw_only=True)
class PurgeRecord:
    """One purge as `audit_purges` keeps it."""

    id: int
    before: str
    through_seq: int
    """The newest entry dropped (the live log's chain starts after it; 0: none ever dropped)."""
    through_hash: str
    exported: int
    """Entries this purge exported and dropped (0: it kept the log)."""
    export_name: str | None
    export_sha256: str | None
    at: str
    actor: str


def purge_record(row: Mapping[str, Any]) -> PurgeRecord:
    """A row of `audit_purges`."""
    return PurgeRecord(
        id=int(row["id"]),
        before=str(row["before"]),
        through_seq=int(row["through_seq"]),
        through_hash=str(row["through_hash"]),
        exported=int(row["exported"]),
        export_name=None if row["export_name"] is None else str(row["export_name"]),
        export_sha256=None if row["export_sha256"] is None else str(row["export_sha256"]),
        at=str(row["at"]),
        actor=str(row["actor"]),
    )


@dataclass
class PurgeReport:
    """What a purge dropped (or, with `dry_run`, would drop)."""

    before: datetime
    dry_run: bool = False
    requests: int = 0
    executions: int = 0
    outbox: int = 0
    attempts: int = 0
    idempotency_keys: int = 0
    shadow_hits: int = 0
    audit_entries: int = 0
    """Entries exported and dropped from the live log (0 when the log was kept)."""
    through_seq: int = 0
    """The live log's chain starts after this entry."""
    export: Path | None = None
    export_sha256: str | None = None
    kept_audit: bool = False
    batches: int = 0
    """Transactions the drops took."""

    def counts(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "executions": self.executions,
            "outbox": self.outbox,
            "attempts": self.attempts,
            "idempotency_keys": self.idempotency_keys,
            "shadow_hits": self.shadow_hits,
            "audit_entries": self.audit_entries,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before.isoformat(),
            "dry_run": self.dry_run,
            **self.counts(),
            "through_seq": self.through_seq,
            "export": str(self.export) if self.export is not None else None,
            "export_sha256": self.export_sha256,
            "kept_audit": self.kept_audit,
        }


@dataclass(frozen=True)
class ExportCheck:
    """An export given to `verify_audit`: its entries and its file's sha256."""

    path: Path
    entries: Sequence[AuditEntry]
    sha256: str


def write_export(path: Path, entries: Iterable[AuditEntry]) -> tuple[int, str]:
    """Write `entries` as JSON Lines to `path` (which must not exist), on disk (fsynced, then
    renamed into place) before this returns; their count and the file's sha256."""
    if path.exists():
        raise InvalidInput(f"{path} exists already: name a new file for the export")
    if not path.parent.is_dir():
        raise InvalidInput(f"cannot write the export {path}: its directory does not exist")
    partial = path.with_name(path.name + ".partial")
    digest = hashlib.sha256()
    count = 0
    with partial.open("wb") as stream:
        for line in json_lines(entries):
            data = line.encode("utf-8")
            digest.update(data)
            stream.write(data)
            count += 1
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(partial, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return count, digest.hexdigest()


def read_export(path: Path) -> ExportCheck:
    """An export's entries and sha256; InvalidInput if it cannot be read or is not an export."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read the export {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not an audit export (not UTF-8 text)") from None
    entries = list(read_json_lines(text.splitlines(), str(path)))
    return ExportCheck(path, entries, hashlib.sha256(data).hexdigest())


def check_export(
    export: ExportCheck, records: Sequence[PurgeRecord], anchor: AuditAnchor | None
) -> tuple[AuditReport, bool]:
    """Check one export against the purges recorded: it must be one of them (its sha256), link
    from the purge before it, and end at the recorded entry; and the anchor, when it falls in
    it. The report, and whether the anchor was in the export's range."""
    report = AuditReport()
    name = export.path.name
    dropping = [record for record in records if record.exported > 0]
    record = next((r for r in dropping if r.export_sha256 == export.sha256), None)
    if record is None:
        last = export.entries[-1].seq if export.entries else 0
        named = next((r for r in dropping if r.through_seq == last), None)
        said = (
            f"the purge through entry {named.through_seq} recorded another sha256 for its export "
            f"({named.export_name}): the file was changed after the purge wrote it"
            if named is not None
            else "no purge recorded an export with its sha256: it was changed, or is not a purge's export"
        )
        report.add(0, f"export {name}: {said}")
        return report, False
    previous = max(
        (r for r in dropping if r.through_seq < record.through_seq),
        key=lambda r: r.through_seq,
        default=None,
    )
    start_seq, start_hash = (previous.through_seq, previous.through_hash) if previous else (0, "")
    in_range = anchor is not None and start_seq < anchor.seq <= record.through_seq
    found = verify_chain(
        export.entries,
        head_seq=record.through_seq,
        head_hash=record.through_hash,
        anchor=anchor if in_range else None,
        start_seq=start_seq,
        start_hash=start_hash,
    )
    report.entries = found.entries
    for problem in found.problems:
        report.add(problem.seq, f"export {name}: {problem.problem}")
    return report, in_range


PURGE_OLDER_THAN_ENV = "SIGNOFF_PURGE_OLDER_THAN"
"""`signoff serve --purge-older-than DAYS`."""
PURGE_EXPORT_DIR_ENV = "SIGNOFF_PURGE_EXPORT_DIR"
"""`signoff serve --purge-export-dir DIR`."""


@dataclass(frozen=True)
class DailyPurge:
    """A server's daily purge (`signoff serve --purge-older-than DAYS --purge-export-dir DIR`):
    once a day, on one replica, what closed more than `older_than` ago goes, and the audit
    entries it drops are exported to a new file in `export_dir`."""

    older_than: timedelta
    export_dir: Path

    def export_for(self, now: datetime) -> Path:
        return self.export_dir / f"signoff-audit-purged-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}.jsonl"
