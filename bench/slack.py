"""Slack benchmarks: how fast a click is answered (Slack wants its ack within 3 s) and how soon
the message is updated to its final state after the decision (issue 11: within 1 s, p99).

    .venv/bin/python bench/slack.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/slack.json.
`signoff serve --channels FILE` runs in its own process on a SQLite file, with a Slack channel
whose Web API is a fake Slack server in this process (a threaded HTTP server answering
`chat.postMessage` and `chat.update` as Slack does, through slack_sdk's `base_url`). For each
request: it is created in the database (routed to Slack, approver alice), its message waited
for, then a signed `block_actions` approve click is posted to `/channels/slack/callback`.

1. Click → answer: the callback's round trip (signature check, mapping the Slack user, the
   decision committed), as Slack would wait for it.
2. Decision → message updated: from the click's answer (the decision is committed by then)
   to the fake Slack receiving the `chat.update`, on CLOCK_MONOTONIC.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from machine import machine_info
from metrics import Metric, Report, Target, percentile
from output import print_report, progress, write_results
from serving import signoff_serve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "slack.json"
ACK_TARGET_MS = 3000.0
UPDATE_P99_TARGET_MS = 1000.0
TOKEN, SECRET = "xoxb-bench", "bench-signing-secret"


@dataclass(frozen=True)
class Sizes:
    clicks: int
    warmups: int


FULL = Sizes(clicks=300, warmups=10)
QUICK = Sizes(clicks=50, warmups=5)


class FakeSlack:
    """The two Web API methods the measurement needs; notes when each message is updated."""

    def __init__(self) -> None:
        self.posted: dict[str, str] = {}
        """request id → ts of its message."""
        self.updated: dict[str, float] = {}
        """ts → monotonic time its chat.update arrived."""
        self.changed = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                method = self.path.removeprefix("/api/")
                with fake.changed:
                    if method == "chat.postMessage":
                        ts = f"1700000000.{len(fake.posted) + 1:06d}"
                        request_id = body.get("metadata", {}).get("event_payload", {}).get("request_id", "")
                        fake.posted[request_id] = ts
                        answer = {"ok": True, "channel": "D1", "ts": ts}
                    else:
                        fake.updated[str(body.get("ts"))] = time.monotonic()
                        answer = {"ok": True, "channel": body.get("channel"), "ts": body.get("ts")}
                    fake.changed.notify_all()
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def wait(self, check: Any, timeout: float = 30.0) -> None:
        with self.changed:
            if not self.changed.wait_for(check, timeout):
                raise RuntimeError("the fake Slack did not get what it waited for")


@contextmanager
def serving(workdir: Path, fake: FakeSlack) -> Iterator[tuple[str, SQLiteStore]]:
    db = workdir / "slack.db"
    store = SQLiteStore(db)
    store.add_user("alice", role="member", actor="bench")
    store.set_address("alice", "slack", "U1", actor="bench")
    channels = workdir / "channels.yaml"
    channels.write_text(
        "channels:\n  slack:\n    bot_token: {env: SLACK_BOT_TOKEN}\n"
        f"    signing_secret: {{env: SLACK_SIGNING_SECRET}}\n    api_url: {fake.api_url}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET}
    try:
        with signoff_serve(db, "--channels", str(channels), env=env, startup=30) as (url, _):
            yield url, store
    finally:
        store.close()


def signed_click(request_id: str, ts: str, index: int) -> tuple[bytes, dict[str, str]]:
    payload = {
        "type": "block_actions",
        "user": {"id": "U1"},
        "trigger_id": f"{index}.bench",
        "container": {"type": "message", "message_ts": ts, "channel_id": "D1"},
        "actions": [{"action_id": "signoff.approve", "value": request_id, "type": "button"}],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return body, headers


def measure(url: str, store: SQLiteStore, fake: FakeSlack, sizes: Sizes) -> tuple[list[float], list[float]]:
    acks: list[float] = []
    updates: list[float] = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for index in range(sizes.warmups + sizes.clicks):
            new = NewRequest(
                thread_id=f"bench-{index}",
                tool_call_id="c",
                tool_name="send_email",
                args={"to": "bob@example.com", "subject": "Quarterly report"},
                description="Send the quarterly report to bob",
                deadline=utcnow() + timedelta(hours=1),
                rule=RequestRule(approvers=("alice",), channels=("slack",)),
            )
            request_id = store.create_request(new)[0].id
            fake.wait(lambda request_id=request_id: request_id in fake.posted)
            ts = fake.posted[request_id]
            body, headers = signed_click(request_id, ts, index)
            started = time.monotonic()
            answer = http.post("/channels/slack/callback", content=body, headers=headers)
            answered = time.monotonic()
            if answer.status_code != 200 or store.get_request(request_id).status.value != "approved":
                raise RuntimeError(f"the click was not taken: {answer.status_code} {answer.text}")
            fake.wait(lambda ts=ts: ts in fake.updated)
            if index >= sizes.warmups:
                acks.append((answered - started) * 1000)
                updates.append((fake.updated[ts] - answered) * 1000)
    return acks, updates


def add_latencies(
    report: Report, name: str, label: str, values: list[float], target: float, p: float
) -> None:
    for fraction, suffix in ((0.5, "p50"), (0.99, "p99")):
        value = percentile(values, fraction)
        report.add(
            Metric(
                section="slack",
                name=f"{name}_{suffix}_ms",
                label=f"{label} {suffix}",
                value=round(value, 2),
                unit="ms",
                target=Target("<=", target) if fraction == p else None,
                details={"samples": len(values), "max_ms": round(max(values), 2)},
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args()
    sizes = QUICK if options.quick else FULL
    report = Report()
    started = time.monotonic()
    fake = FakeSlack()
    with (
        tempfile.TemporaryDirectory(prefix="signoff-bench-slack-") as tmp,
        serving(Path(tmp), fake) as (url, store),
    ):
        progress(f"{sizes.clicks} signed clicks")
        acks, updates = measure(url, store, fake, sizes)
    add_latencies(report, "click_answer", "click → answer", acks, ACK_TARGET_MS, 0.99)
    add_latencies(report, "decision_update", "decision → chat.update", updates, UPDATE_P99_TARGET_MS, 0.99)
    report.notes.append(
        f"{sizes.clicks} approve clicks after {sizes.warmups} warm-ups, one at a time; signoff serve "
        "(SQLite, one process) and the fake Slack on the same machine."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    fake.server.shutdown()
    machine = machine_info(None)
    machine["cpu_count"] = os.cpu_count()
    print_report(report, f"signoff Slack benchmarks ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
