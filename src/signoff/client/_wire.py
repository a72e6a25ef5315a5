"""What travels between the client and a signoff server: a `Call` and its `Answer`, error
answers turned back into the `signoff.errors` class the server raised, and JSON read back into
signoff's own types."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import httpx

from .. import errors
from .._util import from_iso
from ..audit import AuditEntry
from ..decisions import DecisionRecord, parse_decision
from ..errors import RemoteError, SignoffError
from ..requests import Execution, ExecutionStatus, Request, request_from_record

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    status: int
    data: Any


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    read: Callable[[Answer], T]
    params: dict[str, str] | None = None
    body: Any = None
    holds: float = 0.0
    """Seconds the server may hold the call before answering (a long-poll)."""
    absent_if_404: bool = False
    """A 404 is an answer (`read` gets None), not an error."""

    def answer(self, status: int, content: bytes) -> T:
        """The result of the call, or the error the server reported, raised."""
        if status == 404 and self.absent_if_404:
            return self.read(Answer(status, None))
        if status >= 400:
            raise error_from(status, content)
        if status >= 300:
            raise RemoteError(f"the server answered {self.method} {self.path} with a redirect ({status})")
        try:
            data = json.loads(content) if content else None
        except ValueError:
            raise RemoteError(
                f"the server's answer to {self.method} {self.path} is not JSON: {_snippet(content)}"
            ) from None
        try:
            return self.read(Answer(status, data))
        except (KeyError, TypeError, ValueError) as exc:
            raise RemoteError(
                f"unexpected answer to {self.method} {self.path}: {type(exc).__name__}: {exc}"
            ) from None


# -- errors ------------------------------------------------------------------------------------

_ERRORS: dict[str, type[SignoffError]] = {
    name: value
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, SignoffError) and value is not errors.AutoResumeExceeded
}
_ERROR_BY_STATUS: dict[int, type[SignoffError]] = {
    401: errors.NotAuthenticated,
    403: errors.PermissionDenied,
    404: errors.NotFound,
    409: errors.RequestConflict,
    410: errors.RequestExpired,
    422: errors.InvalidInput,
    429: errors.TooManySignIns,
}


_AUTO_RESUME_LIMIT = re.compile(r"exceeded (\d+) attempts")
"""`AutoResumeExceeded` is made from its limit, which its message says."""


def error_from(status: int, content: bytes) -> SignoffError:
    """The `signoff.errors` class named in `{"error": {"type", "message"}}`, else one by status."""
    try:
        body = json.loads(content)
        kind, message = body["error"]["type"], body["error"]["message"]
    except (ValueError, KeyError, TypeError):
        kind, message = None, None
    if not isinstance(message, str):
        text = _snippet(content) or "no details"
        return _ERROR_BY_STATUS.get(status, RemoteError)(f"the server answered {status}: {text}")
    if kind == "AutoResumeExceeded" and (limit := _AUTO_RESUME_LIMIT.search(message)) is not None:
        return errors.AutoResumeExceeded(int(limit.group(1)))
    cls = _ERRORS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        cls = _ERROR_BY_STATUS.get(status, RemoteError)
        if cls is RemoteError:
            message = f"the server answered {status}: {message}"
    return cls(message)


def unreachable(url: str, exc: httpx.HTTPError) -> RemoteError:
    """A transport failure, said plainly."""
    if isinstance(exc, httpx.ConnectError):
        return RemoteError(f"cannot reach the signoff server at {url}: {exc or 'connection refused'}")
    if isinstance(exc, httpx.TimeoutException):
        return RemoteError(f"the signoff server at {url} did not answer in time ({type(exc).__name__})")
    return RemoteError(f"lost the connection to the signoff server at {url}: {type(exc).__name__}: {exc}")


def _snippet(content: bytes) -> str:
    return content[:200].decode("utf-8", errors="replace").strip()


# -- reading answers -----------------------------------------------------------------------------


def read_request(data: dict[str, Any]) -> Request:
    """The full request when the server sent its record (to the agent that asked), else the
    request as people see it (args redacted; only the rule's approvers, decisions and quorum)."""
    record = data.get("record")
    if isinstance(record, dict):
        return request_from_record(record)
    return request_from_view(data)


def request_from_view(view: dict[str, Any]) -> Request:
    rule = {
        "approvers": view.get("approvers") or [],
        "allowed_decisions": view.get("allowed_decisions") or [],
        "quorum": view.get("quorum", 1),
        "separation": view.get("separation"),
        "separated": view.get("separated") or [],
    }
    if view.get("batch") is False:
        rule["batch"] = False
    record = {
        **view,
        "tool_name": view["tool"],
        "tool_description": None,
        "args_schema": None,
        "answer_schema": None,
        "rule": {key: value for key, value in rule.items() if value or value is False},
        "updated_at": view.get("decided_at") or view["created_at"],
        "decision": view.get("resolution"),
    }
    return request_from_record(record)


def read_one(answer: Answer) -> Request:
    return read_request(answer.data)


def read_requests(answer: Answer) -> list[Request]:
    return [read_request(item) for item in answer.data["items"]]


def read_execution(request_id: str, data: dict[str, Any]) -> Execution:
    return Execution(
        request_id=request_id,
        status=ExecutionStatus(data["status"]),
        attempts=int(data.get("attempts", 0)),
        owner=data.get("owner"),
        lease_until=moment(data.get("lease_until")),
        started_at=moment(data.get("started_at")),
        finished_at=moment(data.get("finished_at")),
        result=data.get("result"),
        error=data.get("error"),
    )


def read_decision(request_id: str, data: dict[str, Any]) -> DecisionRecord:
    said = {key: value for key, value in data.items() if key not in ("id", "actor", "channel", "at")}
    return DecisionRecord(
        id=data["id"],
        request_id=request_id,
        decision=parse_decision(said),
        actor=data["actor"],
        channel=data["channel"],
        created_at=from_iso(data["at"]),
    )


def read_audit_entry(data: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        seq=int(data["seq"]),
        at=data["at"],
        actor=data["actor"],
        channel=data["channel"],
        action=data["action"],
        request_id=data.get("request_id"),
        data=data.get("data") or {},
        prev_hash=data["prev_hash"],
        hash=data["hash"],
    )


def moment(value: Any) -> datetime | None:
    return from_iso(value) if isinstance(value, str) else None
