"""`SignoffApprovals(wait=True)`: the run waits on the gate inside Pydantic AI's
`handle_deferred_tool_calls` hook and continues with the person's decision, under `run_sync` and
`run`; mixed gated and ungated calls; `requires_approval=True` tools; a deadline nobody meets;
the run kept in the store while it waits."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.tools import DeferredToolRequests

from signoff import Approve, Defaults, Edit, Gate, Reject, RequestStatus, Respond, RuleSet, ToolEntry
from signoff.integrations.pydantic_ai import SignoffApprovals, resume_when_decided
from signoff.integrations.pydantic_ai.kept import KeptRun
from signoff.store import SQLiteStore

from .pai_support import (
    Ledger,
    Script,
    close_run_sync_loop,  # noqa: F401 (an autouse fixture)
    decide_when_asked,
    make_toolset,
)

RULES = RuleSet(tools={"send_email": ToolEntry(requires_approval=True)})
MAIL = ("send_email", {"to": "alice", "body": "hi"}, "c1")
READ = ("read_data", {"table": "users"}, "c2")


def waiting_agent(store: SQLiteStore, script: Script, ledger: Ledger, **options: Any) -> Agent[None, str]:
    approvals = SignoffApprovals(Gate(store, rules=options.pop("rules", RULES)), wait=True, **options)
    return Agent(script.model, toolsets=[make_toolset(ledger)], capabilities=[approvals])


@pytest.mark.parametrize(
    ("decision", "part", "runs"),
    [
        (
            Approve(),
            ("tool-return", "send_email", "c1", "sent to alice", "success"),
            [{"to": "alice", "body": "hi"}],
        ),
        (
            Edit(args={"to": "bob", "body": "hi"}),
            (
                "tool-return",
                "send_email",
                "c1",
                "The parameters for tool 'send_email' were updated by the user to:\n"
                '{"to": "bob", "body": "hi"}\n\nsent to bob',
                "success",
            ),
            [{"to": "bob", "body": "hi"}],
        ),
        (
            Reject(message="not today"),
            (
                "tool-return",
                "send_email",
                "c1",
                "Tool execution for 'send_email' was rejected by the user. With user feedback: not today",
                "denied",
            ),
            [],
        ),
        (Respond(message="she left"), ("tool-return", "send_email", "c1", "she left", "success"), []),
    ],
    ids=["approve", "edit", "reject", "respond"],
)
def test_run_sync_waits_for_the_decision_and_continues(
    tmp_path: Path, sqlite_store: SQLiteStore, decision: Any, part: tuple[Any, ...], runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL, READ], "done"])
    person = decide_when_asked(sqlite_store, "t1", "c1", decision)

    result = waiting_agent(sqlite_store, script, ledger).run_sync("mail alice", conversation_id="t1")
    person.join()

    assert result.output == "done"
    assert script.shown(1) == [part, ("tool-return", "read_data", "c2", "rows of users", "success")]
    assert [run["args"] for run in ledger.runs("send_email")] == runs
    assert len(ledger.runs("read_data")) == 1  # the ungated call ran in the first pass, once


def test_the_run_is_kept_in_the_store_while_it_waits_and_forgotten_when_it_ends(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    script = Script([[MAIL, READ], "done"])
    seen: list[KeptRun] = []

    def person() -> None:  # decides once the run is kept (what a crash while waiting would leave)
        while (kept := sqlite_store.load_run_state("t1")) is None:
            time.sleep(0.01)
        seen.append(KeptRun.from_json(kept.state))
        request = sqlite_store.find_request("t1", "c1")
        assert request is not None and request.status == "pending" and kept.kind == "pydantic-ai"
        sqlite_store.decide(request.id, Approve(), actor="alice")

    deciding = threading.Thread(target=person, daemon=True)
    deciding.start()
    result = waiting_agent(sqlite_store, script, Ledger(tmp_path / "ledger")).run_sync(
        "mail alice", conversation_id="t1"
    )
    deciding.join()

    assert result.output == "done"
    (kept,) = seen
    assert kept.messages == script.seen[0][:1] + result.all_messages()[1:2]  # up to the model's turn
    assert kept.ran == ["c2"]  # the ungated call had run; its result was not in the messages yet
    assert sqlite_store.load_run_state("t1") is None  # the run ended: forgotten


def test_run_waits_without_a_thread_and_the_tool_runs_under_the_requests_key(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])
    person = decide_when_asked(sqlite_store, "t1", "c1", Approve())

    result = asyncio.run(waiting_agent(sqlite_store, script, ledger).run("mail", conversation_id="t1"))
    person.join()

    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and result.output == "done"
    assert script.shown(1) == [("tool-return", "send_email", "c1", "sent to alice", "success")]
    assert ledger.runs() == [{"tool": "send_email", "args": {"to": "alice", "body": "hi"}, "key": request.id}]


def test_a_requires_approval_tool_is_declared_to_signoff_and_asks_through_it(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[("archive", {"box": "inbox"}, "c9")], "done"])
    agent = Agent(script.model, capabilities=[SignoffApprovals(Gate(sqlite_store), wait=True)])

    @agent.tool_plain(requires_approval=True)
    def archive(box: str) -> str:
        ledger.add("archive", {"box": box})
        return f"archived {box}"

    person = decide_when_asked(sqlite_store, "t1", "c9", Reject(message="keep it"))
    agent.run_sync("archive", conversation_id="t1")
    person.join()

    request = sqlite_store.find_request("t1", "c9")
    assert request is not None and request.rule.origin.source == "code"
    assert script.shown(1) == [
        (
            "tool-return",
            "archive",
            "c9",
            "Tool execution for 'archive' was rejected by the user. With user feedback: keep it",
            "denied",
        )
    ]
    assert ledger.runs() == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("on_expire", "content", "outcome", "runs"),
    [("reject", "The approval request expired.", "denied", 0), ("approve", "sent to alice", "success", 1)],
)
def test_a_request_past_its_deadline_continues_with_the_on_expire_outcome(
    tmp_path: Path, sqlite_store: SQLiteStore, on_expire: str, content: str, outcome: str, runs: int
) -> None:
    rules = RuleSet(
        defaults=Defaults.model_validate({"deadline": "1s", "on_expire": on_expire}),
        tools={"send_email": ToolEntry(requires_approval=True)},
    )
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])

    waiting_agent(sqlite_store, script, ledger, rules=rules).run_sync("mail", conversation_id="t1")

    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.status is RequestStatus.EXPIRED
    assert script.shown(1) == [("tool-return", "send_email", "c1", content, outcome)]
    assert len(ledger.runs()) == runs


@pytest.mark.slow
def test_a_durable_run_past_its_deadline_resumes_with_the_on_expire_outcome(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    rules = RuleSet(
        defaults=Defaults.model_validate({"deadline": "1s"}),
        tools={"send_email": ToolEntry(requires_approval=True)},
    )
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])
    approvals = SignoffApprovals(Gate(sqlite_store, rules=rules))
    agent = Agent(
        script.model,
        toolsets=[make_toolset(ledger)],
        capabilities=[approvals],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("mail", conversation_id="t1")
    assert isinstance(first.output, DeferredToolRequests)

    final = resume_when_decided(agent, first.all_messages_json(), approvals)  # nobody decides

    assert final.output == "done"
    assert script.shown(1) == [("tool-return", "send_email", "c1", "The approval request expired.", "denied")]
    assert ledger.runs() == []
