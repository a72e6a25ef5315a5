"""The inbox's pages for everyone: axe-core (vendored under tests/browser/vendor, run offline)
finds no WCAG 2 A/AA problem on any page in either color scheme, at a laptop's width and a phone's
(every control labelled, text contrast at least 4.5:1, landmarks, names of links and buttons);
every badge the stylesheet knows reads at 4.5:1 or more in both schemes as the browser draws it;
a keyboard user sees where the focus is; and Tab goes through a page in reading order."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from signoff import Approve, Reject
from signoff.server.serve import login_link
from signoff.store import SQLiteStore

from ..live import LiveServer
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
SCHEMES = ("light", "dark")
SIZES = {"laptop": (1280, 800), "phone": (390, 844)}
MIN_CONTRAST = 4.5
RUN_AXE = """async () => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}});
  return result.violations.map((v) => ({
    id: v.id,
    help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " :: " + n.failureSummary.replace(/\\s+/g, " ").slice(0, 220)),
  }));
}"""
BADGE_COLOURS = """() => {
  // every `.badge-NAME` the stylesheet styles, drawn once, with its text and background colours
  const names = new Set();
  for (const sheet of document.styleSheets) {
    for (const rule of sheet.cssRules) {
      for (const match of (rule.selectorText || "").matchAll(/\\.badge-([\\w-]+)/g)) names.add(match[1]);
    }
  }
  const box = document.createElement("div");
  document.querySelector("main").append(box);
  const out = [["badge", ...colours(make(""))]];
  for (const name of names) out.push([name, ...colours(make(name))]);
  box.remove();
  return out;
  function make(name) {
    const badge = document.createElement("span");
    badge.className = "badge" + (name ? " badge-" + name : "");
    badge.textContent = name || "badge";
    box.append(badge);
    return badge;
  }
  function colours(el) {
    const style = getComputedStyle(el);
    return [style.color, style.backgroundColor];
  }
}"""


@pytest.fixture(scope="module")
def site(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A server with one of each kind of card and page."""
    store = SQLiteStore(tmp_path_factory.mktemp("a11y") / "signoff.db")
    with LiveServer(store) as server:
        server.user("alice", "admin")
        store.set_layer("tool", "drop_table", {"requires_approval": True, "confirm": True}, actor="test")
        with server.client(server.user("bot", "agent")) as bot:

            def ask(call_id: str, **fields: Any) -> str:
                body = {
                    "thread_id": "t",
                    "tool_call_id": call_id,
                    "tool": "send_email",
                    "args": {"to": "a@b.example"},
                }
                answer = bot.post("/v1/requests", json={**body, **fields})
                assert answer.status_code == 201, answer.text
                request_id: str = answer.json()["id"]
                return request_id

            ran = ask("ran", args={"to": "all-staff@example.com", "subject": "Q3"})
            rejected = ask("rejected")
            ask("destructive", tool="drop_table", args={"table": "customers"})
            ask(
                "quorum",
                tool="transfer",
                args={"amount": 5},
                rule={"quorum": 2, "allowed_decisions": ["approve", "reject"]},
            )
            question = ask(
                "question",
                tool="signoff.ask",
                kind="input",
                args={"question": "Which provider first?"},
                description="Which provider first?",
                answer_schema={"enum": ["stripe", "adyen"]},
            )
            ask("drafting", drafting=True)
            ask("pending", args={"to": "bob@example.com", "subject": "Invoice", "body": "Attached."})
        store.decide(ran, Approve(), actor="alice")
        claim = store.claim_execution(ran, lease=timedelta(minutes=1))
        assert claim is not None
        store.finish_execution(ran, claim.token, succeeded=True, result={"sent": 312})
        store.decide(rejected, Reject(message="Not now."), actor="alice")
        secret, _ = store.issue_credential("handle", "alice", request_id=question, actor="test")
        pages = {
            "inbox": "/",
            "request that ran": f"/requests/{ran}",
            "rejected request": f"/requests/{rejected}",
            "question": f"/requests/{question}",
            "history": "/history",
            "rules": "/rules?tool=drop_table",
            "overview": "/overview",
            "settings": "/settings",
            "executions": "/executions",
            "admin": "/admin",
            "error page": "/requests/req_does_not_exist",
        }
        yield {"server": server, "pages": pages, "handle": f"/h/{secret}"}
    store.close()


@pytest.fixture(params=[(scheme, size) for scheme in SCHEMES for size in SIZES], ids="-".join)
def page(browser: Any, site: dict[str, Any], request: pytest.FixtureRequest) -> Iterator[Any]:
    """Alice, signed in, in one color scheme at one size; the pages' CSP lets the test inject axe."""
    scheme, size = request.param
    width, height = SIZES[size]
    context = browser.new_context(
        viewport={"width": width, "height": height}, color_scheme=scheme, bypass_csp=True
    )
    opened = context.new_page()
    server: LiveServer = site["server"]
    opened.goto(login_link(server.store, server.settings, "alice"))
    opened.get_by_role("button", name="Sign in as alice").click()
    opened.wait_for_url(re.compile(r"/$"))
    yield opened
    context.close()


def violations(page: Any, name: str) -> list[str]:
    page.add_script_tag(content=AXE)
    found = page.evaluate(RUN_AXE)
    return [f"{name}: {item['id']} ({item['help']}): {node}" for item in found for node in item["nodes"]]


def test_axe_finds_nothing_on_any_page(page: Any, site: dict[str, Any]) -> None:
    server: LiveServer = site["server"]
    problems: list[str] = []
    for name, path in site["pages"].items():
        page.goto(server.url + path)
        problems += violations(page, name)
    page.goto(server.url + "/")
    card = page.locator(".card").filter(has_text="Invoice")
    card.get_by_role("button", name="Edit").click()
    expect(
        card.locator("[data-panel=edit] input[name^='arg'], [data-panel=edit] textarea").first
    ).to_be_visible()
    problems += violations(page, "inbox, an edit form open")
    page.goto(server.url + site["handle"])
    problems += violations(page, "handle link")
    assert problems == [], "\n".join(problems)
