"""The REST API's contract: every status code of the issue, with the error's message."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import httpx
import pytest

from signoff.requests import RequestStatus
from signoff.store import SQLiteStore, Store
from tests.helpers import decided_digest

from .live import LiveServer

SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "subject": {"type": "string"}},
    "required": ["to"],
    "additionalProperties": False,
}


def ask(client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {
        "thread_id": "t1",
        "tool_call_id": "call-1",
        "tool": "send_email",
        "args": {"to": "bob@example.com", "subject": "hi"},
        "args_schema": SCHEMA,
        "approvers": ["alice"],
        **fields,
    }
    return client.post("/v1/requests", json=body)


def error_of(response: httpx.Response) -> tuple[str, str]:
    error = response.json()["error"]
    return error["type"], error["message"]


@pytest.fixture
def people(live_server: LiveServer) -> dict[str, httpx.Client]:
    clients = {
        "agent": live_server.client(live_server.user("bot", "agent")),
        "alice": live_server.client(live_server.user("alice")),
        "mallory": live_server.client(live_server.user("mallory")),
        "admin": live_server.client(live_server.user("root", "admin")),
    }
    yield clients  # type: ignore[misc]
    for client in clients.values():
        client.close()


# -- create --------------------------------------------------------------------------------------


def test_create_is_get_or_create(people: dict[str, httpx.Client], store: Store) -> None:
    first = ask(people["agent"])
    assert first.status_code == 201
    again = ask(people["agent"])
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    body = first.json()
    assert body["status"] == "pending"
    assert body["approvers"] == ["alice"]
    assert body["created_by"] == "bot"
    assert body["record"]["args"] == {"to": "bob@example.com", "subject": "hi"}
    assert len(store.list_requests(thread_id="t1")) == 1


def test_create_uses_the_servers_rules_unless_the_agent_sends_its_rule(
    people: dict[str, httpx.Client], store: Store
) -> None:
    store.set_layer("tool", "send_email", {"allowed_decisions": ["approve", "reject"]}, actor="test")
    by_server = ask(people["agent"], tool_call_id="c-server").json()
    assert by_server["allowed_decisions"] == ["approve", "reject"]
    by_agent = ask(people["agent"], tool_call_id="c-agent", rule={"allowed_decisions": ["approve"]}).json()
    assert by_agent["allowed_decisions"] == ["approve"]


def test_create_refuses_bad_input_and_stores_nothing(people: dict[str, httpx.Client], store: Store) -> None:
    agent = people["agent"]
    missing = agent.post("/v1/requests", json={"thread_id": "t1", "tool": "x"})
    assert missing.status_code == 422
    assert "tool_call_id" in error_of(missing)[1]
    wrong_type = ask(agent, args=["not", "an", "object"])
    assert wrong_type.status_code == 422
    assert "args" in error_of(wrong_type)[1]
    malformed = agent.post("/v1/requests", content=b"{not json", headers={"content-type": "application/json"})
    assert malformed.status_code == 422
    assert error_of(malformed)[1].startswith("malformed JSON body")
    bad_schema = ask(agent, args_schema={"type": "no-such-type"})
    assert bad_schema.status_code == 422
    assert "invalid JSON Schema" in error_of(bad_schema)[1]
    bad_deadline = ask(agent, deadline="soon")
    assert bad_deadline.status_code == 422
    assert "deadline" in error_of(bad_deadline)[1]
    bad_rule = ask(agent, rule={"on_expire": "maybe"})
    assert bad_rule.status_code == 422
    assert error_of(bad_rule)[1] == "rule.on_expire must be reject, approve or fail, not 'maybe'"
    bad_template = ask(agent, rule={"reject_template": 42})
    assert bad_template.status_code == 422
    assert error_of(bad_template)[1] == "rule.reject_template must be a string"
    unknown_field = ask(agent, colour="blue")
    assert unknown_field.status_code == 422
    assert "colour" in error_of(unknown_field)[1]
    assert store.list_requests() == []


def test_keys_are_per_agent_and_one_reused_for_another_tool_is_a_conflict(
    live_server: LiveServer, people: dict[str, httpx.Client]
) -> None:
    mine = ask(people["agent"])
    assert mine.status_code == 201
    with live_server.client(live_server.user("other-bot", "agent")) as other:
        theirs = ask(other)
    assert theirs.status_code == 201  # the other agent's own thread "t1": nothing to squat
    assert theirs.json()["id"] != mine.json()["id"]
    assert theirs.json()["created_by"] == "other-bot"
    wrong_tool = ask(people["agent"], tool="delete_records")
    assert wrong_tool.status_code == 409
    assert "already belongs to a call of 'send_email'" in error_of(wrong_tool)[1]


def test_people_do_not_create_requests(people: dict[str, httpx.Client]) -> None:
    refused = ask(people["alice"])
    assert refused.status_code == 403
    assert "requests are created by agents" in error_of(refused)[1]


# -- authentication ------------------------------------------------------------------------------


def test_no_token_bad_token_and_revoked_token_are_401(live_server: LiveServer, store: Store) -> None:
    with live_server.client() as anonymous:
        response = anonymous.get("/v1/requests")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert error_of(response)[0] == "NotAuthenticated"
    with live_server.client("so_tok_not-a-real-token") as forged:
        response = forged.get("/v1/requests")
    assert response.status_code == 401
    assert "invalid, expired or revoked" in error_of(response)[1]
    token = live_server.user("carol")
    [credential] = store.list_credentials("token", "carol")
    store.revoke_credential(id=credential.id, actor="test")
    with live_server.client(token) as revoked:
        assert revoked.get("/v1/me").status_code == 401
    with httpx.Client(base_url=live_server.url, headers={"Authorization": "Basic abc"}) as basic:
        response = basic.get("/v1/me")
    assert response.status_code == 401
    assert "Bearer" in error_of(response)[1]


def test_tokens_are_stored_hashed(live_server: LiveServer, store: Store) -> None:
    token = live_server.user("dave")
    with live_server.client(token) as dave:
        assert dave.get("/v1/me").json()["name"] == "dave"
    dump = _dump_credentials(store)
    assert token not in dump
    assert token.removeprefix("so_tok_") not in dump  # (its last "_" part may be one character)
    import hashlib

    assert hashlib.sha256(token.encode()).hexdigest() in dump


def _dump_credentials(store: Store) -> str:
    """The credentials table as someone holding a copy of the database would see it."""
    from signoff.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        with store._pool.connection() as connection:
            return repr(connection.execute("SELECT * FROM credentials").fetchall())
    import sqlite3

    assert isinstance(store, SQLiteStore)
    with sqlite3.connect(store.path) as connection:
        return repr(connection.execute("SELECT * FROM credentials").fetchall())


# -- read and list -------------------------------------------------------------------------------


def test_get_404_and_403_are_clear_and_the_refusal_is_audited(
    people: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(people["agent"]).json()["id"]
    missing = people["alice"].get("/v1/requests/req_nope")
    assert missing.status_code == 404
    assert error_of(missing) == ("RequestNotFound", "no request with id 'req_nope'")
    refused = people["mallory"].get(f"/v1/requests/{request_id}")
    assert refused.status_code == 403
    assert error_of(refused) == ("NotAnApprover", f"mallory is not an approver of request {request_id}")
    refusals = list(store.audit_entries(request_id=request_id, action="request.view_refused"))
    assert [entry.actor for entry in refusals] == ["mallory"]
    seen = people["alice"].get(f"/v1/requests/{request_id}").json()
    assert seen["id"] == request_id
    assert "record" not in seen  # only the agent that asked gets the unredacted record


def test_list_shows_only_what_the_caller_may_see(people: dict[str, httpx.Client]) -> None:
    mine = ask(people["agent"]).json()["id"]
    open_to_all = ask(people["agent"], tool_call_id="call-2", approvers=None).json()["id"]
    assert [item["id"] for item in people["mallory"].get("/v1/requests").json()["items"]] == [open_to_all]
    assert {item["id"] for item in people["alice"].get("/v1/requests").json()["items"]} == {mine, open_to_all}
    assert {item["id"] for item in people["admin"].get("/v1/requests").json()["items"]} == {mine, open_to_all}
    assert {item["id"] for item in people["agent"].get("/v1/requests").json()["items"]} == {mine, open_to_all}


def test_list_filters_and_cursor_pagination(people: dict[str, httpx.Client], store: Store) -> None:
    agent = people["agent"]
    ids = [
        ask(agent, tool_call_id=f"c{n}", tool="send_email" if n % 2 else "search", agent="a1").json()["id"]
        for n in range(7)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = people["alice"].get("/v1/requests", params=params).json()
        seen.extend(item["id"] for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(ids, reverse=True)
    emails = people["alice"].get("/v1/requests", params={"tool": "send_email"}).json()["items"]
    assert {item["id"] for item in emails} == {ids[n] for n in (1, 3, 5)}
    store.decide(ids[0], _approve(), actor="alice")
    pending = people["alice"].get("/v1/requests", params={"status": "pending"}).json()["items"]
    assert ids[0] not in {item["id"] for item in pending}
    by_approver = people["alice"].get("/v1/requests", params={"approver": "nobody"}).json()["items"]
    assert by_approver == []
    search = people["alice"].get("/v1/requests", params={"q": "SEARCH"}).json()["items"]
    assert {item["id"] for item in search} == {ids[n] for n in (0, 2, 4, 6)}
    bad = people["alice"].get("/v1/requests", params={"status": "maybe"})
    assert bad.status_code == 422
    assert "unknown status maybe" in error_of(bad)[1]
    too_many = people["alice"].get("/v1/requests", params={"limit": 0})
    assert too_many.status_code == 422


def _approve() -> Any:
    from signoff import Approve

    return Approve()


# -- decisions -----------------------------------------------------------------------------------


def test_decision_200_then_409_for_a_second_one(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"]).json()["id"]
    decided = people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert decided.status_code == 200
    assert decided.json()["status"] == "approved"
    assert decided.json()["decision"]["actor"] == "alice"
    twice = people["alice"].post(
        f"/v1/requests/{request_id}/decision", json={"type": "reject", "message": "no"}
    )
    assert twice.status_code == 409
    assert error_of(twice) == ("AlreadyDecided", f"request {request_id} was already approved by alice")
    assert store.get_request(request_id).status is RequestStatus.APPROVED


def test_decision_403_for_a_non_approver_and_for_an_agent(
    people: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(people["agent"]).json()["id"]
    refused = people["mallory"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert refused.status_code == 403
    assert error_of(refused) == ("NotAnApprover", f"mallory is not an approver of request {request_id}")
    by_agent = people["agent"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert by_agent.status_code == 403
    assert error_of(by_agent)[1] == "bot is an agent; only people decide"
    admin = people["admin"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert admin.status_code == 403  # admins see everything but decide only where they are approvers
    assert store.get_request(request_id).status is RequestStatus.PENDING
    actions = [entry.action for entry in store.audit_entries(request_id=request_id)]
    assert actions.count("decision.refused") == 3


def test_decision_404(people: dict[str, httpx.Client]) -> None:
    response = people["alice"].post("/v1/requests/req_missing/decision", json={"type": "approve"})
    assert response.status_code == 404
    assert error_of(response) == ("RequestNotFound", "no request with id 'req_missing'")


def test_decision_409_while_drafting(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"], drafting=True, args={"to": "b"}).json()["id"]
    response = people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert response.status_code == 409
    assert error_of(response) == (
        "RequestNotReady",
        f"request {request_id} is still drafting; its arguments are not complete",
    )
    patched = people["agent"].patch(f"/v1/requests/{request_id}", json={"args": {"subject": "x"}})
    assert patched.json()["args"] == {"to": "b", "subject": "x"}
    assert patched.json()["status"] == "drafting"
    ready = people["agent"].patch(f"/v1/requests/{request_id}", json={"ready": True})
    assert ready.json()["status"] == "pending"
    assert (
        people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code
        == 200
    )
    late = people["agent"].patch(f"/v1/requests/{request_id}", json={"args": {"to": "c"}})
    assert late.status_code == 409
    assert "not drafting" in error_of(late)[1]
    assert store.get_request(request_id).args == {"to": "b", "subject": "x"}


def test_decision_410_after_the_deadline(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"], deadline=0.3).json()["id"]
    time.sleep(0.5)
    response = people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert response.status_code == 410
    kind, message = error_of(response)
    assert kind == "RequestExpired"
    assert message.startswith(f"request {request_id} expired at ")
    assert store.get_request(request_id).status is RequestStatus.EXPIRED


def test_decision_422_cases_change_nothing(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"], rule={"allowed_decisions": ["approve", "edit", "reject"]}).json()["id"]
    alice = people["alice"]
    url = f"/v1/requests/{request_id}/decision"
    not_allowed = alice.post(url, json={"type": "respond", "message": "done"})
    assert not_allowed.status_code == 422
    assert error_of(not_allowed) == (
        "DecisionNotAllowed",
        "'respond' is not allowed for this request (allowed: approve, edit, reject)",
    )
    breaks_schema = alice.post(url, json={"type": "edit", "args": {"to": 42}})
    assert breaks_schema.status_code == 422
    kind, message = error_of(breaks_schema)
    assert kind == "InvalidArguments"
    assert "42 is not of type 'string'" in message
    unknown_type = alice.post(url, json={"type": "maybe"})
    assert unknown_type.status_code == 422
    assert "decision type must be one of approve, edit, reject, respond" in error_of(unknown_type)[1]
    extra_field = alice.post(url, json={"type": "approve", "args": {"to": "x"}})
    assert extra_field.status_code == 422
    assert error_of(extra_field)[0] == "InvalidDecision"
    malformed = alice.post(url, content=b'{"type": ', headers={"content-type": "application/json"})
    assert malformed.status_code == 422
    assert error_of(malformed)[1].startswith("malformed JSON body")
    not_an_object = alice.post(url, json=["approve"])
    assert not_an_object.status_code == 422
    assert store.get_request(request_id).status is RequestStatus.PENDING
    edited = alice.post(url, json={"type": "edit", "args": {"to": "carol@example.com"}})
    assert edited.status_code == 200
    assert edited.json()["final_args"] == {"to": "carol@example.com"}


def test_unattended_decision_only_by_the_agent_that_asked(
    live_server: LiveServer, people: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(people["agent"]).json()["id"]
    body = {"type": "approve", "comment": "auto-approved: unattended", "on_behalf": "unattended"}
    with live_server.client(live_server.user("other-bot", "agent")) as other:
        refused = other.post(f"/v1/requests/{request_id}/decision", json=body)
    assert refused.status_code == 403
    assert error_of(refused)[1] == "only the agent that asked may record an unattended decision"
    decided = people["agent"].post(f"/v1/requests/{request_id}/decision", json=body)
    assert decided.status_code == 200
    assert store.get_request(request_id).decision.actor == "unattended"  # type: ignore[union-attr]


# -- cancel, wait, executions --------------------------------------------------------------------


def test_cancel_by_the_agent_not_by_others(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"]).json()["id"]
    refused = people["alice"].post(f"/v1/requests/{request_id}/cancel", json={"reason": "x"})
    assert refused.status_code == 403
    assert "only the agent that asked" in error_of(refused)[1]
    cancelled = people["agent"].post(f"/v1/requests/{request_id}/cancel", json={"reason": "run aborted"})
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    again = people["agent"].post(f"/v1/requests/{request_id}/cancel")
    assert again.status_code == 409
    assert store.get_request(request_id).resolution["reason"] == "run aborted"  # type: ignore[index]


def test_wait_returns_when_decided_and_times_out_pending(
    people: dict[str, httpx.Client], store: Store
) -> None:
    import threading

    request_id = ask(people["agent"]).json()["id"]
    started = time.monotonic()
    timed_out = people["agent"].get(f"/v1/requests/{request_id}/wait", params={"timeout": 0.3})
    assert timed_out.json()["status"] == "pending"
    assert time.monotonic() - started >= 0.3
    timer = threading.Timer(0.3, lambda: store.decide(request_id, _approve(), actor="alice"))
    timer.start()
    started = time.monotonic()
    decided = people["agent"].get(f"/v1/requests/{request_id}/wait", params={"timeout": 20})
    elapsed = time.monotonic() - started
    timer.join()
    assert decided.json()["status"] == "approved"
    assert elapsed < 10  # woken by the decision, not by the 20 s timeout
    bad = people["agent"].get(f"/v1/requests/{request_id}/wait", params={"timeout": 999})
    assert bad.status_code == 422


def test_execution_records_through_the_api(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"]).json()["id"]
    url = f"/v1/requests/{request_id}/execution"
    digest = decided_digest(store, request_id)
    early = people["agent"].post(url, json={"action": "claim", "args_digest": digest})
    assert early.status_code == 409
    assert "only approved or edited calls run" in error_of(early)[1]
    store.decide(request_id, _approve(), actor="alice")
    owner = {"host": "elsewhere", "pid": 1, "started": None, "token": "x"}
    claim = (
        people["agent"]
        .post(url, json={"action": "claim", "owner": owner, "lease_seconds": 30, "args_digest": digest})
        .json()
    )
    assert claim["kind"] == "claimed"
    assert claim["execution"]["owner"]["host"] == "elsewhere"
    busy = people["agent"].post(url, json={"action": "claim", "args_digest": digest}).json()
    assert busy["kind"] == "busy"
    assert people["agent"].post(url, json={"action": "renew", "token": claim["token"]}).json() == {
        "renewed": True
    }
    no_token = people["agent"].post(url, json={"action": "finish", "succeeded": True})
    assert no_token.status_code == 422
    done = people["agent"].post(
        url, json={"action": "finish", "token": claim["token"], "succeeded": True, "result": {"sent": 1}}
    )
    assert done.json()["execution"]["status"] == "succeeded"
    assert people["agent"].get(url).json()["result"] == {"sent": 1}
    assert people["alice"].post(url, json={"action": "claim", "args_digest": digest}).status_code == 403
    execution = store.get_execution(request_id)
    assert execution is not None
    assert execution.result == {"sent": 1}


# -- rules, explain, audit, meta -----------------------------------------------------------------


def test_rule_layers_read_and_write(people: dict[str, httpx.Client], store: Store) -> None:
    admin, alice = people["admin"], people["alice"]
    assert alice.put("/v1/rules/tool/send_email", json={"hitl": True}).status_code == 403
    assert (
        admin.put(
            "/v1/rules/tool/send_email", json={"requires_approval": True, "allowed_decisions": ["approve"]}
        ).status_code
        == 200
    )
    patched = admin.patch("/v1/rules/tool/send_email", json={"description": "Send {to}"})
    assert patched.json()["allowed_decisions"] == ["approve"]
    assert patched.json()["description"] == "Send {to}"
    assert alice.get("/v1/rules/tool/send_email").json()["description"] == "Send {to}"
    invalid = admin.put("/v1/rules/tool/send_email", json={"allowed_decisions": ["maybe"]})
    assert invalid.status_code == 422
    unknown_kind = admin.put("/v1/rules/widget/x", json={})
    assert unknown_kind.status_code == 422
    assert "unknown layer kind 'widget'" in error_of(unknown_kind)[1]
    assert admin.get("/v1/rules/tool/nope").status_code == 404
    assert admin.put("/v1/rules/defaults/-", json={"deadline": "2h"}).status_code == 200
    rules = alice.get("/v1/rules").json()
    assert rules["rules"]["tools"]["send_email"]["description"] == "Send {to}"
    assert rules["version"] == store.rules_version()
    explained = alice.get("/v1/explain", params={"tool": "send_email", "args": '{"to": "x"}'}).json()
    assert explained["ask"] is True
    assert explained["allowed_decisions"] == ["approve"]
    assert admin.delete("/v1/rules/tool/send_email").json() == {"deleted": True}
    bad_args = alice.get("/v1/explain", params={"tool": "x", "args": "[1"})
    assert bad_args.status_code == 422
    assert "args is not valid JSON" in error_of(bad_args)[1]


def test_audit_for_admins_with_filters_and_jsonl_export(
    people: dict[str, httpx.Client], store: Store
) -> None:
    import json

    request_id = ask(people["agent"]).json()["id"]
    people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert people["alice"].get("/v1/audit").status_code == 403
    decided = people["admin"].get("/v1/audit", params={"action": "request.decided"}).json()["items"]
    assert [(entry["request_id"], entry["actor"]) for entry in decided] == [(request_id, "alice")]
    trail = people["alice"].get(f"/v1/requests/{request_id}/audit").json()
    assert [entry["action"] for entry in trail] == ["request.created", "request.decided"]
    export = people["admin"].get("/v1/audit/export")
    assert export.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in export.text.splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["hash"] == list(store.audit_entries())[-1].hash
    assert people["admin"].get("/v1/audit/verify").json()["ok"] is True


def test_audit_anchor_and_verify_against_it(people: dict[str, httpx.Client], store: Store) -> None:
    admin = people["admin"]
    request_id = ask(people["agent"]).json()["id"]
    assert people["alice"].get("/v1/audit/anchor").status_code == 403
    anchor = admin.get("/v1/audit/anchor").json()
    assert anchor == store.audit_anchor().to_dict()
    assert anchor["anchor"] == f"{anchor['seq']}:{list(store.audit_entries())[-1].hash}"
    people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    report = admin.get("/v1/audit/verify", params={"anchor": anchor["anchor"]}).json()
    assert report["ok"] is True, report
    assert (report["anchor"], report["requests"]) == (anchor["anchor"], 1)
    wrong = admin.get("/v1/audit/verify", params={"anchor": f"{anchor['seq']}:" + "f" * 64}).json()
    assert wrong["ok"] is False
    assert [problem["seq"] for problem in wrong["problems"]] == [anchor["seq"]]
    malformed = admin.get("/v1/audit/verify", params={"anchor": "one:two"})
    assert malformed.status_code == 422
    assert "not an audit anchor" in error_of(malformed)[1]


def test_audit_verify_reports_a_dropped_table_and_anchor_refuses(
    people: dict[str, httpx.Client], store: Store
) -> None:
    from tests.test_audit import run_sql

    ask(people["agent"])
    run_sql(store, "DROP TABLE audit_log")
    report = people["admin"].get("/v1/audit/verify")
    assert report.status_code == 200
    assert report.json()["ok"] is False
    assert {"seq": 0, "problem": "the table audit_log is missing: it was dropped, or never created"} in (
        report.json()["problems"]
    )
    refused = people["admin"].get("/v1/audit/anchor")
    assert refused.status_code == 409
    assert "the table audit_log is missing" in error_of(refused)[1]


def test_healthz_metrics_and_openapi(live_server: LiveServer, people: dict[str, httpx.Client]) -> None:
    request_id = ask(people["agent"]).json()["id"]
    people["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "reject", "message": "no"})
    ask(people["agent"], tool_call_id="call-2")
    with live_server.client() as anonymous:
        assert anonymous.get("/healthz").json()["ok"] is True
        deadline = time.monotonic() + 5
        while True:
            metrics = anonymous.get("/metrics").text
            if "signoff_time_to_decision_seconds_count" in metrics and 'status="rejected"} 1' in metrics:
                break
            assert time.monotonic() < deadline, metrics
            time.sleep(0.05)
        assert "signoff_pending_requests 1.0" in metrics
        assert 'signoff_requests{status="rejected"} 1.0' in metrics
        assert 'signoff_time_to_decision_seconds_count{status="rejected"} 1.0' in metrics
        spec = anonymous.get("/openapi.json").json()
    paths = spec["paths"]
    for path in (
        "/v1/requests",
        "/v1/requests/{request_id}",
        "/v1/requests/{request_id}/decision",
        "/v1/requests/{request_id}/cancel",
        "/v1/requests/{request_id}/wait",
        "/v1/requests/{request_id}/execution",
        "/v1/events",
        "/v1/explain",
        "/v1/audit",
        "/v1/audit/export",
    ):
        assert path in paths, path
    assert "patch" in paths["/v1/requests/{request_id}"]
    for path, field in (("/v1/requests", "thread_id"), ("/v1/requests/{request_id}/decision", "type")):
        body = paths[path]["post"]["requestBody"]
        assert body["required"] is True
        assert field in body["content"]["application/json"]["schema"]["properties"], path


def test_sweeper_expires_past_deadlines(people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"], deadline=0.2).json()["id"]
    deadline = time.monotonic() + 5
    while store.get_request(request_id).status is not RequestStatus.EXPIRED:
        assert time.monotonic() < deadline, "the server's sweeper did not expire the request"
        time.sleep(0.05)
    [entry] = store.audit_entries(request_id=request_id, action="request.expired")
    assert entry.channel == "sweeper"


def test_users_and_tokens_through_the_api(people: dict[str, httpx.Client], live_server: LiveServer) -> None:
    admin, alice = people["admin"], people["alice"]
    assert alice.post("/v1/users", json={"name": "erin"}).status_code == 403
    created = admin.post("/v1/users", json={"name": "erin", "role": "member"})
    assert created.status_code == 201
    duplicate = admin.post("/v1/users", json={"name": "erin"})
    assert duplicate.status_code == 409
    assert error_of(duplicate) == ("AlreadyExists", "user 'erin' already exists")
    token = admin.post("/v1/tokens", json={"user": "erin", "label": "laptop", "expires_in": "1d"}).json()
    with live_server.client(token["token"]) as erin:
        assert erin.get("/v1/me").json()["name"] == "erin"
        assert erin.post("/v1/tokens", json={"user": "alice"}).status_code == 403
        assert erin.delete(f"/v1/tokens/{token['id']}").json() == {"revoked": True}
        assert erin.get("/v1/me").status_code == 401
    assert admin.delete("/v1/tokens/tok_nope").status_code == 404


def test_group_approvers(live_server: LiveServer, people: dict[str, httpx.Client], store: Store) -> None:
    request_id = ask(people["agent"], approvers=["group:ops"]).json()["id"]
    assert people["alice"].get(f"/v1/requests/{request_id}").status_code == 403
    with live_server.client(live_server.user("olga", groups=("ops",))) as ops:
        decided = ops.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert decided.status_code == 200
    assert store.get_request(request_id).decision.actor == "olga"  # type: ignore[union-attr]


def test_deadline_default_comes_from_the_rule(people: dict[str, httpx.Client], store: Store) -> None:
    store.set_layer("defaults", "", {"deadline": "2h"}, actor="test")
    request_id = ask(people["agent"]).json()["id"]
    request = store.get_request(request_id)
    remaining = request.deadline - request.created_at
    assert timedelta(hours=2) - timedelta(seconds=5) < remaining <= timedelta(hours=2)
