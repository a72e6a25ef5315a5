"""Who is running a tool call, whether that process still lives, and the idempotency key.

A claim records its owner (host, pid, the process's start time, a random token) and a lease
that the running process renews. A `running` claim is dead when, on this host, its process is
gone (or the pid now belongs to another process), or, from another host, its lease ran out.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any, Literal

from ._util import canonical_json, utcnow
from .requests import Execution, Request, RequestStatus

DEFAULT_LEASE = timedelta(seconds=60)
DIGEST_PREFIX = "sha256:"


def args_digest(args: Mapping[str, Any]) -> str:
    """What an execution claim says it will run: sha256 of the args' canonical JSON. The store
    refuses a claim whose digest is not that of the decided args (`decided_args`)."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(dict(args)).encode()).hexdigest()


def may_run(request: Request) -> bool:
    """Whether the request's call may run now: approved or edited, or expired under a rule that
    approves at expiry."""
    if request.status is RequestStatus.EXPIRED:
        return request.rule.on_expire == "approve"
    return request.status in (RequestStatus.APPROVED, RequestStatus.EDITED)


def decided_args(request: Request) -> dict[str, Any]:
    """The args a decided request runs with: the approver's edit, else those asked about."""
    return request.final_args if request.final_args is not None else request.args


_idempotency_key: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "signoff_idempotency_key", default=None
)


def idempotency_key() -> str | None:
    """Inside a tool run by the gate: the request id, stable across replays. Pass it to
    downstream APIs that deduplicate (payment providers, mail APIs) so a retry is harmless."""
    return _idempotency_key.get()


def _process_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


@cache
def _hostname() -> str:
    import socket  # for the first execution a process records; a command that lists needs none

    return socket.gethostname()


@cache
def _own_start(pid: int) -> str | None:
    """This process's start time (by its pid: a forked child reads its own)."""
    return _process_start(pid)


def current_owner() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": _hostname(), "pid": pid, "started": _own_start(pid), "token": uuid.uuid4().hex}


def owner_is_alive(
    owner: dict[str, Any] | None, lease_until: datetime | None, now: datetime | None = None
) -> bool:
    if not owner:
        return False
    if owner.get("host") == _hostname():
        pid = owner.get("pid")
        if not isinstance(pid, int):
            return False
        if pid == os.getpid():
            return True
        started = _process_start(pid)
        if started is None:
            return not os.path.isdir("/proc") and _pid_exists(pid)
        return owner.get("started") is None or started == owner.get("started")
    return lease_until is not None and lease_until > (now or utcnow())


def why_dead(owner: dict[str, Any] | None) -> str:
    """Why `owner_is_alive` said no, in words for the audit log and the people reading it."""
    if owner and owner.get("host") == _hostname():
        return "the running process died"
    host = owner.get("host") if owner else None
    return f"its lease ran out: the process on {host or 'an unknown host'} stopped renewing it"


def why_unclaimed(runner: dict[str, Any] | None) -> str:
    """Why an approved call's runner is taken to have stopped before running it."""
    if runner and runner.get("host") == _hostname():
        return "the process waiting to run it stopped before it did"
    host = runner.get("host") if runner else None
    return f"the process on {host or 'an unknown host'} waiting to run it did not claim it within its lease"


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


ClaimKind = Literal["claimed", "succeeded", "busy", "in_doubt", "failed"]


@dataclass(frozen=True)
class Claim:
    """What `claim_execution` found: ours to run (`claimed`, with `token`), or someone else's state."""

    kind: ClaimKind
    execution: Execution
    token: str | None = None
