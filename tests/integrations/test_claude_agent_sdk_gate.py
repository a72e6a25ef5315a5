"""Which calls of a Claude Agent SDK agent signoff asks about, over the real SDK and a scripted
CLI: the fast path (the hook has no opinion, `can_use_tool` allows as asked), fail closed (a
tool named as gated asks even in `allowed_tools`, with no rules and with rules), two agents on one
gate with opposite declarations, an unattended run's rounds counted per model turn, and the
options signoff refuses."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow

from signoff import Gate, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.claude_agent_sdk import SignoffPermissions
from signoff.store import SQLiteStore

from .claude_support import LOOKUP, SESSION, TRANSFER, Call, ScriptedCLI, make_tools, run_turn, seen_rows
from .ledger import Ledger

BOTH = frozenset({TRANSFER.name, LOOKUP.name})
GATED = {TRANSFER.name: ToolEntry(requires_approval=True)}
NOT_GATED = {TRANSFER.name: ToolEntry(requires_approval=False)}
SENT = ["toolu_01", "sent 5 to bob", False, []]
LOOKED_UP = ["toolu_02", "rows of t", False, []]


def test_with_nothing_gated_the_hook_has_no_opinion_and_allowed_tools_run(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    permissions = SignoffPermissions(Gate(sqlite_store, rules=RuleSet()))
    allowed = ScriptedCLI([TRANSFER, LOOKUP], make_tools(ledger), allowed_tools=BOTH)
    asyncio.run(run_turn(allowed, permissions.options(allowed_tools=sorted(BOTH))))
    assert allowed.hook_answers == [{}, {}] and allowed.asked == []
    assert seen_rows(allowed) == [SENT, LOOKED_UP]
    assert len(ledger.runs()) == 2 and sqlite_store.list_requests() == []


def test_a_call_the_cli_asks_about_on_its_own_asks_a_person_unless_a_rule_turns_it_off(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """Fail closed: the CLI's own "ask" (its permission settings) names the tool as gated, as
    ADK's and Agent Framework's own approval flags do; only a rule in force turns it off."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    permissions = SignoffPermissions(Gate(sqlite_store, rules=RuleSet()), timeout=0.05)
    asking = ScriptedCLI([LOOKUP, TRANSFER], make_tools(ledger))  # the CLI's default mode asks
    asyncio.run(run_turn(asking, permissions.options()))
    assert asking.hook_answers == [{}] and asking.asked == ["toolu_02"] and asking.interrupted
    assert seen_rows(asking)[0][1].startswith("signoff refused the call of mcp__pay__lookup")
    (request,) = sqlite_store.list_requests()
    assert request.tool_name == LOOKUP.name and request.thread_id.startswith("claude-")  # no session seen
    assert ledger.runs() == []

    off = {"tools": {name: {"requires_approval": False} for name in BOTH}}
    permissions = SignoffPermissions(Gate(sqlite_store, rules=RuleSet.model_validate(off)))
    allowed = ScriptedCLI([TRANSFER, LOOKUP], make_tools(ledger))
    asyncio.run(run_turn(allowed, permissions.options()))
    assert allowed.asked == ["toolu_01", "toolu_02"] and seen_rows(allowed) == [SENT, LOOKED_UP]
    assert len(ledger.runs()) == 2 and len(sqlite_store.list_requests()) == 1


@pytest.mark.parametrize(
    "rules",
    [None, RuleSet.model_validate({"tools": {"mcp__pay__lookup": {"requires_approval": False}}})],
    ids=["no-rules", "rules"],
)
def test_a_tool_named_as_gated_asks_even_when_the_cli_would_allow_it(
    tmp_path: Path, sqlite_store: SQLiteStore, rules: RuleSet | None
) -> None:
    """Fail closed: `allowed_tools` would let the CLI run the call without `can_use_tool`; the
    hook makes it ask, and with nobody deciding (a short wait) the call does not run."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    permissions = SignoffPermissions(Gate(sqlite_store, rules=rules), tools=GATED, timeout=0.05)
    cli = ScriptedCLI([LOOKUP, TRANSFER], make_tools(ledger), allowed_tools=BOTH)
    asyncio.run(run_turn(cli, permissions.options(allowed_tools=sorted(BOTH))))
    assert cli.asked == ["toolu_01"]
    assert seen_rows(cli)[0] == LOOKED_UP
    assert seen_rows(cli)[1][0] == "toolu_01" and seen_rows(cli)[1][2] is True
    assert [row["tool"] for row in ledger.runs()] == [LOOKUP.name]
    (request,) = sqlite_store.list_requests(thread_id=SESSION)
    assert request.status is RequestStatus.PENDING and request.tool_name == TRANSFER.name


def test_two_agents_on_one_gate_with_opposite_declarations(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    gate = Gate(sqlite_store)
    asks = SignoffPermissions(gate, tools=GATED, timeout=0.05, agent="payer")
    runs = SignoffPermissions(gate, tools=NOT_GATED, agent="reader")
    first = ScriptedCLI([TRANSFER], make_tools(ledger), allowed_tools=BOTH, session_id="s-a")
    second = ScriptedCLI([TRANSFER], make_tools(ledger), allowed_tools=BOTH, session_id="s-b")
    asyncio.run(run_turn(first, asks.options(allowed_tools=sorted(BOTH))))
    asyncio.run(run_turn(second, runs.options(allowed_tools=sorted(BOTH))))
    assert first.asked == ["toolu_01"] and first.seen[0].is_error
    assert second.asked == [] and seen_rows(second) == [SENT]
    assert len(ledger.runs()) == 1
    (request,) = sqlite_store.list_requests()
    assert (request.thread_id, request.agent) == ("s-a", "payer")


def test_an_unattended_run_counts_one_round_per_model_turn(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """Two gated calls of one model turn are one auto-resume: with a cap of one, both run when the
    turn is read from the transcript; as rounds alone (no transcript), the second is refused."""
    second = Call(TRANSFER.name, {"amount": 6, "to": "dan"}, "toolu_03")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    gate = Gate(sqlite_store, max_auto_resume=1)
    permissions = SignoffPermissions(gate, tools=GATED, unattended=True)
    turn = ScriptedCLI([TRANSFER, second], make_tools(ledger), transcript=tmp_path / "t.jsonl")
    asyncio.run(run_turn(turn, permissions.options()))
    assert [row[2] for row in seen_rows(turn)] == [False, False] and len(ledger.runs()) == 2
    assert {request.round for request in sqlite_store.list_requests()} == {"msg_01"}

    alone = ScriptedCLI([TRANSFER, second], make_tools(ledger), session_id="s-2")
    asyncio.run(run_turn(alone, SignoffPermissions(gate, tools=GATED, unattended=True).options()))
    assert seen_rows(alone)[0][2] is False and alone.interrupted
    assert seen_rows(alone)[1][1].startswith("signoff refused the call of mcp__pay__transfer")
    assert len(ledger.runs()) == 3


def test_options_refuse_a_second_permission_prompt_and_bypass_mode(sqlite_store: SQLiteStore) -> None:
    permissions = SignoffPermissions(Gate(sqlite_store))

    async def own(name: str, given: dict[str, object], context: object) -> PermissionResultAllow:
        return PermissionResultAllow()

    with pytest.raises(ValueError, match="a can_use_tool of their own"):
        permissions.options(ClaudeAgentOptions(can_use_tool=own))
    with pytest.raises(ValueError, match="bypassPermissions"):
        permissions.options(permission_mode="bypassPermissions")
    options = permissions.options(ClaudeAgentOptions(max_turns=3), allowed_tools=["Read"])
    assert options.can_use_tool == permissions.can_use_tool and options.max_turns == 3
    assert options.allowed_tools == ["Read"]
    assert options.hooks is not None
    assert [m.hooks for m in options.hooks["PreToolUse"]] == [[permissions.pre_tool_use]]
    with pytest.raises(ValueError, match="either gate= or rules="):
        SignoffPermissions(Gate(sqlite_store), rules=RuleSet())


def test_a_store_that_cannot_be_read_denies_the_call_even_in_allowed_tools(tmp_path: Path) -> None:
    """Fail closed: signoff cannot tell whether it asks (its rules live in a store that is gone),
    so the hook makes the CLI ask and `can_use_tool` denies and ends the turn; nothing runs."""
    store = SQLiteStore(tmp_path / "gone.db")
    permissions = SignoffPermissions(Gate(store))
    store.close()
    ledger = Ledger(tmp_path / "ledger.jsonl")
    cli = ScriptedCLI([LOOKUP, TRANSFER], make_tools(ledger), allowed_tools=BOTH)
    asyncio.run(run_turn(cli, permissions.options(allowed_tools=sorted(BOTH))))
    assert cli.asked == ["toolu_02"] and cli.interrupted
    ((call_id, message, is_error, _),) = seen_rows(cli)
    assert (call_id, is_error) == ("toolu_02", True)
    assert message.startswith("signoff refused the call of mcp__pay__lookup, so it did not run: ")
    assert ledger.runs() == []
