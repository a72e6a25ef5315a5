"""Every inbox page on a phone (390×844) and a laptop (1280×800), with realistic long content:
nothing scrolls sideways, nothing important is cut or pushed off-screen, the history reads
without words broken in the middle, chart labels are legible, rule cards keep their text inside.

Set SIGNOFF_SCREENSHOTS=/some/dir to keep a PNG of each page (to look at them)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff import Edit, Reject
from signoff.channels import ChannelRegistry
from signoff.channels.recording import RecordingChannel
from signoff.server.serve import login_link
from signoff.store import Store

from ..channel_admin_support import ask as ask_routed
from ..channel_admin_support import wait_until
from ..live import LiveServer
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"phone": (390, 844), "laptop": (1280, 800)}
SHOTS = os.environ.get("SIGNOFF_SCREENSHOTS")
MIN_LABEL_PX = 11

LONG_TOOL = "github.repos.create_or_update_environment_deployment_protection_rule"
LONG_AGENT = "quarterly-finance-reconciliation-agent-eu-west"
LONG_ARGS = {
    "repository": "acme-corporation/payments-platform-monorepo-with-a-very-long-name",
    "environment_name": "production-eu-west-1-customer-facing",
    "a_rather_long_argument_name_for_the_reviewers": ["alice@acme.example", "bob@acme.example"],
    "export_path": "/var/lib/customer-exports/2026/quarterly-reconciliation/eu-west-1/customers.csv",
    "api_token_fingerprint": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08c2b5",
    "protection": {"required_reviewers": 2, "wait_timer_minutes": 30, "prevent_self_review": True},
    "body": "Hello team,\n\nThis rule makes every production deployment of the payments platform wait "
    "for two reviewers from the finance group. Reply if you see a problem with it.\n\nThanks",
}
LONG_WHEN = (
    'args.env == "prod" && tool.startsWith("delete") && args.table in ["customers", "invoices", '
    '"payments", "refunds", "subscriptions"] && requester != "ci-bot@deployments.acme.example"'
)
RULES: dict[str, dict[str, Any]] = {
    "defaults": {"deadline": "24h", "on_expire": "reject", "unattended": "approve"},
    "tools": {
        "delete_records": {
            "requires_approval": True,
            "allowed_decisions": ["approve", "reject"],
            "when": LONG_WHEN,
            "description": "The agent wants to delete rows from {table} in {env}: "
            "{tool_args} (this cannot be undone; a backup is taken first)",
            "approvers": ["alice", "group:database-administrators-on-call"],
        },
        LONG_TOOL: {"requires_approval": True},
    },
    "agents": {LONG_AGENT: {"interrupt_on": {"send_email": True, "delete_records": {"when": LONG_WHEN}}}},
}

NO_SIDEWAYS = """() => {
  // what sticks out of the screen (outside any scroll box), and what a box cuts off
  const width = window.innerWidth;
  const scrolls = (el) => getComputedStyle(el).overflowX !== "visible";
  const name = (el) => [el.tagName.toLowerCase(), ...String(el.className || "").split(" ")].join(".");
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
    let parent = el.parentElement;
    while (parent && parent !== document.body && !scrolls(parent)) parent = parent.parentElement;
    const inScrollBox = parent && parent !== document.body;
    if (!inScrollBox && (box.right > width + 1 || box.left < -1)) {
      out.push(name(el) + " " + Math.round(box.left) + "→" + Math.round(box.right));
    }
    const scrollsItself = el.matches("input, select, textarea, pre, .sr-only");
    if (scrolls(el) && !scrollsItself && el.scrollWidth > el.clientWidth + 1) {
      out.push("cut: " + name(el) + " " + el.scrollWidth + ">" + el.clientWidth);
    }
  }
  return {width, page: document.documentElement.scrollWidth, out: out.slice(0, 12)};
}"""

BROKEN_WORDS = """(selector) => {
  // words (up to 24 letters; a hyphen may end a line) that the layout broke over two lines
  const broken = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/[^\\s-]+/g)) {
        if (match[0].length > 24) continue;
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const rects = Array.from(range.getClientRects()).filter((rect) => rect.width > 0);
        if (new Set(rects.map((rect) => Math.round(rect.top))).size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""

LABEL_SIZES = """() => Array.from(document.querySelectorAll(".chart text, .chart li span")).map((el) => {
  // the size a label is drawn at, on the screen (an SVG's viewBox scales its text)
  const scale = el.getScreenCTM ? el.getScreenCTM().a : 1;
  return [el.textContent, Math.round(parseFloat(getComputedStyle(el).fontSize) * scale * 10) / 10];
})"""

OVERLAPPING_LABELS = """() => {
  // chart labels drawn over each other
  const out = [];
  for (const axis of document.querySelectorAll(".chart .axis-x")) {
    const labels = Array.from(axis.querySelectorAll("span"));
    const boxes = labels.map((el) => [el.textContent, el.getBoundingClientRect()]);
    boxes.slice(1).forEach(([text, box], index) => {
      if (box.left < boxes[index][1].right) out.push(boxes[index][0] + " / " + text);
    });
  }
  return out;
}"""

INSIDE_ENTRIES = """() => {
  // text of a rule card that runs past its border
  const out = [];
  for (const entry of document.querySelectorAll(".entry")) {
    const border = entry.getBoundingClientRect();
    for (const el of entry.querySelectorAll("*")) {
      const box = el.getBoundingClientRect();
      if (box.width && box.right > border.right + 0.5) out.push(el.textContent.slice(0, 40));
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def site(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One server with realistic long content, and the addresses of every kind of page."""
    from signoff.store import SQLiteStore

    store = SQLiteStore(tmp_path_factory.mktemp("layout") / "signoff.db")
    chat = ChannelRegistry()
    chat.add(RecordingChannel("chat", address_kind="slack"))  # sends the Slack address its code
    with LiveServer(store, channels=chat) as server:
        server.user("alice", "admin")
        server.store.set_layer("defaults", "", RULES["defaults"], actor="test")
        for kind in ("tools", "agents"):
            for name, settings in RULES[kind].items():
                server.store.set_layer(kind[:-1], name, settings, actor="test")  # type: ignore[arg-type]
        with server.client(server.user("bot", "agent")) as bot:
            long_one = _ask(
                bot, "c1", tool=LONG_TOOL, args=LONG_ARGS, agent=LONG_AGENT, app="payments-eu-production"
            )
            edited = _ask(bot, "c2", tool="send_email", args=dict(LONG_ARGS), agent=LONG_AGENT)
            rejected = _ask(bot, "c3", tool="delete_records", args={"table": "customers", "env": "prod"})
            question = _ask(
                bot,
                "q1",
                tool="signoff.ask",
                kind="input",
                args={"question": "Which of the two payment providers should the migration use first?"},
                description="Which of the two payment providers should the migration use first?",
                answer_schema={"enum": ["stripe-europe-primary", "adyen-fallback-provider"]},
            )
            for index in range(12):
                _ask(bot, f"more{index}", tool="lookup_customer_record", args={"id": index}, agent="support")
        store.decide(
            edited,
            Edit(
                args={**LONG_ARGS, "environment_name": "staging-eu-west-1-internal-only", "body": "Shorter."}
            ),
            actor="alice",
        )
        store.decide(
            rejected,
            Reject(message="Not during the quarter close: the finance team needs these rows until the 5th."),
            actor="alice",
        )
        for index in range(6):
            store.decide(
                _pending_lookup(store),
                Reject(message="no") if index % 3 else Edit(args={"id": 1}),
                actor="alice",
            )
        store.set_address("alice", "email", "alice.longname-for-layout@approvals.example.com", actor="test")
        store.set_address("alice", "text:wechat", "wxid_" + "x" * 40, actor="test")
        store.claim_address("alice", "slack", "U" + "LONGSLACKMEMBERID" * 3, via="chat")  # unverified
        store.claim_address("alice", "feishu", "ou_" + "f" * 40, via=None)  # no channel sends it a code
        secret, _ = store.issue_credential("handle", "alice", request_id=long_one, actor="test")
        pages = {
            "inbox": "/",
            "request with long args": f"/requests/{long_one}",
            "edited request": f"/requests/{edited}",
            "rejected request": f"/requests/{rejected}",
            "question": f"/requests/{question}",
            "history": "/history",
            "rules": "/rules?tool=delete_records&agent=" + LONG_AGENT + "&args=%7B%22env%22%3A%22prod%22%7D",
            "overview": "/overview",
            "settings (channel addresses)": "/settings",
            "admin: rules editor and history": "/admin/rules",
            "admin: audit log": "/admin/audit",
            "admin: audit log, rule changes": "/admin/audit?kind=rules",
            "error page": "/requests/req_does_not_exist",
        }
        pages.update(_channel_pages(server))
        yield {"server": server, "pages": pages, "handle": f"/h/{secret}", "long": long_one}
    store.close()


def _channel_pages(server: LiveServer) -> dict[str, str]:
    """Admin → Channels with long content: a stored channel the server cannot use (its secret
    sealed with a key it lacks: a long reason), one it uses with dead letters, a long webhook."""
    from signoff.channel_admin import ChannelChange, ChannelPlace, add_channel
    from signoff.channels.sealing import SecretsKey
    from signoff.destinations import Destinations

    place = ChannelPlace.local(
        server.store, ChannelRegistry(), key=SecretsKey.generate(), destinations=Destinations()
    )
    bridge = {"platform": "wechat", "send_url": "https://bridge.example.com/" + "long-path/" * 8}
    secret = {"secret": "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVoxMjM0NTY="}
    add_channel(
        place,
        "wechat-bridge-for-the-finance-team",
        ChannelChange(kind="text", settings=bridge, secrets=secret),
        actor="alice",
        via="test",
    )
    add_channel(
        place,
        "ops-recording",
        ChannelChange(kind="recording", settings={"address_kind": "pager"}),
        actor="alice",
        via="test",
    )
    webhook, _ = server.store.add_webhook(
        "https://hooks.example.com/signoff/" + "a-very-long-path-segment/" * 4 + "?token=abc",
        description="The finance team's ledger of every approval, for the quarterly audit",
        actor="alice",
    )
    server.store.set_webhook_disabled(webhook.id, True, actor="alice")  # sends nothing (no DNS look-up)
    ask_routed(server.store, "routed", channel="ops-recording")  # alice has no pager address: dead
    wait_until(lambda: server.store.lane_outbox("channel:ops-recording", dead=True))
    return {
        "admin channels": "/admin/channels?add=email",
        "admin channel (unusable)": "/admin/channels/wechat-bridge-for-the-finance-team",
        "admin channel (dead letters)": "/admin/channels/ops-recording",
        "admin webhook": f"/admin/channels/webhooks/{webhook.id}",
    }


def _ask(bot: httpx.Client, call_id: str, /, **fields: Any) -> str:
    response = bot.post("/v1/requests", json={"thread_id": "t1", "tool_call_id": call_id, **fields})
    assert response.status_code == 201, response.text
    request_id: str = response.json()["id"]
    return request_id


def _pending_lookup(store: Store) -> str:
    return store.list_requests(status="pending", tool="lookup_customer_record", limit=1)[0].id


@pytest.fixture(params=list(SIZES))
def size(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def signed_in(browser: Any, site: dict[str, Any], size: str) -> Iterator[Any]:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    server: LiveServer = site["server"]
    page.goto(login_link(server.store, server.settings, "alice"))
    page.get_by_role("button", name="Sign in as alice").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def _check(page: Any, name: str, size: str) -> list[str]:
    """What does not fit on this page (and its screenshot, when asked for)."""
    if SHOTS:  # a screen's worth at a time, to look at them at their real size
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        width, height = SIZES[size]
        tall = page.evaluate("document.documentElement.scrollHeight")
        for index, top in enumerate(range(0, min(tall, 4 * height), height)):
            clip = {"x": 0, "y": top, "width": width, "height": min(height, tall - top)}
            page.screenshot(
                path=f"{SHOTS}/{size}-{name.replace(' ', '-')}-{index}.png", full_page=True, clip=clip
            )
    found = page.evaluate(NO_SIDEWAYS)
    problems = []
    if found["page"] > found["width"]:
        problems.append(f"{name}: the page is {found['page']}px wide on a {found['width']}px screen")
    problems.extend(f"{name}: {what}" for what in found["out"])
    return problems


def test_no_page_scrolls_sideways_or_cuts_anything(signed_in: Any, site: dict[str, Any], size: str) -> None:
    page = signed_in
    server: LiveServer = site["server"]
    problems = []
    for name, path in site["pages"].items():
        page.goto(server.url + path)
        problems += _check(page, name, size)
    page.goto(f"{server.url}/requests/{site['long']}")
    page.locator(f"#card-{site['long']}").get_by_role("button", name="Edit").click()
    expect(page.locator(f"#card-{site['long']} [data-panel=edit] textarea").first).to_be_visible()
    problems += _check(page, "edit form", size)
    page.goto(server.url + "/")
    page.locator(f"#card-{site['long']}").get_by_role("button", name="Link").click()
    expect(page.locator(".handle-link input")).to_be_visible()
    problems += _check(page, "handle link", size)
    assert problems == [], "\n".join(problems)


def test_the_address_code_controls_are_on_screen(signed_in: Any, site: dict[str, Any], size: str) -> None:
    page = signed_in
    page.goto(site["server"].url + "/settings")
    row = page.locator("#addresses tr[data-kind=slack]")
    expect(row.get_by_text("Not verified")).to_be_visible()
    width = SIZES[size][0]
    for control in (
        row.locator("input[name=code]"),
        row.get_by_role("button", name="Verify"),
        row.get_by_role("button", name="Send a new code"),
        row.get_by_role("button", name="Remove"),
    ):
        expect(control).to_be_visible()
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box
    feishu = page.locator("#addresses tr[data-kind=feishu]")
    expect(feishu.get_by_text("No channel on this server can send it a code")).to_be_visible()
    assert feishu.get_by_role("button", name="Send a new code").count() == 0
    assert feishu.locator("input[name=code]").count() == 0, "no code can have been sent there"


def test_pages_without_a_session_fit_too(browser: Any, site: dict[str, Any], size: str) -> None:
    server: LiveServer = site["server"]
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    problems: list[str] = []
    try:
        page = context.new_page()
        link = login_link(server.store, server.settings, "alice")
        for name, url in (
            ("login", f"{server.url}/login"),
            ("sign in as", link),
            ("spent link", f"{server.url}/login?token=so_log_spent"),
            ("handle", server.url + site["handle"]),
            ("expired handle", f"{server.url}/h/so_hdl_gone"),
        ):
            page.goto(url)
            problems += _check(page, name, size)
    finally:
        context.close()
    assert problems == [], "\n".join(problems)


def test_the_history_reads_on_a_phone_without_broken_words(
    signed_in: Any, site: dict[str, Any], size: str
) -> None:
    page = signed_in
    page.goto(site["server"].url + "/history")
    assert page.evaluate(BROKEN_WORDS, "#history tbody") == []
    for row in page.locator("#history tbody tr").all()[:5]:
        box = row.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= SIZES[size][0]


def test_chart_labels_are_legible(signed_in: Any, site: dict[str, Any], size: str) -> None:
    page = signed_in
    page.goto(site["server"].url + "/overview")
    labels = page.evaluate(LABEL_SIZES)
    assert labels, "the overview has no chart labels"
    small = [label for label in labels if label[1] < MIN_LABEL_PX]
    assert small == [], f"labels under {MIN_LABEL_PX}px: {small}"
    assert page.evaluate(OVERLAPPING_LABELS) == []


def test_rule_cards_keep_their_text_inside(signed_in: Any, site: dict[str, Any], size: str) -> None:
    page = signed_in
    page.goto(site["server"].url + "/rules")
    expect(page.locator(".entry").first).to_be_visible()
    assert page.evaluate(INSIDE_ENTRIES) == []


MENU_ITEMS = """() => Array.from(document.querySelectorAll("nav[aria-label=Main] a")).map((link) => {
  // each item of the main menu: its box, whether its text fits in it, what is drawn at its middle
  const box = link.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return {
    text: link.textContent.replace(/\\s+/g, " ").trim(),
    left: box.left, right: box.right, top: box.top, bottom: box.bottom,
    whole: link.scrollWidth <= link.clientWidth + 1,
    onTop: hit !== null && link.contains(hit),
  };
})"""


def test_every_menu_item_is_whole_and_on_screen(signed_in: Any, site: dict[str, Any], size: str) -> None:
    """The main menu (six items for an admin) fits: on a phone it wraps rather than scrolling
    sideways with its fifth item cut to "S" (as it did)."""
    page = signed_in
    width, height = SIZES[size]
    for path in ("/", "/settings", "/admin"):
        page.goto(site["server"].url + path)
        items = page.evaluate(MENU_ITEMS)
        texts = [re.sub(r" \d+\+?$", "", item["text"]) for item in items]
        assert texts == ["Inbox", "History", "Rules", "Overview", "Settings", "Admin"], texts
        for item in items:
            assert item["left"] >= 0 and item["right"] <= width, item
            assert item["top"] >= 0 and item["bottom"] <= height, item
            assert item["whole"] and item["onTop"], item
        for index, item in enumerate(items[1:]):
            before = items[index]
            side_by_side = item["top"] < before["bottom"] and item["left"] < before["right"]
            assert not side_by_side, f"{before['text']} and {item['text']} overlap"
        menu = page.get_by_role("navigation", name="Main")
        menu.get_by_role("link", name="Settings").click()
        page.wait_for_url(re.compile(r"/settings$"))
        expect(page.get_by_role("heading", level=1)).to_have_text("Settings")
