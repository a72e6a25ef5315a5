"""People, groups, agents and tokens through the API (issue 18, part 2), SQLite and PostgreSQL:
admins only; each change one audit entry with before and after; bad input (an unknown person, a
bad role, a non-admin caller, the same change twice, the last admin's role) is a clear 4xx that
changes nothing; sign-ins and token use are recorded (a token's use written at most once a
minute); `/openapi.json` documents the endpoints."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff import Gate, Pending, RuleSet, Scope, ToolCall
from signoff.client import Client
from signoff.errors import Conflict, NotAuthenticated
from signoff.server.serve import login_link
from signoff.store import Store

from .live import LiveServer

RULES = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    store.add_user("alice", role="member", actor="test")
    with LiveServer(store) as live:
        yield live


@pytest.fixture
def admin(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("root", "admin")) as client:
        yield client


@pytest.fixture
def member(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("alice")) as client:
        yield client


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    return response.status_code, error["type"], error["message"]


def audit_count(store: Store) -> int:
    return len(list(store.audit_entries()))


def snapshot(store: Store) -> tuple[Any, ...]:
    """What an admin change could change (a token's last use is the caller's own, not a change)."""
    tokens = [{**token.to_dict(), "used_at": None} for token in store.list_credentials("token")]
    return ([user.to_dict() for user in store.list_users()], store.group_members(), tokens)


def test_a_person_is_added_disabled_enabled_regrouped_and_shown(
    server: LiveServer, admin: httpx.Client
) -> None:
    store = server.store
    assert admin.post("/v1/users", json={"name": "erin", "email": "erin@example.com"}).status_code == 201
    changed = admin.patch("/v1/users/erin", json={"disabled": True, "display_name": "Erin"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["disabled"] is True and changed.json()["display_name"] == "Erin"
    assert admin.patch("/v1/users/erin", json={"disabled": False}).json()["disabled"] is False
    assert admin.patch("/v1/users/erin", json={"role": "admin"}).json()["role"] == "admin"
    assert admin.post("/v1/groups/ops/members", json={"user": "erin"}).status_code == 201
    assert admin.get("/v1/groups").json() == {"ops": ["erin"]}
    shown = admin.get("/v1/users/erin").json()
    assert shown["groups"] == ["ops"] and shown["role"] == "admin" and shown["email"] == "erin@example.com"
    assert shown["tokens"] == [] and shown["requests"] == [] and shown["decisions"] == []
    assert admin.delete("/v1/groups/ops/members/erin").json() == {"removed": True}
    assert admin.get("/v1/groups").json() == {}

    erin = [entry for entry in store.audit_entries() if entry.data.get("user") == "erin"]
    assert [entry.action for entry in erin] == [
        "user.added",
        "user.updated",
        "user.updated",
        "user.updated",
        "group.member_added",
        "group.member_removed",
    ]
    assert all(entry.actor == "root" and entry.channel == "api" for entry in erin)
    disabled = erin[1].data
    assert disabled["before"]["disabled"] is False and disabled["after"]["disabled"] is True
    assert disabled["before"]["display_name"] is None and disabled["after"]["display_name"] == "Erin"
    assert erin[4].data["before"] == [] and erin[4].data["after"] == ["erin"]
    assert erin[5].data["before"] == ["erin"] and erin[5].data["after"] == []


def test_a_disabled_person_is_refused_at_once(server: LiveServer, admin: httpx.Client) -> None:
    secret = server.user("dora")
    with server.client(secret) as dora:
        assert dora.get("/v1/me").status_code == 200
        assert admin.patch("/v1/users/dora", json={"disabled": True}).status_code == 200
        assert dora.get("/v1/me").status_code == 401  # not after the caller cache's seconds
        assert admin.patch("/v1/users/dora", json={"disabled": False}).status_code == 200
        assert dora.get("/v1/me").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "says"),
    [
        ("GET", "/v1/users/ghost", None, 404, "no user named 'ghost'"),
        ("PATCH", "/v1/users/ghost", {"disabled": True}, 404, "no user named 'ghost'"),
        ("PATCH", "/v1/users/alice", {"role": "owner"}, 422, "role"),
        ("PATCH", "/v1/users/alice", {"disabled": "maybe"}, 422, "disabled"),
        ("PATCH", "/v1/users/alice", {"colour": "red"}, 422, "colour"),
        ("PATCH", "/v1/users/alice", {"disabled": False}, 409, "alice is already enabled"),
        ("PATCH", "/v1/users/alice", {"role": "member"}, 409, "nothing changed"),
        ("PATCH", "/v1/users/root", {"role": "member"}, 409, "root is the last enabled admin"),
        ("PATCH", "/v1/users/root", {"disabled": True}, 409, "root is the last enabled admin"),
        ("POST", "/v1/users", {"name": "alice"}, 409, "user 'alice' already exists"),
        ("POST", "/v1/users", {"name": "erin", "role": "owner"}, 422, "role"),
        ("POST", "/v1/users", {"name": "group:x"}, 422, "invalid user name"),
        ("POST", "/v1/groups/ops/members", {"user": "ghost"}, 404, "no user named 'ghost'"),
        ("POST", "/v1/groups/o%20ps/members", {"user": "alice"}, 422, "invalid group name"),
        ("DELETE", "/v1/groups/ops/members/alice", None, 409, "alice is not in group ops"),
        ("DELETE", "/v1/tokens/tok_nope", None, 404, "no token 'tok_nope'"),
        ("POST", "/v1/agents", {"name": "alice"}, 409, "user 'alice' already exists"),
        ("POST", "/v1/agents", {"name": "bot", "expires_in": "9999d"}, 422, "at most"),
        ("POST", "/v1/agents", {"name": "bot", "expires_in": "soon"}, 422, "soon"),
        ("POST", "/v1/agents", {"name": "bad name"}, 422, "invalid agent name"),
    ],
)
def test_bad_input_is_refused_clearly_and_changes_nothing(
    server: LiveServer,
    admin: httpx.Client,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    status: int,
    says: str,
) -> None:
    store = server.store
    before, entries = snapshot(store), audit_count(store)
    answer = admin.request(method, path, json=body)
    assert answer.status_code == status, answer.text
    assert says in answer.text
    assert snapshot(store) == before
    assert audit_count(store) == entries


def test_the_same_change_twice_is_refused_the_second_time(server: LiveServer, admin: httpx.Client) -> None:
    store = server.store
    twice = [
        ("PATCH", "/v1/users/alice", {"disabled": True}),
        ("POST", "/v1/groups/ops/members", {"user": "alice"}),
    ]
    for method, path, body in twice:
        assert admin.request(method, path, json=body).status_code in (200, 201)
        before, entries = snapshot(store), audit_count(store)
        again = admin.request(method, path, json=body)
        assert again.status_code == 409 and "nothing changed" in error_of(again)[2]
        assert snapshot(store) == before and audit_count(store) == entries
    token = admin.post("/v1/tokens", json={"user": "alice"}).json()
    assert admin.delete(f"/v1/tokens/{token['id']}").json() == {"revoked": True}
    entries = audit_count(store)
    again = admin.delete(f"/v1/tokens/{token['id']}")
    assert error_of(again) == (409, "Conflict", f"token {token['id']} is already revoked: nothing changed")
    assert audit_count(store) == entries


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/users", None),
        ("GET", "/v1/users/alice", None),
        ("PATCH", "/v1/users/alice", {"role": "admin"}),
        ("PATCH", "/v1/users/root", {"disabled": True}),
        ("POST", "/v1/users", {"name": "erin"}),
        ("GET", "/v1/agents", None),
        ("POST", "/v1/agents", {"name": "bot"}),
        ("GET", "/v1/groups", None),
        ("POST", "/v1/groups/ops/members", {"user": "alice"}),
        ("DELETE", "/v1/groups/ops/members/root", None),
    ],
)
def test_a_member_is_refused_with_403_and_nothing_changes(
    server: LiveServer,
    admin: httpx.Client,
    member: httpx.Client,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    store = server.store
    admin.post("/v1/groups/ops/members", json={"user": "root"})
    before = snapshot(store)
    changes = [entry.seq for entry in store.audit_entries() if entry.action != "access.refused"]
    answer = member.request(method, path, json=body)
    assert error_of(answer) == (403, "PermissionDenied", "alice is not an admin")
    assert snapshot(store) == before
    assert [entry.seq for entry in store.audit_entries() if entry.action != "access.refused"] == changes


def test_an_agent_is_made_with_a_token_that_works_until_revoked(
    server: LiveServer, admin: httpx.Client
) -> None:
    store = server.store
    made = admin.post("/v1/agents", json={"name": "deployer", "label": "ci", "expires_in": "1d"})
    assert made.status_code == 201, made.text
    agent, token = made.json()["agent"], made.json()["token"]
    assert agent["role"] == "agent" and token["user"] == "deployer" and token["label"] == "ci"
    assert token["token"].startswith("so_tok_") and token["state"] == "active"
    [created] = [entry for entry in store.audit_entries() if entry.data.get("user") == "deployer"]
    assert created.action == "agent.created" and created.data["before"] is None
    assert created.data["after"]["token"]["id"] == token["id"] and token["token"] not in str(created.data)

    with Client(server.url, token["token"], retry_for=0) as client:
        asked = Gate(client, rules=RULES).submit(
            ToolCall(name="deploy", args={}, id="c1"), Scope(thread_id="t")
        )
        assert isinstance(asked, Pending)
        listed = admin.get("/v1/agents").json()
        assert [row["name"] for row in listed] == ["deployer"] and listed[0]["last_seen"] is not None
        shown = admin.get("/v1/users/deployer").json()
        assert [row["id"] for row in shown["requests"]] == [asked.request.id]
        assert shown["requests"][0]["status"] == "pending" and shown["requests"][0]["decided_by"] is None
        [used] = shown["tokens"]
        assert used["used_at"] is not None and "token" not in used  # never the secret again
        assert admin.delete(f"/v1/tokens/{token['id']}").json() == {"revoked": True}
        with pytest.raises(NotAuthenticated) as refused:
            client.me()
        assert refused.value.status_code == 401


def test_a_sign_in_by_login_link_and_last_seen_are_recorded(server: LiveServer, admin: httpx.Client) -> None:
    store = server.store
    assert admin.get("/v1/users/alice").json()["sign_in"] is None
    link = login_link(store, server.settings, "alice")
    with httpx.Client(timeout=30) as browser:
        signed = browser.post(server.url + "/login", data={"token": link.rsplit("token=", 1)[-1]})
        assert signed.status_code == 303, signed.text
    shown = admin.get("/v1/users/alice").json()
    assert shown["sign_in"]["method"] == "link"
    assert shown["last_seen"] is not None and shown["last_seen"] >= shown["sign_in"]["at"]
    [alice] = [row for row in admin.get("/v1/users").json() if row["name"] == "alice"]
    assert alice["sign_in"] == shown["sign_in"]


def test_a_token_use_is_written_at_most_once_a_minute(store: Store) -> None:
    store.add_user("bot", role="agent", actor="test")
    secret, token = store.issue_credential("token", "bot", actor="test")
    assert store.authenticate(secret) is not None
    first = store.get_credential(token.id)
    assert first is not None and first.used_at is not None
    for _ in range(3):
        assert store.authenticate(secret) is not None
    again = store.get_credential(token.id)
    assert again is not None and again.used_at == first.used_at  # not rewritten within the minute
    assert store.last_uses()["bot"] == first.used_at


def test_record_sign_in_keeps_the_last_one(store: Store) -> None:
    store.add_user("olga", role="member", actor="test")
    store.record_sign_in("olga", "link")
    store.record_sign_in("olga", "oidc")
    found = store.last_sign_ins()["olga"]
    assert found.method == "oidc"


def test_the_client_does_the_same_as_the_api(server: LiveServer) -> None:
    with Client(server.url, server.user("root", "admin"), retry_for=0) as client:
        client.add_person("erin", role="member")
        assert client.change_person("erin", disabled=True)["disabled"] is True
        with pytest.raises(Conflict):
            client.change_person("erin", disabled=True)
        client.join_group("ops", "erin")
        assert client.group_members() == {"ops": ["erin"]}
        client.leave_group("ops", "erin")
        made = client.create_agent("bot", expires_in="1h")
        assert made["token"]["token"].startswith("so_tok_")
        assert client.person("bot")["tokens"][0]["id"] == made["token"]["id"]
        client.revoke_token(made["token"]["id"])
        assert [row["name"] for row in client.agents()] == ["bot"]
        assert {row["name"] for row in client.people()} == {"alice", "bot", "erin", "root"}


def test_openapi_documents_the_people_endpoints(server: LiveServer) -> None:
    with server.client() as anyone:
        paths = anyone.get("/openapi.json").json()["paths"]
    for path, method in (
        ("/v1/users/{name}", "get"),
        ("/v1/users/{name}", "patch"),
        ("/v1/agents", "get"),
        ("/v1/agents", "post"),
        ("/v1/groups/{group}/members", "post"),
        ("/v1/groups/{group}/members/{member}", "delete"),
    ):
        operation = paths[path][method]
        assert operation["summary"] and operation["tags"] == ["identity"], (path, method)
    patch = paths["/v1/users/{name}"]["patch"]["requestBody"]["content"]["application/json"]["schema"]
    assert patch["$ref"].endswith("UserPatchBody")


@pytest.mark.parametrize(
    ("method", "path", "form"),
    [
        ("GET", "/admin/people", None),
        ("GET", "/admin/people/alice", None),
        ("POST", "/admin/people", {"name": "erin"}),
        ("POST", "/admin/people/root/disable", {}),
        ("POST", "/admin/people/groups", {"group": "ops", "user": "alice"}),
        ("GET", "/admin/agents", None),
        ("POST", "/admin/agents", {"name": "bot"}),
    ],
)
def test_the_pages_refuse_a_member_and_change_nothing(
    server: LiveServer, admin: httpx.Client, member: httpx.Client, method: str, path: str, form: Any
) -> None:
    store = server.store
    before = snapshot(store)
    answer = member.request(method, path, data=form)
    assert answer.status_code == 403 and "alice is not an admin" in answer.text
    assert snapshot(store) == before
    [refusal] = [
        entry for entry in store.audit_entries(action="access.refused") if entry.data.get("path") == path
    ]
    assert refusal.actor == "alice"


def test_a_page_form_with_bad_input_says_why_and_changes_nothing(
    server: LiveServer, admin: httpx.Client
) -> None:
    store = server.store
    before, entries = snapshot(store), audit_count(store)
    for path, form, says in (
        ("/admin/people", {"name": "alice"}, "user &#39;alice&#39; already exists"),
        ("/admin/people/ghost/disable", {}, "no user named &#39;ghost&#39;"),
        ("/admin/people/alice/role", {"role": "owner"}, "unknown role &#39;owner&#39;"),
        ("/admin/people/root/disable", {}, "root is the last enabled admin"),
        ("/admin/people/alice/enable", {}, "alice is already enabled"),
        ("/admin/people/groups", {"group": "ops", "user": "ghost"}, "no user named &#39;ghost&#39;"),
        ("/admin/agents", {"name": "bot", "expires_in": "soon"}, "soon"),
        ("/admin/agents/tokens/revoke", {"token": "tok_nope"}, "no token &#39;tok_nope&#39;"),
    ):
        answer = admin.post(path, data=form)
        assert answer.status_code in (404, 409, 422), (path, answer.status_code)
        assert 'role="alert"' in answer.text and says in answer.text, (path, answer.text[-800:])
    assert snapshot(store) == before and audit_count(store) == entries


def test_a_persons_page_shows_what_waits_for_them_and_what_they_decided(
    server: LiveServer, admin: httpx.Client, member: httpx.Client
) -> None:
    with server.client(server.user("bot", "agent")) as bot:
        body = {"thread_id": "t", "tool": "deploy", "args": {}, "rule": {"approvers": ["alice"]}}
        first = bot.post("/v1/requests", json={**body, "tool_call_id": "c1"}).json()["id"]
        second = bot.post("/v1/requests", json={**body, "tool_call_id": "c2"}).json()["id"]
    shown = admin.get("/v1/users/alice").json()
    assert [row["id"] for row in shown["waiting"]] == [second, first] and shown["decisions"] == []
    assert member.post(f"/v1/requests/{first}/decision", json={"type": "approve"}).status_code == 200
    shown = admin.get("/v1/users/alice").json()
    assert [row["id"] for row in shown["waiting"]] == [second]
    assert [(row["request_id"], row["type"]) for row in shown["decisions"]] == [(first, "approve")]
    agent = admin.get("/v1/users/bot").json()
    decided = {row["id"]: row for row in agent["requests"]}
    assert decided[first]["status"] == "approved" and decided[first]["decided_by"] == "alice"
    assert decided[first]["decided_at"] is not None and decided[second]["status"] == "pending"
    page = admin.get("/admin/agents/bot").text
    assert first in page and "approved" in page and "alice" in page
    person = admin.get("/admin/people/alice").text
    assert "Waiting for alice" in person and second in person


def test_an_unchanged_update_outside_the_admin_faces_writes_nothing(store: Store) -> None:
    """A sign-in that refreshes a person's details (OIDC) may give what is already there: nothing
    is written or audited, and it is no error (only an admin's change says "nothing changed")."""
    store.add_user("olga", role="member", email="olga@example.com", actor="test")
    entries = audit_count(store)
    same = store.update_user("olga", email="olga@example.com", role="member", actor="olga", channel="web")
    assert same.email == "olga@example.com" and audit_count(store) == entries
    with pytest.raises(Conflict):
        store.update_user("olga", email="olga@example.com", actor="root", refuse_unchanged=True)
    assert audit_count(store) == entries
