"""`signoff serve` in its own process, on a fixed port, killed (SIGKILL) and started again at will."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from .live import free_port


class ServeProcess:
    def __init__(self, db: str, log: Path, *, args: Sequence[str] = (), port: int | None = None) -> None:
        self.db = db
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.args = list(args)
        self.process: subprocess.Popen[bytes] | None = None
        self.kills = 0

    def start(self) -> None:
        command = [sys.executable, "-m", "signoff.cli", "serve", "--db", self.db, "--port", str(self.port)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [*command, *self.args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        wait_until_healthy(self.url, self.process, self.log)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: no shutdown of any kind
        self.process.wait(10)
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the server `process` started answers `/healthz` with 200 (its log shown if it exits)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert process.poll() is None, f"signoff serve exited: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, "signoff serve did not start"
        time.sleep(0.05)


@contextmanager
def running(*servers: ServeProcess) -> Iterator[tuple[ServeProcess, ...]]:
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


def eventually(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "the condition never held"
        time.sleep(0.01)
