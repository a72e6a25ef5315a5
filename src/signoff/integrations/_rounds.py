"""The round of a model turn: what an unattended run's auto-resume cap counts (`ToolCall.round`).

One model turn's gated calls are one round (seed 004: cron resumes a run once per interrupt, that
is once per turn, whatever the number of calls). An adapter names the turn by the id its framework
gives the model's message or response; without one, by its calls' ids, which a replay of the same
turn gives again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def turn_round(turn_id: str | None, tool_call_ids: Iterable[str]) -> str:
    """`turn_id` if the framework gave one, else a digest of the turn's tool_call_ids."""
    if turn_id:
        return turn_id
    digest = hashlib.sha256("\x1f".join(sorted(tool_call_ids)).encode()).hexdigest()[:24]
    return f"calls:{digest}"
