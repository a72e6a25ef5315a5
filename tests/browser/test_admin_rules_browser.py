"""The rules editor and the audit log page in a real browser (headless Chromium, a phone's
screen): edit a rule and see the explain preview change, apply it, find its audit entry with
before and after, revert it; then export the whole log and verify it, on the page and the file."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.audit import AuditEntry, verify_chain
from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from .conftest import CHROMIUM
from .test_layout_browser import NO_SIDEWAYS

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

PHONE = {"width": 390, "height": 844}
ALICE = {"requires_approval": True, "approvers": ["alice"]}


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    sqlite_store.set_layer("tool", "send_email", ALICE, actor="setup")
    with LiveServer(sqlite_store) as live:
        live.user("root", "admin")
        yield live


@pytest.fixture
def page(browser: Any, server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, accept_downloads=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # the revert's "are you sure?"
    page.goto(login_link(server.store, server.settings, "root"))
    page.get_by_role("button", name="Sign in as root").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def fits(page: Any) -> None:
    found = page.evaluate(NO_SIDEWAYS)
    assert found["page"] <= found["width"] and found["out"] == [], found


def test_edit_a_rule_see_the_preview_change_apply_audit_and_revert(page: Any, server: LiveServer) -> None:
    store = server.store
    page.goto(server.url + "/admin/rules")
    page.get_by_role("textbox", name="Tool", exact=True).fill("send_email")
    page.get_by_role("textbox", name="Agent", exact=True).fill("support-bot")
    page.get_by_role("textbox", name="App", exact=True).fill("prod")
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#rules-preview")
    expect(preview.get_by_role("status")).to_contain_text("Nothing would change")
    expect(preview.locator(".side").nth(1)).to_contain_text("would ask alice")
    expect(preview.get_by_role("button", name="Apply these rules")).to_have_count(0)

    tools = page.get_by_role("textbox", name="Tools", exact=True)
    expect(tools).to_have_value(re.compile("alice"))
    tools.fill("send_email:\n  requires_approval: true\n  approvers: [bob]\n  deadline: 2h\n")
    page.get_by_role("button", name="Preview").click()
    expect(preview.get_by_role("status")).to_contain_text("1 entry would change")
    in_force, proposed = preview.locator(".side").nth(0), preview.locator(".side").nth(1)
    expect(in_force).to_contain_text("send_email by support-bot in prod would ask alice")
    expect(proposed).to_contain_text("would ask bob (approve, edit, reject, respond), 2h, then reject.")
    expect(preview.locator(".diff-del")).to_contain_text("alice")
    expect(preview.locator(".diff-add").first).to_contain_text("bob")
    fits(page)
    assert store.get_layer("tool", "send_email") == ALICE  # a preview changes nothing

    preview.get_by_role("button", name="Apply these rules").click()
    expect(page.get_by_role("status").filter(has_text="Applied")).to_contain_text("version 2")
    bob = {"requires_approval": True, "approvers": ["bob"], "deadline": "2h"}
    assert store.get_layer("tool", "send_email") == bob
    [change] = store.rule_history(limit=1)
    assert (change.actor, change.channel) == ("root", "web")

    page.get_by_role("navigation", name="Administration").get_by_role("link", name="Audit log").click()
    page.get_by_role("combobox", name="Kind").fill("rules")
    page.get_by_role("button", name="Filter").click()
    entry = page.locator(f".audit-entry[data-seq='{change.seq}']")
    expect(entry).to_contain_text("rules.imported by root via web")
    entry.get_by_text("Data (before and after)").click()
    data = json.loads(entry.locator("pre").inner_text())
    assert data["before"]["tools"]["send_email"] == ALICE
    assert data["after"]["tools"]["send_email"]["approvers"] == ["bob"]
    fits(page)

    page.goto(server.url + "/admin/rules")
    history = page.locator(f"#change-{change.seq}")
    history.get_by_role("button", name=f"Revert #{change.seq}").click()
    expect(page.get_by_role("status").filter(has_text="Applied")).to_contain_text("version 3")
    assert store.get_layer("tool", "send_email") == ALICE
    expect(page.get_by_role("textbox", name="Tools", exact=True)).to_have_value(re.compile("alice"))
    expect(page.locator(".rule-change").first).to_contain_text(f"rules.reverted of #{change.seq}")


def test_export_the_audit_log_and_verify_it(page: Any, server: LiveServer, tmp_path: Path) -> None:
    server.store.set_layer("agent", "support-bot", {"hitl_disabled": True}, actor="root")
    page.goto(server.url + "/admin/audit")
    check = page.locator("#audit-check")
    check.get_by_role("button", name="Verify the log").click()
    expect(check.get_by_role("status")).to_contain_text("Verified:")

    check.get_by_role("button", name="Anchor it now").click()
    anchor = check.get_by_role("textbox", name="Anchor", exact=True).last
    expect(anchor).to_have_value(re.compile(r"^\d+:[0-9a-f]{64}$"))
    kept = anchor.input_value()
    check.get_by_role("textbox", name=re.compile("^Anchor optional")).fill(kept)
    check.get_by_role("button", name="Verify the log").click()
    expect(check.get_by_role("status")).to_contain_text(f"extends the anchor at entry {kept.split(':')[0]}")

    with page.expect_download() as downloading:
        check.get_by_role("link", name="JSON Lines").click()
    saved = tmp_path / "audit.jsonl"
    downloading.value.save_as(saved)
    entries = [AuditEntry(**json.loads(line)) for line in saved.read_text(encoding="utf-8").splitlines()]
    report = verify_chain(entries, head_seq=entries[-1].seq, head_hash=entries[-1].hash)
    assert report.ok and report.entries == server.store.audit_head_seq()
    [change] = [entry for entry in entries if entry.data.get("name") == "support-bot"]
    assert (change.data["before"], change.data["after"]) == (None, {"hitl_disabled": True})

    with page.expect_download() as downloading:
        check.get_by_role("link", name="CSV").click()
    assert downloading.value.suggested_filename == "signoff-audit.csv"
    fits(page)
