"""Long args stay out of lists, event streams and inbox cards (issue 8, item 9): each is cut to a
preview that says so and points to the full request, which shows everything."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from signoff.presentation.previews import MORE, PREVIEW_CHARS, brief_view, preview, preview_text
from signoff.server.serve import login_link
from signoff.store import Store

from .live import LiveServer
from .test_events import event_stream, next_event
from .test_inbox import sign_in

LONG = "x" * 600_000
"""Long, but under the 1 MiB body limit."""


def test_a_small_value_is_left_as_it_is() -> None:
    args = {"to": "bob@example.com", "tags": ["a", "b"], "n": 3, "deep": {"er": [1, 2.5, None, True]}}
    shown = preview(args)
    assert shown.value is args
    assert not shown.cut


def test_long_strings_arrays_and_objects_are_cut_and_say_so() -> None:
    text = preview({"body": LONG})
    assert text.cut
    assert text.value["body"] == "x" * 500 + f"{MORE} ({len(LONG) - 500:,} more characters)"
    rows = preview({"rows": list(range(10_000))})
    assert rows.cut
    assert re.fullmatch(rf"{MORE} [\d,]+ more items", rows.value["rows"][-1])
    keys = preview({f"k{i}": i for i in range(5_000)})
    assert keys.cut
    assert re.fullmatch(r"[\d,]+ more keys", keys.value[MORE])
    for shown in (text, rows, keys):
        assert len(json.dumps(shown.value, ensure_ascii=False)) < 2 * PREVIEW_CHARS


def test_deep_nesting_is_cut_at_the_preview_depth() -> None:
    deep: Any = "bottom"
    for _ in range(50):
        deep = [deep]
    shown = preview({"deep": deep})
    assert shown.cut
    assert "an array of 1 item)" in json.dumps(shown.value)


def test_a_brief_view_marks_what_was_cut_and_links_to_the_full_one() -> None:
    view = {"id": "req_1", "description": "d" * 5000, "args": {"a": 1}, "final_args": None}
    brief = brief_view(view)
    assert brief["truncated"] is True
    assert brief["full_view"] == "/v1/requests/req_1"
    assert brief["description"] == preview_text("d" * 5000).value
    assert brief_view({"id": "req_2", "description": "short", "args": {}})["truncated"] is False


@pytest.fixture
def long_request(live_server: LiveServer) -> tuple[str, str]:
    """A pending request with long args, its id, and a person's token."""
    alice = live_server.user("alice")
    with live_server.client(live_server.user("bot", "agent")) as agent:
        response = agent.post(
            "/v1/requests",
            json={"thread_id": "t1", "tool_call_id": "c1", "tool": "upload", "args": {"data": LONG, "n": 1}},
        )
        assert response.status_code == 201, response.text
    return response.json()["id"], alice


def test_lists_carry_previews_and_one_request_carries_everything(
    live_server: LiveServer, long_request: tuple[str, str]
) -> None:
    request_id, alice = long_request
    with live_server.client(alice) as client:
        listed = client.get("/v1/requests")
        one = client.get(f"/v1/requests/{request_id}")
    assert len(listed.content) < 20_000
    item = listed.json()["items"][0]
    assert item["truncated"] is True
    assert item["full_view"] == f"/v1/requests/{request_id}"
    assert item["args"]["n"] == 1
    assert MORE in item["args"]["data"]
    assert one.json()["args"]["data"] == LONG
    assert one.json()["truncated"] is False


def test_events_carry_previews(live_server: LiveServer) -> None:
    alice = live_server.user("alice")
    with (
        event_stream(live_server, alice) as events,
        live_server.client(live_server.user("bot", "agent")) as agent,
    ):
        agent.post(
            "/v1/requests",
            json={"thread_id": "t1", "tool_call_id": "c1", "tool": "upload", "args": {"d": LONG}},
        )
        event = next_event(events)
    assert event["request"]["truncated"] is True
    assert len(json.dumps(event)) < 20_000


def test_inbox_cards_show_previews_and_the_request_page_shows_everything(
    live_server: LiveServer, store: Store, long_request: tuple[str, str]
) -> None:
    request_id, _ = long_request
    with httpx.Client(base_url=live_server.url, timeout=30) as browser:
        link = login_link(store, live_server.settings, "alice")
        assert sign_in(browser, live_server, link).status_code == 303
        inbox = browser.get("/")
        page = browser.get(f"/requests/{request_id}")
    assert inbox.status_code == 200
    assert len(inbox.content) < 100_000
    assert "Long values are cut short here" in inbox.text
    assert f'href="/requests/{request_id}"' in inbox.text
    assert LONG in page.text
    assert "Long values are cut short here" not in page.text
