"""What the scripted "model" does, step by step, and what `--auto` answers when asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..decisions import Approve, Decision, Edit, Reject, Respond


@dataclass(frozen=True)
class Step:
    says: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    auto: Decision | None = None
    """What `signoff demo --auto` decides when this call asks."""


_Q3_EMAIL = {"cc": ["cfo@example.com"], "subject": "Q3 numbers", "body": "Revenue: 4.2M EUR, up 12% on Q2."}
_SESSIONS = {"table": "sessions", "ids": [101, 102, 103]}

STEPS: tuple[Step, ...] = (
    Step("Let me look up the Q3 numbers first.", "search", {"query": "Q3 revenue"}),
    Step(
        "Staging is full of expired sessions; clearing them.",
        "delete_records",
        {**_SESSIONS, "env": "staging", "db_url": "postgresql://admin:hunter2@staging-db/crm"},
    ),
    Step(
        "Production has the same problem; clearing those too.",
        "delete_records",
        {**_SESSIONS, "env": "prod", "db_url": "postgresql://admin:s3cret@prod-db/crm"},
        auto=Approve(comment="Expired sessions only: fine."),
    ),
    Step(
        "Now I'll share the Q3 numbers with everyone.",
        "send_email",
        {"to": "all-staff@example.com", **_Q3_EMAIL},
        auto=Edit(
            args={"to": "leads@example.com", **_Q3_EMAIL},
            comment="Leads first; all-staff after the board meeting.",
        ),
    ),
    Step(
        "The press will love this; sending it to them as well.",
        "send_email",
        {"to": "press@example.com", **_Q3_EMAIL},
        auto=Reject(message="Nothing goes to the press before the earnings call."),
    ),
    Step(
        "Last thing: I'll ask finance for the Q4 marketing budget.",
        "send_email",
        {
            "to": "finance@example.com",
            "cc": [],
            "subject": "Q4 marketing budget?",
            "body": "What is our Q4 marketing budget?",
        },
        auto=Respond(message="No need to ask finance: the Q4 marketing budget is 250,000 EUR."),
    ),
)
