"""`signoff purge --before DATE`: retention, on the local database (see `signoff.retention`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..audit_filter import parse_moment
from ..errors import InvalidInput
from ..retention import PurgeReport
from . import render
from .options import JsonFlag
from .state import CliError, CliInputError, acting_user, local_store_of

LABELS = {
    "requests": "closed requests",
    "executions": "executions",
    "outbox": "outbox rows",
    "attempts": "delivery attempts",
    "idempotency_keys": "idempotency keys",
    "shadow_hits": "shadow hits",
    "audit_entries": "audit entries (exported, then dropped from the live log)",
}


def purge(
    ctx: typer.Context,
    before: Annotated[
        str,
        typer.Option(
            "--before",
            metavar="DATE",
            help="Drop what closed before this moment: 2025-06-01 or 2025-06-01T14:00 (UTC).",
        ),
    ],
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write the audit entries the purge drops here first (JSON Lines; a new file). Keep "
            "it: an anchor taken before the purge verifies with it (`audit verify --export`).",
        ),
    ] = None,
    keep_audit: Annotated[
        bool, typer.Option("--keep-audit", help="Keep every audit entry in the live log (no export).")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would go.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Drop the requests closed before DATE (none open, running or still to be delivered) with
    their executions, outbox and attempt rows, delivered outbox rows and idempotency keys older
    than DATE, and (unless --keep-audit) the audit entries no remaining request needs, once
    exported with --export. The log stays verifiable: its chain starts where the purge ended."""
    try:
        cutoff = parse_moment(before, "before")
    except InvalidInput as exc:
        raise CliInputError(f"--{exc.message}") from None
    if cutoff is None:
        raise CliInputError("--before: give a date, e.g. 2025-06-01")
    if export is not None and keep_audit:
        raise CliInputError("give either --export FILE or --keep-audit, not both")
    if export is None and not keep_audit and not dry_run:
        raise CliInputError(
            "say what becomes of the audit entries the purge drops: --export FILE writes them there "
            "first, --keep-audit keeps them in the live log"
        )
    store = local_store_of(ctx, "purge")
    actor = acting_user(ctx, None)
    try:
        plan = store.purge(cutoff, export=None, keep_audit=keep_audit, actor=actor, dry_run=True)
    except InvalidInput as exc:
        raise CliInputError(f"--before: {exc.message}") from None
    if dry_run:
        _show(plan, as_json, "Would drop")
        return
    if not yes:
        counts = ", ".join(f"{count} {LABELS[name]}" for name, count in plan.counts().items() if count)
        if not typer.confirm(f"Drop {counts or 'nothing'} (before {cutoff.isoformat()})?", default=False):
            raise CliError("nothing purged")
    try:
        report = store.purge(cutoff, export=export, keep_audit=keep_audit, actor=actor)
    except InvalidInput as exc:
        raise CliInputError(exc.message) from None
    except OSError as exc:
        raise CliError(f"cannot write the export {export}: {exc.strerror}; nothing was purged") from None
    _show(report, as_json, "Dropped")


def _show(report: PurgeReport, as_json: bool, verb: str) -> None:
    if as_json:
        render.print_json(report.to_dict())
        return
    out = render.console()
    out.print(f"{verb} (closed before {report.before.isoformat()}):", markup=False)
    for name, count in report.counts().items():
        out.print(f"  {count:>8}  {LABELS[name]}", markup=False)
    if report.export is not None:
        out.print(f"Exported to {report.export} (sha256 {report.export_sha256}).", markup=False)
    if report.through_seq:
        out.print(f"The live log now starts after entry {report.through_seq}.", markup=False)
