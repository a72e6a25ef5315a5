"""The rules' administration through the API: a diff with a sample call explained under both,
applying it only at the version it was compared with, the history, a revert; each change one
audit entry with before and after, a refusal audited, and `/openapi.json` documenting it all."""

from __future__ import annotations

from typing import Any

import httpx

from signoff.store import Store

from .live import LiveServer

PROPOSED = {
    "tools": {"send_email": {"requires_approval": True, "approvers": ["alice"], "deadline": "12h"}},
    "agents": {"support-bot": {"interrupt_on": {"send_email": True}}},
}
SAMPLE = {"tool": "send_email", "agent": "support-bot", "app": "prod"}


def rule_entries(store: Store) -> list[tuple[str, str, dict[str, Any]]]:
    return [(entry.action, entry.channel, entry.data) for entry in store.audit_entries(kind="rules")]


def test_diff_apply_history_and_revert(live_server: LiveServer) -> None:
    store = live_server.store
    with live_server.client(live_server.user("root", "admin")) as admin:
        diff = admin.post("/v1/rules/diff", json={"rules": PROPOSED, "sample": SAMPLE})
        assert diff.status_code == 200, diff.text
        preview = diff.json()
        assert preview["version"] == 0
        assert [(c["kind"], c["name"], c["what"]) for c in preview["changes"]] == [
            ("tool", "send_email", "added"),
            ("agent", "support-bot", "added"),
        ]
        sample = preview["sample"]
        assert sample["in_force"]["sentence"] == (
            "`send_email` by `support-bot` in `prod` would run without asking (default says so)."
        )
        assert sample["proposed"]["sentence"] == (
            "`send_email` by `support-bot` in `prod` would ask alice (approve, edit, reject, respond), "
            "12h, then reject."
        )
        assert rule_entries(store) == []  # a diff changes nothing

        applied = admin.put("/v1/rules", params={"if_version": preview["version"]}, json=PROPOSED)
        assert applied.status_code == 200, applied.text
        assert applied.json()["version"] == 1
        again = admin.put("/v1/rules", params={"if_version": preview["version"]}, json={})
        assert again.status_code == 409 and again.json()["error"]["type"] == "RulesChanged"
        assert store.load_rules().agents.keys() == {"support-bot"}

        patched = admin.patch("/v1/rules/tool/send_email", json={"deadline": "2h"})
        assert patched.status_code == 200
        history = admin.get("/v1/rules/history").json()
        assert [item["action"] for item in history["items"]] == ["rules.set", "rules.imported"]
        [patch, imported] = history["items"]
        assert patch["changes"][0]["before"]["deadline"] == "12h"
        assert patch["changes"][0]["after"]["deadline"] == "2h"
        assert (patch["actor"], patch["channel"], patch["version"]) == ("root", "api", 2)
        assert history["next_before"] is None
        paged = admin.get("/v1/rules/history", params={"limit": 1}).json()
        assert paged["next_before"] == patch["seq"]

        refused = admin.post(f"/v1/rules/history/{imported['seq']}/revert")
        assert refused.status_code == 409
        assert "tool send_email changed again after change" in refused.json()["error"]["message"]
        reverted = admin.post(f"/v1/rules/history/{patch['seq']}/revert")
        assert reverted.status_code == 200, reverted.text
        assert reverted.json()["reverted"] == patch["seq"]
        assert store.get_layer("tool", "send_email") == PROPOSED["tools"]["send_email"]
        assert admin.post("/v1/rules/history/1/revert").status_code == 404  # user.added, not a rule change

    assert [(action, channel) for action, channel, _ in rule_entries(store)] == [
        ("rules.imported", "api"),
        ("rules.set", "api"),
        ("rules.reverted", "api"),
    ]
    for _, _, data in rule_entries(store):
        assert "before" in data and "after" in data


def test_bad_proposals_get_a_clear_422_and_change_nothing(live_server: LiveServer) -> None:
    with live_server.client(live_server.user("root", "admin")) as admin:
        for body, said in (
            ({"rules": {"tools": {"x": {"allowed_decisions": ["nah"]}}}}, "tools.x.allowed_decisions.0"),
            ({"rules": {"gadgets": {}}}, "gadgets"),
            ({"rules": {}, "sample": {"tool": ""}}, "tool"),
            ({"rules": {}, "sample": {"tool": "x", "args": [1]}}, "args"),
        ):
            answer = admin.post("/v1/rules/diff", json=body)
            assert answer.status_code == 422, answer.text
            assert said in answer.text
        assert admin.get("/v1/rules/history", params={"before": 0}).status_code == 422
    assert live_server.store.rules_version() == 0


def test_members_may_diff_but_not_read_the_history_or_revert(live_server: LiveServer) -> None:
    store = live_server.store
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="root")
    [change] = store.rule_history()
    with live_server.client(live_server.user("alice")) as member:
        assert member.post("/v1/rules/diff", json={"rules": {}}).status_code == 200
        assert member.get("/v1/rules/history").status_code == 403
        refused = member.post(f"/v1/rules/history/{change.seq}/revert")
        assert refused.status_code == 403 and "alice is not an admin" in refused.text
    assert store.get_layer("tool", "send_email") == {"requires_approval": True}
    refusals = [(e.actor, e.data.get("path")) for e in store.audit_entries(action="access.refused")]
    assert ("alice", f"/v1/rules/history/{change.seq}/revert") in refusals


def test_docs_name_the_new_routes(live_server: LiveServer) -> None:
    schema = httpx.get(f"{live_server.url}/openapi.json").json()
    paths = schema["paths"]
    assert paths["/v1/rules/history"]["get"]["summary"].startswith("Every change to the rules")
    assert "409" in paths["/v1/rules/history/{seq}/revert"]["post"]["responses"]
    diff = paths["/v1/rules/diff"]["post"]
    assert diff["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("RulesDiffBody")
    assert "RulesPreviewView" in str(diff["responses"]["200"])
    audit = {param["name"] for param in paths["/v1/audit"]["get"]["parameters"]}
    assert {"since", "until", "actor", "request_id", "tool", "kind", "action", "order", "before"} <= audit
    export = paths["/v1/audit/export"]["get"]
    assert {"application/x-ndjson", "text/csv"} <= set(export["responses"]["200"]["content"])
    assert "if_version" in {param["name"] for param in paths["/v1/rules"]["put"]["parameters"]}
