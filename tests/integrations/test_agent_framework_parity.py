"""The same script through Agent Framework's own approval (`approval_mode="always_require"`) and
through signoff's middleware: what the model sees and how often the tool runs, side by side.
Approve reads the same; MAF's reject has a fixed text where signoff's carries the reason; MAF
ignores an edited call in the response (the stored call wins) where signoff runs the person's
args; and a stale saved session resumed twice runs MAF's approved tool twice, signoff's once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

from agent_framework import AgentSession, Content, Message, tool

from signoff import Approve, Edit, Gate, Reject, ToolEntry
from signoff.integrations.agent_framework import SignoffApprovals
from signoff.store import SQLiteStore

from .af_support import TRANSFER, USER, ScriptedClient, make_agent, make_tools
from .ledger import Ledger

EDITED = {"amount": 7, "to": "carol"}
MAF_REJECTED = "Error: Tool call invocation was rejected by user."


def stock_tools(ledger: Ledger) -> list[Any]:
    transfer, lookup = make_tools(ledger)
    return [tool(transfer.func, name="transfer", approval_mode="always_require"), lookup]


def maf_response(request: Content, kind: str) -> Content:
    """Agent Framework's own answer to its approval request: approve, reject, or an edited call."""
    if kind != "edit":
        return request.to_function_approval_response(kind == "approve")
    asked = request.function_call
    assert asked is not None and asked.call_id is not None and request.id is not None
    edited = Content.from_function_call(call_id=asked.call_id, name="transfer", arguments=EDITED, id=asked.id)
    return Content.from_function_approval_response(True, request.id, edited)


def through_maf(ledger: Ledger, kind: str) -> list[list[tuple[str, str]]]:
    """The built-in path: pause, save, resume twice from the saved session; what the model saw."""
    tools = stock_tools(ledger)
    agent = make_agent(ScriptedClient(), tools, [])
    session = agent.create_session()
    (request,) = asyncio.run(agent.run(USER, session=session)).user_input_requests
    saved = json.dumps(session.to_dict())
    seen = []
    for _ in range(2):
        later = ScriptedClient(turns=0)
        resumed = AgentSession.from_dict(json.loads(saved))
        message = Message(role="user", contents=[maf_response(request, kind)])
        asyncio.run(make_agent(later, tools, []).run(message, session=resumed))
        seen.append(later.seen)
    return seen


def through_signoff(ledger: Ledger, store: SQLiteStore, decision: Any) -> list[list[tuple[str, str]]]:
    # signoff's counterpart of `approval_mode="always_require"`: the tool named as gated in code
    approvals = SignoffApprovals(Gate(store), tools={"transfer": ToolEntry(requires_approval=True)})
    tools = make_tools(ledger)
    agent = make_agent(ScriptedClient(), tools, approvals.middleware)
    session = agent.create_session()
    asyncio.run(agent.run(USER, session=session))
    saved = json.dumps(session.to_dict())
    (request,) = store.list_requests()
    store.decide(request.id, decision, actor="alice")
    seen = []
    for _ in range(2):
        later = ScriptedClient(turns=0)
        resumed = AgentSession.from_dict(json.loads(saved))
        asyncio.run(approvals.resume(make_agent(later, tools, approvals.middleware), resumed))
        seen.append(later.seen)
    return seen


def test_approve_reads_the_same_but_a_stale_resume_runs_maf_twice(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    maf, ours = Ledger(tmp_path / "maf"), Ledger(tmp_path / "ours")
    assert through_maf(maf, "approve") == [[("c0-1", "sent 5 to bob"), ("c0-2", "rows of t")]] * 2
    assert (
        through_signoff(ours, sqlite_store, Approve())
        == [[("c0-2", "rows of t"), ("c0-1", "sent 5 to bob")]] * 2
    )
    assert [row["args"] for row in maf.runs("transfer")] == [TRANSFER, TRANSFER]
    assert [row["args"] for row in ours.runs("transfer")] == [TRANSFER]
    # MAF holds the ungated call until the approval; signoff runs it in its turn
    assert len(maf.runs("lookup")) == 2 and len(ours.runs("lookup")) == 1


def test_reject_maf_says_a_fixed_text_signoff_the_reason(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    maf, ours = Ledger(tmp_path / "maf"), Ledger(tmp_path / "ours")
    assert through_maf(maf, "reject")[0][0] == ("c0-1", MAF_REJECTED)
    assert through_signoff(ours, sqlite_store, Reject(message="not now"))[0][1] == (
        "c0-1",
        "Tool execution for 'transfer' was rejected by the user. With user feedback: not now",
    )
    assert maf.runs("transfer") == ours.runs("transfer") == []


def test_edit_maf_runs_the_original_args_signoff_the_persons(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    maf, ours = Ledger(tmp_path / "maf"), Ledger(tmp_path / "ours")
    assert through_maf(maf, "edit")[0][0] == ("c0-1", "sent 5 to bob")  # the edit was silently ignored
    assert [row["args"] for row in maf.runs("transfer")] == [TRANSFER, TRANSFER]
    (_, shown) = through_signoff(ours, sqlite_store, Edit(args=EDITED))[0][1]
    assert shown.endswith("\n\nsent 7 to carol")
    assert [row["args"] for row in ours.runs("transfer")] == [EDITED]


def test_gate_tools_hands_mafs_always_require_to_signoff(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """A user switching keeps the tools as declared: `always_require` now asks through signoff."""
    ledger = Ledger(tmp_path / "ledger")
    approvals = SignoffApprovals(Gate(sqlite_store))
    tools = approvals.gate_tools(stock_tools(ledger))
    assert [item.approval_mode for item in tools] == ["never_require", "never_require"]
    agent = make_agent(ScriptedClient(), tools, approvals.middleware)
    session = agent.create_session()
    (asked,) = asyncio.run(agent.run(USER, session=session)).user_input_requests
    (request,) = sqlite_store.list_requests()
    assert asked.additional_properties["signoff"]["request_id"] == request.id
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]
    sqlite_store.decide(request.id, Edit(args=EDITED), actor="alice")
    later = ScriptedClient(turns=0)
    asyncio.run(approvals.resume(make_agent(later, tools, approvals.middleware), session))
    assert later.seen[1][1].endswith("sent 7 to carol")
    assert [row["args"] for row in ledger.runs("transfer")] == [EDITED]
