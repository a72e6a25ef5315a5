"""Standing grants offered on chat cards (issue 20 §2): Feishu's card has "+ like this for 30m"
beside Approve where the rule allows a grant (and not where it does not); its click is an
approval with the grant; Slack's the same; through the server's channel route a click with a
grant approves and covers the next same call."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from signoff._util import utcnow
from signoff.channels import ChannelRegistry
from signoff.channels.buttons import GRANT, from_value
from signoff.channels.feishu import FeishuChannel
from signoff.channels.feishu_cards import notice_card
from signoff.channels.recording import RecordingChannel
from signoff.requests import NewRequest, RequestStatus
from signoff.rules.effective import RequestRule
from signoff.store import Store

from ..live import LiveServer
from ..test_channel_inbound import SECRET, callback
from ..test_outbox import QUICK, wait_until
from .notices import notice_of
from .signers import card_action, feishu_callback
from .slack_live import slack_server
from .slack_signing import click

GRANTS = RequestRule(approvers=("alice",), channels=("inbox", "chat"), max_grant=timedelta(hours=1))


def ask(store: Store, call_id: str, rule: RequestRule = GRANTS) -> str:
    new = NewRequest(
        thread_id="t",
        tool_call_id=call_id,
        tool_name="deploy",
        args={"env": "prod"},
        description="deploy to prod",
        deadline=utcnow() + timedelta(hours=1),
        rule=rule,
        agent="bot",
    )
    return store.create_request(new)[0].id


def buttons(store: Store, request_id: str) -> list[dict[str, object]]:
    card = notice_card(notice_of(store, request_id, locale="en"))
    row = next(element for element in card["body"]["elements"] if element["tag"] == "column_set")
    return [column["elements"][0] for column in row["columns"]]


def test_the_feishu_card_offers_the_grant_where_the_rule_allows_one(sqlite_store: Store) -> None:
    offered = buttons(sqlite_store, ask(sqlite_store, "c0"))
    labels = [button["text"]["content"] for button in offered]  # type: ignore[index]
    assert (
        labels == ["✅ Approve", "✅ + like this for 30m", "✏️ Edit", "💬 Answer", "❌ Reject"][: len(labels)]
    )
    grant = offered[1]["behaviors"][0]["value"]  # type: ignore[index]
    assert grant["decision"] == GRANT and grant["minutes"] == 30
    plain = RequestRule(approvers=("alice",))
    labels = [button["text"]["content"] for button in buttons(sqlite_store, ask(sqlite_store, "c1", plain))]  # type: ignore[index]
    assert not any("like this" in label for label in labels)


def test_a_feishu_click_on_the_grant_is_an_approval_with_the_grant() -> None:
    feishu = FeishuChannel(
        "feishu",
        app_id="cli_grants",
        app_secret="s",
        encrypt_key="key",
        verification_token="token",
        base_url="http://127.0.0.1:9",
    )
    value = {"signoff": "so1", "decision": GRANT, "request_id": "req_1", "minutes": 30}
    payload = card_action(token="token", open_id="ou_alice", value=value, event_id="ev_1")
    headers, body = feishu_callback(encrypt_key="key", payload=payload)
    inbound = feishu.verify(body, headers)
    assert inbound.decision == {"type": "approve", "grant": {"minutes": 30}}
    for minutes in (None, 0, "30", True):
        assert from_value({**value, "minutes": minutes}) is None


@pytest.fixture
def chat() -> RecordingChannel:
    return RecordingChannel("chat", secret=SECRET)


@pytest.fixture
def server(sqlite_store: Store, chat: RecordingChannel) -> Iterator[LiveServer]:
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(sqlite_store, QUICK, channels=registry) as live:
        live.user("alice")
        sqlite_store.set_address("alice", "recording", "U-ALICE", actor="test")
        yield live


def test_a_chat_click_with_a_grant_covers_the_next_same_call(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    first = ask(store, "c0")
    wait_until(lambda: len(chat.recorded) == 1)
    decision = {"type": "approve", "grant": {"minutes": 30}}
    answer = callback(server, {"sender": "U-ALICE", "request_id": first, "decision": decision})
    assert answer.status_code == 200, answer.text
    granted = store.get_request(first)
    assert granted.status is RequestStatus.APPROVED and granted.granted_id is not None
    [grant] = store.list_grants()
    assert (grant.granted_by, grant.id) == ("alice", granted.granted_id)
    covered = store.get_request(ask(store, "c1"))
    assert covered.status is RequestStatus.APPROVED and covered.grant_id == grant.id


def test_a_slack_click_on_the_grant_approves_and_covers_the_next_same_call(sqlite_store: Store) -> None:
    with slack_server(sqlite_store) as slack:
        request_id = slack.ask(allowed_decisions=("approve", "reject"), max_grant=timedelta(minutes=20))
        [message] = slack.sent_to("U-ALICE")
        elements = message["blocks"][-1]["elements"]
        assert [element["action_id"] for element in elements] == [
            "signoff.approve",
            "signoff.approve_grant",
            "signoff.approve_like",
            "signoff.reject",
            "signoff.open",
        ]
        grant_button = elements[1]
        assert grant_button["text"]["text"] == "✅ + like this for 20m"
        payload = click(request_id, "approve_grant", "U-ALICE")
        payload["actions"][0]["value"] = grant_button["value"]
        answer = slack.post(payload)
        assert answer.status_code == 200, answer.text
        decided = slack.store.get_request(request_id)
        assert decided.status is RequestStatus.APPROVED and decided.granted_id is not None
        covered = slack.store.get_request(slack.ask("c2", max_grant=timedelta(minutes=20)))
        assert covered.status is RequestStatus.APPROVED and covered.grant_id == decided.granted_id
        forged = click(request_id, "approve_grant", "U-ALICE")
        forged["actions"][0]["value"] = f"{request_id}|soon"
        assert slack.post(forged).status_code == 200
        assert len(slack.store.list_grants()) == 1


def test_the_wecom_card_offers_the_grant_where_the_rule_allows_one(sqlite_store: Store) -> None:
    from signoff.channels.wecom import buttons as wecom_buttons

    offered = wecom_buttons(notice_of(sqlite_store, ask(sqlite_store, "c0"), locale="zh"))
    texts = [button["text"] for button in offered]
    assert texts[:2] == ["✅ 批准", "✅ 同类调用 30 分钟内批准"], texts
    assert offered[1]["key"].endswith("|approve_grant|" + offered[1]["key"].split("|")[2] + "|30")
    plain = RequestRule(approvers=("alice",))
    texts = [
        button["text"] for button in wecom_buttons(notice_of(sqlite_store, ask(sqlite_store, "c1", plain)))
    ]
    assert not any("同类" in text for text in texts)


@pytest.mark.parametrize(
    ("key", "decision"),
    [
        ("so1|approve_grant|req_1|30", {"type": "approve", "grant": {"minutes": 30}}),
        ("so1|approve_grant|req_1|0", None),
        ("so1|approve_grant|req_1|-5", None),
        ("so1|approve_grant|req_1|３０", None),  # full-width digits are not minutes
        ("so1|approve_grant|req_1", None),
        ("so1|approve|req_1|30", None),
    ],
)
def test_a_wecom_key_carries_the_grant_and_nothing_else(key: str, decision: dict[str, object] | None) -> None:
    from signoff.channels.buttons import from_key

    action = from_key(key)
    assert (action.payload() if action is not None else None) == decision
