"""The inbox's pages for everyone: axe-core (vendored under tests/browser/vendor, run offline)
finds no WCAG 2 A/AA problem on any page in either color scheme, at a laptop's width and a phone's
(every control labelled, text contrast at least 4.5:1, landmarks, names of links and buttons);
every badge the stylesheet knows reads at 4.5:1 or more in both schemes as the browser draws it;
a keyboard user sees where the focus is; and Tab goes through a page in reading order."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from signoff import Approve, Reject
from signoff.server.serve import login_link
from signoff.store import SQLiteStore
from tests.helpers import decided_digest

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
SAME_ROW_PX = 8
"""Controls side by side may sit a few pixels apart in height."""
RUN_AXE = """async () => {
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
  return result.violations.map((v) => ({
    id: v.id,
    help: v.help,
    nodes: v.nodes.slice(0, 4).map(
      (n) => n.target.join(" ") + " :: " + n.failureSummary.replace(/\\s+/g, " ").slice(0, 220)
    ),
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
        store.add_group_member("ops", "alice", actor="test")
        store.set_address("alice", "text:wechat", "wxid_alice", actor="test")
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
            claim = store.claim_execution(
                ran, args_digest=decided_digest(store, ran), lease=timedelta(minutes=1)
            )
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
                "admin rules": "/admin/rules",
                "admin audit": "/admin/audit",
                "admin channels": "/admin/channels",
                "admin people": "/admin/people",
                "admin person": "/admin/people/alice",
                "admin agents": "/admin/agents",
                "admin agent": "/admin/agents/bot",
                "error page": "/requests/req_does_not_exist",
            }
            yield {"server": server, "pages": pages, "handle": f"/h/{secret}", "ask": ask}
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


def test_axe_finds_nothing_in_the_dialogs_and_what_was_just_decided(page: Any, site: dict[str, Any]) -> None:
    server: LiveServer = site["server"]
    page.goto(server.url + "/")
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    problems = violations(page, "keyboard help")
    page.keyboard.press("Escape")
    destructive = page.locator(".card").filter(has_text="drop_table")
    destructive.get_by_role("button", name="Approve", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="Approve drop_table?")).to_be_visible()
    problems += violations(page, "confirm dialog")
    page.keyboard.press("Escape")
    request_id = site["ask"](f"decided-{uuid.uuid4()}", tool="archive_report", args={"year": 2025})
    card = page.locator(f"#card-{request_id}")
    card.get_by_role("button", name="Reject").click()
    card.locator("[data-panel=reject]").get_by_role("button", name="Reject").click()
    expect(page.locator(f"#recent #card-{request_id}")).to_be_visible()
    problems += violations(page, "just decided")
    assert problems == [], "\n".join(problems)


def contrast(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two `rgb(…)`/`rgba(…)` colours as getComputedStyle gives them."""

    def luminance(colour: str) -> float:
        red, green, blue = (int(part) / 255 for part in re.findall(r"[\d.]+", colour)[:3])
        return sum(
            weight * (part / 12.92 if part <= 0.03928 else ((part + 0.055) / 1.055) ** 2.4)
            for weight, part in zip((0.2126, 0.7152, 0.0722), (red, green, blue), strict=True)
        )

    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_every_badge_reads_at_4_5_to_1(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["server"].url + "/history")
    drawn = page.evaluate(BADGE_COLOURS)
    names = {name for name, _, _ in drawn}
    assert {"approved", "rejected", "pending", "destructive", "in_doubt", "quorum"} <= names
    for _, _, background in drawn:
        assert not background.startswith("rgba"), f"a badge's background is see-through: {background}"
    low = [(name, round(contrast(fg, bg), 2)) for name, fg, bg in drawn if contrast(fg, bg) < MIN_CONTRAST]
    assert low == [], f"badges under {MIN_CONTRAST}:1: {low}"


NAMELESS = """async () => {
  // visible controls: each one's accessible name as the browser computes it is read below (CDP)
  const controls = document.querySelectorAll(
    "input:not([type=hidden]), select, textarea, button, a[href], [tabindex='0']"
  );
  return Array.from(controls).filter((el) => el.getClientRects().length > 0).length;
}"""
CONTROL_ROLES = {
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "checkbox",
    "radio",
    "spinbutton",
    "button",
    "link",
}


def nameless_controls(page: Any) -> list[str]:
    """Controls in the page's accessibility tree (Chromium's own, as a screen reader gets it)
    that have no name."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    out = []
    for node in nodes:
        role = node.get("role", {}).get("value")
        if node.get("ignored") or role not in CONTROL_ROLES:
            continue
        if not str(node.get("name", {}).get("value", "")).strip():
            out.append(f"{role} (backend node {node.get('backendDOMNodeId')})")
    return out


def test_every_control_has_a_name(page: Any, site: dict[str, Any]) -> None:
    server: LiveServer = site["server"]
    problems: list[str] = []
    for name, path in {**site["pages"], "handle link": site["handle"]}.items():
        page.goto(server.url + path)
        assert page.evaluate(NAMELESS) > 0, f"{name}: no controls found"
        problems += [f"{name}: {control}" for control in nameless_controls(page)]
    page.goto(server.url + "/")
    for card in (
        page.locator(".card[data-status=pending]").filter(has=page.get_by_role("button", name="Edit")).all()
    ):
        card.get_by_role("button", name="Edit").click()
    problems += [f"inbox with its edit forms open: {control}" for control in nameless_controls(page)]
    assert problems == [], "\n".join(problems)


FOCUSED = """() => {
  // where the focus is: its place in reading order, and whether it is drawn
  const el = document.activeElement;
  const all = Array.from(document.querySelectorAll("*"));
  const style = getComputedStyle(el);
  const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2;
  const ring = outline || (style.boxShadow !== "none" && el.matches(".card.selected"));
  const text = (el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 30);
  const top = Math.round(el.getBoundingClientRect().top + window.scrollY);
  const inMain = el.closest("main") !== null && el !== el.closest("main");
  const name = el.tagName.toLowerCase() + "." + el.className;
  return {order: all.indexOf(el), name, ring, text, top, inMain};
}"""


def test_tab_goes_in_reading_order_and_the_focus_is_always_drawn(page: Any, site: dict[str, Any]) -> None:
    server: LiveServer = site["server"]
    for path in ("/", "/history", "/settings", site["pages"]["request that ran"]):
        page.goto(server.url + path)
        assert page.locator("[tabindex]:not([tabindex='0']):not([tabindex='-1'])").count() == 0, path
        seen = []
        for _ in range(24):
            page.keyboard.press("Tab")
            where = page.evaluate(FOCUSED)
            if where["name"].startswith("body"):
                break
            seen.append(where)
        assert seen and seen[0]["text"] == "Skip to the content", (path, seen[:1])
        undrawn = [where["name"] + " " + where["text"] for where in seen if not where["ring"]]
        assert undrawn == [], f"{path}: focus not drawn on {undrawn}"
        order = [where["order"] for where in seen]
        assert order == sorted(order), f"{path}: Tab left reading order: {[w['text'] for w in seen]}"
        tops = [where["top"] for where in seen if where["inMain"]]
        back_up = [top for index, top in enumerate(tops) if top < max(tops[: index + 1]) - SAME_ROW_PX]
        assert tops and back_up == [], f"{path}: Tab went back up the page: {tops}"


def test_the_skip_link_moves_past_the_menu(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["server"].url + "/")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.closest('main') !== null")
    assert focused, "the next Tab stays in the menu"
