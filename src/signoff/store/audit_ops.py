"""The audit log in the store: sealing it, reading it, anchoring it, and verifying it (DESIGN
§8, §11).

A write queues its entries (PostgreSQL: `audit_queue`, locking nothing shared; SQLite, one writer
at a time anyway, seals each entry as it commits). `seal_audit` moves queued entries into the hash
chain, one sealer at a time; the server runs it every `SEAL_INTERVAL`, and every read of the log
seals first, so a reader sees what was written before it asked.

`verify_audit` checks, in order: that the tables and triggers guarding the log are in place;
the hash chain up to the head; that nothing lies beyond the head (it was moved back); the
anchor, when one is given; and every request's row against the entries that recorded its args
and its end. Whatever it finds is a problem in the report, never an exception: a dropped table
or an unreadable row too.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._util import to_iso
from ..audit import AuditAnchor, AuditEntry, AuditReport, check_request, verify_chain
from ..errors import AuditBroken, StoreError
from .core import SEAL_BATCH, StoreCore

if TYPE_CHECKING:
    from ..retention import ExportCheck, PurgeRecord

log = logging.getLogger("signoff.store")
CHECK_BATCH = 1000
"""Requests cross-checked per read."""
MAX_SEQ = 2**63 - 1
"""Past the newest entry: where reading newest first starts."""


class AuditOps(StoreCore):
    def seal_audit(self, *, wait: bool = True) -> int:
        """Seal every entry queued so far into the hash chain; how many were sealed. With `wait`
        false, return -1 at once if another sealer (another replica) is sealing now."""
        if self.seals_at_commit:
            return 0
        total = 0
        while True:
            with self._write() as tx:
                row = tx.one("seal_audit", limit=SEAL_BATCH, wait=wait)
            sealed = int(row["sealed"]) if row else 0
            if sealed < 0:
                return -1 if total == 0 else total
            total += sealed
            if sealed < SEAL_BATCH:
                return total

    def audit_unsealed(self) -> tuple[int, str | None]:
        """How many entries wait to be sealed, and when the oldest of them was written."""
        with self._read() as tx:
            row = tx.one("audit_unsealed")
        if row is None:
            return 0, None
        return int(row["n"]), row["oldest_at"]

    def _seal_before_reading(self) -> None:
        """A reader sees every entry written before it asked. Best effort: a store that cannot
        write now (a read-only role, a full disk) is still read, up to what is sealed."""
        try:
            self.seal_audit()
        except StoreError as exc:
            log.debug("the audit log could not be sealed before reading (%s)", exc)

    def audit_entries(
        self,
        *,
        request_id: str | None = None,
        action: str | None = None,
        actor: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        tool: str | None = None,
        kind: str | None = None,
        after: int = 0,
        before: int | None = None,
        newest_first: bool = False,
        batch: int = 1000,
        seal: bool = True,
    ) -> Iterator[AuditEntry]:
        """The sealed log in order, read in batches (keyset: each batch starts past the last
        entry read), filtered as `AuditFilter` says. Oldest first after `after`; with
        `newest_first`, newest first before `before` (None: from the newest). With `seal`, what
        is queued is sealed first."""
        if seal:
            self._seal_before_reading()
        where = {
            "request_id": request_id,
            "action": action,
            "actor": actor,
            "kind": f"{kind}." if kind else None,
            "since": to_iso(since) if since is not None else None,
            "until": to_iso(until) if until is not None else None,
            "tool": tool,
        }
        cursor = (MAX_SEQ if before is None else before) if newest_first else after
        while True:
            with self._read() as tx:
                if newest_first:
                    rows = tx.all("audit_rows_newest", before=cursor, limit=batch, **where)
                else:
                    rows = tx.all("audit_rows", after=cursor, limit=batch, **where)
            for row in rows:
                yield AuditEntry(**row)
            if len(rows) < batch:
                return
            cursor = int(rows[-1]["seq"])

    def audit_events(
        self,
        *,
        after: int,
        actions: Collection[str],
        creators: Collection[str] | None,
        limit: int,
        upto: int | None = None,
    ) -> tuple[list[AuditEntry], int]:
        """Entries with one of `actions` after `after` (up to `upto`), oldest first, at most
        `limit`; only those of requests created by one of `creators` unless it is None. With
        them, how far the log was read: the last entry given when `limit` were, else the log's
        end as it was then (or `upto`). What is queued is sealed first."""
        self._seal_before_reading()
        with self._read() as tx:
            last = tx.one("audit_last_seq")
            end = int(last["seq"]) if last else 0
            if upto is not None:
                end = min(end, upto)
            rows = tx.all(
                "audit_events_upto",
                after=after,
                upto=end,
                actions=sorted(actions),
                creators=None if creators is None else sorted(creators),
                limit=limit,
            )
        entries = [AuditEntry(**row) for row in rows]
        return entries, entries[-1].seq if len(entries) == limit else max(end, after)

    def audit_entry(self, seq: int) -> AuditEntry | None:
        """One entry by its sequence number."""
        if seq <= 0:
            return None
        found = next(iter(self.audit_entries(after=seq - 1, batch=1)), None)
        return found if found is not None and found.seq == seq else None

    def audit_head_seq(self) -> int:
        """The sequence number of the newest audit entry (0 when the log is empty)."""
        self._seal_before_reading()
        with self._read() as tx:
            head = tx.one("audit_head")
        return int(head["seq"]) if head else 0

    def audit_anchor(self) -> AuditAnchor:
        """The head of the log, to keep somewhere else: `verify_audit(anchor=...)` later checks
        that the log still extends it: the sealed head, once what is queued is sealed.
        AuditBroken if the head does not match the log."""
        self._seal_before_reading()
        problem = self._guard_problem()
        if problem is None:
            with self._read() as tx:
                tail = tx.one("audit_tail")
            if tail is None:
                problem = "the audit_head row is gone"
            elif (tail["last_seq"] or 0) != tail["seq"] or (
                tail["seq"] and tail["entry_hash"] != tail["hash"]
            ):
                problem = "the log does not end at its recorded head"
            else:
                return AuditAnchor(int(tail["seq"]), str(tail["hash"]))
        raise AuditBroken(f"cannot anchor the audit log: {problem}; `signoff audit verify` says more")

    def verify_audit(
        self,
        *,
        anchor: AuditAnchor | None = None,
        requests: bool = True,
        seal: bool = True,
        exports: Sequence[Path] = (),
    ) -> AuditReport:
        """Check the log (and, with `anchor`, that it still extends it); with `requests`, every
        request's status, args and final args against the log. With `seal`, what is queued is
        sealed first (best effort); whatever still waits is counted in the report, unchecked.
        After a purge the live log's chain starts at the entry it was recorded through; an anchor
        older than that is checked in the purge's export (`exports`: each must be a purge's
        export as it wrote it, and link)."""
        from ..retention import purge_record, read_export  # the purges' records: for a verification

        checks = [read_export(path) for path in exports]
        if seal:
            self._seal_before_reading()
        report = AuditReport(anchor=anchor)
        state = self._guards(report)
        if state.get("audit_log") != "ok":
            return report
        report.unsealed, report.unsealed_since = self.audit_unsealed()
        purges: list[PurgeRecord] = []
        if state.get("audit_purges") == "ok":
            with self._read() as tx:
                purges = [purge_record(row) for row in tx.all("audit_purge_records")]
        latest = max(purges, key=lambda purge: (purge.through_seq, purge.id), default=None)
        start_seq, start_hash = (latest.through_seq, latest.through_hash) if latest else (0, "")
        report.purged_through = start_seq
        live_anchor = anchor if anchor is None or anchor.seq > start_seq else None
        if anchor is not None and live_anchor is None:
            self._check_purged_anchor(report, anchor, purges, checks)
        else:
            for check in checks:
                self._check_export(report, check, purges, None)
        head_seq: int | None = None
        head_hash: str | None = None
        if state.get("audit_head") == "ok":
            with self._read() as tx:
                head = tx.one("audit_head")
            if head is None:
                report.add(0, "the audit_head row is gone: the log's end cannot be checked")
            else:
                head_seq, head_hash = int(head["seq"]), str(head["hash"])
        entries = self.audit_entries(after=start_seq, seal=False)
        if head_seq is not None:
            limit = head_seq
            entries = itertools.takewhile(lambda entry: entry.seq <= limit, entries)
        try:
            verify_chain(
                entries,
                head_seq=head_seq,
                head_hash=head_hash,
                anchor=live_anchor,
                report=report,
                start_seq=start_seq,
                start_hash=start_hash,
            )
        except ValueError as exc:
            report.add(report.entries + 1, f"the log cannot be read from here on: {exc}")
        report.anchor = anchor
        if head_seq is not None:
            self._check_tail(report)
        if requests and state.get("requests") == "ok":
            self._check_requests(report, max((purge.before for purge in purges), default=""))
        return report

    def _check_purged_anchor(
        self, report: AuditReport, anchor: AuditAnchor, purges: list[PurgeRecord], checks: list[ExportCheck]
    ) -> None:
        """An anchor a purge dropped: the entry a purge went through is recorded with its hash;
        any other is checked in the export that holds it."""
        covered = False
        for check in checks:
            covered = self._check_export(report, check, purges, anchor) or covered
        recorded = next((purge for purge in purges if purge.through_seq == anchor.seq), None)
        if recorded is not None:
            if recorded.through_hash != anchor.hash:
                report.add(
                    anchor.seq,
                    f"does not match the anchor {anchor}: the log was rewritten after it was anchored",
                )
            return
        if covered:
            return
        dropped_by = min(
            (purge for purge in purges if purge.exported and purge.through_seq >= anchor.seq),
            key=lambda purge: purge.through_seq,
            default=None,
        )
        where = (
            f"the purge of {dropped_by.at} exported it to {dropped_by.export_name} "
            f"(sha256 {dropped_by.export_sha256})"
            if dropped_by is not None
            else "no purge recorded an export holding it"
        )
        report.add(
            anchor.seq,
            f"the anchored entry {anchor.seq} was purged from the live log ({where}): give that export "
            "to check the anchor (`signoff audit verify --anchor ... --export FILE`)",
        )

    @staticmethod
    def _check_export(
        report: AuditReport, check: ExportCheck, purges: list[PurgeRecord], anchor: AuditAnchor | None
    ) -> bool:
        from ..retention import check_export

        found, in_range = check_export(check, purges, anchor)
        report.exported += found.entries
        for problem in found.problems:
            report.add(problem.seq, problem.problem)
        return in_range

    def _guards(self, report: AuditReport) -> dict[str, str]:
        """The guarding tables and triggers by name, each 'ok', 'missing' or 'disabled'."""
        with self._read() as tx:
            rows = tx.all("audit_guards")
        state = {}
        for row in rows:
            state[row["name"]] = row["state"]
            if row["state"] == "ok":
                continue
            if row["kind"] == "table":
                report.add(0, f"the table {row['name']} is {row['state']}: it was dropped, or never created")
            else:
                report.add(
                    0,
                    f"the trigger {row['name']} is {row['state']}: the log is no longer protected "
                    "against rewriting",
                )
        return state

    def _guard_problem(self) -> str | None:
        report = AuditReport()
        self._guards(report)
        return report.problems[0].problem if report.problems else None

    def _check_tail(self, report: AuditReport) -> None:
        with self._read() as tx:
            tail = tx.one("audit_tail")
        if tail is None:
            report.add(0, "the audit_head row is gone")
            return
        head, last = int(tail["seq"]), int(tail["last_seq"] or 0)
        if last > head:
            report.add(
                head + 1,
                f"entries {head + 1}..{last} lie beyond the recorded head {head}: the head was moved back",
            )

    def _check_requests(self, report: AuditReport, purged_before: str) -> None:
        after = ""
        try:
            while True:
                with self._read() as tx:
                    rows = tx.all("request_trails", after=after, limit=CHECK_BATCH)
                if not rows:
                    break
                for request_rows in _by_request(rows):
                    if request_rows[0]["unsealed"]:
                        report.requests_unsealed += 1
                        continue
                    trail = [row for row in request_rows if row["seq"] is not None]
                    check_request(request_rows[0], trail, report)
                    report.requests += 1
                after = str(rows[-1]["id"])
            with self._read() as tx:
                orphans = tx.all("audit_orphans", limit=100, purged_before=purged_before)
        except ValueError as exc:
            report.add(0, f"the requests after {after or 'the first'} cannot be read: {exc}")
            return
        for orphan in orphans:
            report.add(
                int(orphan["seq"]),
                f"request {orphan['request_id']} was created, but the requests table no longer has it",
                orphan["request_id"],
            )


def _by_request(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for _, group in itertools.groupby(rows, key=lambda row: row["id"]):
        yield list(group)
