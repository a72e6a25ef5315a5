"""The demo's tools. They only pretend, and report each time they really run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Report = Callable[[str, dict[str, Any]], None]


def make_tools(report: Report) -> dict[str, Callable[..., str]]:
    """The tools, each calling `report(name, args)` when it actually runs."""

    def search(query: str) -> str:
        """Search the company wiki."""
        report("search", {"query": query})
        return "Q3 revenue: 4.2M EUR, up 12% on Q2 (wiki/finance/q3)."

    def send_email(to: str, cc: list[str], subject: str, body: str) -> str:
        """Send an email."""
        report("send_email", {"to": to, "cc": cc, "subject": subject, "body": body})
        copies = f" (cc {', '.join(cc)})" if cc else ""
        return f"Email sent to {to}{copies}."

    def delete_records(table: str, ids: list[int], env: str, db_url: str) -> str:
        """Delete rows from a table."""
        report("delete_records", {"table": table, "ids": ids, "env": env, "db_url": db_url})
        return f"Deleted {len(ids)} rows from {table} ({env})."

    return {"search": search, "send_email": send_email, "delete_records": delete_records}
