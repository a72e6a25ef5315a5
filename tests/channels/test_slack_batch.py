"""Slack's batch action (issue 20 §5): "All like this…" on a request's message opens a modal
naming the open requests like it (same tool, same thread) that the clicker may decide; its
submit approves exactly those through the batch's checks (each decided and audited alone; one
whose rule says `batch: false` is not offered, one decided meanwhile is skipped and named)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from signoff import Reject
from signoff.channels.slack_batch import MAX_LISTED
from signoff.store import Store

from .slack_live import SlackSetup, slack_server
from .slack_signing import click, submission


@pytest.fixture
def slack(sqlite_store: Store) -> Iterator[SlackSetup]:
    with slack_server(sqlite_store) as setup:
        yield setup


def like_button(slack: SlackSetup) -> dict[str, object]:
    [message, *_] = slack.sent_to("U-ALICE")
    elements = message["blocks"][-1]["elements"]
    [button] = [element for element in elements if element["action_id"] == "signoff.approve_like"]
    return button  # type: ignore[no-any-return]


def test_all_like_this_approves_the_listed_requests_each_with_its_checks(slack: SlackSetup) -> None:
    store = slack.store
    first = slack.ask("c1")
    button = like_button(slack)
    assert button["text"]["text"] == "✅ All like this…" and button["value"] == first  # type: ignore[index]
    second, third = slack.ask("c2"), slack.ask("c3")
    alone = slack.ask("c4", batch=False)  # decided one at a time: not offered
    carols = slack.ask("c5", approvers=("carol",))  # not alice's to decide: not offered
    assert slack.post(click(first, "approve_like", "U-ALICE")).status_code == 200
    [opened] = slack.fake.wait_for("views.open")
    view = opened.body["view"]
    assert view["callback_id"] == "signoff.batch" and view["submit"]["text"] == "Approve 3"
    listed = json.loads(view["private_metadata"])["ids"]
    assert listed == [first, second, third]
    assert store.get_request(first).status.value == "pending"  # opening decides nothing
    store.decide(third, Reject(message="no"), actor="alice")  # decided meanwhile
    answer = slack.post(submission(view, {"message": "all fine"}))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["response_action"] == "update"
    shown = body["view"]["blocks"][0]["text"]["text"]
    assert shown.startswith("Approved 2 request(s).\nSkipped 1:") and third in shown
    for request_id in (first, second):
        decided = store.get_request(request_id)
        assert decided.status.value == "approved" and decided.decision is not None
        assert (decided.decision.actor, decided.decision.channel) == ("alice", "slack")
        assert decided.decision.decision.comment == "all fine"  # type: ignore[union-attr]
    assert store.get_request(alone).status.value == "pending"
    assert store.get_request(carols).status.value == "pending"
    [batch] = [entry for entry in store.audit_entries() if entry.action == "batch.decided"]
    assert batch.actor == "alice" and batch.data["decided"] == [first, second]


def test_a_batch_submitted_by_someone_not_an_approver_decides_nothing(slack: SlackSetup) -> None:
    first = slack.ask("c1")
    like_button(slack)
    refused = slack.post(click(first, "approve_like", "U-BOB"))  # bob may not decide it: no modal
    assert refused.status_code == 200
    assert slack.fake.of("views.open") == []
    slack.post(click(first, "approve_like", "U-ALICE"))
    [opened] = slack.fake.wait_for("views.open")
    forged = slack.post(submission(opened.body["view"], {"message": None}, user="U-BOB"))
    body = forged.json()
    assert body["response_action"] == "update"
    assert body["view"]["blocks"][0]["text"]["text"].startswith("Approved 0 request(s).\nSkipped 1:")
    assert slack.store.get_request(first).status.value == "pending"
    unknown = slack.post(submission(opened.body["view"], {"message": None}, user="U-NOBODY"))
    assert unknown.json()["response_action"] == "errors"
    assert slack.store.get_request(first).status.value == "pending"


def test_the_modal_lists_at_most_its_cap_and_says_so(slack: SlackSetup) -> None:
    ids = [slack.ask(f"c{number}") for number in range(MAX_LISTED + 2)]
    slack.post(click(ids[0], "approve_like", "U-ALICE"))
    [opened] = slack.fake.wait_for("views.open")
    view = opened.body["view"]
    assert json.loads(view["private_metadata"])["ids"] == ids[:MAX_LISTED]
    assert f"Only the oldest {MAX_LISTED} are approved here" in json.dumps(view)
    assert len(view["private_metadata"]) <= 3000


def test_open_like_offers_only_what_may_be_decided_together(store: Store) -> None:
    from datetime import timedelta

    from signoff._util import utcnow
    from signoff.batch import open_like
    from signoff.requests import NewRequest
    from signoff.rules.effective import RequestRule

    for name in ("alice", "carol"):
        store.add_user(name, role="member", actor="test")

    def asked(call: str, *, thread: str = "t", tool: str = "pay", **rule: object) -> str:
        rule.setdefault("approvers", ("alice",))
        new = NewRequest(
            thread_id=thread,
            tool_call_id=call,
            tool_name=tool,
            args={"n": call},
            description="d",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(**rule),  # type: ignore[arg-type]
        )
        return store.create_request(new)[0].id

    first, second = asked("c1"), asked("c2")
    asked("c3", thread="other")
    asked("c4", tool="refund")
    asked("c5", batch=False)
    carols = asked("c6", approvers=("carol",))
    voted = asked("c7", quorum=2, approvers=("alice", "carol"))
    from signoff import Approve

    store.decide(voted, Approve(), actor="alice")  # her vote is in: not hers to give again
    request = store.get_request(first)
    found, total = open_like(store, request, "alice", ())
    assert [item.id for item in found] == [first, second] and total == 2
    capped, total = open_like(store, request, "alice", (), limit=1)
    assert [item.id for item in capped] == [first] and total == 2
    found, total = open_like(store, request, "carol", ())
    assert [item.id for item in found] == [carols, voted] and total == 2  # hers, and one she has not voted on
