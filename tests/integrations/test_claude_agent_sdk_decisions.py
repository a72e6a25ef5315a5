"""The Claude Agent SDK adapter with the real SDK over a scripted CLI (its control protocol: hook
callbacks, `can_use_tool` requests): each decision as the model is given it (word for word) and
how many times each tool ran, waiting inside the run; the same session asked again runs nothing
twice; locally and through a live server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from signoff import Approve, Client, Decision, Edit, Gate, Reject, RequestStatus, Respond, RuleSet
from signoff.integrations.claude_agent_sdk import HANDED_OVER, SignoffPermissions
from signoff.store import SQLiteStore
from tests.live import LiveServer

from .claude_support import LOOKUP, SESSION, TRANSFER, ScriptedCLI, make_tools, run_turn, seen_rows
from .ledger import Ledger

AGENT_USER = "pay-agent"
RULES = RuleSet.model_validate({"tools": {"mcp__pay__transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}
NOTE = (
    "The parameters for tool 'mcp__pay__transfer' were updated by the user to:\n"
    '{"amount": 7, "to": "carol"}'
)
REJECTED = "Tool execution for 'mcp__pay__transfer' was rejected by the user. With user feedback: not now"
ANSWERED = (
    "A person answered instead of letting mcp__pay__transfer run. The Claude Agent SDK cannot give an "
    "answer as a tool's result, so the call did not run. Their answer: use the card instead"
)
AGAIN = "This call of mcp__pay__transfer was already handed over to run once (signoff request {}); " + (
    "signoff does not run it twice."
)
LOOKED_UP = ["toolu_02", "rows of t", False, []]
READ_ONLY = frozenset({LOOKUP.name})

DECISIONS = [
    (Approve(), ["toolu_01", "sent 5 to bob", False, []], [TRANSFER.input], True),
    (Edit(args=EDITED), ["toolu_01", "sent 7 to carol", False, [NOTE]], [EDITED], True),
    (Reject(message="not now"), ["toolu_01", REJECTED, True, []], [], False),
    (Respond(message="use the card instead"), ["toolu_01", ANSWERED, True, []], [], False),
]
IDS = ["approve", "edit", "reject", "respond"]


@pytest.fixture(params=["local", "remote"])
def backend(request: pytest.FixtureRequest, sqlite_store: SQLiteStore) -> Iterator[Any]:
    """The gate's backend: the store, or a Client of a live server over it (an agent's token)."""
    if request.param == "local":
        yield sqlite_store
        return
    with (
        LiveServer(sqlite_store) as server,
        Client(server.url, server.user(AGENT_USER, role="agent")) as client,
    ):
        yield client


def decide_when_asked(store: SQLiteStore, decision: Decision, actor: str = "alice") -> threading.Thread:
    """A person who decides the first pending request once it is there (waits on a condition)."""

    def decide() -> None:
        give_up = time.monotonic() + 60
        while not (pending := store.list_requests(status="pending")):
            assert time.monotonic() < give_up, "no request was made"
            time.sleep(0.02)
        store.decide(pending[0].id, decision, actor=actor)

    person = threading.Thread(target=decide, daemon=True)
    person.start()
    return person


@pytest.mark.parametrize(("decision", "shown", "runs", "handed"), DECISIONS, ids=IDS)
def test_each_decision_as_the_model_sees_it_and_a_replayed_session_runs_nothing_twice(
    tmp_path: Path,
    sqlite_store: SQLiteStore,
    backend: Any,
    decision: Decision,
    shown: list[Any],
    runs: list[Any],
    handed: bool,
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    permissions = SignoffPermissions(Gate(backend, rules=RULES))
    tools = make_tools(ledger)
    cli = ScriptedCLI(
        [TRANSFER, LOOKUP], tools, allowed_tools=READ_ONLY, transcript=tmp_path / "transcript.jsonl"
    )
    person = decide_when_asked(sqlite_store, decision)
    result = asyncio.run(run_turn(cli, permissions.options()))
    person.join()
    assert result.subtype == "success" and not cli.interrupted
    assert seen_rows(cli) == [shown, LOOKED_UP]
    assert cli.asked == ["toolu_01"]  # lookup is in allowed_tools: the CLI runs it unasked
    assert [row["args"] for row in ledger.runs("mcp__pay__transfer")] == runs
    (request,) = sqlite_store.list_requests(thread_id=SESSION)  # the thread is the Claude session
    assert request.tool_call_id == "toolu_01" and request.args == TRANSFER.input
    assert request.round == "msg_01"
    execution = sqlite_store.get_execution(request.id)
    assert (execution is not None and execution.status.value == "succeeded") is handed
    if handed:  # what the record keeps: the call handed to the CLI, with the input it ran with
        assert execution is not None and execution.result == {"result": HANDED_OVER, "input": runs[0]}

    # the session resumed (the CLI asks about the same call again): nothing runs twice
    replay = ScriptedCLI([TRANSFER], tools, allowed_tools=READ_ONLY, transcript=tmp_path / "transcript.jsonl")
    asyncio.run(run_turn(replay, permissions.options()))
    again = [AGAIN.format(request.id), True, []] if handed else shown[1:]
    assert seen_rows(replay) == [["toolu_01", *again]]
    assert [row["args"] for row in ledger.runs("mcp__pay__transfer")] == runs
    assert len(sqlite_store.list_requests(thread_id=SESSION)) == 1


def test_a_call_nobody_decides_in_time_is_denied_and_the_turn_interrupted(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    permissions = SignoffPermissions(Gate(sqlite_store, rules=RULES), timeout=0.05)
    cli = ScriptedCLI([TRANSFER, LOOKUP], make_tools(ledger), allowed_tools=READ_ONLY)
    asyncio.run(run_turn(cli, permissions.options()))
    ((call_id, message, is_error, _),) = seen_rows(cli)  # interrupted: lookup is never reached
    assert (call_id, is_error, cli.interrupted) == ("toolu_01", True, True)
    assert message.startswith("signoff refused the call of mcp__pay__transfer, so it did not run: ")
    assert ledger.runs() == []
    (request,) = sqlite_store.list_requests(thread_id=SESSION)
    assert request.status is RequestStatus.PENDING  # still a person's to decide
