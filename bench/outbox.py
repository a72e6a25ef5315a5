"""Outbox benchmarks: how soon a decision's notifications leave, webhook deliveries per second,
and whether a hung receiver slows the others.

    .venv/bin/python bench/outbox.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/outbox.json.
The delivery worker runs in this process as `signoff serve` runs it (its asyncio loop in a
thread of its own, the store's calls in worker threads), on a SQLite file (WAL,
synchronous=FULL); receivers run in processes of their own (bench/outbox_receiver.py, a bare
asyncio HTTP/1.1 server answering 204).

1. Decision → notification sent: a request routed to a chat channel (an in-memory channel
   that notes when its `update` is called) and subscribed to by a webhook; each is decided by
   another thread with `store.decide`. Latency from `decide()` returning (committed) to the
   channel's `update` call and to the webhook's POST being answered, on CLOCK_MONOTONIC.
2. Webhook deliveries per second: N requests created first (each writes a `request.created`
   row for one webhook), then the worker started; from its having started to the receiver
   having answered all N (each id once).
3. The same with a second webhook whose receiver never answers (each POST waits for its
   timeout): the healthy webhook's rate, beside the rate of (2).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx

from machine import machine_info
from metrics import Metric, Report, Target, percentile
from output import print_report, progress, write_results
from serving import free_port
from signoff import Approve
from signoff._util import utcnow
from signoff.channels import ChannelRegistry, MessageRef, Notice
from signoff.channels.recording import RecordingChannel
from signoff.destinations import Destinations
from signoff.outbox import DeliveryWorker, OutboxSettings, RetryPolicy
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import SQLiteStore, Store

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "outbox.json"
RECEIVER = Path(__file__).resolve().parent / "outbox_receiver.py"
LATENCY_P99_TARGET_MS = 1000.0
RATE_TARGET = 500.0


@dataclass(frozen=True)
class Sizes:
    decisions: int
    deliveries: int


FULL = Sizes(decisions=300, deliveries=5000)
QUICK = Sizes(decisions=60, deliveries=1000)


@contextmanager
def receiver(*, hang: bool = False) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(RECEIVER), str(port), *(["--hang"] if hang else [])],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        process.kill()
        process.wait(10)


COUNTER = httpx.Client(timeout=5)
"""One keep-alive connection for asking the receivers how many arrived."""


def count(url: str) -> dict[str, int]:
    answer: dict[str, int] = COUNTER.get(url).json()
    return answer


class TimedChannel(RecordingChannel):
    """Notes, per request, when its update was called."""

    def __init__(self) -> None:
        super().__init__("chat", address_kind="recording")
        self.updated: dict[str, float] = {}

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        self.updated[notice.request_id] = time.monotonic()
        return None


class Running:
    """A delivery worker on its own asyncio loop in a thread, as in `signoff serve`."""

    def __init__(self, store: Store, channels: ChannelRegistry, settings: OutboxSettings) -> None:
        self.loop = asyncio.new_event_loop()
        self.worker = DeliveryWorker(
            store, channels, settings, name="bench", destinations=Destinations(allow_private=True)
        )
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Running:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.worker.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.worker.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def new_request(index: int, **rule: object) -> NewRequest:
    return NewRequest(
        thread_id="bench",
        tool_call_id=f"call-{index}",
        tool_name="send_email",
        args={"to": "bob@example.com", "n": index},
        description="Send a mail",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(**rule),  # type: ignore[arg-type]
    )


def settings(**changes: object) -> OutboxSettings:
    base: dict[str, object] = {"poll": 0.2, "retry": RetryPolicy.quick()}
    base.update(changes)
    return OutboxSettings(**base)  # type: ignore[arg-type]


def wait_for(check: object, timeout: float, every: float = 0.002) -> bool:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if check():  # type: ignore[operator]
            return True
        time.sleep(every)
    return False


# -- 1. decision → notification ------------------------------------------------------------------


def measure_latency(report: Report, workdir: Path, sizes: Sizes) -> None:
    store = SQLiteStore(workdir / "latency.db")
    store.add_user("alice", role="member", actor="bench")
    store.set_address("alice", "recording", "U-ALICE", actor="bench")
    chat = TimedChannel()
    channels = ChannelRegistry()
    channels.add(chat)
    update_ms: list[float] = []
    webhook_ms: list[float] = []
    with receiver() as url, Running(store, channels, settings()):
        store.add_webhook(url, events=["request.decided"], allow_private=True, actor="bench")
        count_url = url.replace("/hook", "/count")
        ids = [
            store.create_request(new_request(i, approvers=("alice",), channels=("inbox", "chat")))[0].id
            for i in range(sizes.decisions)
        ]
        wait_for(lambda: len(chat.recorded) >= sizes.decisions, 60)  # every notice sent first
        for index, request_id in enumerate(ids):
            store.decide(request_id, Approve(), actor="alice")
            committed = time.monotonic()
            wait_for(lambda r=request_id: r in chat.updated, 10)
            update_ms.append((chat.updated[request_id] - committed) * 1000)
            wait_for(lambda n=index + 1: count(count_url)["unique"] >= n, 10, every=0.005)
            webhook_ms.append((time.monotonic() - committed) * 1000)
    store.close()
    for name, label, values in (
        ("update", "decision → chat card update called", update_ms),
        ("webhook", "decision → webhook POST answered", webhook_ms),
    ):
        report.add(
            Metric(
                "latency",
                f"{name}_p99",
                f"{label} (p99)",
                percentile(values, 0.99),
                "ms",
                Target("<=", LATENCY_P99_TARGET_MS),
                {"p50": percentile(values, 0.5), "max": max(values), "n": len(values)},
            )
        )


# -- 2. and 3. webhook deliveries per second ------------------------------------------------------


def measure_rate(workdir: Path, sizes: Sizes, *, with_hung: bool) -> tuple[float, dict[str, int]]:
    store = SQLiteStore(workdir / f"rate-{'hung' if with_hung else 'alone'}.db")
    with receiver() as url, receiver(hang=True) as hung_url:
        store.add_webhook(url, events=["request.created"], allow_private=True, actor="bench")
        if with_hung:
            store.add_webhook(hung_url, events=["request.created"], allow_private=True, actor="bench")
        with store.grouped():
            for index in range(sizes.deliveries):
                store.create_request(new_request(index))
        count_url = url.replace("/hook", "/count")
        with Running(store, ChannelRegistry(), settings(webhook_timeout=2.0, batch=400)):
            started = time.monotonic()  # the worker is running: its start-up is not the rate
            done = wait_for(lambda: count(count_url)["unique"] >= sizes.deliveries, 300, every=0.1)
            elapsed = time.monotonic() - started
        final = count(count_url)
    store.close()
    assert done, f"only {final} of {sizes.deliveries} arrived"
    return sizes.deliveries / elapsed, final


def measure_rates(report: Report, workdir: Path, sizes: Sizes) -> None:
    alone, counted = measure_rate(workdir, sizes, with_hung=False)
    report.add(
        Metric(
            "throughput",
            "webhooks_per_s",
            "webhook deliveries/s to a local receiver (SQLite)",
            alone,
            "/s",
            Target(">=", RATE_TARGET),
            {"deliveries": sizes.deliveries, **counted},
        )
    )
    progress("webhook deliveries per second, beside a hung receiver")
    beside, counted = measure_rate(workdir, sizes, with_hung=True)
    report.add(
        Metric(
            "throughput",
            "webhooks_per_s_beside_hung",
            "the same, with a second webhook that never answers",
            beside,
            "/s",
            Target(">=", RATE_TARGET),
            {"deliveries": sizes.deliveries, "ratio_to_alone": beside / alone, **counted},
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    sizes = QUICK if options.quick else FULL
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-outbox-") as tmp:
        workdir = Path(tmp)
        progress("decision → notification latency")
        measure_latency(report, workdir, sizes)
        progress("webhook deliveries per second")
        measure_rates(report, workdir, sizes)
    report.notes.append(
        "Latency: from store.decide() returning (committed) to the channel's update call / the "
        f"receiver's answer, {sizes.decisions} decisions one at a time, worker in the same process."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    machine = machine_info(None)
    machine["cpu_count"] = os.cpu_count()
    print_report(report, f"signoff outbox benchmarks ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
