"""The CrewAI adapter with the real framework and a scripted model: each decision as the model
sees it next (word for word: the crew's output is the model's last observation) and how many
times each tool ran. Waiting mode (CrewAI has no tool-level pause): locally, through a live
server, and decided with the CLI from another process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

from signoff import Approve, Client, Edit, Gate, Reject, RequestStatus, Respond, RuleSet
from signoff.integrations.crewai import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger
from tests.integrations.processes import SRC
from tests.live import LiveServer

from .crewai_support import TRANSFER, Scripted, kickoff, make_crew

AGENT_USER = "pay-agent"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}

DECISIONS = [
    (Approve(), "sent 5 to bob", [TRANSFER]),
    (
        Edit(args=EDITED),
        "The parameters for tool 'transfer' were updated by the user to:\n"
        '{"amount": 7, "to": "carol"}\n\nsent 7 to carol',
        [EDITED],
    ),
    (
        Reject(message="not now"),
        "Tool execution for 'transfer' was rejected by the user. With user feedback: not now",
        [],
    ),
    (Respond(message="use the card instead"), "use the card instead", []),
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


def decide_when_asked(store: SQLiteStore, decision: Any) -> threading.Thread:
    """A person in another thread: decides the one request once it exists."""

    def person() -> None:
        while not (found := store.list_requests(status="pending")):
            time.sleep(0.01)
        store.decide(found[0].id, decision, actor="alice")

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
def test_the_hooks_wait_for_the_decision_and_the_model_sees_it(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: str, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    person = decide_when_asked(sqlite_store, decision)
    with SignoffHooks(Gate(backend, rules=RULES)):
        out = kickoff(crew)
    person.join()
    assert out == shown
    assert [row["args"] for row in ledger.runs("transfer")] == runs
    (request,) = sqlite_store.list_requests()
    assert request.thread_id == f"crewai-{crew.id}" and request.args == TRANSFER
    assert request.status is not RequestStatus.PENDING and request.decision is not None
    assert request.decision.decision == decision
    if runs:  # the tool ran through signoff's execution record, under the request's key
        assert [row["key"] for row in ledger.runs("transfer")] == [request.id]


def test_a_call_nobody_gates_runs_as_without_signoff(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger, model=Scripted(model="scripted", action="lookup", args={"table": "t"}))
    with SignoffHooks(Gate(sqlite_store, rules=RULES)):
        assert kickoff(crew) == "rows of t"
    assert [(row["tool"], row["key"]) for row in ledger.runs()] == [("lookup", None)]
    assert sqlite_store.list_requests() == []


CLI = {
    "approve": ([], "sent 5 to bob", [TRANSFER]),
    "edit": (
        ["--args", json.dumps(EDITED)],
        "The parameters for tool 'transfer' were updated by the user to:\n"
        '{"amount": 7, "to": "carol"}\n\nsent 7 to carol',
        [EDITED],
    ),
    "reject": (
        ["--reason", "not now"],
        "Tool execution for 'transfer' was rejected by the user. With user feedback: not now",
        [],
    ),
    "respond": (["--message", "use the card instead"], "use the card instead", []),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", list(CLI))
def test_through_a_live_server_decided_with_the_cli_from_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore, command: str
) -> None:
    options, shown, runs = CLI[command]
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    with (
        LiveServer(sqlite_store) as server,
        Client(server.url, server.user(AGENT_USER, role="agent")) as client,
    ):
        env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_URL": server.url}
        env["SIGNOFF_TOKEN"] = server.user("alice", role="member")

        def person() -> None:
            while not (found := sqlite_store.list_requests(status="pending")):
                time.sleep(0.01)
            args = [sys.executable, "-m", "signoff.cli", command, found[0].id, *options]
            done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
            assert done.returncode == 0, done.stderr

        deciding = threading.Thread(target=person, daemon=True)
        deciding.start()
        with SignoffHooks(Gate(client, rules=RULES)):
            out = kickoff(crew)
        deciding.join()
    assert out == shown
    assert [row["args"] for row in ledger.runs("transfer")] == runs
    (request,) = sqlite_store.list_requests()
    assert request.created_by == AGENT_USER
    assert request.decision is not None and request.decision.actor == "alice"


@pytest.mark.parametrize("entry", ["kickoff_async", "akickoff"])
def test_the_async_entry_points_wait_the_same(tmp_path: Path, sqlite_store: SQLiteStore, entry: str) -> None:
    """`kickoff_async` runs the crew in a worker thread; `akickoff` runs the hooks on the event
    loop, which the wait then blocks (CrewAI's hooks are synchronous): both carry the decision."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    person = decide_when_asked(sqlite_store, Edit(args=EDITED))
    with SignoffHooks(Gate(sqlite_store, rules=RULES)):
        out = asyncio.run(getattr(crew, entry)())
    person.join()
    assert str(out.raw).endswith("\n\nsent 7 to carol")
    assert [row["args"] for row in ledger.runs("transfer")] == [EDITED]
