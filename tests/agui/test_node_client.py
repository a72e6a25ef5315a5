"""One round trip driven by the npm `@ag-ui/client` HttpAgent (tests/agui/node; `.ci/run` runs
`npm ci` there)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from signoff.requests import RequestStatus

from .conftest import World
from .support import ask

NODE_DIR = Path(__file__).parent / "node"


def test_http_agent_round_trip(world: World) -> None:
    if shutil.which("node") is None:
        pytest.skip("needs Node.js (node) on PATH")
    if not (NODE_DIR / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.skip("needs the npm packages: run `npm ci` in tests/agui/node (.ci/run does)")
    first = ask(world.store, tool="send_email", args={"to": "bob@example.com", "subject": "hi"})
    second = ask(world.store, tool="pay", args={"amount": 3})
    edited = {"to": "carol@example.com", "subject": "hello"}
    env = {**os.environ, "SIGNOFF_URL": world.server.url, "SIGNOFF_TOKEN": world.alice}
    done = subprocess.run(
        ["node", "round_trip.mjs", json.dumps(edited)],
        cwd=NODE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    first_id, second_id = f"{first.tool_call_id}~{first.id}", f"{second.tool_call_id}~{second.id}"
    assert [item["id"] for item in seen["interrupts"]] == [first_id, second_id]
    assert {item["reason"] for item in seen["interrupts"]} == {"tool_call"}
    assert seen["calls"] == [
        {"id": first_id, "name": "send_email", "args": {"to": "bob@example.com", "subject": "hi"}},
        {"id": second_id, "name": "pay", "args": {"amount": 3}},
    ]
    assert seen["events"][0] == "RUN_STARTED"
    assert seen["events"].count("RUN_FINISHED") == 2
    (result,) = seen["results"]
    assert result["toolCallId"] == first_id
    assert result["content"]["status"] == "edited"
    assert seen["pendingAfter"] == [second_id]  # still pending, so interrupted again
    decided = world.store.get_request(first.id)
    assert decided.status is RequestStatus.EDITED
    assert decided.final_args == edited
    assert decided.decision is not None
    assert decided.decision.channel == "agui"
    # The useHumanInTheLoop way: the call left for the page, answered by a tool message.
    assert seen["leftForPage"] == [second_id]
    (page_result,) = seen["pageResults"]
    assert page_result["toolCallId"] == second_id
    assert page_result["content"]["status"] == "rejected"
    assert world.store.get_request(second.id).status is RequestStatus.REJECTED
