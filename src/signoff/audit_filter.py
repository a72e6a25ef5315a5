"""Which audit entries to read: by time, actor, request, tool, kind and action.

The same filter serves the store (`audit_entries(**where.kwargs())`), the API's query
parameters, the CLI's options and the inbox's audit page. `kind` is an action's family, the part
before its first dot (`rules` is `rules.set`, `rules.imported`, ...); `action` is one action
exactly. `tool` keeps the entries of requests for that tool. Times are UTC: a moment without a
zone is read as UTC, a date alone as its midnight; `since` keeps entries at or after it, `until`
those before it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from typing import Any

from ._util import to_iso
from .errors import InvalidInput

TEXT_FIELDS = ("actor", "request_id", "tool", "kind", "action")


@dataclass(frozen=True, kw_only=True)
class AuditFilter:
    since: datetime | None = None
    until: datetime | None = None
    actor: str | None = None
    request_id: str | None = None
    tool: str | None = None
    kind: str | None = None
    action: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        since: str | None = None,
        until: str | None = None,
        actor: str | None = None,
        request_id: str | None = None,
        tool: str | None = None,
        kind: str | None = None,
        action: str | None = None,
    ) -> AuditFilter:
        """From text as people type it (blank: no filter); InvalidInput naming the field."""
        texts = {"actor": actor, "request_id": request_id, "tool": tool, "kind": kind, "action": action}
        cleaned = {
            name: (value.strip() or None) if value is not None else None for name, value in texts.items()
        }
        if cleaned["kind"] is not None and "." in cleaned["kind"]:
            raise InvalidInput(
                f"kind: {cleaned['kind']!r} is an action; a kind is the part before the dot "
                f"(e.g. {cleaned['kind'].split('.', 1)[0]!r}), or filter by action"
            )
        where = cls(since=parse_moment(since, "since"), until=parse_moment(until, "until"), **cleaned)
        if where.since is not None and where.until is not None and where.since >= where.until:
            raise InvalidInput("until: it must be later than since")
        return where

    @property
    def active(self) -> bool:
        return any(value is not None for value in asdict(self).values())

    def kwargs(self) -> dict[str, Any]:
        """The store's `audit_entries` arguments."""
        return asdict(self)

    def query(self) -> dict[str, str]:
        """As query parameters (the API's, the page's), only those set."""
        found = {name: value for name, value in asdict(self).items() if value is not None}
        for name in ("since", "until"):
            if name in found:
                found[name] = to_iso(found[name])
        return found


def parse_moment(text: str | None, field: str) -> datetime | None:
    """`2025-06-01`, `2025-06-01T14:00`, `2025-06-01 14:00:00Z`, `…+02:00` (no zone: UTC)."""
    if text is None or not text.strip():
        return None
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise InvalidInput(
            f"{field}: {value!r} is not a date or time; use e.g. 2025-06-01 or 2025-06-01T14:00 (UTC)"
        ) from None


def family_of(action: str) -> str:
    """An action's kind: `rules.set` → `rules`."""
    return action.split(".", 1)[0]
