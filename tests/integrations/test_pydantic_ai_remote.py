"""The Pydantic AI adapter with its gate talking to a live `signoff serve` over HTTP: durable and
waiting runs give the model the same parts as over a local store, and run the tool once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.tools import DeferredToolRequests

from signoff import Approve, Client, Edit, Gate, RuleSet, ToolEntry
from signoff.integrations.pydantic_ai import SignoffApprovals, resume_when_decided
from signoff.store import Store

from ..live import LiveServer
from .pai_support import (
    Ledger,
    Script,
    close_run_sync_loop,  # noqa: F401 (an autouse fixture)
    decide_when_asked,
    find,
    make_toolset,
)

RULES = RuleSet(tools={"send_email": ToolEntry(requires_approval=True)})
MAIL = ("send_email", {"to": "alice", "body": "hi"}, "c1")


def test_a_durable_run_over_the_server_resumes_with_the_persons_edit(
    tmp_path: Path, store: Store, live_server: LiveServer
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        approvals = SignoffApprovals(Gate(backend, rules=RULES))
        agent = Agent(
            script.model,
            toolsets=[make_toolset(ledger)],
            capabilities=[approvals],
            output_type=[str, DeferredToolRequests],
        )
        first = agent.run_sync("mail", conversation_id="t1")
        assert isinstance(first.output, DeferredToolRequests)
        request = find(store, "t1", "c1")
        assert request is not None
        store.decide(request.id, Edit(args={"to": "bob", "body": "hi"}), actor="alice")

        final = resume_when_decided(agent, first.all_messages_json(), approvals)

    assert final.output == "done"
    assert script.shown(1) == [
        (
            "tool-return",
            "send_email",
            "c1",
            "The parameters for tool 'send_email' were updated by the user to:\n"
            '{"to": "bob", "body": "hi"}\n\nsent to bob',
            "success",
        )
    ]
    assert ledger.runs() == [{"tool": "send_email", "args": {"to": "bob", "body": "hi"}, "key": request.id}]


def test_a_waiting_run_over_the_server_continues_when_approved(
    tmp_path: Path, store: Store, live_server: LiveServer
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])
    person = decide_when_asked(store, "t1", "c1", Approve())
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        approvals = SignoffApprovals(Gate(backend, rules=RULES), wait=True)
        agent = Agent(script.model, toolsets=[make_toolset(ledger)], capabilities=[approvals])
        result = asyncio.run(agent.run("mail", conversation_id="t1"))
    person.join()

    assert result.output == "done"
    assert script.shown(1) == [("tool-return", "send_email", "c1", "sent to alice", "success")]
    assert len(ledger.runs()) == 1
