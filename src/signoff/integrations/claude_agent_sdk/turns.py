"""The round of a model turn, for the unattended auto-resume cap (see `signoff.integrations._rounds`).

The SDK tells neither `can_use_tool` nor a hook which model message asked for a call. The CLI
writes each message of the session to its transcript (JSON lines, the path in every hook's input)
before it runs the message's tools: the assistant message holding the call's `tool_use` block
names the turn (its `message.id`; the CLI writes one line per content block, all with the same
id). A call not found there (no hook, no transcript yet) is a round alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._rounds import turn_round

TAIL_BYTES = 1 << 20
"""How much of the transcript's end is read: a turn's calls are among its last lines."""


def round_of(transcript_path: str | None, tool_use_id: str) -> str | None:
    """The round of the turn that asked for `tool_use_id`, if the transcript shows it."""
    if not transcript_path:
        return None
    try:
        lines = _tail(Path(transcript_path))
    except OSError:
        return None
    calls: dict[str, list[str]] = {}  # message id → its tool_use ids, in order
    for line in lines:
        message = _assistant_message(line)
        if message is None:
            continue
        ids = [block["id"] for block in message.get("content") or [] if _is_tool_use(block)]
        calls.setdefault(message["id"], []).extend(ids)
    for message_id, ids in calls.items():
        if tool_use_id in ids:
            return turn_round(message_id, ids)
    return None


def _tail(path: Path) -> list[str]:
    with path.open("rb") as file:
        size = file.seek(0, 2)
        file.seek(max(0, size - TAIL_BYTES))
        data = file.read()
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if size > TAIL_BYTES else lines  # the first may be cut


def _assistant_message(line: str) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("id"), str):
        return None
    return message


def _is_tool_use(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str)
