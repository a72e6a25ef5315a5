"""Reminders and escalation (issue 20 §1): a rule's `remind` and `escalate` are planned with the
request, run by the sweeper at the right times (a test clock: `run_due_steps(now=)`, or the
step module's clock moved for a live server), survive a restart, are audited, and stop once the
request has ended; an escalation's people can then decide; bad rule values are refused."""

from __future__ import annotations

import asyncio
import html
import json
import re
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from signoff import Approve, NotAnApprover
from signoff._util import utcnow
from signoff.channels import ChannelRegistry, build_notice
from signoff.channels.contract import Channel
from signoff.channels.recording import RecordingChannel
from signoff.cli import app as cli_app
from signoff.errors import ConfigError
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.rules.model import RuleSet
from signoff.rules.resolve import Resolver
from signoff.rules.schedule_model import Escalation
from signoff.rules.snapshot import parse_snapshot
from signoff.server import ServerSettings
from signoff.server.serve import login_link
from signoff.store import SQLiteStore, Store, open_store, step_ops
from tests.channels.slack_live import slack_server, wait_until
from tests.live import LiveServer
from tests.test_cli_remote import cli_for

ESCALATE = (Escalation("4h", ("group:oncall",)), Escalation("12h", ("cto",)))


def ask(
    store: Store,
    call: str = "c1",
    *,
    hours: float = 24,
    remind: tuple[str, ...] = ("30m", "2h"),
    escalate: tuple[Escalation, ...] = ESCALATE,
    channels: tuple[str, ...] = ("chat",),
) -> str:
    rule = RequestRule(approvers=("alice",), channels=channels, remind=remind, escalate=escalate)
    new = NewRequest(
        thread_id="t-remind",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=hours),
        rule=rule,
    )
    return store.create_request(new)[0].id


def people(store: Store) -> None:
    for name in ("alice", "dave", "cto", "erin"):
        store.add_user(name, role="member", actor="test")
    store.add_group_member("oncall", "dave", actor="test")
    store.add_group_member("oncall", "erin", actor="test")


def created_at(store: Store, request_id: str) -> datetime:
    return store.get_request(request_id).created_at


def actions(store: Store, request_id: str) -> list[str]:
    return [entry.action for entry in store.audit_entries(request_id=request_id)]


def reminders_queued(store: Store, request_id: str) -> list[str | None]:
    return [
        row.recipient
        for row in store.outbox_for(request_id)
        if row.message == "follow_up" and row.event == "request.reminded"
    ]


# -- rules ---------------------------------------------------------------------------------------


def test_a_rule_file_plans_reminders_and_escalations_and_explain_shows_them() -> None:
    rules = RuleSet.from_yaml(
        """
tools:
  send_email:
    requires_approval: true
    remind: [30m, 50%]
    escalate: [{after: 4h, to: [group:oncall]}, {after: 12h, to: [user:cto]}]
"""
    )
    explained = Resolver(rules).explain("send_email", None, None, {})
    assert explained.rule.remind == ("30m", "50%")
    assert explained.rule.escalate == (Escalation("4h", ("group:oncall",)), Escalation("12h", ("cto",)))
    shown = explained.to_dict()
    assert shown["remind"] == ["30m", "50%"]
    assert shown["escalate"] == [{"after": "4h", "to": ["group:oncall"]}, {"after": "12h", "to": ["cto"]}]
    snapshot = explained.rule.for_request().snapshot()
    assert RequestRule.from_snapshot(snapshot).escalate == explained.rule.escalate
    assert parse_snapshot(snapshot).remind == ("30m", "50%")


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("remind: [0m]", "positive"),
        ("remind: [100%]", "less than 100%"),
        ("remind: [0%]", "more than 0%"),
        ("remind: [soon]", "not a duration"),
        ("remind: [30m, 30m]", "twice"),
        ("remind: 30m", "valid list"),
        ("escalate: [{after: 4h, to: []}]", "at least one"),
        ("escalate: [{after: 4h, to: [requester]}]", "not to the requester"),
        ("escalate: [{after: 4h}]", "Field required"),
        ("escalate: [{after: -1h, to: [a]}]", "not a duration"),
        ("escalate: [{after: 4h, to: [a], cc: [b]}]", "Extra inputs"),
        ("escalate: [{after: 4h, to: [a, a]}]", "twice"),
        ("escalate: [{after: 4h, to: ['group:']}]", "names nobody"),
    ],
)
def test_bad_reminder_and_escalation_values_are_refused(entry: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        RuleSet.from_yaml("tools: {send_email: {" + entry + "}}")


@pytest.mark.parametrize(
    ("snapshot", "says"),
    [
        ({"remind": "30m"}, "must be a list"),
        ({"remind": ["-5m"]}, "rule.remind"),
        ({"escalate": [{"after": "4h"}]}, "rule.escalate.to"),
        ({"escalate": [{"after": "4h", "to": ["requester"]}]}, "not to the requester"),
    ],
)
def test_a_snapshot_sent_from_outside_with_bad_steps_is_refused(snapshot: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_snapshot(snapshot)


# -- planning and running ------------------------------------------------------------------------


def test_steps_are_planned_at_the_right_times_and_none_at_or_after_the_deadline(store: Store) -> None:
    request_id = ask(store, hours=10, remind=("30m", "50%", "20h"))
    request = store.get_request(request_id)
    made = request.created_at
    planned = [(step.kind, step.due_at - made) for step in store.steps_of(request_id)]
    assert planned == [
        ("remind", timedelta(minutes=30)),
        ("escalate", timedelta(hours=4)),
        ("remind", (request.deadline - made) / 2),
    ]  # 20h and the 12h escalation fall after the 10h deadline: never planned
    assert all(step.done_at is None for step in store.steps_of(request_id))


def test_reminders_fire_at_their_times_each_audited_with_a_message_per_notice(store: Store) -> None:
    people(store)
    request_id = ask(store, escalate=())
    made = created_at(store, request_id)
    assert store.run_due_steps(now=made + timedelta(minutes=29)) == []
    assert reminders_queued(store, request_id) == []
    [first] = store.run_due_steps(now=made + timedelta(minutes=31))
    assert (first.kind, first.outcome) == ("remind", "done")
    assert reminders_queued(store, request_id) == ["alice"]
    assert store.run_due_steps(now=made + timedelta(minutes=32)) == []  # each step once
    [second] = store.run_due_steps(now=made + timedelta(hours=2, minutes=1))
    assert second.outcome == "done"
    assert reminders_queued(store, request_id) == ["alice", "alice"]
    reminded = list(store.audit_entries(request_id=request_id, action="request.reminded"))
    assert [(entry.actor, entry.channel, entry.data["at"]) for entry in reminded] == [
        ("system", "sweeper", "30m"),
        ("system", "sweeper", "2h"),
    ]


def test_after_downtime_only_the_latest_overdue_reminder_fires_and_every_escalation_runs(
    store: Store,
) -> None:
    people(store)
    request_id = ask(store)
    made = created_at(store, request_id)
    ran = store.run_due_steps(now=made + timedelta(hours=13))
    assert sorted((step.kind, step.payload.get("at"), step.outcome) for step in ran) == [
        ("escalate", None, "done"),
        ("escalate", None, "done"),
        ("remind", "2h", "done"),
        ("remind", "30m", "superseded"),
    ]
    [reminded] = store.audit_entries(request_id=request_id, action="request.reminded")
    assert reminded.data["superseded"] == 1
    assert reminders_queued(store, request_id) == ["alice"]  # sent before the escalations' notices
    assert store.get_request(request_id).rule.approvers == ("alice", "group:oncall", "cto")


def test_an_escalation_adds_approvers_who_can_then_decide_and_tells_only_them(store: Store) -> None:
    people(store)
    request_id = ask(store, remind=())
    made = created_at(store, request_id)
    with pytest.raises(NotAnApprover):
        store.decide(request_id, Approve(), actor="dave")
    store.run_due_steps(now=made + timedelta(hours=4, seconds=1))
    request = store.get_request(request_id)
    assert request.rule.approvers == ("alice", "group:oncall")  # alice keeps hers
    [escalated] = store.audit_entries(request_id=request_id, action="request.escalated")
    assert escalated.data["added"] == ["group:oncall"]
    assert escalated.data["notified"] == ["dave", "erin"]
    notices = [(row.recipient, row.event) for row in store.outbox_for(request_id) if row.message == "notice"]
    assert sorted(notices) == [
        ("alice", "request.created"),
        ("dave", "request.escalated"),
        ("erin", "request.escalated"),
    ]
    listed = store.list_requests(approver="group:oncall")
    assert [item.id for item in listed] == [request_id]
    decided = store.decide(request_id, Approve(), actor="dave")
    assert decided.status.value == "approved"


def test_a_decided_request_gets_no_further_steps(store: Store) -> None:
    people(store)
    request_id = ask(store)
    made = created_at(store, request_id)
    store.run_due_steps(now=made + timedelta(minutes=31))
    store.decide(request_id, Approve(), actor="alice")
    ran = store.run_due_steps(now=made + timedelta(hours=13))
    assert {step.outcome for step in ran} == {"skipped"}
    assert actions(store, request_id).count("request.reminded") == 1
    assert "request.escalated" not in actions(store, request_id)
    assert store.get_request(request_id).rule.approvers == ("alice",)


def test_webhooks_that_want_them_are_told_of_reminders_and_escalations(store: Store) -> None:
    people(store)
    wanted, _ = store.add_webhook(
        "https://hooks.example.com/a", events=["request.reminded", "request.escalated"], actor="test"
    )
    store.add_webhook("https://hooks.example.com/b", events=["request.decided"], actor="test")
    request_id = ask(store)
    store.run_due_steps(now=created_at(store, request_id) + timedelta(hours=4, minutes=1))
    events = [(row.event, row.target) for row in store.outbox_for(request_id) if row.message == "event"]
    assert sorted(events) == [("request.escalated", wanted.id), ("request.reminded", wanted.id)]


def test_escalating_a_request_anyone_may_decide_only_tells_the_new_people(store: Store) -> None:
    people(store)
    rule = RequestRule(channels=("chat",), escalate=(Escalation("1h", ("dave",)),))
    new = NewRequest(
        thread_id="t-open",
        tool_call_id="c1",
        tool_name="send_email",
        args={},
        description="Send",
        deadline=utcnow() + timedelta(hours=2),
        rule=rule,
    )
    request_id = store.create_request(new)[0].id
    store.run_due_steps(now=created_at(store, request_id) + timedelta(hours=1, seconds=1))
    assert store.get_request(request_id).rule.approvers == ()  # not narrowed to dave
    assert [row.recipient for row in store.outbox_for(request_id) if row.message == "notice"] == ["dave"]
    assert store.decide(request_id, Approve(), actor="erin").status.value == "approved"


def test_a_sweep_that_takes_a_page_of_steps_leaves_a_request_cut_by_it_whole(store: Store) -> None:
    people(store)
    first, second = ask(store, "c1", escalate=()), ask(store, "c2", escalate=())
    later = utcnow() + timedelta(hours=3)
    ran = store.run_due_steps(now=later, limit=3)  # c1's two reminders, and one of c2's
    assert {step.request_id for step in ran} == {first}
    ran = store.run_due_steps(now=later, limit=3)
    assert sorted((step.request_id, step.outcome) for step in ran) == [
        (second, "done"),
        (second, "superseded"),
    ]
    for request_id in (first, second):
        assert actions(store, request_id).count("request.reminded") == 1


def test_a_drafting_request_waits_for_its_steps_until_it_is_pending(store: Store) -> None:
    people(store)
    rule = RequestRule(approvers=("alice",), channels=("chat",), remind=("30m",))
    new = NewRequest(
        thread_id="t-draft",
        tool_call_id="c1",
        tool_name="send_email",
        args={},
        description="Send",
        deadline=utcnow() + timedelta(hours=2),
        rule=rule,
        drafting=True,
    )
    request_id = store.create_request(new)[0].id
    later = created_at(store, request_id) + timedelta(minutes=31)
    assert store.run_due_steps(now=later) == []  # args still streaming: nobody to remind yet
    store.update_draft(request_id, args={"to": "bob"}, ready=True)
    [ran] = store.run_due_steps(now=later)
    assert (ran.kind, ran.outcome) == ("remind", "done")
    assert reminders_queued(store, request_id) == ["alice"]


def test_steps_survive_a_restart_of_the_store(sqlite_path: Path) -> None:
    first = SQLiteStore(sqlite_path)
    people(first)
    request_id = ask(first)
    made = created_at(first, request_id)
    first.close()
    again = open_store(f"sqlite:///{sqlite_path}")
    try:
        ran = again.run_due_steps(now=made + timedelta(hours=4, minutes=1))
        assert sorted((step.kind, step.outcome) for step in ran) == [
            ("escalate", "done"),
            ("remind", "done"),
            ("remind", "superseded"),
        ]
        assert again.get_request(request_id).rule.approvers == ("alice", "group:oncall")
    finally:
        again.close()


def test_two_sweepers_at_once_run_each_step_once(store: Store) -> None:
    people(store)
    request_ids = [ask(store, f"c{index}", escalate=()) for index in range(20)]
    later = utcnow() + timedelta(minutes=40)
    barrier = threading.Barrier(2)
    results: list[int] = []

    def sweep() -> None:
        barrier.wait()
        results.append(len(store.run_due_steps(now=later)))

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(results) == 20
    for request_id in request_ids:
        assert actions(store, request_id).count("request.reminded") == 1


# -- through a server: the sweeper, the channels -------------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[timedelta]:
    """The sweeper's clock for steps, moved by the test: `clock[0]` ahead of real time."""
    ahead = [timedelta(0)]
    monkeypatch.setattr(step_ops, "due_clock", lambda: utcnow() + ahead[0])
    return ahead


QUICK = ServerSettings(sweep_interval=0.05)


def test_the_servers_sweeper_reminds_through_the_channel_across_a_restart(
    sqlite_store: Store, clock: list[timedelta]
) -> None:
    people(sqlite_store)
    sqlite_store.set_address("alice", "recording", "A-1", actor="test")
    chat = RecordingChannel("chat")
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(sqlite_store, QUICK, channels=registry):
        request_id = ask(sqlite_store, escalate=())
        wait_until(lambda: [item.action for item in chat.recorded] == ["send"])
    clock[0] = timedelta(hours=3)  # the server was down past both reminders
    with LiveServer(sqlite_store, QUICK, channels=registry):
        wait_until(lambda: [item.action for item in chat.recorded] == ["send", "remind"])
    remind = chat.recorded[1]
    assert remind.target == "A-1" and remind.ref == chat.recorded[0].ref  # under the first message
    assert remind.notice is not None and remind.notice.reminder is not None
    assert remind.notice.reminder.startswith("⏰ Reminder: still waiting for your decision")
    assert actions(sqlite_store, request_id).count("request.reminded") == 1


def test_a_slack_reminder_is_a_reply_in_the_notices_thread(
    sqlite_store: Store, clock: list[timedelta]
) -> None:
    with slack_server(sqlite_store) as slack:
        request_id = slack.ask(hours=24, remind=("30m",))
        [notice] = slack.sent_to("U-ALICE")
        clock[0] = timedelta(minutes=31)
        wait_until(lambda: len(slack.fake.of("chat.postMessage")) == 2)
        reply = slack.fake.of("chat.postMessage")[1].body
        assert reply["channel"] == "D-ALICE"
        assert reply["thread_ts"] == "1700000000.000001"
        assert reply["text"].startswith("⏰ Reminder: still waiting for your decision")
        assert "send_email" in reply["text"]
        assert notice["channel"] == "U-ALICE"
        assert actions(slack.store, request_id).count("request.reminded") == 1


# -- the API, the request page, the CLI ----------------------------------------------------------

SERVER_RULES = """
tools:
  send_email:
    requires_approval: true
    approvers: [alice]
    remind: [30m]
    escalate: [{after: 4h, to: [group:oncall]}]
"""


def test_the_api_plans_the_servers_steps_and_its_view_and_the_page_show_them(sqlite_store: Store) -> None:
    people(sqlite_store)
    sqlite_store.replace_rules(RuleSet.from_yaml(SERVER_RULES), actor="test")
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=60)) as live:
        with live.client(live.user("bot", "agent")) as agent:
            asked = agent.post(
                "/v1/requests",
                json={"thread_id": "t1", "tool_call_id": "c1", "tool": "send_email", "args": {"to": "x"}},
            )
            assert asked.status_code == 201, asked.text
            request_id = asked.json()["id"]
            refused = agent.post(
                "/v1/requests",
                json={
                    "thread_id": "t1",
                    "tool_call_id": "c2",
                    "tool": "other",
                    "args": {},
                    "rule": {"remind": ["0s"]},
                },
            )
            assert refused.status_code == 422 and "rule.remind" in refused.text
        made = created_at(sqlite_store, request_id)
        sqlite_store.run_due_steps(now=made + timedelta(hours=5))
        with live.client(live.user("alice")) as alice:
            view = alice.get(f"/v1/requests/{request_id}").json()
        assert view["approvers"] == ["alice", "group:oncall"]
        assert [(step["kind"], step["outcome"]) for step in view["steps"]] == [
            ("remind", "done"),
            ("escalate", "done"),
        ]
        assert view["steps"][1]["to"] == ["group:oncall"]
        assert view["steps_summary"].startswith("reminded 1×, escalated to group:oncall at ")
        login = login_link(sqlite_store, live.settings, "dave")
        with httpx.Client(base_url=live.url, timeout=30) as browser:
            page = browser.get(login.removeprefix(live.url))
            token = re.search(r'name="token" value="([^"]+)"', page.text)
            assert token is not None
            browser.post("/login", data={"token": token.group(1)})
            shown = browser.get(f"/requests/{request_id}")
        assert shown.status_code == 200  # dave sees it: the escalation made him an approver
        said = re.search(r'id="steps-said">([^<]*)<', shown.text)
        assert said is not None and "reminded 1×, escalated to group:oncall at" in html.unescape(
            said.group(1)
        )


def test_explain_lists_the_steps_and_says_which_never_come(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "defaults: {deadline: 10h}\n"
        "tools:\n"
        "  send_email: {requires_approval: true, remind: [30m, 50%, 20h],"
        " escalate: [{after: 4h, to: [group:oncall]}]}\n",
        encoding="utf-8",
    )
    result = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None}).invoke(
        cli_app, ["--db", str(tmp_path / "x.db"), "explain", "send_email", "--rules", str(rules)]
    )
    assert result.exit_code == 0, result.output
    assert "reminders: 30m, 50% (after 5h), 20h (at or after the 10h deadline: never)" in result.output
    assert "escalation: after 4h, add group:oncall" in result.output


def test_a_channel_without_threads_sends_the_notice_again_led_by_the_reminder(sqlite_store: Store) -> None:
    class Plain(RecordingChannel):
        remind = Channel.remind  # the contract's default

    plain = Plain("plain")
    request = sqlite_store.get_request(ask(sqlite_store, hours=3))
    notice = build_notice(
        request,
        approver="alice",
        link=None,
        request_url="http://x/requests/req_1",
        now=utcnow(),
        reminder=True,
    )
    asyncio.run(plain.remind(notice, "A-1", {"n": 1}))
    [sent] = plain.recorded
    assert sent.action == "send" and sent.notice is not None
    assert sent.notice.title.startswith("⏰ Reminder: still waiting for your decision (")
    assert sent.notice.title.endswith(" · AI wants to run: send_email")


def test_show_says_what_the_steps_did(sqlite_path: Path) -> None:
    store = SQLiteStore(sqlite_path)
    try:
        people(store)
        request_id = ask(store)
        store.run_due_steps(now=created_at(store, request_id) + timedelta(hours=4, minutes=1))
    finally:
        store.close()
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    shown = runner.invoke(cli_app, ["--db", str(sqlite_path), "show", request_id, "--as", "alice"])
    assert shown.exit_code == 0, shown.output
    assert "reminders: reminded 1×, escalated to group:oncall at " in shown.output
    assert "next: escalation to cto at " in shown.output


def test_show_through_a_server_says_what_the_steps_did_as_show_on_the_database(sqlite_store: Store) -> None:
    people(sqlite_store)
    request_id = ask(sqlite_store)
    sqlite_store.run_due_steps(now=created_at(sqlite_store, request_id) + timedelta(hours=4, minutes=1))
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=60)) as live:
        run = cli_for(live, live.user("alice"))
        shown = run("show", request_id)
        as_json = run("show", request_id, "--json")
    assert shown.exit_code == 0, shown.output
    assert "reminders: reminded 1×, escalated to group:oncall at " in shown.output
    assert "next: escalation to cto at " in shown.output
    assert as_json.exit_code == 0, as_json.output
    steps = json.loads(as_json.output)["steps"]
    local = [step.to_dict() for step in sqlite_store.steps_of(request_id)]
    assert steps == local and [step["outcome"] for step in steps] == ["superseded", "done", "done", None]
