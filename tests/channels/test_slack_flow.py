"""Slack end to end, over a real signoff server whose outbox delivers to a fake Slack Web API:
a signed click approves and the message is updated once to its final state; forged, stale and
non-approver clicks are refused and audited; racing decisions update each message once; the
edit and reject modals; expiry, cancel and the follow-up in the thread."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from signoff import AlreadyDecided, Reject
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store
from tests.helpers import decided_digest

from .slack_live import SlackSetup, slack_server, wait_until
from .slack_signing import click, input_blocks, submission


@pytest.fixture
def slack(sqlite_store: Store) -> Iterator[SlackSetup]:
    with slack_server(sqlite_store) as setup:
        yield setup


def audit(store: Store, request_id: str | None = None, action: str | None = None) -> list[object]:
    return list(store.audit_entries(request_id=request_id, action=action))


def test_a_signed_click_approves_and_the_message_is_updated_once(slack: SlackSetup) -> None:
    request_id = slack.ask(allowed_decisions=("approve", "edit", "reject"))
    [message] = slack.sent_to("U-ALICE")
    assert [b["action_id"] for b in message["blocks"][-1]["elements"]] == [
        "signoff.approve",
        "signoff.approve_like",
        "signoff.edit",
        "signoff.reject",
        "signoff.open",
    ]
    answer = slack.post(click(request_id, "approve", "U-ALICE"))
    assert answer.status_code == 200 and answer.content == b""
    decided = slack.store.get_request(request_id)
    assert decided.status.value == "approved"
    assert decided.decision is not None and (decided.decision.actor, decided.decision.channel) == (
        "alice",
        "slack",
    )
    [update] = slack.fake.wait_for("chat.update")
    assert (update.body["channel"], update.body["ts"]) == ("D-ALICE", "1700000000.000001")
    assert update.body["text"].endswith("✅ Approved by alice")
    assert not [block for block in update.body["blocks"] if block["type"] == "actions"]
    assert update.body["blocks"][-2]["text"]["text"] == "*✅ Approved by alice*"
    time.sleep(0.4)
    assert len(slack.fake.of("chat.update")) == 1
    assert slack.fake.of("chat.postEphemeral") == []


@pytest.mark.parametrize("forgery", ["secret", "stale"])
def test_a_forged_or_stale_click_is_a_401_and_audited(slack: SlackSetup, forgery: str) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    signing = {"secret": "not-the-secret"} if forgery == "secret" else {"at": time.time() - 6 * 60}
    answer = slack.post(click(request_id, "approve", "U-ALICE"), **signing)
    assert answer.status_code == 401
    assert slack.store.get_request(request_id).status.value == "pending"
    [refused] = audit(slack.store, action="callback.refused")
    assert refused.channel == "slack"  # type: ignore[attr-defined]
    why = "does not verify" if forgery == "secret" else "window is 5 minutes"
    assert why in str(refused.data)  # type: ignore[attr-defined]


def test_a_click_by_someone_not_an_approver_is_refused_in_an_ephemeral_and_audited(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    assert slack.post(click(request_id, "approve", "U-BOB", channel="D-ALICE")).status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert ephemeral.body == {
        "channel": "D-ALICE",
        "user": "U-BOB",
        "text": "You are not an approver of this request.",
    }
    assert slack.store.get_request(request_id).status.value == "pending"
    refusals = [entry for entry in audit(slack.store, request_id) if "refused" in entry.action]  # type: ignore[attr-defined]
    assert [(entry.actor, entry.channel) for entry in refusals] == [("bob", "slack")]  # type: ignore[attr-defined]


def test_a_slack_user_signoff_does_not_know_is_refused_and_audited_click_or_modal(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    assert slack.post(click(request_id, "approve", "U-STRANGER")).status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert ephemeral.body["user"] == "U-STRANGER" and "not linked" in ephemeral.body["text"]
    assert slack.post(click(request_id, "reject", "U-STRANGER")).status_code == 200
    [_, again] = slack.fake.wait_for("chat.postEphemeral", 2)
    assert again.body["text"] == ephemeral.body["text"]
    assert slack.fake.of("views.open") == []
    refused = audit(slack.store, action="callback.refused")
    assert [entry.data["sender"] for entry in refused] == ["U-STRANGER", "U-STRANGER"]  # type: ignore[attr-defined]
    assert slack.store.get_request(request_id).status.value == "pending"


@pytest.mark.parametrize("store", ["sqlite", "postgres"], indirect=True)
def test_racing_decisions_update_each_message_once(store: Store) -> None:
    with slack_server(store) as slack:
        _race(slack)


def _race(slack: SlackSetup) -> None:
    request_id = slack.ask(approvers=("alice", "carol"))
    slack.sent_to("U-ALICE")
    slack.sent_to("U-CAROL")
    start = threading.Barrier(3)
    answers: list[int] = []

    def clicker(user: str, channel: str) -> None:
        start.wait()
        answers.append(slack.post(click(request_id, "approve", user, channel=channel)).status_code)

    threads = [
        threading.Thread(target=clicker, args=(u, d))
        for u, d in [("U-ALICE", "D-ALICE"), ("U-CAROL", "D-CAROL")]
    ]
    for thread in threads:
        thread.start()
    # a decision from the inbox's side races the two clicks too
    start.wait()
    with contextlib.suppress(AlreadyDecided):
        slack.store.decide(request_id, Reject(message="no"), actor="alice", channel="inbox")
    for thread in threads:
        thread.join(30)
    assert answers == [200, 200]
    updates = slack.fake.wait_for("chat.update", 2)
    time.sleep(0.5)
    updates = slack.fake.of("chat.update")
    assert sorted(update.body["channel"] for update in updates) == ["D-ALICE", "D-CAROL"]
    final = slack.store.get_request(request_id)
    assert final.decision is not None
    texts = {update.body["blocks"][-2]["text"]["text"].split("\n")[0] for update in updates}
    assert len(texts) == 1, texts  # both messages say the one outcome that won
    assert final.decision.actor in next(iter(texts))
    losers = slack.fake.wait_for("chat.postEphemeral", 1)
    assert all(call.body["text"].startswith("Already ") for call in losers)
    assert len(slack.store.outbox_for(request_id)) == 4  # two notices, one update each


def test_reject_asks_for_a_reason_in_a_modal(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    assert slack.post(click(request_id, "reject", "U-ALICE")).status_code == 200
    [opened] = slack.fake.wait_for("views.open")
    view = opened.body["view"]
    assert opened.body["trigger_id"]
    assert view["callback_id"] == "signoff.reject" and view["title"]["text"] == "Reject"
    [reason] = input_blocks(view).values()
    assert reason["block_id"] == "message" and reason["optional"] is True
    assert slack.store.get_request(request_id).status.value == "pending"
    answer = slack.post(submission(view, {"message": "wrong recipient"}))
    assert answer.status_code == 200 and answer.json() == {"response_action": "clear"}
    rejected = slack.store.get_request(request_id)
    assert rejected.status.value == "rejected"
    assert rejected.decision is not None and rejected.decision.decision.message == "wrong recipient"  # type: ignore[union-attr]
    [update] = slack.fake.wait_for("chat.update")
    assert update.body["blocks"][-2]["text"]["text"] == "*❌ Rejected by alice*\n“wrong recipient”"


def test_the_edit_modal_shows_the_schemas_fields_and_refuses_what_breaks_it(slack: SlackSetup) -> None:
    request_id = slack.ask(allowed_decisions=("approve", "edit", "reject"))
    slack.sent_to("U-ALICE")
    slack.post(click(request_id, "edit", "U-ALICE"))
    [opened] = slack.fake.wait_for("views.open")
    view = opened.body["view"]
    assert view["callback_id"] == "signoff.edit"
    inputs = input_blocks(view)
    assert list(inputs) == ["arg.to", "arg.subject", "arg.retries", "arg.urgent", "arg.password", "comment"]
    assert inputs["arg.to"]["element"]["initial_value"] == "bob@example.com"
    assert inputs["arg.retries"]["element"]["initial_value"] == "2"
    assert inputs["arg.urgent"]["element"]["initial_value"] == "false"
    assert "JSON" in inputs["arg.urgent"]["hint"]["text"]
    assert "initial_value" not in inputs["arg.password"]["element"]  # redacted: never sent to Slack
    assert "hunter2" not in str(view)
    typed = {
        "arg.to": "not-an-address",
        "arg.subject": "Hi",
        "arg.retries": "2",
        "arg.urgent": "maybe",
        "arg.password": None,
    }
    bad = slack.post(submission(view, typed))
    assert bad.status_code == 200
    body = bad.json()
    assert body["response_action"] == "errors"
    assert set(body["errors"]) == {"arg.urgent"}  # unreadable JSON first, before the schema
    typed["arg.urgent"] = "true"
    worse = slack.post(submission(view, typed)).json()
    assert worse["response_action"] == "errors" and set(worse["errors"]) == {"arg.to"}
    assert "does not match" in worse["errors"]["arg.to"]
    assert slack.store.get_request(request_id).status.value == "pending"
    typed.update({"arg.to": "carol@example.com", "comment": "to carol instead"})
    good = slack.post(submission(view, typed))
    assert good.json() == {"response_action": "clear"}
    edited = slack.store.get_request(request_id)
    assert edited.status.value == "edited"
    assert edited.decision is not None
    assert edited.decision.decision.args == {  # type: ignore[union-attr]
        "to": "carol@example.com",
        "subject": "Hi",
        "retries": 2,
        "urgent": True,
        "password": "hunter2",
    }
    [update] = slack.fake.wait_for("chat.update")
    assert update.body["blocks"][-2]["text"]["text"].startswith("*✏️ Approved with changes by alice*")


def test_a_modal_is_not_opened_for_someone_not_an_approver(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    slack.post(click(request_id, "reject", "U-BOB"))
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert ephemeral.body["text"] == "You are not an approver of this request."
    assert slack.fake.of("views.open") == []
    assert [entry.actor for entry in audit(slack.store, request_id, "request.view_refused")] == ["bob"]  # type: ignore[attr-defined]


def test_expiry_and_cancel_turn_the_messages_final(slack: SlackSetup) -> None:
    expiring = slack.ask("c-exp", hours=0.5 / 3600)
    cancelled = slack.ask("c-cancel")
    slack.sent_to("U-ALICE", 2)
    slack.store.cancel(cancelled, actor="agent", reason="run aborted")
    updates = slack.fake.wait_for("chat.update", 2)
    said = sorted(update.body["blocks"][-2]["text"]["text"] for update in updates)
    assert said == ["*⌛ Expired*", "*🚫 Cancelled by agent*\n“run aborted”"]
    assert slack.store.get_request(expiring).status.value == "expired"
    late = slack.post(click(expiring, "approve", "U-ALICE"))
    assert late.status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert "expired" in ephemeral.body["text"].lower() or ephemeral.body["text"].startswith("Already")


def test_the_executions_result_is_a_reply_in_the_thread(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    slack.post(click(request_id, "approve", "U-ALICE"))
    slack.fake.wait_for("chat.update")
    claim = slack.store.claim_execution(
        request_id, args_digest=decided_digest(slack.store, request_id), lease=timedelta(seconds=30)
    )
    assert claim.token is not None
    slack.store.finish_execution(request_id, claim.token, succeeded=True, result={"id": 1})
    wait_until(lambda: len(slack.fake.of("chat.postMessage")) == 2)
    reply = slack.fake.of("chat.postMessage")[1].body
    assert reply == {
        "channel": "D-ALICE",
        "text": '✅ send_email ran\nResult: {"id": 1}',
        "thread_ts": "1700000000.000001",
    }


def test_bad_input_gets_clear_answers(slack: SlackSetup) -> None:
    assert slack.post(b"payload=%7Bnot+json").status_code == 400
    unknown = slack.post({"type": "message_action", "user": {"id": "U-ALICE"}})
    assert unknown.status_code == 200
    assert unknown.json()["response_type"] == "ephemeral"
    assert "only answers its own request buttons" in unknown.json()["text"]
    assert slack.post(click("req_missing", "approve", "U-ALICE")).status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert ephemeral.body["user"] == "U-ALICE" and "no such request" in ephemeral.body["text"].lower()
    assert slack.post(click("req_missing", "dance", "U-ALICE")).status_code == 200
    [_, other] = slack.fake.wait_for("chat.postEphemeral", 2)
    assert other.body["channel"] == "D-ALICE" and "only answers its own request buttons" in other.body["text"]


def test_a_modal_submitted_after_someone_else_decided_shows_why_in_the_modal(slack: SlackSetup) -> None:
    request_id = slack.ask(approvers=("alice", "carol"))
    slack.sent_to("U-ALICE")
    slack.post(click(request_id, "reject", "U-ALICE"))
    [opened] = slack.fake.wait_for("views.open")
    assert slack.post(click(request_id, "approve", "U-CAROL", channel="D-CAROL")).status_code == 200
    late = slack.post(submission(opened.body["view"], {"message": "no"})).json()
    assert late == {"response_action": "errors", "errors": {"message": "Already approved by carol."}}
    assert slack.store.get_request(request_id).status.value == "approved"


def test_a_question_is_answered_in_a_modal(slack: SlackSetup) -> None:
    new = NewRequest(
        thread_id="thread-q",
        tool_call_id="q1",
        tool_name="ask_human",
        kind="input",
        args={"question": "Which region?"},
        description="Which region should the cluster run in?",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(approvers=("alice",), channels=("slack",)),
    )
    request_id = slack.store.create_request(new)[0].id
    [question] = slack.sent_to("U-ALICE")
    assert question["blocks"][0]["text"]["text"] == "The AI asks you"
    assert "signoff.respond" in [b["action_id"] for b in question["blocks"][-1]["elements"]]
    slack.post(click(request_id, "respond", "U-ALICE"))
    [opened] = slack.fake.wait_for("views.open")
    view = opened.body["view"]
    assert view["callback_id"] == "signoff.respond" and list(input_blocks(view)) == ["message"]
    empty = slack.post(submission(view, {"message": "  "})).json()
    assert empty == {"response_action": "errors", "errors": {"message": "Write an answer first"}}
    assert slack.post(submission(view, {"message": "eu-west-1"})).json() == {"response_action": "clear"}
    answered = slack.store.get_request(request_id)
    assert answered.status.value == "responded"
    assert answered.decision is not None and answered.decision.decision.message == "eu-west-1"  # type: ignore[union-attr]


def test_the_servers_callback_route_opens_modals_decides_and_refuses(sqlite_store: Store) -> None:
    with slack_server(sqlite_store) as slack:
        request_id = slack.ask()
        slack.sent_to("U-ALICE")
        assert slack.post(click(request_id, "edit", "U-ALICE")).status_code == 200
        [opened] = slack.fake.wait_for("views.open")
        assert opened.body["view"]["type"] == "modal"
        assert slack.fake.of("chat.postEphemeral") == []
        assert slack.post(click(request_id, "approve", "U-ALICE")).status_code == 200
        assert slack.store.get_request(request_id).status.value == "approved"
        assert slack.fake.wait_for("chat.update")[0].body["text"].endswith("✅ Approved by alice")
        assert slack.post(b"payload=%7Bnot+json").status_code == 400
        assert slack.post(click(request_id, "approve", "U-ALICE"), secret="wrong").status_code == 401


def test_a_form_block_kit_cannot_show_points_to_signoff(slack: SlackSetup) -> None:
    key = "k" * 300  # a block id holds 255 characters
    new = NewRequest(
        thread_id="thread-k",
        tool_call_id="k1",
        tool_name="odd",
        args={key: "v"},
        description="An odd tool",
        deadline=utcnow() + timedelta(hours=1),
        args_schema={"type": "object", "properties": {key: {"type": "string"}}},
        rule=RequestRule(approvers=("alice",), channels=("slack",), allowed_decisions=("approve", "edit")),
    )
    request_id = slack.store.create_request(new)[0].id
    slack.sent_to("U-ALICE")
    assert slack.post(click(request_id, "edit", "U-ALICE")).status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert "Open in signoff" in ephemeral.body["text"]
    assert slack.fake.of("views.open") == []


def test_a_modal_slack_would_not_open_is_said_to_the_clicker(slack: SlackSetup) -> None:
    request_id = slack.ask()
    slack.sent_to("U-ALICE")
    slack.fake.failures["views.open"] = ["expired_trigger_id"]
    assert slack.post(click(request_id, "reject", "U-ALICE")).status_code == 200
    [ephemeral] = slack.fake.wait_for("chat.postEphemeral")
    assert "could not be opened" in ephemeral.body["text"] and "expired_trigger_id" in ephemeral.body["text"]
    assert slack.store.get_request(request_id).status.value == "pending"


def test_slack_errors_reach_the_delivery_log_retried_or_dead_lettered(slack: SlackSetup) -> None:
    slack.fake.failures["chat.postMessage"] = ["ratelimited"]
    limited = slack.ask("c-limited")
    wait_until(lambda: [a.outcome for a in slack.store.delivery_attempts(limited)] == ["retrying", "sent"])
    first, second = slack.store.delivery_attempts(limited)
    assert "ratelimited" in (first.error or "") and second.target == "U-ALICE"
    slack.fake.failures["chat.postMessage"] = ["channel_not_found"]
    gone = slack.ask("c-gone", approvers=("carol",))
    wait_until(lambda: any(row.state == "dead" for row in slack.store.outbox_for(gone)))
    [attempt] = slack.store.delivery_attempts(gone)
    assert attempt.outcome == "failed" and "channel_not_found" in (attempt.error or "")
