"""`signoff audit list` and `audit export`: the log filtered by time, actor, request, tool, kind
and action, locally or through a server; and the check of an exported log (`verify --file`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Literal

import typer

from ..audit import AuditAnchor, AuditEntry, AuditReport, verify_chain
from ..audit_export import EXPORTS, read_json_lines
from ..audit_filter import AuditFilter
from ..errors import InvalidInput
from . import render
from .options import JsonFlag
from .state import CliError, CliInputError, store_of
from .text import Readout

Since = Annotated[
    str | None,
    typer.Option(
        "--since", help="Only entries at or after this moment: 2025-06-01 or 2025-06-01T14:00 (UTC)."
    ),
]
Until = Annotated[str | None, typer.Option("--until", help="Only entries before this moment.")]
Actor = Annotated[str | None, typer.Option("--actor", help="Only this actor's entries.")]
RequestOption = Annotated[str | None, typer.Option("--request", help="Only this request's entries.")]
Tool = Annotated[str | None, typer.Option("--tool", help="Only the entries of requests for this tool.")]
Kind = Annotated[
    str | None, typer.Option("--kind", help="Only this family of actions (rules, request, user, ...).")
]
Action = Annotated[str | None, typer.Option("--action", help="Only this action (rules.set, ...).")]


def audit_filter(
    *,
    since: str | None,
    until: str | None,
    actor: str | None,
    request: str | None,
    tool: str | None,
    kind: str | None,
    action: str | None,
) -> AuditFilter:
    try:
        return AuditFilter.parse(
            since=since, until=until, actor=actor, request_id=request, tool=tool, kind=kind, action=action
        )
    except InvalidInput as exc:  # "since: ..." names the option
        raise CliInputError(f"--{exc.message}") from None


def audit_list(
    ctx: typer.Context,
    since: Since = None,
    until: Until = None,
    actor: Actor = None,
    request: RequestOption = None,
    tool: Tool = None,
    kind: Kind = None,
    action: Action = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="How many entries.")] = 50,
    before: Annotated[
        int | None, typer.Option(min=1, help="Only entries before this sequence number (the next page).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """The newest entries the filters keep, newest first."""
    where = audit_filter(
        since=since, until=until, actor=actor, request=request, tool=tool, kind=kind, action=action
    )
    found: list[AuditEntry] = []
    for entry in store_of(ctx).audit_entries(**where.kwargs(), before=before, newest_first=True, batch=limit):
        found.append(entry)
        if len(found) >= limit:
            break
    next_before = found[-1].seq if len(found) == limit else None
    if as_json:
        render.print_json({"items": [entry.to_dict() for entry in found], "next_before": next_before})
        return
    out, readout = render.console(), Readout()
    if not found:
        out.print("No entries." if before is None else "No older entries.")
        return
    render.audit_trail(found, out, readout)
    if next_before is not None:
        out.print(f"Older: add --before {next_before}", markup=False)
    render.warn(out, readout)


def audit_export(
    ctx: typer.Context,
    out: Annotated[Path | None, typer.Option("--out", help="Write here (default: standard output).")] = None,
    file_format: Annotated[
        Literal["jsonl", "csv"], typer.Option("--format", help="jsonl (exact, verifiable) or csv.")
    ] = "jsonl",
    since: Since = None,
    until: Until = None,
    actor: Actor = None,
    request: RequestOption = None,
    tool: Tool = None,
    kind: Kind = None,
    action: Action = None,
) -> None:
    """The log (or the entries the filters keep), oldest first, one entry per line; written as it
    is read. An export of the whole log verifies on its own: `signoff audit verify --file FILE`."""
    where = audit_filter(
        since=since, until=until, actor=actor, request=request, tool=tool, kind=kind, action=action
    )
    store = store_of(ctx)
    if request is not None:
        store.get_request(where.request_id or request)
    write = EXPORTS[file_format][0]
    lines = write(store.audit_entries(**where.kwargs()))
    if out is None:
        for line in lines:
            typer.echo(line, nl=False)
        return
    count = -1 if file_format == "csv" else 0  # the header row
    try:
        with out.open("w", encoding="utf-8", newline="") as stream:
            for line in lines:
                stream.write(line)
                count += 1
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from None
    render.console().print(f"Wrote {count} entries to {out}.")


def verify_file(path: Path, anchor: AuditAnchor | None) -> AuditReport:
    """Check an exported log (JSON Lines, from entry 1): every hash and link, and the anchor."""
    try:
        with path.open(encoding="utf-8") as stream:
            entries = list(_read_entries(stream, path))
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    if not entries:
        raise CliError(f"{path} holds no audit entries")
    last = entries[-1]
    return verify_chain(entries, head_seq=last.seq, head_hash=last.hash, anchor=anchor)


def _read_entries(lines: Iterable[str], path: Path) -> Iterator[AuditEntry]:
    try:
        yield from read_json_lines(lines, str(path))
    except InvalidInput as exc:
        raise CliInputError(exc.message) from None
