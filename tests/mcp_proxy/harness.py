"""Running the real thing for the MCP proxy's tests: the upstream server script, the proxy as a
`signoff mcp-proxy` subprocess (stdio, or streamable HTTP with --listen), and the official MCP
client in front of it. People decide through the test's Store (or a live server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

from signoff.requests import Request, RequestStatus
from signoff.store import Store

from ..live import free_port

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = str(ROOT / "tests" / "mcp_proxy" / "upstream_server.py")
PYTHON = sys.executable

RULES = """
services:
  files:
    approval_mode: unless_read_only
tools:
  files.crash: {requires_approval: false}
  files.hang: {requires_approval: false}
  files.add_tool: {requires_approval: false}
  files.echo: {requires_approval: false}
"""
"""The tests' rules: every tool not marked read-only asks, but for a few plumbing tools."""


def env(db: Path | None, **extra: str) -> dict[str, str]:
    values = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **extra,
    }
    if db is not None:
        values["SIGNOFF_DB"] = str(db)
    for name in ("SIGNOFF_URL", "SIGNOFF_TOKEN") if db is not None else ():
        values.pop(name, None)
    return values


@dataclass
class Setup:
    """Where a test's proxy keeps things."""

    tmp: Path
    rules: str | None = RULES
    extra: list[str] = field(default_factory=list)
    url: str | None = None
    token: str | None = None
    env_extra: dict[str, str] = field(default_factory=dict)

    @property
    def db(self) -> Path:
        return self.tmp / "signoff.db"

    @property
    def runs(self) -> Path:
        return self.tmp / "runs.jsonl"

    def upstream_command(self) -> list[str]:
        return [PYTHON, UPSTREAM, str(self.runs)]

    def proxy_args(self, *more: str, upstream: list[str] | None = None) -> list[str]:
        args = ["-m", "signoff.cli", "mcp-proxy", "--name", "files", "--progress-interval", "0.1"]
        if self.rules is not None:
            path = self.tmp / "rules.yaml"
            path.write_text(self.rules, encoding="utf-8")
            args += ["--config", str(path)]
        if self.url is not None:
            args += ["--url", self.url]
        args += [*self.extra, *more]
        if upstream is None:
            args += ["--", *self.upstream_command()]
        else:
            args += upstream
        return args

    def proxy_env(self) -> dict[str, str]:
        extra = dict(self.env_extra)
        if self.token is not None:
            extra["SIGNOFF_TOKEN"] = self.token
        return env(None if self.url else self.db, **extra)

    def stdio(self, *more: str) -> StdioServerParameters:
        return StdioServerParameters(command=PYTHON, args=self.proxy_args(*more), env=self.proxy_env())

    def direct(self) -> StdioServerParameters:
        command = self.upstream_command()
        return StdioServerParameters(command=command[0], args=command[1:], env=env(None))

    def run_count(self, tool: str | None = None) -> int:
        return len(self.runs_of(tool))

    def runs_of(self, tool: str | None = None, *, event: str | None = None) -> list[dict[str, Any]]:
        """The upstream's records of `tool`'s runs (or of another `event`, e.g. "cancelled")."""
        if not self.runs.exists():
            return []
        lines = [json.loads(line) for line in self.runs.read_text(encoding="utf-8").splitlines()]
        return [
            line for line in lines if (tool is None or line["tool"] == tool) and line.get("event") == event
        ]


class RawProxy:
    """`signoff mcp-proxy` over stdio as a process of the test's own (so that it can be killed),
    spoken to in JSON-RPC lines; its stderr is kept (`said`)."""

    def __init__(self, setup: Setup, *more: str, client_name: str = "raw") -> None:
        self.log = setup.tmp / f"proxy-{time.monotonic_ns()}.err"
        self._err = self.log.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [PYTHON, *setup.proxy_args(*more)],
            env=setup.proxy_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            encoding="utf-8",
        )
        self._answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        """What the proxy sent that is not an answer (progress, list changes), in order."""
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0
        self.initialize(client_name)

    def initialize(self, client_name: str) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        }
        answer = self.ask("initialize", params, timeout=90)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> int:
        """Send a request; its id (`answer` waits for what comes back)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, request_id: int, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while request_id not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and request_id not in self._answers):
                    raise AssertionError(f"no answer to {request_id}; the proxy said: {self.said()}")
                self._lock.wait(min(left, 0.2))
            return self._answers.pop(request_id)

    def ask(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        return self.answer(self.start(method, params), timeout)

    def call(self, tool: str, args: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """A `tools/call`'s result (an error answer raises)."""
        answer = self.ask("tools/call", {"name": tool, "arguments": args}, timeout)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def said(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def kill(self) -> None:
        """kill -9: nothing of the proxy's runs after this."""
        self.process.kill()
        self.process.wait(10)
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                with suppress(BrokenPipeError):
                    stream.close()
        self._err.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "id" in message and "method" not in message:
                with self._lock:
                    self._answers[message["id"]] = message
                    self._lock.notify_all()
            elif "id" not in message:
                self.notifications.append(message)


def eventually(check: Callable[[], Any], timeout: float = 60) -> Any:
    """`check()`'s first truthy answer (blocking; for tests that speak to a RawProxy)."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not so within {timeout} s")
        time.sleep(0.05)
    return found


def text_of(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))


@asynccontextmanager
async def client(target: Any, **kwargs: Any) -> AsyncIterator[Client]:
    kwargs.setdefault("mode", "legacy")
    async with Client(target, **kwargs) as connected:
        yield connected


@asynccontextmanager
async def listening(setup: Setup, *more: str, upstream: list[str] | None = None) -> AsyncIterator[str]:
    """The proxy serving streamable HTTP (--listen); yields its /mcp URL."""
    port = free_port()
    args = setup.proxy_args("--listen", f"127.0.0.1:{port}", *more, upstream=upstream)
    process = subprocess.Popen([PYTHON, *args], env=setup.proxy_env(), stdin=subprocess.DEVNULL)
    try:
        await wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@asynccontextmanager
async def upstream_over_http(setup: Setup) -> AsyncIterator[str]:
    port = free_port()
    process = subprocess.Popen([*setup.upstream_command(), "--http", str(port)], env=env(None))
    try:
        await wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90  # the proxy imports the SDK and signoff first: slow on a busy machine
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the process exited with {process.returncode}")
            try:
                await http.get(f"http://127.0.0.1:{port}/")
                return
            except httpx.TransportError:
                await anyio.sleep(0.05)
    raise RuntimeError("nothing listened in time")


async def pending_request(store: Store, *, tool: str | None = None, timeout: float = 30) -> Request:
    """The first pending request (of `tool`) once one exists."""
    return await until(
        store, lambda request: request.status is RequestStatus.PENDING, tool=tool, timeout=timeout
    )


async def until(
    store: Store, check: Callable[[Request], bool], *, tool: str | None = None, timeout: float = 30
) -> Request:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await anyio.to_thread.run_sync(lambda: store.list_requests(tool=tool, limit=50))
        for request in found:
            if (tool is None or request.tool_name == tool) and check(request):
                return request
        await anyio.sleep(0.05)
    raise AssertionError(f"no request of {tool or 'any tool'} got there in {timeout} s")
