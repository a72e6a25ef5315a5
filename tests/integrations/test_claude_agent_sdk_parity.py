"""The Claude Agent SDK's own approval path (a `can_use_tool` of the user's, the SDK docs' way)
against signoff's for the same script: what the model is given and what runs are the same for
approve and edit (the input the person chose), a rejection carries signoff's rule text where
the SDK's carries the callback's, and where they differ on purpose: a tool in `allowed_tools`
never reaches the SDK's own callback, while signoff's hook makes the CLI ask about it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import (
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from signoff import Approve, Decision, Edit, Gate, Reject, RuleSet
from signoff.integrations.claude_agent_sdk import SignoffPermissions
from signoff.store import SQLiteStore

from .claude_support import LOOKUP, TRANSFER, ScriptedCLI, make_tools, run_turn, seen_rows
from .ledger import Ledger

RULES = RuleSet.model_validate({"tools": {"mcp__pay__transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}
READ_ONLY = frozenset({LOOKUP.name})
Prompt = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[Any]]


def own_prompt(answer: PermissionResultAllow | PermissionResultDeny) -> Prompt:
    """The SDK's own way: a callback that asks someone about transfer and lets the rest run."""

    async def can_use_tool(name: str, given: dict[str, Any], context: ToolPermissionContext) -> Any:
        return answer if name == TRANSFER.name else PermissionResultAllow()

    return can_use_tool


def signoff_turn(tmp_path: Path, store: SQLiteStore, decision: Decision) -> tuple[list[Any], list[Any]]:
    ledger = Ledger(tmp_path / "signoff.jsonl")
    cli = ScriptedCLI(
        [TRANSFER, LOOKUP], make_tools(ledger), allowed_tools=READ_ONLY, transcript=tmp_path / "t.jsonl"
    )

    def person() -> None:
        while not (pending := store.list_requests(status="pending")):
            time.sleep(0.02)
        store.decide(pending[0].id, decision, actor="alice")

    deciding = threading.Thread(target=person, daemon=True)
    deciding.start()
    options = SignoffPermissions(Gate(store, rules=RULES)).options(allowed_tools=sorted(READ_ONLY))
    asyncio.run(run_turn(cli, options))
    deciding.join()
    return seen_rows(cli), ledger.runs()


def own_turn(tmp_path: Path, prompt: Prompt, *, allowed: frozenset[str] = READ_ONLY) -> tuple[Any, Any]:
    ledger = Ledger(tmp_path / "own.jsonl")
    cli = ScriptedCLI([TRANSFER, LOOKUP], make_tools(ledger), allowed_tools=allowed)
    asyncio.run(run_turn(cli, ClaudeAgentOptions(can_use_tool=prompt, allowed_tools=sorted(allowed))))
    return seen_rows(cli), ledger.runs()


@pytest.mark.parametrize(
    ("own", "ours"),
    [(PermissionResultAllow(), Approve()), (PermissionResultAllow(updated_input=EDITED), Edit(args=EDITED))],
    ids=["approve", "edit"],
)
def test_approve_and_edit_run_what_the_sdks_own_prompt_runs(
    tmp_path: Path, sqlite_store: SQLiteStore, own: PermissionResultAllow, ours: Decision
) -> None:
    own_seen, own_runs = own_turn(tmp_path, own_prompt(own))
    seen, runs = signoff_turn(tmp_path, sqlite_store, ours)
    assert [row[:3] for row in seen] == [row[:3] for row in own_seen]  # the result, word for word
    assert [(row["tool"], row["args"]) for row in runs] == [(row["tool"], row["args"]) for row in own_runs]
    if isinstance(ours, Edit):  # what signoff adds: the model is told its input was changed
        assert seen[0][3] and seen[0][3][0].startswith("The parameters for tool 'mcp__pay__transfer'")
    assert all(row[3] == [] for row in own_seen)


def test_a_rejection_carries_signoffs_rule_text_with_the_reason(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    own_seen, own_runs = own_turn(tmp_path, own_prompt(PermissionResultDeny(message="not now")))
    seen, runs = signoff_turn(tmp_path, sqlite_store, Reject(message="not now"))
    assert own_seen[0] == ["toolu_01", "not now", True, []]
    assert seen[0] == [
        "toolu_01",
        "Tool execution for 'mcp__pay__transfer' was rejected by the user. With user feedback: not now",
        True,
        [],
    ]
    assert seen[1] == own_seen[1] and [row["tool"] for row in runs] == [row["tool"] for row in own_runs]


def test_allowed_tools_skip_the_sdks_own_prompt_but_not_signoff(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The difference on purpose: fail closed. The SDK's own callback is never asked about a tool
    in `allowed_tools` (it runs unasked); signoff's hook makes the CLI ask."""
    allowed = frozenset({TRANSFER.name, LOOKUP.name})
    own_seen, own_runs = own_turn(tmp_path, own_prompt(PermissionResultDeny(message="no")), allowed=allowed)
    assert own_seen[0] == ["toolu_01", "sent 5 to bob", False, []]  # denied by nobody: it ran
    assert [row["tool"] for row in own_runs] == [TRANSFER.name, LOOKUP.name]
    ledger = Ledger(tmp_path / "signoff.jsonl")
    cli = ScriptedCLI([TRANSFER, LOOKUP], make_tools(ledger), allowed_tools=allowed)
    permissions = SignoffPermissions(Gate(sqlite_store, rules=RULES), timeout=0.05)
    asyncio.run(run_turn(cli, permissions.options(allowed_tools=sorted(allowed))))
    assert cli.asked == ["toolu_01"] and cli.seen[0].is_error
    assert [row["tool"] for row in ledger.runs()] == []  # the turn was interrupted: nothing ran
