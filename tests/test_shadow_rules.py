"""Rules tried in shadow: hits in both directions through the gate (nothing changes for the
agent), promote, drop, a preview replaying a recorded week, purge, the CLI; on SQLite and
PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from signoff import Client, Gate, Scope, Store, ToolCall, shadow_recording
from signoff._util import to_iso, utcnow
from signoff.backend import Backend
from signoff.cli import app
from signoff.errors import Conflict, InvalidInput, RulesChanged
from signoff.outcome import Outcome
from signoff.pending import Pending
from signoff.requests import NewRequest
from signoff.rules import RuleSet, ToolEntry
from signoff.shadow import ShadowHit
from tests.conftest import url_for
from tests.live import LiveServer
from tests.test_audit import run_sql
from tests.test_cli_remote import cli_for
from tests.test_inbox import HTMX, Person

LIVE = RuleSet.from_yaml(
    """
tools:
  delete_db: {requires_approval: true, approvers: [alice], deadline: 1h}
  search: {requires_approval: false}
  send_email: {requires_approval: true, approvers: [alice], deadline: 1h}
"""
)
PROPOSED = RuleSet.from_yaml(
    """
tools:
  delete_db: {requires_approval: false}
  search: {requires_approval: true, approvers: [bob]}
  send_email: {requires_approval: true, approvers: [bob], deadline: 1h}
"""
)


def entries(rules: RuleSet) -> dict[tuple[str, str], dict[str, object]]:
    return {(kind, name): data for kind, name, data in rules.layers()}


def gate_on(store: Store) -> Gate:
    return gate_on_backend(store)


def gate_on_backend(backend: Backend) -> Gate:
    return Gate(backend, scope=Scope(thread_id="t", agent="bot", app="prod"), rules_refresh=0)


def flushed(gate: Gate) -> None:
    assert gate._gate_rules.recorder.flush(timeout=10)


def call(tool: str, call_id: str, **args: object) -> ToolCall:
    return ToolCall(name=tool, args=dict(args), id=call_id)


def test_hits_in_both_directions_change_nothing_for_the_agent(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    gate = gate_on(store)

    ran = gate.submit(call("search", "c1", q="cats"))
    asked = gate.submit(call("delete_db", "c2", name="prod"))
    same = gate.submit(call("send_email", "c3", to="x"))
    flushed(gate)

    assert isinstance(ran, Outcome) and ran.execute  # runs as before
    assert isinstance(asked, Pending)  # still asked
    assert isinstance(same, Pending)
    hits = {hit.tool: hit for hit in store.shadow_hits(shadow.id)}
    assert set(hits) == {"search", "delete_db"}  # send_email: asked either way, no hit
    assert hits["search"].direction == "newly_asked"
    assert (hits["search"].agent, hits["search"].app, hits["search"].args) == ("bot", "prod", {"q": "cats"})
    assert hits["search"].rule["layer"] == "tool" and hits["search"].rule["key"] == "search"
    assert hits["delete_db"].direction == "no_longer_asked"
    counted = store.get_shadow_rules(shadow.id)
    assert (counted.newly_asked, counted.no_longer_asked) == (1, 1)
    per_rule = {(item.direction, item.rule, item.hits) for item in store.shadow_hits_by_rule(shadow.id)}
    assert per_rule == {("newly_asked", "tool search", 1), ("no_longer_asked", "tool delete_db", 1)}


def test_the_fast_path_still_sees_a_shadow_that_asks(store: Store) -> None:
    """With no shadow, `search` is asked nowhere (the adapters' first check skips the gate);
    a shadow that asks about it makes the gate look at each call."""
    store.replace_rules(LIVE, actor="root")
    gate = gate_on(store)
    gate.resolver()
    assert gate.asks_nowhere("search")
    store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    gate.resolver()  # a refresh: the shadow's add bumped the shadows' version
    assert not gate.asks_nowhere("search")
    assert gate.may_ask("search", "bot", "prod")


def test_a_dropped_shadow_records_nothing_more(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    gate = gate_on(store)
    gate.submit(call("search", "c1"))
    flushed(gate)
    dropped = store.drop_shadow_rules(shadow.id, actor="root")
    assert dropped.status == "dropped" and dropped.closed_by == "root"
    gate.submit(call("search", "c2"))
    flushed(gate)
    assert len(store.shadow_hits(shadow.id)) == 1
    assert store.shadow_rules() == []
    assert [item.id for item in store.shadow_rules(everything=True)] == [shadow.id]
    assert entries(store.load_rules()) == entries(LIVE)  # dropping changes no rule
    with pytest.raises(Conflict):
        store.drop_shadow_rules(shadow.id, actor="root")
    actions = [entry.action for entry in store.audit_entries(kind="rules")]
    assert "rules.shadow_added" in actions and "rules.shadow_dropped" in actions


def test_promote_makes_the_shadow_the_rules_in_force(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    version = store.promote_shadow_rules(shadow.id, actor="root")
    assert store.rules_version() == version
    assert entries(store.load_rules()) == entries(PROPOSED)
    assert store.get_shadow_rules(shadow.id).status == "promoted"
    promoted = store.rule_history(limit=1)[0]
    assert promoted.action == "rules.promoted" and promoted.actor == "root"
    with pytest.raises(Conflict):
        store.promote_shadow_rules(shadow.id, actor="root")
    gate = gate_on(store)
    assert isinstance(gate.submit(call("search", "c1")), Pending)  # now asked for real


def test_promote_is_refused_once_the_rules_in_force_changed(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    store.set_layer("tool", "ls", {"requires_approval": False}, actor="root")
    with pytest.raises(RulesChanged):
        store.promote_shadow_rules(shadow.id, actor="root")
    assert store.get_shadow_rules(shadow.id).status == "active"
    assert "ls" in store.load_rules().to_dict()["tools"]  # the later change stands


def test_a_shadow_needs_a_label(store: Store) -> None:
    with pytest.raises(InvalidInput):
        store.add_shadow_rules(PROPOSED, label="  ", actor="root")
    assert store.shadow_rules(everything=True) == []


def _old_request(store: Store, tool: str, call_id: str, days_ago: float, **args: object) -> None:
    request, _ = store.create_request(
        NewRequest(
            thread_id="week",
            tool_call_id=call_id,
            tool_name=tool,
            args=dict(args),
            agent="bot",
            description=tool,
            deadline=utcnow() + timedelta(hours=1),
        )
    )
    at = to_iso(utcnow() - timedelta(days=days_ago))
    run_sql(store, f"UPDATE requests SET created_at = '{at}' WHERE id = '{request.id}'")


def test_preview_replays_a_recorded_week(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    for day in range(1, 7):
        _old_request(store, "delete_db", f"d{day}", day, name=f"db{day}")
    _old_request(store, "send_email", "e1", 2, to="x")
    _old_request(store, "delete_db", "old", 10)  # before the week: not replayed
    ran_unasked = [
        ShadowHit(
            shadow_id=shadow.id,
            direction="newly_asked",
            tool="search",
            agent="bot",
            app=None,
            requester=None,
            args={"q": str(day)},
            rule={"layer": "tool", "key": "search"},
            at=utcnow() - timedelta(days=day),
        )
        for day in (1, 3, 12)
    ]
    assert store.record_shadow_hits(ran_unasked) == 3

    report = store.replay_rules(PROPOSED, days=7)

    assert report.calls == 9  # 6 + 1 requests, 2 hits in the week
    assert report.counts["no_longer_asked"] == 6
    assert report.counts["newly_asked"] == 2
    assert report.counts["other_approvers"] == 1
    assert report.changed == 9
    assert {item.call.source for item in report.examples["newly_asked"]} == {"shadow_hit"}
    assert "would ask bob" in report.examples["other_approvers"][0].proposed
    unchanged = store.replay_rules(LIVE, days=7)
    assert unchanged.changed == 0 and unchanged.counts["unchanged"] == 9


def test_purge_removes_old_shadow_hits(store: Store) -> None:
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    hits = [
        ShadowHit(
            shadow_id=shadow.id,
            direction="newly_asked",
            tool="search",
            agent=None,
            app=None,
            requester=None,
            args={},
            rule={},
            at=utcnow() - timedelta(days=days),
        )
        for days in (40, 1)
    ]
    store.record_shadow_hits(hits)
    cutoff = utcnow() - timedelta(days=30)
    dry = store.purge(cutoff, export=None, keep_audit=True, actor="root", dry_run=True)
    assert dry.shadow_hits == 1
    report = store.purge(cutoff, export=None, keep_audit=True, actor="root")
    assert report.shadow_hits == 1
    assert len(store.shadow_hits(shadow.id)) == 1


@pytest.mark.parametrize("where", ["local", "remote"])
def test_the_cli_adds_lists_shows_previews_and_promotes(store: Store, tmp_path: Path, where: str) -> None:
    """On the database, or through a server with an admin's token: the same operations."""
    store.replace_rules(LIVE, actor="root")
    proposed = tmp_path / "proposed.yaml"
    proposed.write_text(PROPOSED.to_yaml(), encoding="utf-8")
    with contextlib.ExitStack() as stack:
        if where == "local":
            runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})

            def invoke(*args: str) -> Result:
                return runner.invoke(app, ["--db", url_for(store), *args])

        else:
            server = stack.enter_context(LiveServer(store))
            invoke = cli_for(server, server.user("root", "admin"))

        def cli(*args: str) -> str:
            result = invoke(*args)
            assert result.exit_code == 0, result.output
            return result.output

        added = cli("rules", "shadow", "add", str(proposed), "--label", "swap", "--as", "root")
        assert "Shadow #1 added" in added
        assert store.get_shadow_rules(1).created_by == "root"
        gate = gate_on(store)
        gate.submit(call("search", "c1", q="cats"))
        flushed(gate)
        listed = cli("rules", "shadow")
        assert "#1" in listed and "swap" in listed and "1 newly asked" in listed
        shown = cli("rules", "shadow", "show", "1")
        assert "newly asked" in shown and "search by bot in prod" in shown
        assert re.search(r"1\s+newly asked\s+tool search", shown), shown
        assert json.loads(cli("rules", "shadow", "show", "1", "--json"))["hits"][0]["tool"] == "search"
        preview = cli("rules", "preview", str(proposed), "--days", "7")
        assert "1 would have been answered differently" in preview and "newly asked" in preview
        assert json.loads(cli("rules", "preview", str(proposed), "--json"))["counts"]["newly_asked"] == 1
        assert "promoted" in cli("rules", "shadow", "promote", "1", "--as", "root")
        assert entries(store.load_rules()) == entries(PROPOSED)
        assert "No rules in shadow" in cli("rules", "shadow")
        failed = invoke("rules", "shadow", "drop", "1")
        assert failed.exit_code != 0 and "promoted already" in failed.output


def test_a_gate_over_a_server_records_its_hits_there(live_server: LiveServer) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    with Client(live_server.url, live_server.user("bot", role="agent")) as client:
        gate = gate_on_backend(client)
        ran = gate.submit(call("search", "c1", q="dogs"))
        asked = gate.submit(call("delete_db", "c2"))
        flushed(gate)
    assert isinstance(ran, Outcome) and ran.execute
    assert isinstance(asked, Pending)
    hits = {hit.tool: hit.direction for hit in store.shadow_hits(shadow.id)}
    assert hits == {"search": "newly_asked", "delete_db": "no_longer_asked"}


def test_the_api_lets_admins_only_add_promote_and_drop(live_server: LiveServer) -> None:
    store = live_server.store
    store.replace_rules(LIVE, actor="root")
    body = {"label": "swap", "rules": PROPOSED.to_dict()}
    with live_server.client(live_server.user("mallory", "member")) as member:
        assert member.post("/v1/rules/shadow", json=body).status_code == 403
        assert member.get("/v1/rules/shadow").status_code == 403
        hit = {"shadow_id": 1, "direction": "newly_asked", "tool": "search"}
        assert member.post("/v1/rules/shadow/hits", json={"hits": [hit]}).status_code == 403
    assert store.shadow_rules(everything=True) == []
    with live_server.client(live_server.user("root", "admin")) as admin:
        added = admin.post("/v1/rules/shadow", json=body)
        assert added.status_code == 201, added.text
        shadow_id = added.json()["id"]
        with live_server.client(live_server.user("mallory2", "member")) as member:
            assert member.post(f"/v1/rules/shadow/{shadow_id}/promote").status_code == 403
            assert member.post(f"/v1/rules/shadow/{shadow_id}/drop").status_code == 403
        assert [item["id"] for item in admin.get("/v1/rules/shadow").json()] == [shadow_id]
        assert admin.get("/v1/rules").json()["shadows"][0]["id"] == shadow_id
        shown = admin.get(f"/v1/rules/shadow/{shadow_id}")
        assert shown.status_code == 200 and shown.json()["hits"] == []
        promoted = admin.post(f"/v1/rules/shadow/{shadow_id}/promote")
        assert promoted.status_code == 200, promoted.text
        assert admin.post(f"/v1/rules/shadow/{shadow_id}/drop").status_code == 409
        assert admin.get("/v1/rules/shadow", params={"all": "true"}).json()[0]["status"] == "promoted"
    assert entries(store.load_rules()) == entries(PROPOSED)


def test_the_rules_page_tries_in_shadow_and_refuses_non_admins(sqlite_store: Store) -> None:
    sqlite_store.replace_rules(LIVE, actor="root")
    form = {
        "layer_defaults": "",
        "layer_tools": PROPOSED.to_yaml().split("tools:\n", 1)[1].replace("\n  ", "\n").lstrip(" "),
        "layer_services": "",
        "layer_agents": "",
        "layer_apps": "",
        "shadow_label": "swap",
    }
    with LiveServer(sqlite_store) as server:
        alice, root = Person(server, "alice"), Person(server, "root", "admin")
        try:
            refused = alice.client.post(
                "/admin/rules/shadow", data={**form, "csrf_token": alice.csrf}, headers=HTMX
            )
            assert refused.status_code == 403
            assert sqlite_store.shadow_rules() == []
            added = root.client.post(
                "/admin/rules/shadow", data={**form, "csrf_token": root.csrf}, headers=HTMX
            )
            assert added.status_code == 200, added.text
            [shadow] = sqlite_store.shadow_rules()
            assert shadow.label == "swap" and entries(shadow.rules) == entries(PROPOSED)
            page = root.client.get(added.headers["HX-Redirect"]).text
            assert "Shadow #1 added." in page and "Promote #1" in page
            dropped = alice.client.post(
                f"/admin/rules/shadow/{shadow.id}/drop", data={"csrf_token": alice.csrf}
            )
            assert dropped.status_code == 403
            assert sqlite_store.get_shadow_rules(shadow.id).status == "active"
        finally:
            alice.close()
            root.close()


MARKED = """\
tools:
  delete_db: {requires_approval: true, approvers: [alice], deadline: 1h}
  search: {requires_approval: true, approvers: [bob], mode: shadow}
  fetch: {requires_approval: true, mode: shadow}
"""


def test_config_import_tries_entries_in_mode_shadow(store: Store, tmp_path: Path) -> None:
    store.replace_rules(LIVE, actor="root")
    path = tmp_path / "marked.yaml"
    path.write_text(MARKED, encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})
    result = runner.invoke(app, ["--db", url_for(store), "config", "import", str(path), "--as", "root"])
    assert result.exit_code == 0, result.output
    assert "Shadow #1 tries tools.search, tools.fetch" in result.output
    in_force = store.load_rules().to_dict()["tools"]
    assert in_force["search"] == {"requires_approval": False}  # what was in force stays
    assert "fetch" not in in_force and "send_email" not in in_force  # the file's other entries apply
    [shadow] = store.shadow_rules()
    assert shadow.rules.to_dict()["tools"]["search"] == {"requires_approval": True, "approvers": ["bob"]}
    assert "mode" not in shadow.rules.to_dict()["tools"]["fetch"]
    gate = gate_on(store)
    assert isinstance(gate.submit(call("search", "c1")), Outcome)  # runs, and is a hit
    flushed(gate)
    assert [hit.tool for hit in store.shadow_hits(shadow.id)] == ["search"]
    store.promote_shadow_rules(shadow.id, actor="root")
    assert store.load_rules().to_dict()["tools"]["search"]["approvers"] == ["bob"]


def test_an_unknown_mode_changes_nothing(store: Store, tmp_path: Path) -> None:
    store.replace_rules(LIVE, actor="root")
    path = tmp_path / "typo.yaml"
    path.write_text("tools:\n  search: {requires_approval: true, mode: shaddow}\n", encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})
    result = runner.invoke(app, ["--db", url_for(store), "config", "import", str(path), "--as", "root"])
    assert result.exit_code != 0 and "mode is shadow or live" in result.output
    assert entries(store.load_rules()) == entries(LIVE)
    assert store.shadow_rules(everything=True) == []


def test_hits_of_a_closed_shadow_are_ignored_and_a_failed_write_never_fails_the_call(store: Store) -> None:
    store.replace_rules(LIVE, actor="root")
    shadow = store.add_shadow_rules(PROPOSED, label="swap", actor="root")
    gate = gate_on(store)
    gate.resolver()  # the shadow is loaded
    hit = ShadowHit(
        shadow_id=shadow.id,
        direction="newly_asked",
        tool="search",
        agent=None,
        app=None,
        requester=None,
        args={},
        rule={},
        at=utcnow(),
    )
    store.drop_shadow_rules(shadow.id, actor="root")
    assert store.record_shadow_hits([hit]) == 0  # a gate that has not refreshed yet sends it late

    class Failing:
        def record_shadow_hits(self, hits: list[ShadowHit]) -> int:
            raise OSError("disk full")

    recorder = gate._gate_rules.recorder
    recorder.store = Failing()  # type: ignore[assignment]
    recorder.record([hit, hit])
    assert recorder.flush(timeout=10)
    assert recorder.dropped == 2


def test_a_shadow_sees_the_tools_declared_in_code_beneath_it(store: Store) -> None:
    """A tool the code names as gated asks unless a rule turns it off: under a shadow that turns
    it off, its calls are hits (no longer asked), and still asked."""
    shadow = store.add_shadow_rules(
        RuleSet.from_yaml("tools:\n  wipe: {requires_approval: false}\n"), label="quiet wipe", actor="root"
    )
    gate = gate_on(store)
    gate.register_tool("wipe", ToolEntry(requires_approval=True))
    assert isinstance(gate.submit(call("wipe", "c1")), Pending)
    flushed(gate)
    [hit] = store.shadow_hits(shadow.id)
    assert (hit.tool, hit.direction, hit.rule["live_layer"]) == ("wipe", "no_longer_asked", "tool")


def test_the_idle_hit_writer_ends_and_the_next_hit_starts_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A gate that saw hits once keeps no thread (nor its store) for the rest of the process."""
    monkeypatch.setattr(shadow_recording, "IDLE_SECONDS", 0.05)
    written: list[ShadowHit] = []

    class Recording:
        def record_shadow_hits(self, hits: list[ShadowHit]) -> int:
            written.extend(hits)
            return len(hits)

    recorder = shadow_recording.ShadowRecorder(Recording())  # type: ignore[arg-type]
    hit = ShadowHit(
        shadow_id=1,
        direction="newly_asked",
        tool="search",
        agent=None,
        app=None,
        requester=None,
        args={},
        rule={},
        at=utcnow(),
    )
    for round_ in (1, 2):
        recorder.record([hit])
        assert recorder.flush(timeout=10)
        assert len(written) == round_
        thread = recorder._thread
        if thread is not None:
            thread.join(timeout=10)
        assert recorder._thread is None
        assert not any(alive.name == "signoff-shadow" and alive is thread for alive in threading.enumerate())
