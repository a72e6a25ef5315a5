"""WeCom and Feishu channel benchmarks: how soon a decision's card update reaches the platform,
and what checking one callback costs.

    .venv/bin/python bench/chatcards.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/chatcards.json.

1. Decision → card update at the platform: a request routed to the channel, its card sent by
   the delivery worker (as `signoff serve` runs it: its own asyncio loop in a thread) to a local
   stand-in of the platform's API (a threaded HTTP server answering as the API does), then
   decided with `store.decide` in this thread; latency from `decide()` returning (committed) to
   the stand-in receiving the update (WeCom `update_template_card`, Feishu `PATCH
   im/v1/messages/{id}`), on CLOCK_MONOTONIC. One decision at a time, on a SQLite file.
2. Callback checks per second: `verify()` of one signed, encrypted click (WeCom: sha1
   signature, AES, defusedxml; Feishu: lark-oapi's dispatcher plus the freshness window).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import struct
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from machine import machine_info
from metrics import Metric, Report, Target, percentile
from outbox import Running, new_request, settings, wait_for
from output import print_report, progress, write_results
from signoff import Approve
from signoff.channels import Channel, ChannelRegistry
from signoff.channels.feishu import FeishuChannel
from signoff.channels.wecom import WeComChannel
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "chatcards.json"
LATENCY_P99_TARGET_MS = 1000.0
AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"


class Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Keep-alive connections the channel still holds when the stand-in stops: not news."""


class Platform:
    """Both platforms' API as one stand-in: answers instantly, notes when updates arrive."""

    def __init__(self) -> None:
        self.updates: list[float] = []
        self.sends = 0
        lock = threading.Lock()
        platform = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                path = self.path.split("?")[0]
                answer: dict[str, Any] = {"errcode": 0, "errmsg": "ok", "code": 0, "msg": "ok"}
                if path.endswith("gettoken"):
                    answer.update(access_token="wecom-token", expires_in=7200)
                elif path.endswith("tenant_access_token/internal"):
                    answer.update(tenant_access_token="t-1", expire=7200)
                elif path in ("/cgi-bin/message/send", "/open-apis/im/v1/messages"):
                    with lock:
                        platform.sends += 1
                        number = platform.sends
                    answer.update(
                        msgid=f"m{number}", response_code=f"rc{number}", data={"message_id": f"om_{number}"}
                    )
                elif path.endswith("update_template_card") or self.command == "PATCH":
                    with lock:
                        platform.updates.append(time.monotonic())
                    answer["data"] = {}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = Quiet(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wecom(url: str) -> WeComChannel:
    return WeComChannel(
        "wecom",
        corp_id="wwcorp",
        corp_secret="s",
        agent_id=1,
        token="t",
        encoding_aes_key=AES_KEY,
        base_url=url,
    )


def feishu(url: str) -> FeishuChannel:
    app_id = f"cli_{uuid.uuid4().hex[:10]}"
    return FeishuChannel(
        "feishu", app_id=app_id, app_secret="s", encrypt_key="k", verification_token="v", base_url=url
    )


def measure_latency(report: Report, workdir: Path, decisions: int) -> None:
    for kind, make in (("wecom", wecom), ("feishu", feishu)):
        progress(f"{kind}: decision → card update")
        platform = Platform()
        store = SQLiteStore(workdir / f"{kind}.db")
        store.add_user("alice", role="member", actor="bench")
        store.set_address("alice", kind, "someone", actor="bench")
        channel: Channel = make(platform.url)
        channels = ChannelRegistry()
        channels.add(channel)
        latencies: list[float] = []
        with Running(store, channels, settings()):
            ids = [
                store.create_request(new_request(i, approvers=("alice",), channels=(kind,)))[0].id
                for i in range(decisions)
            ]
            wait_for(lambda p=platform: p.sends >= decisions, 120)
            for index, request_id in enumerate(ids):
                store.decide(request_id, Approve(), actor="alice")
                committed = time.monotonic()
                wait_for(lambda n=index + 1, p=platform: len(p.updates) >= n, 10)
                latencies.append((platform.updates[index] - committed) * 1000)
        store.close()
        platform.close()
        report.add(
            Metric(
                "latency",
                f"{kind}_update_p99",
                f"{kind}: decision → card update at the platform (p99)",
                percentile(latencies, 0.99),
                "ms",
                Target("<=", LATENCY_P99_TARGET_MS),
                {"p50": percentile(latencies, 0.5), "max": max(latencies), "n": len(latencies)},
            )
        )


def wecom_click() -> tuple[bytes, dict[str, str]]:
    key = base64.b64decode(AES_KEY + "=")
    event = (
        "<xml><ToUserName>wwcorp</ToUserName><FromUserName>zhangsan</FromUserName>"
        f"<CreateTime>{int(time.time())}</CreateTime><MsgType>event</MsgType>"
        "<Event>template_card_event</Event><EventKey>so1|approve|req_1</EventKey></xml>"
    ).encode()
    plain = os.urandom(16) + struct.pack(">I", len(event)) + event + b"wwcorp"
    padder = padding.PKCS7(256).padder()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    encrypted = base64.b64encode(
        encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize()
    ).decode()
    stamp, nonce = str(int(time.time())), "n"
    signature = hashlib.sha1("".join(sorted(["t", stamp, nonce, encrypted])).encode()).hexdigest()
    body = f"<xml><Encrypt>{encrypted}</Encrypt></xml>".encode()
    return body, {"msg_signature": signature, "timestamp": stamp, "nonce": nonce}


def feishu_click() -> tuple[bytes, dict[str, str]]:
    payload = {
        "schema": "2.0",
        "header": {"event_id": "ev", "token": "v", "event_type": "card.action.trigger"},
        "event": {
            "operator": {"open_id": "ou_1"},
            "action": {"value": {"signoff": "so1", "decision": "approve", "request_id": "req_1"}},
        },
    }
    key = hashlib.sha256(b"k").digest()
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    data = padder.update(json.dumps(payload).encode()) + padder.finalize()
    body = json.dumps(
        {"encrypt": base64.b64encode(iv + encryptor.update(data) + encryptor.finalize()).decode()}
    )
    stamp, nonce = str(int(time.time())), "n"
    signature = hashlib.sha256((stamp + nonce + "k").encode() + body.encode()).hexdigest()
    headers = {
        "x-lark-request-timestamp": stamp,
        "x-lark-request-nonce": nonce,
        "x-lark-signature": signature,
    }
    return body.encode(), headers


def measure_verify(report: Report, checks: int) -> None:
    progress("callback checks per second")
    channel_w = wecom("http://127.0.0.1:9")
    body, query = wecom_click()
    channel_f = feishu("http://127.0.0.1:9")
    f_body, f_headers = feishu_click()
    cases = (
        ("wecom", lambda: channel_w.verify(body, {}, query)),
        ("feishu", lambda: channel_f.verify(f_body, f_headers)),
    )
    for kind, check in cases:
        assert check().kind == "decide"
        started = time.perf_counter()
        for _ in range(checks):
            check()
        seconds = time.perf_counter() - started
        report.add(
            Metric(
                "verify", f"{kind}_verify", f"{kind}: signed, encrypted click checked", checks / seconds, "/s"
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    decisions, checks = (40, 500) if options.quick else (200, 3000)
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-chatcards-") as tmp:
        measure_latency(report, Path(tmp), decisions)
    measure_verify(report, checks)
    report.notes.append(
        f"Latency: store.decide() returning → the stand-in receiving the update, {decisions} decisions one "
        "at a time per platform, worker in the same process, stand-in on loopback."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    machine = machine_info(None)
    machine["cpu_count"] = os.cpu_count()
    print_report(report, f"signoff WeCom/Feishu benchmarks ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
