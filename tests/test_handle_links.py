"""Handle links decide for their own person only (issue 17, item 4): a handle used in a browser
signed in as somebody else (alice's forwarded mail link, opened by bob) shows and decides
nothing, and a decision posted from another site's page is refused as `/login` refuses one.
Both refusals are clear pages, and audited."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape

import httpx
import pytest

from signoff.requests import RequestStatus
from signoff.store import Store

from .live import LiveServer
from .test_inbox import Person, ask, make_handle


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    with LiveServer(sqlite_store) as live:
        yield live


@pytest.fixture
def people(server: LiveServer) -> Iterator[tuple[httpx.Client, Person, Person]]:
    alice, bob = Person(server, "alice"), Person(server, "bob")
    with server.client(server.user("bot", "agent")) as agent:
        yield agent, alice, bob
    alice.close()
    bob.close()


def refusals(store: Store, request_id: str) -> list[tuple[str, str, str]]:
    return [
        (entry.action, entry.actor, entry.data["reason"])
        for entry in store.audit_entries(request_id=request_id)
        if entry.action.endswith("refused")
    ]


def test_a_handle_in_another_persons_session_is_refused_and_audited(
    server: LiveServer, people: tuple[httpx.Client, Person, Person]
) -> None:
    agent, alice, bob = people
    request_id = ask(agent, "c1", approvers=["alice", "bob"])
    handle = make_handle(server, alice, request_id)  # mailed to alice, forwarded to bob
    for response in (bob.client.get(handle), bob.client.post(handle, data={"type": "approve"})):
        assert response.status_code == 403
        assert (
            "This link was made for alice, but this browser is signed in to signoff as bob" in response.text
        )
        assert "Nothing happens until you press a button" not in response.text  # no card, no buttons
    request = server.store.get_request(request_id)
    assert request.status is RequestStatus.PENDING
    assert request.decision is None
    reasons = refusals(server.store, request_id)
    assert [(action, actor) for action, actor, _ in reasons] == [("access.refused", "bob")] * 2
    [entry, _] = [
        e for e in server.store.audit_entries(request_id=request_id) if e.action == "access.refused"
    ]
    assert entry.data["holder"] == "alice"
    assert "so_hdl_" not in str(entry.data)  # the secret never reaches the log
    mine = alice.client.post(handle, data={"type": "approve"})  # in alice's own session it works
    assert mine.status_code == 200, mine.text
    decided = server.store.get_request(request_id)
    assert decided.decision is not None and decided.decision.actor == "alice"


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "https://evil.example"},
        {"Referer": "https://evil.example/page"},
    ],
    ids=["sec-fetch-site", "origin", "referer"],
)
def test_a_decision_posted_from_another_site_is_refused_and_audited(
    server: LiveServer, people: tuple[httpx.Client, Person, Person], headers: dict[str, str]
) -> None:
    agent, alice, _ = people
    request_id = ask(agent, "c1", approvers=["alice"])
    handle = make_handle(server, alice, request_id)
    with httpx.Client(base_url=server.url) as browser:
        assert browser.get(handle, headers=headers).status_code == 200  # showing decides nothing
        refused = browser.post(handle, data={"type": "approve"}, headers=headers)
        assert refused.status_code == 403
        assert "sent from another site's page, so it was refused: nothing was decided" in unescape(
            refused.text
        )
        assert server.store.get_request(request_id).status is RequestStatus.PENDING
        own = {"Origin": server.url, "Sec-Fetch-Site": "same-origin"}
        assert browser.post(handle, data={"type": "approve"}, headers=own).status_code == 200
    assert [actor for _, actor, _ in refusals(server.store, request_id)] == ["alice"]
    assert server.store.get_request(request_id).status is RequestStatus.APPROVED


def test_a_sign_in_posted_from_another_site_is_audited(server: LiveServer) -> None:
    start = server.store.audit_head_seq()
    with httpx.Client(base_url=server.url) as browser:
        refused = browser.post(
            "/login", data={"token": "so_log_whatever"}, headers={"Origin": "https://evil.example"}
        )
    assert refused.status_code == 403
    [entry] = [e for e in server.store.audit_entries(after=start) if e.action == "access.refused"]
    assert entry.data["origin"] == "https://evil.example"
