"""The text fallback on its own: the message it writes (DESIGN §9, both languages), the replies it
understands, and how it checks a reply's signature (Standard Webhooks, verified independently
with the `standardwebhooks` library)."""

from __future__ import annotations

import base64
import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from signoff import Reject
from signoff._util import utcnow
from signoff.channels import BadCallback, BadSignature, InboundOutcome, build_notice, parse_config
from signoff.channels.registry import build_channel
from signoff.channels.text import TextChannel, final_text, notice_text, parse_reply
from signoff.channels.text_replies import Reply
from signoff.destinations import Destinations
from signoff.errors import ConfigError
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

SECRET = "whsec_" + base64.b64encode(b"a bridge's secret, 32 bytes long").decode()
APPROVING = ["1", "批准", "approve", "y", "yes", " 1 ", "APPROVE", "Yes", "Y", "１", "ＹＥＳ", "批准\n"]
REJECTING = ["2", "拒绝", "reject", "n", "no", "  2", "REJECT", "No", "N", "２", "ｎｏ", " 拒绝 "]
CALLS = itertools.count(1)
UNKNOWN = ["", "3", "ok", "好的", "12", "yes please", "approve it", "１２", "maybe", "批准吗"]


def channel(**settings: object) -> TextChannel:
    config = parse_config(
        {
            "wechat": {
                "kind": "text",
                "platform": "wechat",
                "send_url": "http://127.0.0.1:9/send",
                "secret": SECRET,
                **settings,
            }
        },
        destinations=Destinations(allow_private=True),
    )["wechat"]
    built = build_channel(config)
    assert isinstance(built, TextChannel)
    return built


def signed(
    body: dict[str, object] | bytes, *, at: datetime | None = None, msg_id: str = "msg_1"
) -> tuple[bytes, dict[str, str]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    moment = at or datetime.now(UTC)
    signature = Webhook(SECRET).sign(msg_id, moment, raw.decode())
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signature,
    }
    return raw, headers


def request(store: Store, *, decisions: tuple[str, ...] = ("approve", "reject"), kind: str = "tool") -> str:
    new = NewRequest(
        thread_id="t1",
        tool_call_id=f"c{next(CALLS)}",
        tool_name="run_sql",
        args={"sql": "DROP TABLE users WHERE id < 1000", "password": "hunter2"},
        description="Delete old users",
        deadline=utcnow() + timedelta(hours=24),
        rule=RequestRule(redact=("password",), allowed_decisions=decisions),  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


@pytest.mark.parametrize("text", APPROVING)
def test_every_approving_spelling_approves(text: str) -> None:
    assert parse_reply(text) == Reply({"type": "approve"})


@pytest.mark.parametrize("text", REJECTING)
def test_every_rejecting_spelling_rejects(text: str) -> None:
    assert parse_reply(text) == Reply({"type": "reject"})


@pytest.mark.parametrize("text", UNKNOWN)
def test_anything_else_is_not_a_decision(text: str) -> None:
    assert parse_reply(text) is None


def test_a_reject_may_carry_a_reason() -> None:
    assert parse_reply("2 not on a Friday") == Reply({"type": "reject", "message": "not on a Friday"})
    assert parse_reply("拒绝 周五不行") == Reply({"type": "reject", "message": "周五不行"})
    assert parse_reply("１ now") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("1 K7QD", "approve"),
        ("K7QD 1", "approve"),
        ("批准 K7QD", "approve"),
        ("  k7qd   yes ", "approve"),
        ("Approve k7Qd", "approve"),
        ("１ Ｋ７ＱＤ", "approve"),
        ("2 K7QD", "reject"),
        ("K7QD 拒绝", "reject"),
        ("no k7qd", "reject"),
    ],
)
def test_a_reply_may_name_its_request_by_code_either_side_any_case(text: str, kind: str) -> None:
    assert parse_reply(text) == Reply({"type": kind}, "K7QD")


def test_a_coded_reject_may_carry_a_reason_and_a_coded_approve_may_not() -> None:
    assert parse_reply("2 K7QD 周五不付款") == Reply({"type": "reject", "message": "周五不付款"}, "K7QD")
    assert parse_reply("K7QD 2 not  today") == Reply({"type": "reject", "message": "not  today"}, "K7QD")
    assert parse_reply("1 K7QD please") is None
    assert parse_reply("K7QD") is None
    assert parse_reply("K7QD K7QD") is None


def test_four_letters_after_the_word_are_a_code_even_a_mistyped_one() -> None:
    """A mistyped code (an O for a D) is an unknown code, which decides nothing: never a reason
    that would let a bare reject through, nor a bare approval."""
    assert parse_reply("2 K7QO") == Reply({"type": "reject"}, "K7QO")
    assert parse_reply("1 K7QO") == Reply({"type": "approve"}, "K7QO")


def test_the_message_is_design_9s_in_english(sqlite_store: Store) -> None:
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)),
        approver="alice",
        link="http://x/h/1",
        request_url="http://x/r",
    )
    assert notice_text(notice) == "\n".join(
        [
            "🔔 Waiting for your decision",
            "",
            "📋 Action: Delete old users",
            "🔧 Tool: run_sql",
            "Details:",
            "  sql: DROP TABLE users WHERE id < 1000",
            "  password: ***",
            "",
            "Reply with one of:",
            "  1  ✅ Approve",
            "  2  ❌ Reject",
            "",
            "⚠️ Valid for 24 hours",
        ]
    )


def test_the_message_carries_its_reply_code_and_says_how_to_reply_with_it(sqlite_store: Store) -> None:
    request_id = request(sqlite_store)
    english = build_notice(
        sqlite_store.get_request(request_id), approver="alice", link=None, request_url="", code="K7QD"
    )
    assert notice_text(english) == "\n".join(
        [
            "🔔 Waiting for your decision · K7QD",
            "",
            "📋 Action: Delete old users",
            "🔧 Tool: run_sql",
            "Details:",
            "  sql: DROP TABLE users WHERE id < 1000",
            "  password: ***",
            "",
            "Reply with one of:",
            "  1 K7QD  ✅ Approve",
            "  2 K7QD  ❌ Reject",
            "",
            "⚠️ Valid for 24 hours",
        ]
    )
    pending = sqlite_store.get_request(request_id)
    chinese = build_notice(pending, approver="alice", link=None, request_url="", locale="zh", code="K7QD")
    text = notice_text(chinese)
    assert text.startswith("🔔 等待你的决策 · K7QD\n\n📋 操作：Delete old users\n🔧 工具：run_sql\n内容：\n")
    assert "回复以下任一选项：\n  1 K7QD  ✅ 批准\n  2 K7QD  ❌ 拒绝\n\n⚠️ 24 小时内有效" in text
    decided = sqlite_store.decide(request_id, Reject(message="not now"), actor="alice")
    ended = build_notice(decided, approver="alice", link=None, request_url="", locale="zh", code="K7QD")
    assert final_text(ended) == "❌ 已拒绝（alice） · K7QD\n📋 操作：Delete old users\n💬 not now"


def test_the_message_is_seed_004s_in_chinese(sqlite_store: Store) -> None:
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)),
        approver="alice",
        link=None,
        request_url="http://x/r",
        locale="zh",
    )
    text = notice_text(notice)
    assert text.startswith("🔔 等待你的决策\n\n📋 操作：Delete old users\n🔧 工具：run_sql\n内容：\n")
    assert "回复以下任一选项：\n  1  ✅ 批准\n  2  ❌ 拒绝\n\n⚠️ 24 小时内有效" in text
    assert "hunter2" not in text


def test_only_allowed_choices_are_offered_and_the_rest_get_the_link(sqlite_store: Store) -> None:
    approve_only = build_notice(
        sqlite_store.get_request(request(sqlite_store, decisions=("approve", "edit"))),
        approver="alice",
        link="http://x/h/so_hdl_1",
        request_url="http://x/r",
    )
    text = notice_text(approve_only)
    assert "1  ✅ Approve" in text
    assert "2  ❌ Reject" not in text
    assert "🔗 More options: http://x/h/so_hdl_1" in text
    edit_only = build_notice(
        sqlite_store.get_request(request(sqlite_store, decisions=("edit",))),
        approver="alice",
        link="http://x/h/so_hdl_2",
        request_url="http://x/r",
    )
    text = notice_text(edit_only)
    assert "Reply with one of" not in text
    assert "🔗 Answer here: http://x/h/so_hdl_2" in text


def test_a_long_request_is_cut_to_a_chat_message(sqlite_store: Store) -> None:
    new = NewRequest(
        thread_id="t1",
        tool_call_id=f"c{next(CALLS)}",
        tool_name="bulk",
        args={f"field_{n:02}": "x" * 1000 for n in range(14)},
        description="Many fields",
        deadline=utcnow() + timedelta(hours=24),
    )
    notice = build_notice(
        sqlite_store.create_request(new)[0], approver="alice", link=None, request_url="", locale="zh"
    )
    text = notice_text(notice)
    assert text.count("  field_") == 10
    assert "  …还有 4 项" in text
    assert all(len(line) <= 320 for line in text.splitlines())


def test_hidden_characters_are_written_out(sqlite_store: Store) -> None:
    new = NewRequest(
        thread_id="t1",
        tool_call_id=f"c{next(CALLS)}",
        tool_name="send_email",
        args={"to": "bob\u202e@example.com", "note": "a\u200bb"},
        description="Mail \u202ebob",
        deadline=utcnow() + timedelta(hours=24),
    )
    notice = build_notice(sqlite_store.create_request(new)[0], approver="alice", link=None, request_url="")
    text = notice_text(notice)
    assert "\u202e" not in text and "\u200b" not in text
    assert "📋 Action: Mail \\u202ebob" in text
    assert "  to: bob\\u202e@example.com" in text
    assert "  note: a\\u200bb" in text


def test_the_final_state_as_text(sqlite_store: Store) -> None:
    request_id = request(sqlite_store)
    decided = sqlite_store.decide(request_id, Reject(message="not now"), actor="alice")
    notice = build_notice(decided, approver="alice", link=None, request_url="", locale="zh")
    assert final_text(notice) == "❌ 已拒绝（alice）\n📋 操作：Delete old users\n💬 not now"


def test_a_signed_reply_is_a_decision_for_the_senders_latest_request() -> None:
    body, headers = signed({"from": "wxid_1", "text": " １ "}, msg_id="msg_abc")
    inbound = channel().verify(body, headers)
    assert inbound.kind == "decide"
    assert inbound.sender == "wxid_1"
    assert inbound.decision == {"type": "approve"}
    assert inbound.request_id is None and inbound.handle is None
    assert inbound.delivery_id == "msg_abc"


def test_unknown_text_gets_help_and_decides_nothing() -> None:
    body, headers = signed({"from": "wxid_1", "text": "what is this?"})
    inbound = channel(locale="zh").verify(body, headers)
    assert inbound.kind == "reply"
    assert inbound.decision is None
    assert inbound.reply["ok"] is False
    assert inbound.reply["to"] == "wxid_1"
    assert "回复 1" in inbound.reply["reply"]
    assert channel().answer(inbound, None) == (200, inbound.reply)


def test_a_bad_signature_is_refused() -> None:
    body, headers = signed({"from": "wxid_1", "text": "1"})
    tampered = body.replace(b"wxid_1", b"wxid_2")
    with pytest.raises(BadSignature) as refused:
        channel().verify(tampered, headers)
    assert refused.value.status_code == 401
    with pytest.raises(BadSignature):
        channel().verify(body, {k: v for k, v in headers.items() if k != "webhook-signature"})
    with pytest.raises(BadSignature):
        channel().verify(body, {**headers, "webhook-signature": "v1,not-base64!"})
    with pytest.raises(BadSignature):
        channel().verify(body, {**headers, "webhook-signature": "garbage"})


def test_a_stale_or_future_timestamp_is_refused() -> None:
    stale_body, stale = signed({"from": "wxid_1", "text": "1"}, at=datetime.now(UTC) - timedelta(minutes=6))
    with pytest.raises(BadSignature, match="too old"):
        channel().verify(stale_body, stale)
    future_body, future = signed({"from": "wxid_1", "text": "1"}, at=datetime.now(UTC) + timedelta(minutes=6))
    with pytest.raises(BadSignature, match="too new"):
        channel().verify(future_body, future)


@pytest.mark.parametrize(
    "body", [b"not json", b"[1, 2]", b'{"text": "1"}', b'{"from": "wxid_1"}', b'{"from": " ", "text": "1"}']
)
def test_a_signed_but_unreadable_reply_is_a_400(body: bytes) -> None:
    raw, headers = signed(body)
    with pytest.raises(BadCallback) as refused:
        channel().verify(raw, headers)
    assert refused.value.status_code == 400


def test_the_answer_carries_the_words_for_the_person() -> None:
    body, headers = signed({"from": "wxid_1", "text": "yes"})
    inbound = channel().verify(body, headers)
    decided = InboundOutcome(result="decided", message="Approved.", request_id="req_1")
    assert channel().answer(inbound, decided) == (200, {"ok": True, "to": "wxid_1", "reply": "Approved."})
    expired = InboundOutcome(result="expired", message="The request expired.", request_id="req_1")
    assert channel().answer(inbound, expired)[0] == 200
    _, answer = channel().answer(inbound, expired)
    assert answer == {"ok": False, "to": "wxid_1", "reply": "请求已过期 / the request expired"}


def test_the_address_kind_names_the_platform_and_config_is_checked() -> None:
    assert channel().address_kind == "text:wechat"
    assert "***" in str(parse_config({"w": {"kind": "text", "secret": SECRET}})["w"].described())
    with pytest.raises(ConfigError, match="platform"):
        channel(platform="we chat!")
    with pytest.raises(ConfigError, match="platform"):
        channel(platform="微信")
    with pytest.raises(ConfigError, match="send_url"):
        channel(send_url="ftp://x")
    with pytest.raises(ConfigError, match="whsec_"):
        channel(secret="whsec_")
    with pytest.raises(ConfigError, match="secret"):
        build_channel(
            parse_config({"w": {"kind": "text", "platform": "wechat", "send_url": "http://x"}})["w"]
        )


def test_a_reply_seen_again_gets_the_first_answer_or_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.channels import text_replies
    from signoff.channels.text_replies import BEING_HANDLED, Recent

    recent = Recent()
    assert recent.claim("msg_1") == (True, None)
    assert recent.claim("msg_1") == (False, BEING_HANDLED)
    recent.keep_answer("msg_1", {"ok": True, "reply": "done"})
    assert recent.claim("msg_1") == (False, {"ok": True, "reply": "done"})
    assert recent.claim(None) == (True, None)
    assert recent.claim(None) == (True, None)
    assert recent.claim("msg_2") == (True, None)
    later = utcnow() + timedelta(seconds=31)
    monkeypatch.setattr(text_replies, "utcnow", lambda: later)
    assert recent.claim("msg_2") == (True, None), "a reply whose handling never answered may be tried again"
    assert recent.claim("msg_1") == (False, {"ok": True, "reply": "done"})
    much_later = utcnow() + timedelta(minutes=12)
    monkeypatch.setattr(text_replies, "utcnow", lambda: much_later)
    assert recent.claim("msg_1") == (True, None), "past the freshness window the signature check refuses it"


def test_recent_keeps_a_bounded_memory_per_person() -> None:
    from signoff.channels.text_replies import PER_PERSON, Recent

    recent = Recent()
    deadline = utcnow() + timedelta(hours=1)
    for n in range(PER_PERSON + 5):
        recent.sent("wxid_1", f"req_{n}", f"action {n}", deadline)
    outcome = InboundOutcome(result="decided", message="Approved.", request_id=f"req_{PER_PERSON + 4}")
    words = recent.reply_to("wxid_1", {"type": "approve"}, outcome, "en")
    assert words == f"✅ Approved: action {PER_PERSON + 4}"
    forgotten = InboundOutcome(result="decided", message="Approved.", request_id="req_0")
    assert recent.reply_to("wxid_1", {"type": "approve"}, forgotten, "en") == "Approved."
    quorum = InboundOutcome(
        result="decided", message="Your approval is counted (1 of 2).", request_id="req_9"
    )
    assert recent.reply_to("wxid_1", {"type": "approve"}, quorum, "en").startswith(
        "Your approval is counted (1 of 2)."
    )
    unknown = InboundOutcome(result="decided", message="Approved.", request_id="req_elsewhere")
    assert recent.reply_to("wxid_2", {"type": "approve"}, unknown, "zh") == "Approved."


def test_a_coded_reply_carries_its_code_to_the_server() -> None:
    body, headers = signed({"from": "wxid_1", "text": "2 k7qd too risky"})
    inbound = channel().verify(body, headers)
    assert inbound.kind == "decide"
    assert inbound.code == "K7QD"
    assert inbound.decision == {"type": "reject", "message": "too risky"}
    assert inbound.request_id is None and inbound.handle is None


def test_the_answer_lists_the_open_requests_with_what_is_hidden_in_them_shown() -> None:
    body, headers = signed({"from": "wxid_1", "text": "1 QQQQ"})
    inbound = channel().verify(body, headers)
    choices = [
        {
            "code": "K7QD",
            "tool": "wire_money",
            "args": [["to", "acct\u202e9"], ["memo", "line\nbreak " + "x" * 60]],
        },
        {"code": "P4MW", "tool": "ping", "args": []},
    ]
    unknown = InboundOutcome(
        result="unknown_code", message="No request of yours here has the code QQQQ.", choices=choices
    )
    _, answer = channel().answer(inbound, unknown)
    assert answer == {
        "ok": False,
        "to": "wxid_1",
        "reply": "\n".join(
            [
                "No request of yours here has the code QQQQ.",
                "Waiting for your decision:",
                "  K7QD  wire_money · to: acct\\u202e9, memo: line break " + "x" * 28 + "…",
                "  P4MW  ping",
            ]
        ),
    }
    none_left = InboundOutcome(result="decided", message="Approved.", request_id="req_1", choices=[])
    assert channel().answer(inbound, none_left)[1]["reply"] == "Approved."
