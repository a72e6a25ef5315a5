"""Decisions in batches (issue 20 §5): `POST /v1/requests/decide`, `Client.decide_many`.

Each request of a batch is decided on its own, with the checks of a single decision; those that
refuse it (not the person's, closed, `batch: false` in their rule, unknown) are skipped and
named with the reason, and a `batch.decided` entry names both. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff import AsyncClient, BatchFilter, BatchResult, Client, InvalidInput, RuleSet
from signoff import batch as batch_module
from signoff.batch import batch_decision, check_batch_ids
from signoff.decisions import Approve, Reject
from signoff.errors import InvalidDecision
from signoff.requests import RequestStatus
from signoff.rules import Resolver
from signoff.rules.snapshot import parse_snapshot
from signoff.store import Store

from .live import LiveServer

RULES = """
tools:
  send_email: {requires_approval: true, approvers: [alice]}
  wipe: {requires_approval: true, approvers: [alice], batch: false}
  pay: {requires_approval: true, approvers: [bob]}
  deploy: {requires_approval: true, approvers: [alice, bob], quorum: 2}
"""


@pytest.fixture
def people(live_server: LiveServer) -> Iterator[dict[str, httpx.Client]]:
    live_server.store.replace_rules(RuleSet.from_yaml(RULES), actor="test")
    clients = {
        "agent": live_server.client(live_server.user("bot", "agent")),
        "alice": live_server.client(live_server.user("alice")),
        "mallory": live_server.client(live_server.user("mallory")),
    }
    yield clients
    for client in clients.values():
        client.close()


def ask(agent: httpx.Client, tool: str, call_id: str, thread: str = "t1") -> str:
    body = {"thread_id": thread, "tool_call_id": call_id, "tool": tool, "args": {"n": call_id}}
    created = agent.post("/v1/requests", json=body)
    assert created.status_code == 201, created.text
    request_id: str = created.json()["id"]
    return request_id


def decide(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post("/v1/requests/decide", json=body)


def skipped_errors(answer: dict[str, Any]) -> dict[str, str]:
    return {item["id"]: item["error"] for item in answer["skipped"]}


def test_a_batch_decides_each_request_and_names_the_ones_it_skips(
    people: dict[str, httpx.Client], store: Store
) -> None:
    agent, alice = people["agent"], people["alice"]
    emails = [ask(agent, "send_email", f"e{n}") for n in range(3)]
    wipe = ask(agent, "wipe", "w")
    pay = ask(agent, "pay", "p")
    ids = [*emails, wipe, pay, "req_nosuch"]

    answer = decide(alice, type="approve", reason="all fine", ids=ids)

    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert sorted(result["decided"]) == sorted(emails)
    assert skipped_errors(result) == {
        wipe: "NotBatchable",
        pay: "NotAnApprover",
        "req_nosuch": "RequestNotFound",
    }
    assert "batch: false" in next(item["reason"] for item in result["skipped"] if item["id"] == wipe)
    for request_id in emails:
        request = store.get_request(request_id)
        assert request.status is RequestStatus.APPROVED
        assert request.decision is not None and request.decision.actor == "alice"
        assert request.decision.decision == Approve(comment="all fine")
        actions = [entry.action for entry in store.audit_entries(request_id=request_id)]
        assert actions.count("request.decided") == 1
    assert store.get_request(wipe).status is RequestStatus.PENDING
    assert store.get_request(pay).status is RequestStatus.PENDING
    refusal = [e for e in store.audit_entries(request_id=wipe) if e.action == "decision.refused"]
    assert refusal and refusal[0].data["reason"] == "not batchable"
    (entry,) = store.audit_entries(action="batch.decided")
    assert entry.actor == "alice"
    assert entry.data["id"] == result["id"]
    assert sorted(entry.data["decided"]) == sorted(emails)
    assert {item["id"] for item in entry.data["skipped"]} == {wipe, pay, "req_nosuch"}
    assert entry.data["reason"] == "all fine"


def test_a_filter_rejects_only_the_open_requests_it_matches_that_the_person_decides(
    people: dict[str, httpx.Client], store: Store
) -> None:
    agent, alice = people["agent"], people["alice"]
    here = [ask(agent, "send_email", f"h{n}") for n in range(2)]
    elsewhere = ask(agent, "send_email", "x", thread="t2")
    other_tool = ask(agent, "pay", "p")
    wipe = ask(agent, "wipe", "w")

    answer = decide(
        alice, type="reject", reason="not today", filter={"tool": "send_email", "thread_id": "t1"}
    )

    assert answer.status_code == 200, answer.text
    assert sorted(answer.json()["decided"]) == sorted(here)
    assert answer.json()["skipped"] == []
    for request_id in here:
        request = store.get_request(request_id)
        assert request.status is RequestStatus.REJECTED
        assert request.decision is not None and request.decision.decision == Reject(message="not today")
    for request_id in (elsewhere, other_tool, wipe):
        assert store.get_request(request_id).status is RequestStatus.PENDING
    by_thread = decide(alice, type="approve", filter={"thread_id": "t1"}).json()
    assert by_thread["decided"] == []  # bob's pay is not listed for alice at all
    assert skipped_errors(by_thread) == {wipe: "NotBatchable"}
    (first, _) = store.audit_entries(action="batch.decided")
    assert first.data["filter"] == {"tool": "send_email", "thread_id": "t1"}


def test_someone_who_is_not_the_approver_decides_nothing(
    people: dict[str, httpx.Client], store: Store
) -> None:
    emails = [ask(people["agent"], "send_email", f"e{n}") for n in range(2)]
    by_ids = decide(people["mallory"], type="approve", ids=emails)
    assert by_ids.status_code == 200
    assert by_ids.json()["decided"] == []
    assert set(skipped_errors(by_ids.json()).values()) == {"NotAnApprover"}
    by_filter = decide(people["mallory"], type="approve", filter={"tool": "send_email"})
    assert by_filter.json() == {**by_filter.json(), "decided": [], "skipped": []}
    for request_id in emails:
        assert store.get_request(request_id).status is RequestStatus.PENDING
        refused = [e.action for e in store.audit_entries(request_id=request_id)]
        assert "request.view_refused" in refused


def test_an_agent_may_not_decide_a_batch(people: dict[str, httpx.Client], store: Store) -> None:
    email = ask(people["agent"], "send_email", "e")
    refused = decide(people["agent"], type="approve", ids=[email])
    assert refused.status_code == 403
    assert store.get_request(email).status is RequestStatus.PENDING
    assert list(store.audit_entries(action="batch.decided")) == []


def test_deciding_twice_skips_what_is_already_decided(people: dict[str, httpx.Client], store: Store) -> None:
    emails = [ask(people["agent"], "send_email", f"e{n}") for n in range(2)]
    first = decide(people["alice"], type="approve", ids=emails)
    assert sorted(first.json()["decided"]) == sorted(emails)
    again = decide(people["alice"], type="reject", reason="changed my mind", ids=emails)
    assert again.status_code == 200
    assert again.json()["decided"] == []
    assert set(skipped_errors(again.json()).values()) == {"AlreadyDecided"}
    assert all("already approved by alice" in item["reason"] for item in again.json()["skipped"])
    for request_id in emails:
        assert store.get_request(request_id).status is RequestStatus.APPROVED


def test_a_quorum_counts_the_batch_as_one_vote(people: dict[str, httpx.Client], store: Store) -> None:
    deploy = ask(people["agent"], "deploy", "d")
    answer = decide(people["alice"], type="approve", ids=[deploy])
    assert answer.json()["decided"] == [deploy]
    request = store.get_request(deploy)
    assert request.status is RequestStatus.PENDING
    assert request.approvals == ("alice",)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"type": "approve", "filter": {}}, "at least one of tool, thread_id, agent, app"),
        ({"type": "approve"}, "either ids or filter"),
        ({"type": "approve", "ids": ["a"], "filter": {"tool": "x"}}, "either ids or filter"),
        ({"type": "edit", "ids": ["a"]}, "type"),
        ({"type": "approve", "ids": []}, "ids"),
        ({"type": "approve", "ids": "req_1"}, "ids"),
        ({"type": "approve", "filter": {"tool": "send_email", "status": "approved"}}, "status"),
        ({"type": "approve", "ids": ["a"], "reason": 5}, "reason"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    people: dict[str, httpx.Client], store: Store, body: dict[str, Any], said: str
) -> None:
    email = ask(people["agent"], "send_email", "e")
    refused = decide(people["alice"], **body)
    assert refused.status_code == 422, refused.text
    assert said in refused.text
    assert store.get_request(email).status is RequestStatus.PENDING
    assert list(store.audit_entries(action="batch.decided")) == []


def test_at_most_500_ids_and_a_filter_matching_more_than_the_cap_is_refused(
    people: dict[str, httpx.Client], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    too_many = decide(people["alice"], type="approve", ids=[f"req_{n}" for n in range(501)])
    assert too_many.status_code == 422
    assert list(store.audit_entries(action="batch.decided")) == []
    with pytest.raises(InvalidInput, match="at most 500"):
        check_batch_ids([f"req_{n}" for n in range(501)])
    assert len(check_batch_ids([f"req_{n % 500}" for n in range(600)])) == 500  # named twice counts once

    emails = [ask(people["agent"], "send_email", f"e{n}") for n in range(3)]
    monkeypatch.setattr(batch_module, "MAX_BATCH", 2)
    refused = decide(people["alice"], type="approve", filter={"tool": "send_email"})
    assert refused.status_code == 422
    assert "more than 2 open requests match" in refused.text
    assert all(store.get_request(request_id).status is RequestStatus.PENDING for request_id in emails)
    monkeypatch.setattr(batch_module, "MAX_BATCH", 3)
    assert len(decide(people["alice"], type="approve", filter={"tool": "send_email"}).json()["decided"]) == 3


def test_the_clients_decide_many(people: dict[str, httpx.Client], live_server: LiveServer) -> None:
    agent = people["agent"]
    emails = [ask(agent, "send_email", f"e{n}") for n in range(2)]
    wipe = ask(agent, "wipe", "w")
    token = live_server.user("alice")
    with Client(live_server.url, token=token) as client:
        result = client.decide_many([*emails, wipe], "approve", reason="ok")
    assert isinstance(result, BatchResult)
    assert sorted(result.decided) == sorted(emails)
    assert [(skip.request_id, skip.error) for skip in result.skipped] == [(wipe, "NotBatchable")]

    later = [ask(agent, "send_email", f"l{n}", thread="t9") for n in range(2)]

    async def reject_thread() -> BatchResult:
        async with AsyncClient(live_server.url, token=token) as client:
            return await client.decide_many(BatchFilter(thread_id="t9"), "reject", reason="no")

    rejected = asyncio.run(reject_thread())
    assert sorted(rejected.decided) == sorted(later)
    assert rejected.type == "reject"
    with Client(live_server.url, token=token) as client, pytest.raises(InvalidInput):
        client.decide_many(emails[0], "approve")


def test_batch_false_is_a_rule_setting_kept_with_the_request(people: dict[str, httpx.Client]) -> None:
    rules = Resolver(RuleSet.from_yaml(RULES))
    assert rules.explain("wipe").rule.batch is False
    assert rules.explain("send_email").rule.for_request().batch is True
    assert rules.explain("wipe").rule.for_request().snapshot()["batch"] is False
    assert parse_snapshot({"batch": False}).batch is False
    wipe = ask(people["agent"], "wipe", "w")
    shown = people["alice"].get(f"/v1/requests/{wipe}").json()
    assert shown["batch"] is False
    with Client(str(people["alice"].base_url), token=people["alice"].headers["Authorization"][7:]) as client:
        assert client.get_request(wipe).rule.batch is False


def test_the_batch_decision_and_filter_check_what_they_are_given() -> None:
    assert batch_decision("approve", "  ") == Approve()
    assert batch_decision("reject", " why ") == Reject(message="why")
    with pytest.raises(InvalidDecision, match="edit and respond are decided one at a time"):
        batch_decision("respond", "x")
    with pytest.raises(InvalidInput, match="at least one"):
        BatchFilter()
    with pytest.raises(InvalidInput, match=r"filter\.tool"):
        BatchFilter(tool=" ")
    with pytest.raises(InvalidInput, match="no field 'status'"):
        BatchFilter.from_dict({"status": "pending"})
    assert BatchFilter.from_dict({"tool": "x"}).to_dict() == {"tool": "x"}


def test_the_request_page_and_explain_say_batch_false(
    people: dict[str, httpx.Client], live_server: LiveServer
) -> None:
    wipe = ask(people["agent"], "wipe", "w")
    email = ask(people["agent"], "send_email", "e")
    with live_server.client() as browser:
        token = live_server.user("alice")
        browser.headers["Authorization"] = f"Bearer {token}"
        assert "batch: false" in browser.get(f"/requests/{wipe}").text
        assert "batch: false" not in browser.get(f"/requests/{email}").text
    explained = people["alice"].get("/v1/explain", params={"tool": "wipe"})
    assert explained.status_code == 200, explained.text
    assert explained.json()["batch"] is False


def test_a_batch_sent_again_with_its_idempotency_key_gets_the_first_answer(
    people: dict[str, httpx.Client], store: Store
) -> None:
    emails = [ask(people["agent"], "send_email", f"e{n}") for n in range(2)]
    body = {"type": "approve", "ids": emails}
    headers = {"Idempotency-Key": "batch-once"}
    first = people["alice"].post("/v1/requests/decide", json=body, headers=headers)
    again = people["alice"].post("/v1/requests/decide", json=body, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == first.json()
    assert len(list(store.audit_entries(action="batch.decided"))) == 1
