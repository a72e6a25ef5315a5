"""The audit log written out: JSON Lines (exact: an export of the whole log verifies, see
`signoff audit verify --file`) or CSV (for a spreadsheet), one entry at a time, so that an
export of any size streams without being built in memory."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator

from .audit import AuditEntry
from .errors import InvalidInput

JSON_LINES = "application/x-ndjson"
CSV = "text/csv"
CSV_COLUMNS = ("seq", "at", "actor", "channel", "action", "request_id", "data", "prev_hash", "hash")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def json_lines(entries: Iterable[AuditEntry]) -> Iterator[str]:
    """One entry per line, as `GET /v1/audit` gives it."""
    for entry in entries:
        yield json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"


def read_json_lines(lines: Iterable[str], source: str) -> Iterator[AuditEntry]:
    """The entries of a JSON Lines export (`source` names it in errors); InvalidInput at the
    first line that is not an entry as `json_lines` writes it."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            yield AuditEntry(
                seq=int(data["seq"]),
                at=str(data["at"]),
                actor=str(data["actor"]),
                channel=str(data["channel"]),
                action=str(data["action"]),
                request_id=data.get("request_id"),
                data=dict(data.get("data") or {}),
                prev_hash=str(data["prev_hash"]),
                hash=str(data["hash"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInput(
                f"{source}, line {number}: not an audit entry as `signoff audit export` writes it ({exc})"
            ) from None


def csv_lines(entries: Iterable[AuditEntry]) -> Iterator[str]:
    """A header row, then one row per entry; `data` as JSON. A text cell that a spreadsheet would
    run as a formula (it starts with = + - @, a tab or a return) starts with ' instead: the CSV
    is for reading; JSON Lines is the exact form."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def row(values: Iterable[object]) -> str:
        writer.writerow(values)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield row(CSV_COLUMNS)
    for entry in entries:
        yield row(
            (
                entry.seq,
                entry.at,
                _cell(entry.actor),
                _cell(entry.channel),
                _cell(entry.action),
                _cell(entry.request_id or ""),
                json.dumps(entry.data, ensure_ascii=False, separators=(",", ":")),
                entry.prev_hash,
                entry.hash,
            )
        )


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


EXPORTS: dict[str, tuple[Callable[[Iterable[AuditEntry]], Iterator[str]], str, str]] = {
    "jsonl": (json_lines, JSON_LINES, "signoff-audit.jsonl"),
    "csv": (csv_lines, CSV, "signoff-audit.csv"),
}
"""Each format's writer, media type and file name."""
