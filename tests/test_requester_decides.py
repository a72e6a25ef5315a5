"""Who decides when a rule names no approvers (issue 17, item 3): a request made for a requester
is theirs alone, wherever it is decided (API, inbox, handle and mail links, chat callbacks,
AG-UI, the CLI locally and against a server); a request without a requester stays any person's,
never an agent's. `explain` says which applies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace

import httpx
import pytest
from typer.testing import CliRunner

from signoff import Approve, NotAnApprover
from signoff.channels import ChannelRegistry
from signoff.channels.recording import RecordingChannel
from signoff.cli import app
from signoff.decision_checks import may_decide
from signoff.requests import RequestStatus
from signoff.rules.effective import RequestRule
from signoff.server import ServerSettings
from signoff.store import Store

from .agui.support import interrupts, run, run_body
from .conftest import url_for
from .live import LiveServer
from .test_channel_inbound import SECRET, callback
from .test_inbox import Person


@dataclass
class Scene:
    server: LiveServer
    store: Store
    bot: httpx.Client
    alice_token: str
    carol_token: str

    def ask(self, call_id: str, *, requester: str | None = "carol") -> str:
        body = {"thread_id": "t", "tool_call_id": call_id, "tool": "deploy", "args": {"env": "prod"}}
        if requester is not None:
            body["requester"] = requester
        response = self.bot.post("/v1/requests", json=body)
        assert response.status_code == 201, response.text
        request_id: str = response.json()["id"]
        return request_id

    def status(self, request_id: str) -> RequestStatus:
        return self.store.get_request(request_id).status


@pytest.fixture
def chat() -> RecordingChannel:
    return RecordingChannel("chat", secret=SECRET)


@pytest.fixture
def scene(store: Store, chat: RecordingChannel) -> Iterator[Scene]:
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(store, ServerSettings(sweep_interval=0.2), channels=registry) as server:
        alice, carol = server.user("alice"), server.user("carol")
        store.set_address("alice", "recording", "U-ALICE", actor="test")
        store.set_address("carol", "recording", "U-CAROL", actor="test")
        with server.client(server.user("bot", "agent")) as bot:
            yield Scene(server, store, bot, alice, carol)


def refusals(store: Store, request_id: str) -> list[tuple[str, str]]:
    return [
        (entry.action, entry.actor)
        for entry in store.audit_entries(request_id=request_id)
        if entry.action.endswith("refused")
    ]


def test_the_request_names_its_requester_and_only_they_see_and_decide_it(scene: Scene) -> None:
    request_id = scene.ask("api")
    request = scene.store.get_request(request_id)
    assert request.approvers == ("carol",)
    with scene.server.client(scene.alice_token) as alice, scene.server.client(scene.carol_token) as carol:
        assert [item["id"] for item in alice.get("/v1/requests").json()["items"]] == []
        assert alice.get(f"/v1/requests/{request_id}").status_code == 403
        refused = alice.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
        assert refused.status_code == 403, refused.text
        assert scene.status(request_id) is RequestStatus.PENDING
        assert [item["id"] for item in carol.get("/v1/requests").json()["items"]] == [request_id]
        assert carol.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code == 200
    assert scene.status(request_id) is RequestStatus.APPROVED
    assert ("decision.refused", "alice") in refusals(scene.store, request_id)


def test_without_a_requester_any_person_decides_never_an_agent(scene: Scene) -> None:
    request_id = scene.ask("anyone", requester=None)
    assert scene.store.get_request(request_id).approvers == ()
    refused = scene.bot.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
    assert refused.status_code == 403
    with scene.server.client(scene.alice_token) as alice:
        assert alice.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code == 200


def test_the_inbox_and_handle_links(scene: Scene) -> None:
    by_card, by_link = scene.ask("card"), scene.ask("link")
    alice = Person(scene.server, "alice")
    try:
        page = alice.decide(by_card, type="approve")
        assert page.status_code == 403
        assert scene.status(by_card) is RequestStatus.PENDING
        secret, _ = scene.store.issue_credential("handle", "alice", request_id=by_link, actor="test")
        assert alice.client.get(f"/h/{secret}").status_code == 404
        with httpx.Client(base_url=scene.server.url) as stranger:  # a mail link, opened anywhere
            assert stranger.post(f"/h/{secret}", data={"type": "approve"}).status_code == 404
        assert scene.status(by_link) is RequestStatus.PENDING
    finally:
        alice.close()
    carol = Person(scene.server, "carol")
    try:
        assert carol.decide(by_card, type="approve").status_code == 200
    finally:
        carol.close()
    assert scene.status(by_card) is RequestStatus.APPROVED


def test_chat_callbacks(scene: Scene) -> None:
    request_id = scene.ask("chat")
    payload = {"request_id": request_id, "decision": {"type": "approve"}}
    refused = callback(scene.server, {"sender": "U-ALICE", **payload})
    assert refused.json()["ok"] is False, refused.text
    assert scene.status(request_id) is RequestStatus.PENDING
    assert callback(scene.server, {"sender": "U-CAROL", **payload}).json()["ok"] is True
    assert scene.status(request_id) is RequestStatus.APPROVED


def test_ag_ui_shows_the_request_to_its_requester_only(scene: Scene) -> None:
    request_id = scene.ask("agui")

    def shown(token: str) -> list[str]:
        found = interrupts(run(scene.server, token, run_body()))
        return [item.metadata["signoff"]["request_id"] for item in found]

    assert request_id not in shown(scene.alice_token)
    assert request_id in shown(scene.carol_token)


def test_the_cli_locally_and_against_the_server(scene: Scene) -> None:
    local_id, remote_id = scene.ask("cli-local"), scene.ask("cli-remote")
    local = CliRunner(env={"SIGNOFF_DB": url_for(scene.store), "SIGNOFF_URL": None, "COLUMNS": "200"})
    refused = local.invoke(app, ["approve", local_id, "--as", "alice"])
    assert refused.exit_code == 1
    assert f"alice is not an approver of request {local_id}" in refused.stderr
    remote = CliRunner(env={"SIGNOFF_URL": scene.server.url, "SIGNOFF_TOKEN": scene.alice_token})
    refused = remote.invoke(app, ["approve", remote_id])
    assert refused.exit_code == 1
    assert "not an approver" in refused.stderr
    assert scene.status(local_id) is scene.status(remote_id) is RequestStatus.PENDING
    assert local.invoke(app, ["approve", local_id, "--as", "carol"]).exit_code == 0
    remote_carol = CliRunner(env={"SIGNOFF_URL": scene.server.url, "SIGNOFF_TOKEN": scene.carol_token})
    assert remote_carol.invoke(app, ["approve", remote_id]).exit_code == 0
    assert scene.status(local_id) is scene.status(remote_id) is RequestStatus.APPROVED


def test_a_request_stored_before_naming_nobody_is_still_its_requesters_alone(scene: Scene) -> None:
    """Requests made before the rule changed carry no approvers; the check itself keeps them
    to their requester."""
    request = scene.store.get_request(scene.ask("old"))
    older = replace(request, rule=replace(request.rule, approvers=()))
    assert not may_decide(older, "alice", ())
    assert may_decide(older, "carol", ())
    assert may_decide(replace(older, requester=None), "alice", ())


def test_the_library_keeps_the_rule(store: Store) -> None:
    from .test_outbox import ask

    request_id = ask(store, call="lib", requester="carol")
    with pytest.raises(NotAnApprover):
        store.decide(request_id, Approve(), actor="alice")
    assert store.decide(request_id, Approve(), actor="carol").status is RequestStatus.APPROVED
    assert RequestRule().for_requester("carol").approvers == ("carol",)
    assert RequestRule().for_requester(None).approvers == ()


def test_explain_says_who_decides(scene: Scene) -> None:
    scene.store.set_layer("tool", "send_email", {"requires_approval": True}, actor="test")
    with scene.server.client(scene.alice_token) as alice:
        for requester, said in [
            ("carol", "carol alone: the rule names no approvers, so the call's requester decides"),
            (
                None,
                "the call's requester: the rule names no approvers (a call without a requester: any person",
            ),
        ]:
            params = {"tool": "send_email"} | ({"requester": requester} if requester else {})
            explained = alice.get("/v1/explain", params=params).json()
            assert explained["who_decides"].startswith(said)
    runner = CliRunner(env={"SIGNOFF_DB": url_for(scene.store), "SIGNOFF_URL": None, "COLUMNS": "200"})
    shown = runner.invoke(app, ["explain", "send_email", "--requester", "carol"])
    assert "who decides: carol alone" in shown.stdout
    as_json = json.loads(runner.invoke(app, ["explain", "send_email", "--json"]).stdout)
    assert as_json["who_decides"].startswith("the call's requester")
