"""Every admin operation writes exactly ONE audit entry, with the thing changed `before` and
`after` (DESIGN §13): people, groups, agents and tokens (issue 18, part 2), and the operations
that were on main before them (channels and webhooks, a dead letter sent again, rule changes and
a revert). Each case sets up what it needs through the API, then the one operation is made and
the log is read: one new entry, the action named, before and after present and different.
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import httpx
import pytest

from signoff.store import Store

from .channel_admin_support import SETTINGS, bridge
from .live import LiveServer

Prepare = Callable[[httpx.Client, Store], Callable[[], httpx.Response]]
"""Sets up what the operation needs; returns the operation."""
NOWHERE = "http://127.0.0.1:9/hook"  # a closed loopback port: nothing is ever delivered


@dataclass(frozen=True)
class Operation:
    action: str
    prepare: Prepare


def _call(admin: httpx.Client, method: str, path: str, json: object = None) -> Callable[[], httpx.Response]:
    return lambda: admin.request(method, path, json=json)


def _made(response: httpx.Response) -> httpx.Response:
    assert response.status_code < 300, response.text
    return response


def _then(first: httpx.Response, operation: Callable[[], httpx.Response]) -> Callable[[], httpx.Response]:
    """`operation`, once `first` (its setup) succeeded."""
    _made(first)
    return operation


def _webhook(admin: httpx.Client) -> str:
    made = _made(admin.post("/v1/webhooks", json={"url": NOWHERE, "events": ["request.created"]}))
    webhook_id: str = made.json()["id"]
    return webhook_id


def _channel(admin: httpx.Client) -> None:
    _made(admin.post("/v1/channels", json=bridge(NOWHERE)))


def _agent_token(admin: httpx.Client) -> str:
    made = _made(admin.post("/v1/agents", json={"name": "bot"}))
    token_id: str = made.json()["token"]["id"]
    return token_id


def _dead_letter(admin: httpx.Client, store: Store) -> Callable[[], httpx.Response]:
    webhook_id = _webhook(admin)
    with httpx.Client(
        base_url=str(admin.base_url), headers={"Authorization": f"Bearer {_agent_secret(admin)}"}
    ) as bot:
        body = {"thread_id": "t", "tool_call_id": "c1", "tool": "deploy", "args": {}}
        _made(bot.post("/v1/requests", json=body))
    _made(admin.post(f"/v1/webhooks/{webhook_id}/disable"))  # what waits for it is dead-lettered
    _made(admin.post(f"/v1/webhooks/{webhook_id}/enable"))
    [dead] = [row for row in store.dead_letters() if row.to_dict()["target"] == webhook_id]
    return _call(admin, "POST", f"/v1/outbox/{dead.to_dict()['id']}/retry")


def _agent_secret(admin: httpx.Client) -> str:
    made = _made(admin.post("/v1/agents", json={"name": "asker"}))
    secret: str = made.json()["token"]["token"]
    return secret


def _revert(admin: httpx.Client, store: Store) -> Callable[[], httpx.Response]:
    _made(admin.put("/v1/rules/tool/deploy", json={"requires_approval": True}))
    [change] = list(store.audit_entries(action="rules.set"))
    return _call(admin, "POST", f"/v1/rules/history/{change.seq}/revert")


OPERATIONS = {
    # people, groups, agents, tokens
    "add a person": Operation("user.added", lambda a, s: _call(a, "POST", "/v1/users", {"name": "erin"})),
    "disable a person": Operation(
        "user.updated", lambda a, s: _call(a, "PATCH", "/v1/users/alice", {"disabled": True})
    ),
    "enable a person": Operation(
        "user.updated",
        lambda a, s: _then(
            a.patch("/v1/users/alice", json={"disabled": True}),
            _call(a, "PATCH", "/v1/users/alice", {"disabled": False}),
        ),
    ),
    "change a role": Operation(
        "user.updated", lambda a, s: _call(a, "PATCH", "/v1/users/alice", {"role": "admin"})
    ),
    "change a name and email": Operation(
        "user.updated",
        lambda a, s: _call(
            a, "PATCH", "/v1/users/alice", {"display_name": "Alice", "email": "a@example.com"}
        ),
    ),
    "add a group member": Operation(
        "group.member_added", lambda a, s: _call(a, "POST", "/v1/groups/ops/members", {"user": "alice"})
    ),
    "remove a group member": Operation(
        "group.member_removed",
        lambda a, s: _then(
            a.post("/v1/groups/ops/members", json={"user": "alice"}),
            _call(a, "DELETE", "/v1/groups/ops/members/alice"),
        ),
    ),
    "make an agent": Operation("agent.created", lambda a, s: _call(a, "POST", "/v1/agents", {"name": "bot"})),
    "make a token": Operation("token.issued", lambda a, s: _call(a, "POST", "/v1/tokens", {"user": "alice"})),
    "revoke a token": Operation(
        "credential.revoked", lambda a, s: _call(a, "DELETE", f"/v1/tokens/{_agent_token(a)}")
    ),
    # channels and webhooks
    "add a channel": Operation(
        "channel.added", lambda a, s: _call(a, "POST", "/v1/channels", bridge(NOWHERE))
    ),
    "edit a channel": Operation(
        "channel.changed",
        lambda a, s: _channel(a) or _call(a, "PATCH", "/v1/channels/wechat", {"version": 1, "timeout": 5}),
    ),
    "disable a channel": Operation(
        "channel.disabled", lambda a, s: _channel(a) or _call(a, "POST", "/v1/channels/wechat/disable")
    ),
    "enable a channel": Operation(
        "channel.enabled",
        lambda a, s: (
            _channel(a)
            or _then(a.post("/v1/channels/wechat/disable"), _call(a, "POST", "/v1/channels/wechat/enable"))
        ),
    ),
    "add a webhook": Operation(
        "webhook.added", lambda a, s: _call(a, "POST", "/v1/webhooks", {"url": NOWHERE})
    ),
    "edit a webhook": Operation(
        "webhook.changed",
        lambda a, s: _call(a, "PATCH", f"/v1/webhooks/{_webhook(a)}", {"description": "ops"}),
    ),
    "disable a webhook": Operation(
        "webhook.disabled", lambda a, s: _call(a, "POST", f"/v1/webhooks/{_webhook(a)}/disable")
    ),
    "enable a webhook": Operation(
        "webhook.enabled",
        lambda a, s: (
            lambda hook: _then(
                a.post(f"/v1/webhooks/{hook}/disable"), _call(a, "POST", f"/v1/webhooks/{hook}/enable")
            )
        )(_webhook(a)),
    ),
    "rotate a webhook's secret": Operation(
        "webhook.rotated",
        lambda a, s: _call(a, "POST", f"/v1/webhooks/{_webhook(a)}/rotate", {"keep_old": True}),
    ),
    "remove a webhook": Operation(
        "webhook.removed", lambda a, s: _call(a, "DELETE", f"/v1/webhooks/{_webhook(a)}")
    ),
    "send a dead letter again": Operation("delivery.retried", _dead_letter),
    # rules
    "set a rule": Operation(
        "rules.set", lambda a, s: _call(a, "PUT", "/v1/rules/tool/deploy", {"requires_approval": True})
    ),
    "patch a rule": Operation(
        "rules.set",
        lambda a, s: _then(
            a.put("/v1/rules/tool/deploy", json={"requires_approval": True}),
            _call(a, "PATCH", "/v1/rules/tool/deploy", {"requires_approval": False}),
        ),
    ),
    "delete a rule": Operation(
        "rules.deleted",
        lambda a, s: _then(
            a.put("/v1/rules/tool/deploy", json={"requires_approval": True}),
            _call(a, "DELETE", "/v1/rules/tool/deploy"),
        ),
    ),
    "replace all rules": Operation(
        "rules.imported",
        lambda a, s: _call(a, "PUT", "/v1/rules", {"tools": {"deploy": {"requires_approval": True}}}),
    ),
    "revert a rule change": Operation("rules.reverted", _revert),
}


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    store.add_user("alice", role="member", actor="test")
    # no delivery worker: what waits stays waiting, so a disabled webhook's event is dead-lettered
    # at once (a worker could hold it then, and retry it for minutes)
    settings = replace(SETTINGS, outbox=replace(SETTINGS.outbox, enabled=False))
    with LiveServer(store, settings) as live:
        yield live


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_every_admin_operation_writes_one_audit_entry_with_before_and_after(
    server: LiveServer, name: str
) -> None:
    operation = OPERATIONS[name]
    store = server.store
    with server.client(server.user("root", "admin")) as admin:
        run = operation.prepare(admin, store)
        last = max((entry.seq for entry in store.audit_entries()), default=0)
        answer = run()
    assert answer.status_code < 300, answer.text
    new = [entry for entry in store.audit_entries(after=last) if entry.action != "access.refused"]
    assert [entry.action for entry in new] == [operation.action], [(e.action, e.data) for e in new]
    [entry] = new
    assert entry.actor == "root" and entry.channel == "api"
    assert "before" in entry.data and "after" in entry.data, entry.data
    assert entry.data["before"] != entry.data["after"]
