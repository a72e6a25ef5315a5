"""Malformed answers decide nothing; bad bodies get the server's usual errors; no extra, no crash."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import httpx
import pytest
from ag_ui.core import RunErrorEvent

from signoff.requests import RequestStatus

from .conftest import World
from .support import ask, interrupts, run, run_body, types

MALFORMED: list[tuple[Any, str]] = [
    ("maybe", "is not an answer"),
    (42, "is not an answer"),
    (None, "is not an answer"),
    ({"approved": "yes"}, "'approved' must be true or false"),
    ({"approved": True, "extra": 1}, "unknown key(s) extra"),
    ({"approved": False, "editedArgs": {"to": "x"}}, "a denied call has no edited args"),
    ({"type": "launch"}, "decision type must be one of"),
    ({"type": "edit"}, "invalid edit decision"),
]


@pytest.mark.parametrize(("answer", "said"), MALFORMED)
def test_a_malformed_answer_is_a_run_error_and_decides_nothing(world: World, answer: Any, said: str) -> None:
    good, bad = ask(world.store), ask(world.store)
    found = {
        item.metadata["signoff"]["request_id"]: item.id
        for item in interrupts(run(world.server, world.alice, run_body()))
    }
    resume = [
        {"interruptId": found[good.id], "status": "resolved", "payload": "approved"},
        {"interruptId": found[bad.id], "status": "resolved", "payload": answer},
    ]
    events = run(world.server, world.alice, run_body(resume=resume))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert said in error.message
    assert found[bad.id] in error.message  # says which answer
    assert world.store.get_request(good.id).status is RequestStatus.PENDING
    assert world.store.get_request(bad.id).status is RequestStatus.PENDING


def test_answers_that_break_the_rule_or_schema_decide_nothing(world: World) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}
    good = ask(world.store, tool="pay", args={"amount": 5}, args_schema=schema)
    strict = ask(world.store, allowed=("approve", "reject"))
    found = {
        item.metadata["signoff"]["request_id"]: item.id
        for item in interrupts(run(world.server, world.alice, run_body()))
    }
    for payload, target, said in [
        ({"approved": True, "editedArgs": {"amount": "lots"}}, good, "amount"),
        ({"type": "respond", "message": "no need"}, strict, "not allowed"),
    ]:
        other = strict if target is good else good
        resume = [
            {"interruptId": found[other.id], "status": "resolved", "payload": "approved"},
            {"interruptId": found[target.id], "status": "resolved", "payload": payload},
        ]
        events = run(world.server, world.alice, run_body(resume=resume))
        assert types(events) == ["RUN_STARTED", "RUN_ERROR"], said
        assert said in events[-1].message  # type: ignore[attr-defined]
        assert world.store.get_request(good.id).status is RequestStatus.PENDING
        assert world.store.get_request(strict.id).status is RequestStatus.PENDING


def test_an_answer_for_someone_elses_request_is_refused_and_audited(world: World) -> None:
    theirs = ask(world.store, approvers=("carol",))
    mine = ask(world.store)
    resume = [
        {"interruptId": f"{mine.tool_call_id}~{mine.id}", "status": "resolved", "payload": "approved"},
        {"interruptId": f"{theirs.tool_call_id}~{theirs.id}", "status": "resolved", "payload": "approved"},
    ]
    events = run(world.server, world.alice, run_body(resume=resume))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert "not an approver" in events[-1].message  # type: ignore[attr-defined]
    assert world.store.get_request(mine.id).status is RequestStatus.PENDING
    assert world.store.get_request(theirs.id).status is RequestStatus.PENDING
    refused = [
        entry for entry in world.store.audit_entries(request_id=theirs.id) if entry.action.endswith("refused")
    ]
    assert refused
    assert refused[0].channel == "agui"


def test_unknown_and_forged_ids_are_run_errors(world: World) -> None:
    request = ask(world.store, call="call_1")
    for interrupt_id in ["nope", f"call_2~{request.id}", "call_1~req_00000000000000000000000000"]:
        events = run(
            world.server,
            world.alice,
            run_body(resume=[{"interruptId": interrupt_id, "status": "resolved", "payload": True}]),
        )
        assert types(events) == ["RUN_STARTED", "RUN_ERROR"], interrupt_id
    assert world.store.get_request(request.id).status is RequestStatus.PENDING


def test_two_answers_for_one_call_are_a_run_error(world: World) -> None:
    request = ask(world.store)
    call_id = f"{request.tool_call_id}~{request.id}"
    reply = {"id": "m1", "role": "tool", "toolCallId": call_id, "content": "denied"}
    resume = [{"interruptId": call_id, "status": "resolved", "payload": "approved"}]
    events = run(world.server, world.alice, run_body(messages=[reply], resume=resume))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert "answered twice" in events[-1].message  # type: ignore[attr-defined]
    assert world.store.get_request(request.id).status is RequestStatus.PENDING


def test_tool_messages_for_other_tools_are_not_answers(world: World) -> None:
    ask(world.store)
    reply = {"id": "m1", "role": "tool", "toolCallId": "weather-1", "content": "sunny"}
    events = run(world.server, world.alice, run_body(messages=[reply]))
    assert len(interrupts(events)) == 1


def _post(world: World, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {world.alice}", **kwargs.pop("headers", {})}
    with httpx.Client(base_url=world.server.url, headers=headers) as client:
        return client.post("/agui", **kwargs)


def test_bad_bodies_get_the_servers_usual_errors(world: World) -> None:
    malformed = _post(world, content=b'{"threadId": ', headers={"Content-Type": "application/json"})
    assert malformed.status_code == 422
    assert "malformed JSON body" in malformed.json()["error"]["message"]
    not_a_run = _post(world, json={"threadId": "t"})
    assert not_a_run.status_code == 422
    assert "runId" in not_a_run.json()["error"]["message"]
    too_big = _post(
        world, content=b"{" + b" " * (2 * 1024 * 1024) + b"}", headers={"Content-Type": "application/json"}
    )
    assert too_big.status_code == 413
    options = _post(world, json=run_body(props={"wait": 1000}))
    assert options.status_code == 422
    assert "forwardedProps.signoff: wait" in options.json()["error"]["message"]


def test_without_the_extra_the_server_starts_and_agui_says_what_to_install(tmp_path: Any) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ag_ui"] = None  # as if ag-ui-protocol were not installed
        import signoff
        from fastapi.testclient import TestClient
        from signoff.server import create_app
        from signoff.store import SQLiteStore
        store = SQLiteStore({str(tmp_path / "s.db")!r})
        store.add_user("alice", role="member", actor="test")
        secret, _ = store.issue_credential("token", "alice", actor="test")
        with TestClient(create_app(store)) as client:
            assert client.get("/v1/health").status_code in (200, 404)
            answer = client.post("/agui", json={{}}, headers={{"Authorization": "Bearer " + secret}})
            print(answer.status_code, answer.json()["error"]["message"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "501 the AG-UI endpoint needs the agui extra: pip install 'signoff[agui]'"


def test_importing_signoff_and_its_server_never_imports_ag_ui() -> None:
    script = "import sys, signoff, signoff.server, signoff.server.app; print('ag_ui' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
