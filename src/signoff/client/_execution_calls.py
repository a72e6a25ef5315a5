"""The REST calls of executions (claims, leases, results): see `_calls`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..execution import Claim
from ..requests import Execution, ExecutionStatus
from ._calls import _path, _query
from ._wire import (
    Answer,
    Call,
    read_execution,
)


def claim_execution(
    request_id: str, *, lease: timedelta, args_digest: str, idempotent: bool, owner: dict[str, Any]
) -> Call[Claim]:
    def read(answer: Answer) -> Claim:
        data = answer.data
        return Claim(data["kind"], read_execution(request_id, data["execution"]), data.get("token"))

    body = {
        "action": "claim",
        "lease_seconds": lease.total_seconds(),
        "args_digest": args_digest,
        "idempotent": idempotent,
        "owner": owner,
    }
    return Call("POST", _path("requests", request_id, "execution"), read, body=body)


def renew_lease(request_id: str, token: str, *, lease: timedelta) -> Call[bool]:
    body = {"action": "renew", "token": token, "lease_seconds": lease.total_seconds()}
    return Call(
        "POST", _path("requests", request_id, "execution"), lambda a: bool(a.data["renewed"]), body=body
    )


def finish_execution(
    request_id: str, token: str, *, succeeded: bool, result: Any, error: str | None
) -> Call[Execution]:
    body = {"action": "finish", "token": token, "succeeded": succeeded, "result": result, "error": error}
    return Call(
        "POST",
        _path("requests", request_id, "execution"),
        lambda answer: read_execution(request_id, answer.data["execution"]),
        body=body,
    )


def reset_execution(request_id: str) -> Call[Execution]:
    return Call(
        "POST",
        _path("requests", request_id, "execution"),
        lambda answer: read_execution(request_id, answer.data["execution"]),
        body={"action": "reset"},
    )


def get_execution(request_id: str) -> Call[Execution | None]:
    return Call(
        "GET",
        _path("requests", request_id, "execution"),
        lambda answer: read_execution(request_id, answer.data) if answer.data is not None else None,
    )


def list_executions(
    status: ExecutionStatus | str, *, limit: int, cursor: str | None
) -> Call[tuple[list[Execution], str | None]]:
    def read(answer: Answer) -> tuple[list[Execution], str | None]:
        items = answer.data["items"]
        found = [read_execution(item["request_id"], item["execution"]) for item in items]
        return found, answer.data.get("next_cursor")

    params = _query(status=ExecutionStatus(status).value, limit=limit, cursor=cursor)
    return Call("GET", _path("executions"), read, params=params)
