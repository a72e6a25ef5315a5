"""Retention in the store: `purge(before)` drops what closed before a cutoff, in batches (each its
own transaction, so a big database is never locked for long), after exporting the audit entries
it drops (see `signoff.retention`).

The steps, each safe to stop after (a purge run again finishes the work):
1. the entry to drop the log through: the newest sealed one older than the cutoff and before
   the first entry of any request that stays; its entries are exported and fsynced;
2. the purge is recorded (`audit_purges`: from then on the live chain starts at that entry);
3. the requests go (with their executions, outbox and attempt rows), then the log's entries
   through the recorded one, then delivered outbox rows, old idempotency keys and old shadow hits;
4. an `audit.purged` entry records the counts.
Verification never sees a request without its entries (requests go before their entries), and
excuses the log's mention of a request that ended before a recorded cutoff.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._util import to_iso, utcnow
from ..errors import InvalidInput
from .audit_ops import AuditOps
from .core import Tx

if TYPE_CHECKING:
    from ..retention import PurgeRecord, PurgeReport

PURGE_BATCH = 500
"""Rows dropped per transaction."""
PURGED = "audit.purged"
"""The action of the entry a purge appends."""


class PurgeOps(AuditOps):
    def audit_purges(self) -> list[PurgeRecord]:
        """Every purge recorded, oldest first."""
        from ..retention import purge_record  # the purges' records: for a purge or its listing

        with self._read() as tx:
            rows = tx.all("audit_purge_records")
        return [purge_record(row) for row in rows]

    def purge(
        self,
        before: datetime,
        *,
        export: Path | None,
        keep_audit: bool,
        actor: str,
        channel: str = "cli",
        dry_run: bool = False,
        batch: int = PURGE_BATCH,
    ) -> PurgeReport:
        """Drop the requests closed before `before` (nothing is open, running or still to be
        delivered), their executions, outbox and attempt rows, the delivered outbox rows and
        idempotency keys older than it; and, unless `keep_audit`, the audit entries before it
        that no remaining request needs, once written to `export`. With `dry_run`, only count."""
        from ..retention import PurgeReport, write_export

        before = _cutoff(before)
        if not keep_audit and export is None and not dry_run:
            raise InvalidInput(
                "name a file to export the audit entries the purge drops to, or keep them in the log"
            )
        report = PurgeReport(before=before, dry_run=dry_run, kept_audit=keep_audit)
        self._seal_before_reading()
        with self._read() as tx:
            latest = tx.one("latest_audit_purge")
            through = None
            if not keep_audit:
                through = tx.one("purge_through", before=before, before_text=to_iso(before))
        start_seq, start_hash = 0, ""
        if latest is not None:
            start_seq, start_hash = int(latest["through_seq"]), str(latest["through_hash"])
        through_seq, through_hash = start_seq, start_hash
        if through is not None and int(through["seq"]) > start_seq:
            through_seq, through_hash = int(through["seq"]), str(through["hash"])
        report.through_seq = through_seq
        if dry_run:
            report.audit_entries = through_seq - start_seq
            self._purge_requests(report, before, batch, dry_run=True)
            with self._read() as tx:
                keys = tx.one("count_purgeable", before=before)
                outbox = tx.one("count_purgeable_outbox", before=before)
                hits = tx.one("count_old_shadow_hits", before=before)
            report.idempotency_keys = int(keys["idempotency_keys"]) if keys else 0
            report.shadow_hits = int(hits["shadow_hits"]) if hits else 0
            report.outbox += int(outbox["outbox"]) if outbox else 0
            report.attempts += int(outbox["attempts"]) if outbox else 0
            return report
        exported, digest = 0, None
        if through_seq > start_seq:
            assert export is not None
            entries = itertools.takewhile(
                lambda entry: entry.seq <= through_seq, self.audit_entries(after=start_seq)
            )
            exported, digest = write_export(export, entries)
            report.export, report.export_sha256 = export, digest
        with self._transaction() as (tx, _):
            tx.run(
                "record_audit_purge",
                before_text=to_iso(before),
                through_seq=through_seq,
                through_hash=through_hash,
                exported=exported,
                export_name=export.name if exported and export is not None else None,
                export_sha256=digest,
                at=to_iso(utcnow()),
                actor=actor,
            )
        report.audit_entries = exported
        self._purge_requests(report, before, batch)
        self._drop_entries(report, through_seq, batch)
        self._purge_outbox(report, before, batch)
        self._purge_kept_answers(report, before, batch)
        self._purge_shadow_hits(report, before, batch)
        with self._transaction() as (tx, _):
            self._audit(
                tx,
                PURGED,
                actor=actor,
                channel=channel,
                data={
                    "before": to_iso(before),
                    **report.counts(),
                    "through_seq": through_seq,
                    "export": export.name if report.export is not None and export is not None else None,
                    "export_sha256": digest,
                },
            )
        return report

    def claim_daily_purge(self, day: int) -> bool:
        """Whether this process runs the purge of `day` (days since 1970): only the first of the
        replicas to ask for a day gets it."""
        with self._transaction() as (tx, _):
            return tx.one("claim_daily_purge", day=day) is not None

    # -- the steps ----------------------------------------------------------------------------

    def _purge_requests(
        self, report: PurgeReport, before: datetime, batch: int, *, dry_run: bool = False
    ) -> None:
        after = ""
        while True:
            with self._read() if dry_run else self._write() as tx:
                rows = tx.all("purgeable_requests", after=after, before=before, limit=batch)
                if not rows:
                    return
                through = str(rows[-1]["id"])
                dropped = len(rows)
                if not dry_run:
                    dropped = self._drop(tx, "delete_purgeable_requests", after, through, before)
            report.requests += dropped
            report.executions += sum(int(row["executions"]) for row in rows)
            report.outbox += sum(int(row["outbox"]) for row in rows)
            report.attempts += sum(int(row["attempts"]) for row in rows)
            report.batches += 0 if dry_run else 1
            after = through

    def _purge_outbox(self, report: PurgeReport, before: datetime, batch: int) -> None:
        after = 0
        while True:
            with self._write() as tx:
                rows = tx.all("purgeable_outbox", after=after, before=before, limit=batch)
                if not rows:
                    return
                through = int(rows[-1]["id"])
                self._drop(tx, "delete_purgeable_attempts", after, through, before)
                report.outbox += self._drop(tx, "delete_purgeable_outbox", after, through, before)
            report.attempts += sum(int(row["attempts"]) for row in rows)
            report.batches += 1
            after = through

    def _drop_entries(self, report: PurgeReport, through_seq: int, batch: int) -> None:
        while through_seq > 0:
            with self._write() as tx:
                dropped = tx.run("delete_purged_entries", through=through_seq, limit=batch)
            if not dropped:
                return
            report.batches += 1

    def _purge_kept_answers(self, report: PurgeReport, before: datetime, batch: int) -> None:
        while True:
            with self._write() as tx:
                dropped = tx.run("purge_old_kept_answers", before=before, limit=batch)
            if not dropped:
                return
            report.idempotency_keys += dropped
            report.batches += 1

    def _purge_shadow_hits(self, report: PurgeReport, before: datetime, batch: int) -> None:
        while True:
            with self._write() as tx:
                dropped = tx.run("purge_old_shadow_hits", before=before, limit=batch)
            if not dropped:
                return
            report.shadow_hits += dropped
            report.batches += 1

    @staticmethod
    def _drop(tx: Tx, query: str, after: object, through: object, before: datetime) -> int:
        return tx.run(query, after=after, through=through, before=before)


def _cutoff(before: datetime) -> datetime:
    """`before` in UTC (a naive one is UTC); InvalidInput if it has not passed yet."""
    moment = before.replace(tzinfo=UTC) if before.tzinfo is None else before.astimezone(UTC)
    if moment > utcnow():
        raise InvalidInput(
            f"the cutoff {to_iso(moment)} is in the future: a purge drops only what closed before a "
            "moment that has passed"
        )
    return moment
