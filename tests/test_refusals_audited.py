"""Every refusal is audited, once (issue 8, item 15); failed sign-ins are aggregated per source."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff.audit import AuditEntry
from signoff.server import ServerSettings
from signoff.server.refusals import SignInRefusals
from signoff.server.sign_in_limit import SignInLimit
from signoff.store import Store

from .live import LiveServer

ADMIN_ONLY = (
    ("GET", "/v1/users", None),
    ("POST", "/v1/users", {"name": "eve", "role": "admin"}),
    ("POST", "/v1/tokens", {"user": "bot"}),
    ("GET", "/v1/groups", None),
    ("POST", "/v1/groups/dba/members", {"user": "alice"}),
    ("DELETE", "/v1/groups/dba/members/alice", None),
    ("PUT", "/v1/rules", {"tools": {}}),
    ("PUT", "/v1/rules/tool/deploy", {"requires_approval": False}),
    ("PATCH", "/v1/rules/tool/deploy", {"requires_approval": False}),
    ("DELETE", "/v1/rules/tool/deploy", None),
    ("GET", "/v1/audit", None),
    ("GET", "/v1/audit/export", None),
    ("GET", "/v1/audit/verify", None),
)


def ask(client: httpx.Client, call_id: str = "c1", **fields: Any) -> httpx.Response:
    body = {"thread_id": "t1", "tool_call_id": call_id, "tool": "deploy", "args": {}, **fields}
    return client.post("/v1/requests", json=body)


def refusals(store: Store, *, after: int = 0) -> list[AuditEntry]:
    return [entry for entry in store.audit_entries(after=after) if entry.action.endswith("refused")]


@pytest.fixture
def clients(live_server: LiveServer) -> Iterator[dict[str, httpx.Client]]:
    made = {
        "bot": live_server.client(live_server.user("bot", "agent")),
        "rival": live_server.client(live_server.user("rival", "agent")),
        "alice": live_server.client(live_server.user("alice")),
    }
    yield made
    for client in made.values():
        client.close()


def test_each_refusal_the_issue_names_is_audited_once(clients: dict[str, httpx.Client], store: Store) -> None:
    bot, rival, alice = clients["bot"], clients["rival"], clients["alice"]
    request_id = ask(bot).json()["id"]
    start = store.audit_head_seq()
    cases = [
        (
            rival.post(
                f"/v1/requests/{request_id}/decision", json={"type": "approve", "on_behalf": "unattended"}
            ),
            ("decision.refused", "rival", request_id),
        ),
        (
            bot.post(f"/v1/requests/{request_id}/execution", json={"action": "reset"}),
            ("access.refused", "bot", request_id),
        ),
        (ask(alice, "c2"), ("access.refused", "alice", None)),
        (ask(bot, "c1", tool="wire"), ("request.create_refused", "bot", request_id)),
        (alice.post("/v1/threads/t1/cancel", json={}), ("access.refused", "alice", None)),
        (
            alice.post("/v1/memory", json={"scope_key": "k", "fingerprint": "f"}),
            ("access.refused", "alice", None),
        ),
    ]
    for response, _ in cases:
        assert response.status_code in (403, 409), response.text
    got = [(entry.action, entry.actor, entry.request_id) for entry in refusals(store, after=start)]
    assert got == [expected for _, expected in cases]
    reset = refusals(store, after=start)[1]
    assert reset.data["reason"] == "a person decides whether an in-doubt call may run again"
    assert (reset.data["method"], reset.data["path"]) == ("POST", f"/v1/requests/{request_id}/execution")


def test_every_admin_only_refusal_is_audited(clients: dict[str, httpx.Client], store: Store) -> None:
    start = store.audit_head_seq()
    for method, path, body in ADMIN_ONLY:
        response = clients["alice"].request(method, path, json=body)
        assert response.status_code == 403, (method, path)
    got = [(entry.actor, entry.data["method"], entry.data["path"]) for entry in refusals(store, after=start)]
    assert got == [("alice", method, path) for method, path, _ in ADMIN_ONLY]
    assert {entry.data["reason"] for entry in refusals(store, after=start)} == {"alice is not an admin"}


def test_a_refusal_that_its_check_audits_is_not_written_again(
    clients: dict[str, httpx.Client], store: Store
) -> None:
    request_id = ask(clients["bot"], approvers=["bob"]).json()["id"]
    start = store.audit_head_seq()
    assert clients["alice"].get(f"/v1/requests/{request_id}").status_code == 403
    assert (
        clients["alice"].post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code
        == 403
    )
    assert [entry.action for entry in refusals(store, after=start)] == [
        "request.view_refused",
        "decision.refused",
    ]


def test_the_inbox_audits_a_missing_csrf_token_and_an_agent(live_server: LiveServer, store: Store) -> None:
    live_server.user("alice")
    secret, _ = store.issue_credential("session", "alice", actor="test")
    start = store.audit_head_seq()
    with httpx.Client(base_url=live_server.url, cookies={"signoff_session": secret}) as browser:
        assert browser.post("/logout").status_code == 403
    with live_server.client(live_server.user("bot", "agent")) as bot:
        assert bot.get("/history").status_code == 403
    got = [(entry.actor, entry.channel, entry.data["path"]) for entry in refusals(store, after=start)]
    assert got == [("alice", "web", "/logout"), ("bot", "api", "/history")]


def test_failed_sign_ins_are_audited_once_a_minute_per_source_with_their_count(store: Store) -> None:
    unlimited = ServerSettings(
        sweep_interval=0.2, sign_in_limit=SignInLimit(failures=1000)
    )  # see test_sign_in
    with LiveServer(store, unlimited) as server:
        start = store.audit_head_seq()
        with server.client("so_tok_wrong") as stranger:
            for _ in range(30):
                assert stranger.get("/v1/requests").status_code == 401
        with httpx.Client(base_url=server.url) as nobody:
            assert nobody.get("/v1/me").status_code == 401
            assert nobody.get("/", follow_redirects=False).status_code == 303  # a page: not a failed sign-in
        during = [entry for entry in store.audit_entries(after=start) if entry.action == "auth.refused"]
        assert [(entry.actor, entry.data["source"], entry.data["refused"]) for entry in during] == [
            ("anonymous", "127.0.0.1", 1)
        ]
    after_stop = [entry for entry in store.audit_entries(after=start) if entry.action == "auth.refused"]
    assert sum(entry.data["refused"] for entry in after_stop) == 31  # the rest, written at shutdown


def test_the_sign_in_tally_writes_the_first_of_each_window_with_the_count_since() -> None:
    tally = SignInRefusals(window=60, max_sources=2)
    first = tally.note("10.0.0.1", "bad token", channel="api", now=0)
    assert first is not None
    assert first.refused == 1
    assert all(tally.note("10.0.0.1", "bad token", channel="api", now=t) is None for t in range(1, 50))
    later = tally.note("10.0.0.1", "bad token", channel="api", now=61)
    assert later is not None
    assert later.refused == 50
    assert tally.note("10.0.0.2", "x", channel="api", now=62) is not None
    crowded = tally.note("10.0.0.3", "x", channel="api", now=63)  # past max_sources: counted together
    assert crowded is not None
    assert crowded.source == "*"
    assert tally.note("10.0.0.4", "x", channel="api", now=64) is None
    assert {(entry.source, entry.refused) for entry in tally.drain()} == {("*", 1)}
