"""The rules editor (`/admin/rules`) and the audit log page (`/admin/audit`) over HTTP, signed in
as a person: htmx and plain forms, what a bad edit or a stale one changes (nothing), a revert,
the filters, verify and anchor; admins only, a refusal audited."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff.audit import AuditAnchor
from signoff.store import SQLiteStore

from .live import LiveServer
from .test_inbox import HTMX, Person

FORM = {
    "layer_defaults": "",
    "layer_tools": "send_email:\n  requires_approval: true\n  approvers: [bob]\n",
    "layer_services": "",
    "layer_agents": "",
    "layer_apps": "",
    "sample_tool": "send_email",
    "sample_agent": "support-bot",
    "sample_app": "prod",
    "sample_requester": "",
    "sample_args": "",
}
PREVIEWED = re.compile(r'name="version" value="(\d+)">\s*<input type="hidden" name="previewed" value="(\w+)"')


@pytest.fixture
def server(sqlite_store: SQLiteStore) -> Iterator[LiveServer]:
    alice = {"requires_approval": True, "approvers": ["alice"]}
    sqlite_store.set_layer("tool", "send_email", alice, actor="t")
    with LiveServer(sqlite_store) as live:
        yield live


@pytest.fixture
def root(server: LiveServer) -> Iterator[Person]:
    person = Person(server, "root", "admin")
    yield person
    person.close()


def post(person: Person, path: str, form: dict[str, str], *, htmx: bool = True) -> Any:
    return person.client.post(path, data={**form, "csrf_token": person.csrf}, headers=HTMX if htmx else {})


def previewed(html: str) -> dict[str, str]:
    found = PREVIEWED.search(html)
    assert found, "the preview has no Apply"
    return {"version": found.group(1), "previewed": found.group(2)}


def test_preview_shows_the_change_and_the_call_under_both_then_apply_applies_it(
    server: LiveServer, root: Person
) -> None:
    store = server.store
    page = root.client.get("/admin/rules")
    assert page.status_code == 200
    assert "approvers:\n  - alice" in page.text or "approvers:\n- alice" in page.text  # the editor holds them

    shown = post(root, "/admin/rules/preview", FORM)
    assert shown.status_code == 200
    assert "1 entry would change" in shown.text
    assert "would ask alice (approve, edit, reject, respond), 1d, then reject." in shown.text
    assert "would ask bob (approve, edit, reject, respond), 1d, then reject." in shown.text
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}

    applied = post(root, "/admin/rules/apply", {**FORM, **previewed(shown.text)})
    assert applied.status_code == 200 and applied.headers["hx-redirect"] == "/admin/rules?applied=2"
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["bob"]}
    [entry] = list(store.audit_entries(action="rules.imported"))
    assert (entry.actor, entry.channel) == ("root", "web")
    assert entry.data["before"]["tools"]["send_email"]["approvers"] == ["alice"]
    assert entry.data["after"]["tools"]["send_email"]["approvers"] == ["bob"]
    after = root.client.get("/admin/rules?applied=2")
    assert "Applied: the rules are at version 2." in after.text
    assert f"#{entry.seq}" in after.text and "Revert #" in after.text


def test_apply_applies_only_what_was_previewed_at_the_version_previewed(
    server: LiveServer, root: Person
) -> None:
    store = server.store
    shown = post(root, "/admin/rules/preview", FORM)
    seen = previewed(shown.text)
    edited = post(root, "/admin/rules/apply", {**FORM, "layer_agents": "bot: {hitl_disabled: true}", **seen})
    assert edited.status_code == 409 and "changed since the preview" in edited.text
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="someone")  # meanwhile
    stale = post(root, "/admin/rules/apply", {**FORM, **seen})
    assert stale.status_code == 409 and "the rules changed since version 1" in stale.text
    assert "tool deploy" in stale.text  # the new preview shows what applying would now undo
    unpreviewed = post(root, "/admin/rules/apply", FORM)
    assert unpreviewed.status_code == 422 and "Preview the change first" in unpreviewed.text
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}
    assert store.get_layer("tool", "deploy") == {"requires_approval": True}
    assert len(store.rule_history()) == 2  # the two set_layer calls; nothing from the page


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"layer_tools": "send_email: [oops"}, "Tools: not valid YAML"),
        ({"layer_agents": "- a list"}, "Agents: write a mapping (name: settings), not a list"),
        ({"layer_tools": "x: {allowed_decisions: [nah]}"}, "tools.x.allowed_decisions.0"),
        ({"layer_apps": "prod: {hitl_requried: [x]}"}, "apps.prod.hitl_requried"),
        ({"sample_args": "[1]"}, "The args must be a JSON object"),
    ],
)
def test_a_bad_edit_says_what_is_wrong_and_changes_nothing(
    server: LiveServer, root: Person, changes: dict[str, str], said: str
) -> None:
    for htmx in (True, False):
        answer = post(root, "/admin/rules/preview", {**FORM, **changes}, htmx=htmx)
        assert answer.status_code == 422
        assert said in answer.text.replace("&#39;", "'")
        assert 'role="alert"' in answer.text
    assert server.store.rules_version() == 1


def test_without_htmx_the_forms_still_work(server: LiveServer, root: Person) -> None:
    shown = post(root, "/admin/rules/preview", FORM, htmx=False)
    assert shown.status_code == 200 and "<h1>Rules</h1>" in shown.text and "Apply these rules" in shown.text
    applied = post(root, "/admin/rules/apply", {**FORM, **previewed(shown.text)}, htmx=False)
    assert applied.status_code == 303 and applied.headers["location"] == "/admin/rules?applied=2"
    [change] = server.store.rule_history(limit=1)
    reverted = post(root, "/admin/rules/revert", {"seq": str(change.seq)}, htmx=False)
    assert reverted.status_code == 303
    assert server.store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}
    again = post(root, "/admin/rules/revert", {"seq": str(change.seq)}, htmx=False)
    assert again.status_code == 409 and "changed again after change" in again.text


def test_the_audit_page_filters_verifies_and_anchors(server: LiveServer, root: Person) -> None:
    store = server.store
    store.record("access.refused", actor="mallory", channel="api", data={"path": "/admin"})
    rules = root.client.get("/admin/audit", params={"kind": "rules"})
    assert rules.status_code == 200
    assert ">rules.set</span>" in rules.text and ">access.refused</span>" not in rules.text
    assert "Data (before and after)" in rules.text
    assert 'href="/v1/audit/export?kind=rules&amp;format=csv"' in rules.text
    mallory = root.client.get("/admin/audit", params={"actor": "mallory"})
    assert ">access.refused</span>" in mallory.text and ">rules.set</span>" not in mallory.text
    bad = root.client.get("/admin/audit", params={"since": "whenever"})
    assert bad.status_code == 200 and "since: &#39;whenever&#39; is not a date or time" in bad.text

    verified = root.client.get("/admin/audit/verify", headers=HTMX)
    assert "Verified:" in verified.text and "every hash and link" in verified.text
    anchored = root.client.get("/admin/audit/anchor", headers=HTMX)
    value = re.search(r'id="anchor-value" readonly value="([^"]+)"', anchored.text)
    assert value and AuditAnchor.parse(value.group(1)) == store.audit_anchor()
    against = root.client.get("/admin/audit/verify", params={"anchor": value.group(1)}, headers=HTMX)
    assert f"extends the anchor at entry {store.audit_anchor().seq}" in against.text
    wrong = root.client.get("/admin/audit/verify", params={"anchor": "nonsense"}, headers=HTMX)
    assert "not an audit anchor" in wrong.text
    plain = root.client.get("/admin/audit/verify")  # without htmx: the page, with the result
    assert "<h1>Audit log</h1>" in plain.text and "Verified:" in plain.text


def test_the_audit_page_reads_a_long_log_a_page_at_a_time(server: LiveServer, root: Person) -> None:
    for index in range(60):
        server.store.record("test.entry", actor=f"n{index}", channel="cli")
    first = root.client.get("/admin/audit", params={"kind": "test"}).text
    assert first.count('class="audit-entry"') == 50 and "by <b>n59</b>" in first
    older = re.search(r'href="/admin/audit\?([^"]+)" rel="next"', first)
    assert older is not None
    second = root.client.get("/admin/audit?" + older.group(1).replace("&amp;", "&")).text
    assert second.count('class="audit-entry"') == 10 and "by <b>n9</b>" in second and "n10<" not in second


def test_the_admin_pages_are_for_admins_and_a_refusal_is_audited(server: LiveServer) -> None:
    alice = Person(server, "alice")
    try:
        for path in ("/admin/rules", "/admin/audit", "/admin/audit/verify"):
            refused = alice.client.get(path)
            assert refused.status_code == 403 and "alice is not an admin" in refused.text
        posted = post(alice, "/admin/rules/revert", {"seq": "1"})
        assert posted.status_code == 403
    finally:
        alice.close()
    refusals = [e.data.get("path") for e in server.store.audit_entries(action="access.refused")]
    assert {"/admin/rules", "/admin/audit", "/admin/rules/revert"} <= set(refusals)
    assert server.store.get_layer("tool", "send_email") is not None
