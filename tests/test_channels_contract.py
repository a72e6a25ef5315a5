"""The channel contract: notices built as the inbox's cards show requests, the registry's
config (secrets never shown), and the recording channel the outbox tests use."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from signoff import Approve, Reject
from signoff._util import utcnow
from signoff.channels import ChannelRegistry, Secret, build_notice, final_state, parse_config
from signoff.channels.recording import RecordingChannel
from signoff.errors import ConfigError
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store


def _request(store: Store, **rule: object) -> str:
    new = NewRequest(
        thread_id="t1",
        tool_call_id="c1",
        tool_name="send_email",
        args={"to": "bob@example.com", "password": "hunter2"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=24),
        rule=RequestRule(redact=("password",), allowed_decisions=("approve", "reject"), **rule),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def test_a_notice_shows_what_the_card_shows(sqlite_store: Store) -> None:
    request = sqlite_store.get_request(_request(sqlite_store))
    notice = build_notice(request, approver="alice", link="http://x/h/so_hdl_1", request_url="http://x/r")
    assert notice.title == "AI wants to run: send_email"
    assert notice.args == {"to": "bob@example.com", "password": "***"}
    assert "hunter2" not in repr(notice)
    assert notice.decisions == ("approve", "reject")
    assert notice.buttons == {"approve": "✅ Approve", "reject": "❌ Reject"}
    assert notice.valid_for == "⚠️ Valid for 24 hours"
    assert notice.open and notice.final is None
    chinese = build_notice(request, approver="alice", link=None, request_url="", locale="zh")
    assert chinese.title == "AI 想执行：send_email"
    assert chinese.valid_for == "⚠️ 24 小时内有效"
    assert chinese.buttons["reject"] == "❌ 拒绝"


def test_an_ended_notice_says_how_and_by_whom(sqlite_store: Store) -> None:
    request_id = _request(sqlite_store)
    decided = sqlite_store.decide(request_id, Reject(message="not now"), actor="alice")
    notice = build_notice(decided, approver="alice", link=None, request_url="")
    assert notice.final is not None
    assert notice.final.text == "❌ Rejected by alice"
    assert notice.final.said == "not now"
    assert final_state(decided, "zh").text == "❌ 已拒绝（alice）"
    other = sqlite_store.get_request(_request_other(sqlite_store))
    cancelled = sqlite_store.cancel(other.id, actor="agent", reason="run aborted")
    assert final_state(cancelled).text == "🚫 Cancelled by agent"


def _request_other(store: Store) -> str:
    new = NewRequest(
        thread_id="t2",
        tool_call_id="c2",
        tool_name="pay",
        args={},
        description="Pay",
        deadline=utcnow() + timedelta(minutes=30),
    )
    return store.create_request(new)[0].id


def test_config_reads_env_and_hides_secrets() -> None:
    configs = parse_config(
        {"channels": {"ops": {"kind": "recording", "locale": "zh", "bot_token": {"env": "T"}, "team": "x"}}},
        env={"T": "xoxb-very-secret"},
    )
    config = configs["ops"]
    assert config.locale == "zh"
    assert isinstance(config.settings["bot_token"], Secret)
    assert config.secret("bot_token") == "xoxb-very-secret"
    assert "xoxb" not in repr(config) and "xoxb" not in str(config.described())
    registry = ChannelRegistry.from_configs(configs)
    assert registry.names() == ["ops"]
    assert isinstance(registry.get("ops"), RecordingChannel)
    assert registry.describe() == [
        {"name": "ops", "kind": "recording", "locale": "zh", "bot_token": "***", "team": "x"}
    ]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"inbox": {"kind": "recording"}}, "inbox"),
        ({"Bad Name": {}}, "channel name"),
        ({"x": {"kind": "carrier-pigeon"}}, "unknown kind"),
        ({"x": {"kind": "recording", "token": {"env": "UNSET_VAR_FOR_TEST"}}}, "not set"),
        ({"x": {"kind": "recording", "locale": "fr"}}, "locale"),
        ({"x": {"kind": "recording", "timeout": 0}}, "timeout"),
    ],
)
def test_bad_config_is_refused_clearly(data: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        ChannelRegistry.from_configs(parse_config(data, env={}))


def test_the_recording_channel_fails_as_told(sqlite_store: Store) -> None:
    request = sqlite_store.decide(_request(sqlite_store), Approve(), actor="alice")
    notice = build_notice(request, approver="alice", link=None, request_url="")
    channel = RecordingChannel(fail=1)
    from signoff.channels import DeliveryError

    with pytest.raises(DeliveryError):
        asyncio.run(channel.send(notice, "U1"))
    assert asyncio.run(channel.send(notice, "U1")) == {"n": 1}
    assert [entry.action for entry in channel.recorded] == ["send"]
