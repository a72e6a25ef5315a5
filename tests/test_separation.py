"""Four eyes (issue 20 §3): a rule's `separation: requester` keeps the person the agent acts for
from approving its request, `requester_and_creator` also the owner of the agent's token; quorum
votes count distinct people and never the separated ones; the separated may still reject;
refusals say why, are audited and answer 403; contradictory rules are refused when loaded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from signoff import Approve, ConfigError, Edit, NotAnApprover, Reject, Respond, SeparationOfDuties
from signoff._util import utcnow
from signoff.cli import app
from signoff.decisions import Decision
from signoff.requests import NewRequest, RequestStatus
from signoff.rules.effective import RequestRule, Rule
from signoff.rules.model import RuleSet
from signoff.rules.resolve import Resolver
from signoff.store import Store
from signoff.unattended import decide_unattended

from .conftest import url_for
from .live import LiveServer

ROLES = ("requester", "owner", "other")
"""Who tries to decide: the person the agent acts for, the owner of the agent's token, another approver."""
DECISIONS: dict[str, Decision] = {
    "approve": Approve(),
    "edit": Edit(args={"amount": 5}),
    "respond": Respond(message="done by hand"),
    "reject": Reject(message="no"),
}


def refused(role: str, separation: str | None, kind: str) -> bool:
    """What the rule says: only approve, edit and respond are kept from the separated people."""
    if kind == "reject" or separation is None or role == "other":
        return False
    return role == "requester" or separation == "requester_and_creator"


def ask(
    store: Store,
    call: str,
    *,
    separation: str | None,
    quorum: int = 1,
    requester: str | None = "carol",
    owner: str | None = "dave",
    approvers: tuple[str, ...] = ("carol", "dave", "erin", "frank"),
) -> str:
    new = NewRequest(
        thread_id="t",
        tool_call_id=call,
        tool_name="pay",
        args={"amount": 10},
        description="Pay 10",
        deadline=utcnow() + timedelta(hours=1),
        requester=requester,
        rule=RequestRule(approvers=approvers, quorum=quorum, separation=separation),  # type: ignore[arg-type]
        actor="bot",
        creator_owner=owner,
    )
    return store.create_request(new)[0].id


def person(role: str) -> str:
    return {"requester": "carol", "owner": "dave", "other": "erin"}[role]


def decision_refusals(store: Store, request_id: str) -> list[dict[str, Any]]:
    return [
        {"actor": entry.actor, **entry.data}
        for entry in store.audit_entries(request_id=request_id)
        if entry.action == "decision.refused"
    ]


# -- the store (the library and the CLI's local path) ---------------------------------------------


@pytest.mark.parametrize("separation", [None, "requester", "requester_and_creator"])
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("kind", list(DECISIONS))
def test_each_role_and_decision(store: Store, separation: str | None, role: str, kind: str) -> None:
    request_id = ask(store, f"{role}-{kind}", separation=separation)
    actor = person(role)
    if refused(role, separation, kind):
        with pytest.raises(SeparationOfDuties) as caught:
            store.decide(request_id, DECISIONS[kind], actor=actor)
        assert isinstance(caught.value, NotAnApprover)
        assert caught.value.status_code == 403
        assert f"separation: {separation}" in caught.value.message
        assert store.get_request(request_id).status is RequestStatus.PENDING
        [entry] = decision_refusals(store, request_id)
        assert entry["actor"] == actor and entry["type"] == kind
        assert "four eyes" in entry["reason"]
    else:
        decided = store.decide(request_id, DECISIONS[kind], actor=actor)
        assert decided.is_terminal
        assert decision_refusals(store, request_id) == []


def test_the_request_names_who_is_kept_out(store: Store) -> None:
    plain = store.get_request(ask(store, "plain", separation=None))
    assert plain.rule.separated == ()
    requester = store.get_request(ask(store, "req", separation="requester"))
    assert requester.rule.separated == ("carol",)
    both = store.get_request(ask(store, "both", separation="requester_and_creator"))
    assert both.rule.separated == ("carol", "dave", "bot")
    assert both.to_dict()["separated"] == ["carol", "dave", "bot"]
    created = [e for e in store.audit_entries(request_id=both.id) if e.action == "request.created"]
    assert created[0].data["separated"] == ["carol", "dave", "bot"]
    nobody_asked_for = store.get_request(ask(store, "none", separation="requester", requester=None))
    assert nobody_asked_for.rule.separated == ()


def test_a_quorum_counts_distinct_people_and_never_the_separated(store: Store) -> None:
    request_id = ask(store, "quorum", separation="requester_and_creator", quorum=2)
    for kept_out in ("carol", "dave"):
        with pytest.raises(SeparationOfDuties):
            store.decide(request_id, Approve(), actor=kept_out)
    assert store.get_request(request_id).approvals == ()
    counted = store.decide(request_id, Approve(), actor="erin")
    assert counted.status is RequestStatus.PENDING and counted.approvals == ("erin",)
    with pytest.raises(Exception, match="already approved"):
        store.decide(request_id, Approve(), actor="erin")
    assert store.decide(request_id, Approve(), actor="frank").status is RequestStatus.APPROVED
    assert [entry["actor"] for entry in decision_refusals(store, request_id)] == ["carol", "dave"]


def test_a_separated_person_may_reject_a_quorum_request(store: Store) -> None:
    request_id = ask(store, "quorum-reject", separation="requester", quorum=2)
    store.decide(request_id, Approve(), actor="erin")
    assert store.decide(request_id, Reject(message="not mine after all"), actor="carol").status is (
        RequestStatus.REJECTED
    )


def test_an_unattended_run_may_not_approve_under_separation(store: Store) -> None:
    request_id = ask(store, "cron", separation="requester")
    with pytest.raises(SeparationOfDuties, match="unattended run may not approve"):
        decide_unattended(store, store.get_request(request_id), "pay")
    assert store.get_request(request_id).status is RequestStatus.CANCELLED
    plain = ask(store, "cron-plain", separation=None)
    assert decide_unattended(store, store.get_request(plain), "pay").status is RequestStatus.APPROVED


def test_without_separation_the_requester_approves_their_own(store: Store) -> None:
    """Seed 004's `approvers: [requester]` stays valid where separation is not set."""
    request_id = ask(store, "seed", separation=None, approvers=("requester",))
    assert store.get_request(request_id).approvers == ("carol",)
    assert store.decide(request_id, Approve(), actor="carol").status is RequestStatus.APPROVED


# -- rules: resolution, explain, contradictions ----------------------------------------------------

PAY = {"requires_approval": True, "approvers": ["requester", "group:finance"], "separation": "requester"}


def test_rules_resolve_the_separation_and_a_later_layer_may_turn_it_off() -> None:
    rules = RuleSet.from_dict(
        {
            "tools": {"pay": PAY},
            "apps": {
                "sandbox": {
                    "interrupt_overrides": {"pay": {"separation": "none", "approvers": ["requester"]}}
                }
            },
        }
    )
    resolver = Resolver(rules)
    assert resolver.explain("pay").rule.separation == "requester"
    assert resolver.explain("pay", app="sandbox").rule.separation is None
    explained = resolver.explain("pay", requester="carol").to_dict("carol")
    assert explained["separation"] == "requester"
    assert explained["four_eyes"] == "four eyes: the requester may not approve"
    assert "carol (the requester), group:finance; four eyes" in explained["who_decides"]
    sandbox = resolver.explain("pay", app="sandbox").to_dict()
    assert sandbox["four_eyes"].startswith("no separation: the requester may approve")
    assert Rule(ask=True, separation="requester").for_request().separation == "requester"


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        ({"tools": {"pay": {**PAY, "approvers": ["requester"]}}}, "names only requester"),
        ({"tools": {"pay": {"requires_approval": True, "separation": "requester"}}}, "names no approvers"),
        (
            {"tools": {"pay": {**PAY, "approvers": ["requester", "erin"], "quorum": 2}}},
            "fewer than the quorum of 2",
        ),
        (  # the layers contradict only together: the app's separation over the tool's approvers
            {
                "tools": {"pay": {"requires_approval": True, "approvers": ["requester"]}},
                "apps": {"prod": {"interrupt_overrides": {"*": {"separation": "requester_and_creator"}}}},
            },
            "app 'prod'",
        ),
        (  # only one agent, under one app, ends up with the requester alone
            {
                "tools": {"pay": PAY},
                "agents": {
                    "helper": {"interrupt_on": {"pay": {"approvers": ["requester", "erin"]}}},
                    "payer": {"interrupt_on": {"pay": {"approvers": ["requester"]}}},
                },
                "apps": {
                    "dev": {"interrupt_overrides": {"*": {"separation": "none"}}},
                    "prod": {"interrupt_overrides": {"p*": {"channels": ["inbox"]}}},
                },
            },
            "tool 'pay' agent 'payer'",
        ),
    ],
)
def test_contradictory_rules_are_refused_at_load(rules: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match="contradictory rules") as caught:
        RuleSet.from_dict(rules)
    assert says in caught.value.message


def test_a_group_may_meet_any_quorum_and_the_seed_case_loads() -> None:
    RuleSet.from_dict({"tools": {"pay": {**PAY, "quorum": 3}}})
    RuleSet.from_dict({"tools": {"pay": {"requires_approval": True, "approvers": ["requester"]}}})


def test_the_layer_api_refuses_a_contradiction_and_changes_nothing(store: Store) -> None:
    store.set_layer("tool", "pay", {"requires_approval": True, "approvers": ["requester"]}, actor="test")
    version = store.rules_version()
    override = {"interrupt_overrides": {"pay": {"separation": "requester"}}}
    with pytest.raises(ConfigError, match="contradictory"):
        store.set_layer("app", "prod", override, actor="test")
    assert store.get_layer("app", "prod") is None
    assert store.rules_version() == version
    # fine while pay's own entry names finance; deleting it would leave `*`'s requester alone
    store.set_layer("tool", "*", {"requires_approval": True, "approvers": ["requester"]}, actor="test")
    finance = {"requires_approval": True, "approvers": ["group:finance"]}
    store.set_layer("tool", "pay", finance, actor="test")
    store.set_layer("app", "prod", override, actor="test")
    with pytest.raises(ConfigError, match="contradictory rules for tool 'pay' app 'prod'"):
        store.delete_layer("tool", "pay", actor="test")
    assert store.get_layer("tool", "pay") == finance


# -- tokens know their owner -----------------------------------------------------------------------


def test_an_agents_token_belongs_to_the_admin_who_issued_it(store: Store) -> None:
    store.add_user("dave", role="admin", actor="test")
    store.add_user("bot", role="agent", actor="test")
    _, agent_token = store.issue_credential("token", "bot", actor="dave")
    _, own_token = store.issue_credential("token", "dave", actor="test")
    assert agent_token.owner == "dave"
    assert own_token.owner == "dave"
    _, first, token = store.create_agent("bot2", ttl=None, actor="dave")
    assert token.owner == "dave"
    found = store.authenticate_token(first)
    assert found is not None and found[1] == "dave"
    assert store.get_credential(token.id).owner == "dave"  # type: ignore[union-attr]


# -- through a server: the API and the CLI ---------------------------------------------------------


@dataclass
class Scene:
    server: LiveServer
    store: Store
    bot: httpx.Client
    tokens: dict[str, str]

    def ask(self, call: str, *, quorum: int = 1, separation: str = "requester_and_creator") -> str:
        entry = {**PAY, "approvers": ["requester", "group:finance"], "separation": separation}
        if quorum > 1:
            entry["quorum"] = quorum
        self.store.set_layer("tool", "pay", entry, actor="test")
        body = {
            "thread_id": "t",
            "tool_call_id": call,
            "tool": "pay",
            "args": {"amount": 10},
            "requester": "carol",
        }
        response = self.bot.post("/v1/requests", json=body)
        assert response.status_code == 201, response.text
        request_id: str = response.json()["id"]
        return request_id


@pytest.fixture
def scene(store: Store) -> Iterator[Scene]:
    with LiveServer(store) as server:
        tokens = {name: server.user(name, groups=("finance",)) for name in ("carol", "dave", "erin", "frank")}
        store.update_user("dave", role="admin", actor="test")
        server.user("bot", "agent")
        secret, _ = store.issue_credential("token", "bot", actor="dave")
        with server.client(secret) as bot:
            yield Scene(server, store, bot, tokens)


def test_the_api_refuses_the_separated_with_403_and_says_why(scene: Scene) -> None:
    request_id = scene.ask("api")
    view = scene.bot.get(f"/v1/requests/{request_id}").json()
    assert view["separation"] == "requester_and_creator"
    assert view["separated"] == ["carol", "dave", "bot"]
    for name in ("carol", "dave"):
        with scene.server.client(scene.tokens[name]) as client:
            for kind in ("approve", "edit", "respond"):
                body: dict[str, Any] = {"type": kind}
                if kind == "edit":
                    body["args"] = {"amount": 5}
                if kind == "respond":
                    body["message"] = "paid by hand"
                answer = client.post(f"/v1/requests/{request_id}/decision", json=body)
                assert answer.status_code == 403, answer.text
                assert "four eyes" in answer.text
    assert scene.store.get_request(request_id).status is RequestStatus.PENDING
    refusals = decision_refusals(scene.store, request_id)
    assert {entry["actor"] for entry in refusals} == {"carol", "dave"}
    assert len(refusals) == 6
    with scene.server.client(scene.tokens["erin"]) as erin:
        assert erin.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code == 200


def test_the_api_lets_the_requester_reject(scene: Scene) -> None:
    request_id = scene.ask("api-reject", separation="requester")
    with scene.server.client(scene.tokens["carol"]) as carol:
        answer = carol.post(f"/v1/requests/{request_id}/decision", json={"type": "reject"})
    assert answer.status_code == 200, answer.text
    assert scene.store.get_request(request_id).status is RequestStatus.REJECTED


def test_the_api_quorum_skips_the_separated(scene: Scene) -> None:
    request_id = scene.ask("api-quorum", quorum=2)
    with scene.server.client(scene.tokens["carol"]) as carol:
        assert carol.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code == 403
    for name, status in (("erin", RequestStatus.PENDING), ("frank", RequestStatus.APPROVED)):
        with scene.server.client(scene.tokens[name]) as client:
            assert (
                client.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).status_code
                == 200
            )
        assert scene.store.get_request(request_id).status is status
    assert scene.store.get_request(request_id).approvals == ("erin", "frank")


def test_an_unattended_approval_is_refused_through_the_server(scene: Scene) -> None:
    request_id = scene.ask("api-cron", separation="requester")
    body = {"type": "approve", "on_behalf": "unattended"}
    answer = scene.bot.post(f"/v1/requests/{request_id}/decision", json=body)
    assert answer.status_code == 403, answer.text
    assert "unattended run may not approve" in answer.text
    assert decision_refusals(scene.store, request_id)


def test_the_cli_locally_and_against_the_server(scene: Scene) -> None:
    local_id, remote_id = scene.ask("cli-local"), scene.ask("cli-remote")
    local = CliRunner(env={"SIGNOFF_DB": url_for(scene.store), "SIGNOFF_URL": None, "COLUMNS": "200"})
    shown = local.invoke(app, ["show", local_id, "--as", "erin"])
    assert shown.exit_code == 0, shown.output
    assert "four eyes: the requester and the agent's owner may not approve (carol, dave, bot)" in shown.stdout
    no = local.invoke(app, ["approve", local_id, "--as", "carol"])
    assert no.exit_code == 1
    assert "four eyes" in no.stderr
    remote = CliRunner(env={"SIGNOFF_URL": scene.server.url, "SIGNOFF_TOKEN": scene.tokens["dave"]})
    no = remote.invoke(app, ["approve", remote_id])
    assert no.exit_code == 1
    assert "four eyes" in no.stderr
    assert scene.store.get_request(local_id).status is RequestStatus.PENDING
    assert scene.store.get_request(remote_id).status is RequestStatus.PENDING
    assert local.invoke(app, ["reject", local_id, "--as", "carol"]).exit_code == 0
    erin = CliRunner(env={"SIGNOFF_URL": scene.server.url, "SIGNOFF_TOKEN": scene.tokens["erin"]})
    assert erin.invoke(app, ["approve", remote_id]).exit_code == 0
    assert scene.store.get_request(local_id).status is RequestStatus.REJECTED
    assert scene.store.get_request(remote_id).status is RequestStatus.APPROVED


def test_explain_shows_which_applies(scene: Scene) -> None:
    scene.store.set_layer("tool", "pay", PAY, actor="test")
    scene.store.set_layer(
        "tool", "mail", {"requires_approval": True, "approvers": ["requester"]}, actor="test"
    )
    runner = CliRunner(env={"SIGNOFF_DB": url_for(scene.store), "SIGNOFF_URL": None, "COLUMNS": "200"})
    shown = runner.invoke(app, ["explain", "pay", "--requester", "carol"])
    assert "four eyes: the requester may not approve" in shown.stdout
    seed = runner.invoke(app, ["explain", "mail", "--requester", "carol"])
    assert "no separation: the requester may approve their own request" in seed.stdout
    as_json = json.loads(runner.invoke(app, ["explain", "pay", "--json"]).stdout)
    assert as_json["separation"] == "requester"
    with scene.server.client(scene.tokens["erin"]) as erin:
        assert erin.get("/v1/explain", params={"tool": "pay"}).json()["separation"] == "requester"


def test_the_inbox_offers_the_requester_only_reject_and_refuses_an_approval(scene: Scene) -> None:
    from .test_inbox import Person

    request_id = scene.ask("inbox", separation="requester")
    carol = Person(scene.server, "carol")
    try:
        page = carol.client.get(f"/requests/{request_id}")
        assert "four eyes: the requester may not approve (carol)" in page.text
        assert "you may not approve this request" in page.text
        assert 'data-action="approve"' not in page.text
        answer = carol.decide(request_id, type="approve")  # a form sent anyway
        assert answer.status_code == 403
        assert "Four eyes: you may not approve this request" in answer.text
        assert scene.store.get_request(request_id).status is RequestStatus.PENDING
        assert [entry["actor"] for entry in decision_refusals(scene.store, request_id)] == ["carol"]
        assert carol.decide(request_id, type="reject", message="not now").status_code == 200
    finally:
        carol.close()
    assert scene.store.get_request(request_id).status is RequestStatus.REJECTED


def test_a_chat_callback_from_the_requester_is_refused(store: Store) -> None:
    from signoff.channels import ChannelRegistry
    from signoff.channels.recording import RecordingChannel
    from signoff.server import ServerSettings

    from .test_channel_inbound import SECRET, callback

    registry = ChannelRegistry()
    registry.add(RecordingChannel("chat", secret=SECRET))
    store.set_layer("tool", "pay", PAY, actor="test")
    with LiveServer(store, ServerSettings(), channels=registry) as server:
        for name, address in (("carol", "U-CAROL"), ("erin", "U-ERIN")):
            server.user(name, groups=("finance",))
            store.set_address(name, "recording", address, actor="test")
        with server.client(server.user("bot", "agent")) as bot:
            body = {"thread_id": "t", "tool_call_id": "chat", "tool": "pay", "args": {}, "requester": "carol"}
            request_id = bot.post("/v1/requests", json=body).json()["id"]
        payload = {"request_id": request_id, "decision": {"type": "approve"}}
        refused = callback(server, {"sender": "U-CAROL", **payload})
        assert refused.json()["ok"] is False, refused.text
        assert "Four eyes: you may not approve this request" in refused.text
        assert store.get_request(request_id).status is RequestStatus.PENDING
        assert [entry["actor"] for entry in decision_refusals(store, request_id)] == ["carol"]
        assert callback(server, {"sender": "U-ERIN", **payload}).json()["ok"] is True
    assert store.get_request(request_id).status is RequestStatus.APPROVED


# -- chat cards and mail say who may not approve ---------------------------------------------------


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_every_channel_says_who_may_not_approve(sqlite_store: Store, locale: str) -> None:
    from signoff.channels import email_render, feishu_cards, slack_blocks, text, wecom
    from signoff.channels.notice import build_notice

    request = sqlite_store.get_request(ask(sqlite_store, "cards", separation="requester_and_creator"))
    url = "https://signoff.example/requests/" + request.id
    theirs = build_notice(request, approver="erin", link=None, request_url=url, locale=locale)  # type: ignore[arg-type]
    mine = build_notice(request, approver="carol", link=None, request_url=url, locale=locale)  # type: ignore[arg-type]
    assert theirs.four_eyes is not None and "carol, dave, bot" in theirs.four_eyes
    assert mine.four_eyes is not None and "carol" not in mine.four_eyes
    assert "approve" in theirs.decisions
    assert mine.decisions == ("reject",)
    sender = email_render.Sender(address="approvals@example.com", domain="example.com")
    for notice in (theirs, mine):
        said = notice.four_eyes
        rendered = [
            json.dumps(
                [block.to_dict() for block in slack_blocks.message_blocks(notice)], ensure_ascii=False
            ),
            text.notice_text(notice),
            json.dumps(wecom.template_card(notice, task_id="t"), ensure_ascii=False),
            json.dumps(feishu_cards.notice_card(notice), ensure_ascii=False),
        ]
        for shown in rendered:
            assert said in shown
        mail = email_render.notice_mail(notice, sender, "erin@example.com")
        bodies = [part.get_content() for part in mail.walk() if part.get_content_maintype() == "text"]
        assert all(said in body for body in bodies)
    from signoff.channels.texts import BUTTONS

    assert BUTTONS[locale]["approve"] not in text.notice_text(mine)  # type: ignore[index]
    assert BUTTONS[locale]["approve"] in text.notice_text(theirs)  # type: ignore[index]


def test_a_request_without_separation_says_nothing_of_four_eyes(sqlite_store: Store) -> None:
    from signoff.channels.notice import build_notice

    request = sqlite_store.get_request(ask(sqlite_store, "plain-card", separation=None))
    notice = build_notice(request, approver="carol", link=None, request_url="https://x/r")
    assert notice.four_eyes is None
    assert "approve" in notice.decisions


def test_the_migration_names_the_owners_of_tokens_issued_before(store: Store, tmp_path: Any) -> None:
    """0019's backfill, run again over tokens whose owner was not recorded: the issuer the audit
    log names (an agent created with its token, a token issued later), else a person's own name."""
    from signoff.store.postgres import PostgresStore
    from signoff.store.queries import migration_files

    store.add_user("dave", role="admin", actor="test")
    store.add_user("carol", actor="test")
    _, _, first = store.create_agent("bot", ttl=None, actor="dave")
    _, second = store.issue_credential("token", "bot", actor="erin")
    _, own = store.issue_credential("token", "carol", actor="dave")
    dialect = "postgres" if isinstance(store, PostgresStore) else "sqlite"
    files = migration_files(dialect)  # type: ignore[arg-type]
    [script] = [text for _, name, text in files if "token_owners" in name]  # its number is the merger's
    backfill = script[script.index("UPDATE credentials") :]
    if isinstance(store, PostgresStore):
        import psycopg
        from psycopg import sql

        from .conftest import POSTGRES_DSN

        assert POSTGRES_DSN is not None
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as pg:
            pg.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(store.schema)))
            pg.execute("UPDATE credentials SET owner_name = NULL")
            pg.execute(backfill.encode())
    else:
        import sqlite3

        connection = sqlite3.connect(store.url.removeprefix("sqlite:///"), isolation_level=None)
        connection.execute("UPDATE credentials SET owner_name = NULL")
        connection.execute(backfill)
        connection.close()
    owners = {token.id: token.owner for token in store.list_credentials("token")}
    assert owners == {first.id: "dave", second.id: "erin", own.id: "carol"}


def test_the_cli_sets_a_separation_and_refuses_a_contradiction(sqlite_store: Store) -> None:
    runner = CliRunner(env={"SIGNOFF_DB": url_for(sqlite_store), "SIGNOFF_URL": None, "COLUMNS": "200"})
    set_pay = ["tool", "set", "pay", "--requires-approval", "--approvers", "requester,group:finance"]
    done = runner.invoke(app, [*set_pay, "--separation", "requester", "--as", "admin"])
    assert done.exit_code == 0, done.output
    assert sqlite_store.get_layer("tool", "pay") == {**PAY}
    refused = runner.invoke(app, ["tool", "set", "pay", "--approvers", "requester", "--as", "admin"])
    assert refused.exit_code != 0
    assert "contradictory rules for tool 'pay'" in refused.output
    assert sqlite_store.get_layer("tool", "pay") == {**PAY}
    off = runner.invoke(app, ["tool", "set", "pay", "--separation", "", "--as", "admin"])
    assert off.exit_code == 0, off.output
    assert "separation" not in (sqlite_store.get_layer("tool", "pay") or {})


def test_the_admin_pages_show_who_owns_each_token(scene: Scene) -> None:
    from .test_inbox import Person

    dave = Person(scene.server, "dave")
    try:
        page = dave.client.get("/admin/agents/bot")
        assert page.status_code == 200, page.text
        assert '<td data-label="owner">dave</td>' in page.text
        assert '<td data-label="owner">test</td>' in page.text  # the token the test server issued
    finally:
        dave.close()
    with scene.server.client(scene.tokens["dave"]) as admin:
        owners = {token["owner"] for token in admin.get("/v1/tokens").json() if token["user"] == "bot"}
    assert owners == {"dave", "test"}


@pytest.mark.parametrize(
    ("approvers", "quorum", "refused"),
    [
        (("carol",), 1, True),  # only the requester
        (("carol", "dave"), 1, True),  # dave owns the agent's token
        (("carol", "erin"), 2, True),  # one left for a quorum of two
        (("carol", "erin"), 1, False),
        (("carol", "group:finance"), 2, False),  # a group may hold enough people
    ],
)
def test_a_request_nobody_could_approve_is_refused_when_asked(
    store: Store, approvers: tuple[str, ...], quorum: int, refused: bool
) -> None:
    def asking() -> str:
        return ask(store, "nobody", separation="requester_and_creator", approvers=approvers, quorum=quorum)

    if refused:
        with pytest.raises(ConfigError, match="four eyes"):
            asking()
        assert store.find_request("t", "nobody", created_by="bot") is None
    else:
        assert store.get_request(asking()).status is RequestStatus.PENDING


def test_an_ag_ui_approval_by_the_requester_is_refused_and_audited(scene: Scene) -> None:
    from .agui.support import run, run_body, types

    request_id = scene.ask("agui", separation="requester")
    interrupt = f"agui~{request_id}"
    approve = [{"interruptId": interrupt, "status": "resolved", "payload": "approved"}]
    events = run(scene.server, scene.tokens["carol"], run_body(resume=approve))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert "four eyes" in events[-1].message  # type: ignore[attr-defined]
    assert scene.store.get_request(request_id).status is RequestStatus.PENDING
    [entry] = decision_refusals(scene.store, request_id)
    assert entry["actor"] == "carol" and "four eyes" in entry["reason"]
    deny = [{"interruptId": interrupt, "status": "resolved", "payload": "denied"}]
    assert types(run(scene.server, scene.tokens["carol"], run_body(resume=deny)))[-1] == "RUN_FINISHED"
    assert scene.store.get_request(request_id).status is RequestStatus.REJECTED


def test_an_escalation_counts_as_someone_else_to_approve() -> None:
    escalated = {
        "requires_approval": True,
        "approvers": ["requester"],
        "separation": "requester",
        "escalate": [{"after": "1h", "to": ["group:oncall"]}],
    }
    rules = RuleSet.from_dict({"tools": {"pay": escalated}})
    assert Resolver(rules).explain("pay").rule.separation == "requester"


def test_a_standing_grant_never_covers_a_call_its_author_is_kept_from(store: Store) -> None:
    """Erin's grant for pay calls covers carol's next one, but not one made for erin herself."""
    from signoff.grants import GrantAsk

    def asked(call: str, requester: str) -> str:
        new = NewRequest(
            thread_id="t",
            tool_call_id=call,
            tool_name="pay",
            args={"amount": 10},
            description="Pay 10",
            deadline=utcnow() + timedelta(hours=1),
            requester=requester,
            agent="payer",
            rule=RequestRule(
                approvers=("carol", "erin", "frank"),
                separation="requester",
                max_grant=timedelta(hours=1),
            ),
            actor="bot",
        )
        return store.create_request(new)[0].id

    first = asked("first", "carol")
    store.decide(first, Approve(), actor="erin", grant=GrantAsk(lifetime=timedelta(minutes=30), when="true"))
    covered = store.get_request(asked("second", "carol"))
    assert covered.status is RequestStatus.APPROVED and covered.grant_id is not None
    own = store.get_request(asked("third", "erin"))
    assert own.status is RequestStatus.PENDING
    with pytest.raises(SeparationOfDuties):
        store.decide(own.id, Approve(), actor="erin")


def test_a_batch_skips_the_requests_four_eyes_keep_from_its_decider(scene: Scene) -> None:
    mine = scene.ask("batch-mine", separation="requester")
    body = {"thread_id": "t", "tool_call_id": "batch-theirs", "tool": "pay", "args": {}, "requester": "frank"}
    theirs = scene.bot.post("/v1/requests", json=body).json()["id"]
    with scene.server.client(scene.tokens["carol"]) as carol:
        answer = carol.post("/v1/requests/decide", json={"type": "approve", "ids": [mine, theirs]})
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["decided"] == [theirs]
    [skipped] = result["skipped"]
    assert skipped["id"] == mine and skipped["error"] == "SeparationOfDuties"
    assert "four eyes" in skipped["reason"]
    assert scene.store.get_request(mine).status is RequestStatus.PENDING
    assert scene.store.get_request(theirs).status is RequestStatus.APPROVED
    assert [entry["actor"] for entry in decision_refusals(scene.store, mine)] == ["carol"]
