"""Rules tried in shadow leave the rules' version alone (a shadow changes no answer), yet gates
see them come and go; a change applied in `mode: shadow` through the API (a whole change, marked
entries, one entry); the preview's read of recorded calls. SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import Client, Store
from signoff.errors import InvalidInput, RulesChanged
from signoff.outcome import Outcome
from signoff.pending import Pending
from signoff.rules.shadow_marks import marks_of
from tests.live import LiveServer
from tests.test_cli_remote import cli_for
from tests.test_shadow_rules import LIVE, MARKED, PROPOSED, call, entries, flushed, gate_on, gate_on_backend


def test_a_shadow_added_or_dropped_leaves_the_rules_version_alone(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    version, shadows = store.rules_and_shadows_version()
    assert version == store.rules_version()
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    assert store.rules_and_shadows_version() == (version, shadows + 1)
    # an edit prepared against the version before the shadow still applies
    store.set_layer("tool", "ls", {"requires_approval": False}, actor="root", if_version=version)
    store.drop_shadow_rules(shadow.id, actor="root")
    assert store.rules_and_shadows_version() == (version + 1, shadows + 2)
    added = [entry for entry in store.audit_entries(kind="rules") if entry.action == "rules.shadow_added"]
    assert added[0].data["version"] == version  # the rules in force it was tried against


def test_promote_bumps_both_versions(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    version, shadows = store.rules_and_shadows_version()
    assert store.promote_shadow_rules(shadow.id, actor="root") == version + 1
    assert store.rules_and_shadows_version() == (version + 1, shadows + 1)


def test_a_gate_sees_a_shadow_come_and_go(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    gate = gate_on(store)  # refreshes at each call
    assert gate.asks_nowhere("search")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    gate.resolver()
    assert gate.may_ask("search", "bot", "prod") and not gate.asks_nowhere("search")
    store.drop_shadow_rules(shadow.id, actor="root")
    gate.resolver()
    assert not gate.may_ask("search", "bot", "prod") and gate.asks_nowhere("search")


def test_a_gate_over_a_server_sees_a_shadow_added_after_it_started(live_server: LiveServer) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    with Client(live_server.url, live_server.user("bot", role="agent")) as client:
        gate = gate_on_backend(client)
        assert isinstance(gate.submit(call("search", "c0")), Outcome)
        version, shadows = client.rules_and_shadows_version()
        shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
        assert client.rules_and_shadows_version() == (version, shadows + 1)
        assert isinstance(gate.submit(call("search", "c1", q="x")), Outcome)  # runs as before
        flushed(gate)
    assert [(hit.tool, hit.args) for hit in store.shadow_hits(shadow.id)] == [("search", {"q": "x"})]


def test_put_rules_in_mode_shadow_applies_nothing_and_tries_the_whole_change(
    live_server: LiveServer,
) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    version = store.rules_version()
    with live_server.client(live_server.user("root", "admin")) as admin:
        stale = admin.put("/v1/rules", params={"mode": "shadow", "if_version": version - 1}, json={})
        assert stale.status_code == 409, stale.text
        assert store.shadow_rules() == []
        tried = admin.put(
            "/v1/rules", params={"mode": "shadow", "label": "all of it"}, json=PROPOSED.to_dict()
        )
        assert tried.status_code == 200, tried.text
        answer = tried.json()
        assert answer["version"] == version and answer["shadow"]["label"] == "all of it"
        with live_server.client(live_server.user("mallory", "member")) as member:
            refused = member.put("/v1/rules", params={"mode": "shadow"}, json=PROPOSED.to_dict())
            assert refused.status_code == 403
        typo = admin.put("/v1/rules", params={"mode": "shaddow"}, json=PROPOSED.to_dict())
        assert typo.status_code == 422
    assert entries(store.load_rules()) == entries(LIVE)
    [shadow] = store.shadow_rules()
    assert entries(shadow.rules) == entries(PROPOSED) and entries(shadow.base) == entries(LIVE)
    gate = gate_on(store)
    assert isinstance(gate.submit(call("delete_db", "c1")), Pending)  # still asked, as in force


def test_put_rules_applies_the_unmarked_entries_and_tries_the_marked_ones(live_server: LiveServer) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    body = {
        "tools": {
            "delete_db": {"requires_approval": True, "approvers": ["carol"]},
            "search": {"requires_approval": True, "approvers": ["bob"], "mode": "shadow"},
        }
    }
    with live_server.client(live_server.user("root", "admin")) as admin:
        typo = admin.put("/v1/rules", json={"tools": {"search": {"requires_approval": True, "mode": "x"}}})
        assert typo.status_code in (400, 422), typo.text
        assert entries(store.load_rules()) == entries(LIVE) and store.shadow_rules() == []
        put = admin.put("/v1/rules", json=body)
        assert put.status_code == 200, put.text
        assert put.json()["shadow"]["label"] == "PUT /v1/rules by root: tools.search"
    in_force = store.load_rules().to_dict()["tools"]
    assert in_force["delete_db"]["approvers"] == ["carol"]  # applied
    assert in_force["search"] == {"requires_approval": False}  # kept what was in force
    assert "send_email" not in in_force  # a whole replacement, as without marks
    [shadow] = store.shadow_rules()
    tried = shadow.rules.to_dict()["tools"]
    assert tried["search"] == {"requires_approval": True, "approvers": ["bob"]}
    assert entries(shadow.base) == entries(store.load_rules())


def test_one_entry_in_mode_shadow_through_put_and_patch(live_server: LiveServer) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    version = store.rules_version()
    with live_server.client(live_server.user("root", "admin")) as admin:
        put = admin.put("/v1/rules/tool/search", json={"requires_approval": True, "mode": "shadow"})
        assert put.status_code == 200, put.text
        assert put.json()["mode"] == "shadow"
        patched = admin.patch(
            "/v1/rules/tool/send_email",
            params={"label": "carol too"},
            json={"approvers": ["carol"], "mode": "shadow"},
        )
        assert patched.status_code == 200, patched.text
        bad = admin.put("/v1/rules/tool/search", json={"requires_approval": True, "mode": "later"})
        assert bad.status_code in (400, 422), bad.text
        live = admin.put("/v1/rules/tool/ls", json={"requires_approval": False, "mode": "live"})
        assert live.status_code == 200 and "mode" not in live.json()
    assert store.rules_version() == version + 1  # only the live entry changed the rules
    in_force = store.load_rules().to_dict()["tools"]
    assert in_force["search"] == {"requires_approval": False} and in_force["ls"] == {
        "requires_approval": False
    }
    carol, search = store.shadow_rules()  # newest first
    assert search.rules.to_dict()["tools"]["search"] == {"requires_approval": True}
    assert search.rules.to_dict()["tools"]["delete_db"] == LIVE.to_dict()["tools"]["delete_db"]
    assert carol.label == "carol too"
    assert carol.rules.to_dict()["tools"]["send_email"]["approvers"] == ["carol"]


def test_a_marked_import_is_all_or_nothing(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    version = store.rules_version()
    marks = marks_of({"tools": {"delete_db": {"requires_approval": False, "mode": "shadow"}, "ls": {}}})
    with pytest.raises(InvalidInput):
        store.import_with_shadow(marks, label="x" * 300, actor="root")
    with pytest.raises(RulesChanged):
        store.import_with_shadow(marks, label="stale", actor="root", if_version=version - 1)
    assert entries(store.load_rules()) == entries(LIVE) and store.rules_version() == version
    assert store.shadow_rules() == []
    applied, shadow = store.import_with_shadow(marks, label="ok", actor="root", if_version=version)
    assert applied == version + 1 and shadow.label == "ok"
    assert store.load_rules().to_dict()["tools"]["delete_db"] == LIVE.to_dict()["tools"]["delete_db"]


def test_config_import_through_a_server_tries_the_marked_entries_in_shadow(
    live_server: LiveServer, tmp_path: Path
) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    path = tmp_path / "marked.yaml"
    path.write_text(MARKED, encoding="utf-8")
    run = cli_for(live_server, live_server.user("root", "admin"))
    result = run("config", "import", str(path))
    assert result.exit_code == 0, result.output
    assert "Shadow #1 tries tools.search, tools.fetch" in result.output
    in_force = store.load_rules().to_dict()["tools"]
    assert in_force["search"] == {"requires_approval": False} and "fetch" not in in_force
    [shadow] = store.shadow_rules()
    assert shadow.created_by == "root"
    assert shadow.rules.to_dict()["tools"]["search"] == {"requires_approval": True, "approvers": ["bob"]}
    refused = cli_for(live_server, live_server.user("mallory", "member"))("config", "import", str(path))
    assert refused.exit_code != 0 and len(store.shadow_rules()) == 1
