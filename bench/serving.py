"""`signoff serve` for the benchmarks that need a live server: a free loopback port, the server
started on a SQLite file (through `named_threads.py`, so that its threads' CPU can be told apart),
waited for until `/healthz` answers, and stopped afterwards."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

NAMED_THREADS = Path(__file__).resolve().parent / "named_threads.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def signoff_serve(
    db: Path,
    *options: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    startup: float = 60.0,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`signoff serve --db sqlite:///DB OPTIONS…` running; yields its URL and process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, str(NAMED_THREADS), "serve", "--db", f"sqlite:///{db}", "--port", str(port)]
    process = subprocess.Popen(
        [*command, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    try:
        deadline = time.monotonic() + startup
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("signoff serve did not start")
            time.sleep(0.1)
        yield url, process
    finally:
        process.terminate()
        process.wait(30)
