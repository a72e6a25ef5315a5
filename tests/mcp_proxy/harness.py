"""Running the real thing for the MCP proxy's tests: the upstream server script, the proxy as a
`signoff mcp-proxy` subprocess (stdio, or streamable HTTP with --listen), and the official MCP
client in front of it. People decide through the test's Store (or a live server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
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
