"""Standing grants (issue 20 §2): an approval may approve calls like it for a while. A grant
covers exactly what it says (tool, agent/app/thread, condition), until it expires (a test clock)
or is revoked; never where a quorum must agree, never for `hitl_required` tools unless the app
allows it, and only while its author still may approve."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from signoff import Approve, Reject, RuleSet
from signoff._util import utcnow
from signoff.errors import GrantNotAllowed, InvalidInput, NotAnApprover, NotFound, PermissionDenied
from signoff.execution import args_digest
from signoff.grants import GrantAsk
from signoff.presentation.cards import Card
from signoff.presentation.decision_form import decision_payload
from signoff.presentation.refusals import ended_text
from signoff.requests import NewRequest, Request, RequestStatus
from signoff.rules.effective import RequestRule
from signoff.rules.resolve import Resolver
from signoff.rules.snapshot import parse_snapshot
from signoff.store import Store, grant_ops

from .live import LiveServer

RULE = RequestRule(approvers=("alice",), max_grant=timedelta(hours=1))


def ask(
    store: Store,
    call_id: str,
    args: dict[str, Any] | None = None,
    *,
    rule: RequestRule = RULE,
    tool: str = "deploy",
    agent: str | None = "bot",
    app: str | None = "shop",
    thread: str = "t1",
) -> Request:
    new = NewRequest(
        thread_id=thread,
        tool_call_id=call_id,
        tool_name=tool,
        args={"env": "prod"} if args is None else args,
        description="d",
        deadline=utcnow() + timedelta(hours=1),
        rule=rule,
        agent=agent,
        app=app,
    )
    request, created = store.create_request(new)
    assert created
    return request


@pytest.fixture
def people(store: Store) -> Store:
    for name in ("alice", "bob"):
        store.add_user(name, role="member", actor="test")
    return store


def granted(store: Store, call_id: str = "c0", *, app: str = "shop", **grant: Any) -> str:
    request = ask(store, call_id, app=app)
    decided = store.decide(
        request.id, Approve(), actor="alice", grant=GrantAsk(lifetime=timedelta(minutes=30), **grant)
    )
    assert decided.status is RequestStatus.APPROVED
    assert decided.granted_id is not None
    return decided.granted_id


def test_a_grant_approves_calls_like_its_request_through_the_grant(people: Store) -> None:
    store = people
    grant_id = granted(store)
    covered = ask(store, "c1")
    assert covered.status is RequestStatus.APPROVED
    assert covered.grant_id == grant_id
    assert covered.decision is not None and covered.decision.actor == "alice"
    assert covered.decision.channel == "grant"
    assert covered.final_args == {"env": "prod"}
    decided = [
        entry for entry in store.audit_entries(request_id=covered.id) if entry.action == "request.decided"
    ]
    assert [(entry.actor, entry.data["grant"]) for entry in decided] == [("alice", grant_id)]
    # same args only, same tool, same agent
    assert ask(store, "c2", {"env": "staging"}).status is RequestStatus.PENDING
    assert ask(store, "c3", tool="drop").status is RequestStatus.PENDING
    assert ask(store, "c4", agent="other").status is RequestStatus.PENDING
    assert ask(store, "c5", agent=None).status is RequestStatus.PENDING


def test_the_grant_is_recorded_with_the_approval_that_gave_it(people: Store) -> None:
    store = people
    grant_id = granted(store)
    grant = store.get_grant(grant_id)
    assert (grant.tool_name, grant.scope, grant.agent, grant.granted_by) == (
        "deploy",
        "agent",
        "bot",
        "alice",
    )
    assert (grant.condition, grant.args_digest) == (None, args_digest({"env": "prod"}))
    assert "prod" not in json.dumps(grant.to_dict(utcnow()))  # no argument is written in a grant
    assert grant.expires_at - grant.created_at == timedelta(minutes=30)
    actions = [entry.action for entry in store.audit_entries(request_id=grant.request_id)]
    assert actions[-2:] == ["request.decided", "grant.created"]


def test_a_condition_covers_the_calls_it_is_true_for(people: Store) -> None:
    store = people
    granted(store, when='args.env.startsWith("prod")')
    assert ask(store, "c1", {"env": "prod-eu"}).status is RequestStatus.APPROVED
    assert ask(store, "c2", {"env": "staging"}).status is RequestStatus.PENDING
    assert ask(store, "c3", {"region": "eu"}).status is RequestStatus.PENDING  # cannot evaluate: asks


def test_app_and_thread_scopes_cover_their_app_and_thread_alone(people: Store) -> None:
    store = people
    granted(store, "a0", scope="app", when="true")
    assert ask(store, "a1", {"x": 1}, agent="other").status is RequestStatus.APPROVED
    assert ask(store, "a2", app="other").status is RequestStatus.PENDING
    granted(store, "t0", app="elsewhere", scope="thread", when="true")
    assert ask(store, "t1", {"y": 2}, app="elsewhere").status is RequestStatus.APPROVED
    assert ask(store, "t2", app="elsewhere", thread="t2").status is RequestStatus.PENDING


def test_a_grant_expires(people: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store = people
    grant_id = granted(store)
    later = utcnow() + timedelta(minutes=31)
    monkeypatch.setattr(grant_ops, "utcnow", lambda: later)
    assert ask(store, "c1").status is RequestStatus.PENDING
    assert store.list_grants() == []
    [ended] = store.list_grants(include_ended=True)
    assert ended.id == grant_id and ended.to_dict(later)["status"] == "expired"


def test_a_grant_revoked_mid_run_covers_no_call_after(people: Store) -> None:
    store = people
    grant_id = granted(store)
    assert ask(store, "c1").status is RequestStatus.APPROVED
    revoked = store.revoke_grant(grant_id, actor="alice")
    assert revoked.revoked_by == "alice" and revoked.revoked_at is not None
    assert ask(store, "c2").status is RequestStatus.PENDING
    assert store.list_grants() == []
    assert any(entry.action == "grant.revoked" for entry in store.audit_entries())


def test_only_its_author_or_an_admin_revokes_a_grant(people: Store) -> None:
    store = people
    grant_id = granted(store)
    with pytest.raises(PermissionDenied):
        store.revoke_grant(grant_id, actor="bob")
    assert ask(store, "c1").status is RequestStatus.APPROVED
    refused = [entry for entry in store.audit_entries() if entry.action == "grant.revoke_refused"]
    assert [entry.actor for entry in refused] == ["bob"]
    assert store.revoke_grant(grant_id, actor="root", admin=True).revoked_by == "root"
    with pytest.raises(NotFound):
        store.revoke_grant("grt_nope", actor="alice")


def test_a_grant_covers_only_calls_its_author_may_still_approve(people: Store) -> None:
    store = people
    granted(store)
    bobs = RequestRule(approvers=("bob",), max_grant=timedelta(hours=1))
    assert ask(store, "c1", rule=bobs).status is RequestStatus.PENDING
    no_grants = RequestRule(approvers=("alice",))
    assert ask(store, "c2", rule=no_grants).status is RequestStatus.PENDING


def test_a_grant_a_rule_does_not_allow_is_refused_and_nothing_is_decided(people: Store) -> None:
    store = people
    thirty = GrantAsk(lifetime=timedelta(minutes=30))
    cases = [
        (RequestRule(approvers=("alice",)), thirty, "allows no standing grants"),
        (RequestRule(approvers=("alice",), quorum=2, max_grant=timedelta(hours=1)), thirty, "2 approvers"),
        (RULE, GrantAsk(lifetime=timedelta(hours=2)), "longer than this rule's max_grant"),
        (RULE, GrantAsk(lifetime=timedelta(minutes=5), when="args.("), "grant.when"),
    ]
    for index, (rule, grant, said) in enumerate(cases):
        request = ask(store, f"r{index}", rule=rule)
        with pytest.raises(GrantNotAllowed, match=said):
            store.decide(request.id, Approve(), actor="alice", grant=grant)
        assert store.get_request(request.id).status is RequestStatus.PENDING
    request = ask(store, "rej")
    with pytest.raises(GrantNotAllowed, match="goes with an approval"):
        store.decide(request.id, Reject(), actor="alice", grant=thirty)
    with pytest.raises(GrantNotAllowed, match="names no app"):
        store.decide(
            ask(store, "noapp", app=None).id,
            Approve(),
            actor="alice",
            grant=GrantAsk(lifetime=timedelta(minutes=5), scope="app"),
        )
    assert store.list_grants() == []


def test_the_rules_allow_grants_only_where_they_may_be() -> None:
    rules = RuleSet.from_dict(
        {
            "tools": {
                "deploy": {"requires_approval": True, "max_grant": "1h"},
                "pay": {"requires_approval": True, "max_grant": "1h", "quorum": 2},
                "wipe": {"requires_approval": True, "max_grant": "10m"},
            },
            "apps": {
                "strict": {"hitl_required": ["wipe"]},
                "lenient": {"hitl_required": ["wipe"], "grants_for_required": True},
            },
        }
    )
    resolver = Resolver(rules)

    def max_grant(tool: str, app: str | None = None) -> timedelta | None:
        return resolver.explain(tool, None, app, {}).rule.max_grant

    assert max_grant("deploy") == timedelta(hours=1)
    assert max_grant("pay") is None
    assert max_grant("wipe") == timedelta(minutes=10)
    assert max_grant("wipe", "strict") is None
    assert max_grant("wipe", "lenient") == timedelta(minutes=10)
    assert max_grant("other") is None


def test_a_grant_ask_is_checked_as_it_is_read() -> None:
    assert GrantAsk.parse({"minutes": 30}).lifetime == timedelta(minutes=30)
    assert GrantAsk.parse({"lifetime": "2h", "scope": "thread"}).scope == "thread"
    for bad in (
        {},
        {"minutes": 0},
        {"minutes": "30"},
        {"minutes": 5, "scope": "world"},
        {"minutes": 5, "x": 1},
    ):
        with pytest.raises(InvalidInput):
            GrantAsk.parse(bad)


# -- through the server -----------------------------------------------------------------------

SERVER_RULES = RuleSet.from_dict(
    {"tools": {"deploy": {"requires_approval": True, "approvers": ["alice"], "max_grant": "1h"}}}
)


@pytest.fixture
def served(people: Store) -> Iterator[LiveServer]:
    people.replace_rules(SERVER_RULES, actor="test")
    with LiveServer(people) as server:
        yield server


def test_through_the_api_a_grant_is_given_listed_used_and_revoked(served: LiveServer) -> None:
    alice = served.client(served.user("alice"))
    bob = served.client(served.user("bob"))
    bot = served.client(served.user("bot", "agent"))

    def post(call_id: str) -> dict[str, Any]:
        body = {"thread_id": "t", "tool_call_id": call_id, "tool": "deploy", "args": {"env": "prod"}}
        response = bot.post("/v1/requests", json=body)
        assert response.status_code == 201, response.text
        answer: dict[str, Any] = response.json()
        return answer

    first = post("c0")
    assert first["status"] == "pending"
    decided = alice.post(
        f"/v1/requests/{first['id']}/decision", json={"type": "approve", "grant": {"minutes": 30}}
    )
    assert decided.status_code == 200, decided.text
    grant_id = decided.json()["granted_id"]
    listed = alice.get("/v1/grants").json()["grants"]
    assert [(grant["id"], grant["status"], grant["creator"]) for grant in listed] == [
        (grant_id, "active", "bot")
    ]
    assert bot.get("/v1/grants").status_code == 403
    assert bob.get("/v1/grants").json()["grants"] == []  # a person sees the grants they gave
    assert bob.get(f"/v1/grants/{grant_id}").status_code == 404
    root = served.client(served.user("root", "admin"))
    assert [grant["id"] for grant in root.get("/v1/grants").json()["grants"]] == [grant_id]
    covered = post("c1")
    assert (covered["status"], covered["grant_id"]) == ("approved", grant_id)
    assert bob.delete(f"/v1/grants/{grant_id}").status_code == 403
    assert alice.delete(f"/v1/grants/{grant_id}").json()["status"] == "revoked"
    assert post("c2")["status"] == "pending"
    assert alice.get("/v1/grants").json()["grants"] == []
    assert alice.get("/v1/grants", params={"all": "true"}).json()["grants"][0]["status"] == "revoked"


def test_the_api_refuses_a_grant_the_rule_does_not_allow(served: LiveServer) -> None:
    alice = served.client(served.user("alice"))
    bot = served.client(served.user("bot", "agent"))
    body = {"thread_id": "t", "tool_call_id": "c", "tool": "deploy", "args": {}}
    request_id = bot.post("/v1/requests", json=body).json()["id"]
    too_long = alice.post(
        f"/v1/requests/{request_id}/decision", json={"type": "approve", "grant": {"minutes": 90}}
    )
    assert too_long.status_code == 422
    assert "max_grant" in too_long.text
    malformed = alice.post(
        f"/v1/requests/{request_id}/decision", json={"type": "approve", "grant": {"scope": "x"}}
    )
    assert malformed.status_code == 422
    assert served.store.get_request(request_id).status is RequestStatus.PENDING


def test_the_inbox_form_and_card_say_what_the_grant_does(people: Store) -> None:
    store = people
    request = ask(store, "c0")
    payload = decision_payload(request, {"type": "approve", "grant_minutes": "30"})
    assert payload == {"type": "approve", "grant": {"minutes": 30}}
    with pytest.raises(InvalidInput):
        decision_payload(request, {"type": "approve", "grant_minutes": "soon"})
    assert Card(request=request).grant_minutes == 30
    short = ask(store, "c1", rule=replace(RULE, max_grant=timedelta(minutes=10)))
    assert Card(request=short).grant_minutes == 10
    none = ask(store, "c2", rule=RequestRule(approvers=("alice",)))
    assert Card(request=none).grant_minutes is None
    grant_id = granted(store, "c3", app="elsewhere")
    covered = ask(store, "c4", app="elsewhere")
    assert ended_text(covered) == f"Approved by alice, through standing grant {grant_id}"


def test_no_call_asked_after_a_revocation_returns_is_covered(people: Store) -> None:
    """An agent keeps calling while the grant is revoked: every call started after the revocation
    returned is asked (PostgreSQL: the covering transaction holds the grant's row)."""
    store = people
    granted(store)
    covered_some = threading.Event()
    revoked = threading.Event()
    seen: list[tuple[bool, RequestStatus]] = []

    def agent() -> None:
        index = 0
        while sum(after for after, _ in seen) < 5:
            after = revoked.is_set()
            seen.append((after, ask(store, f"loop{index}").status))
            index += 1
            if len(seen) >= 3:
                covered_some.set()

    worker = threading.Thread(target=agent)
    worker.start()
    assert covered_some.wait(30)
    store.revoke_grant(store.list_grants()[0].id, actor="alice")
    revoked.set()
    worker.join(30)
    assert not worker.is_alive()
    assert [status for after, status in seen if after] == [RequestStatus.PENDING] * 5
    assert RequestStatus.APPROVED in [status for after, status in seen if not after]


def test_an_agents_own_rule_cannot_allow_grants(served: LiveServer) -> None:
    assert parse_snapshot({"approvers": ["alice"], "max_grant": 3600}).max_grant is None
    alice = served.client(served.user("alice"))
    bot = served.client(served.user("bot", "agent"))
    body = {
        "thread_id": "t",
        "tool_call_id": "c",
        "tool": "uncovered",
        "args": {},
        "rule": {"approvers": ["alice"], "max_grant": 3600},
    }
    created = bot.post("/v1/requests", json=body)
    assert created.status_code == 201, created.text
    request_id = created.json()["id"]
    refused = alice.post(
        f"/v1/requests/{request_id}/decision", json={"type": "approve", "grant": {"minutes": 5}}
    )
    assert refused.status_code == 422
    assert "allows no standing grants" in refused.text
    assert served.store.get_request(request_id).status is RequestStatus.PENDING


def test_someone_not_an_approver_gives_no_grant(people: Store) -> None:
    store = people
    request = ask(store, "c0")
    with pytest.raises(NotAnApprover):
        store.decide(request.id, Approve(), actor="bob", grant=GrantAsk(lifetime=timedelta(minutes=5)))
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert store.list_grants() == []
    refused = [
        entry for entry in store.audit_entries(request_id=request.id) if entry.action == "decision.refused"
    ]
    assert [entry.actor for entry in refused] == ["bob"]


def test_a_call_a_grant_covers_tells_webhooks_it_was_created_then_decided_and_plans_no_step(
    people: Store,
) -> None:
    store = people
    store.add_webhook("http://127.0.0.1:9/hook", allow_private=True, actor="test")
    rule = replace(RULE, remind=("10m",))
    first = ask(store, "c0", rule=rule)
    assert [step.kind for step in store.steps_of(first.id)] == ["remind"]  # asked: reminders planned
    store.decide(first.id, Approve(), actor="alice", grant=GrantAsk(lifetime=timedelta(minutes=30)))
    covered = ask(store, "c1", rule=rule)
    assert covered.status is RequestStatus.APPROVED and covered.grant_id is not None

    def webhook_events(request_id: str) -> list[str]:
        rows = sorted(store.outbox_for(request_id), key=lambda row: row.id)
        return [row.event for row in rows if row.channel == "webhook"]

    assert webhook_events(first.id) == ["request.created", "request.decided"]
    assert webhook_events(covered.id) == webhook_events(first.id)
    assert [row for row in store.outbox_for(covered.id) if row.channel != "webhook"] == []
    assert store.steps_of(covered.id) == []  # nobody is asked: nothing to remind anyone of
