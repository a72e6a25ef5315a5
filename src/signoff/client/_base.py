"""The REST calls of a signoff server, without I/O.

Each function builds one `Call`: its method, path, query and body, and how to read the answer
into signoff's own types. `Client` and `AsyncClient` only send them. An error answer becomes the
same `signoff.errors` class the server raised, with its message, so a gate behaves the same
over a client as over a local store.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from .. import errors
from .._util import from_iso, utcnow
from ..audit import AuditEntry, AuditProblem, AuditReport
from ..decisions import Decision, DecisionRecord, decision_to_dict, parse_decision
from ..errors import RemoteError, RequestConflict, SignoffError
from ..execution import Claim
from ..identity import User
from ..requests import Execution, ExecutionStatus, NewRequest, Request, RequestStatus, request_from_record
from ..rules.model import LayerKind, RuleSet

T = TypeVar("T")

MAX_WAIT_SECONDS = 60.0
"""The longest a server holds a long-poll (`GET /v1/requests/{id}/wait`)."""
EXPIRE_GRACE_SECONDS = 2.0
"""How long `expire` lets the server wait for the deadline by its own clock."""
PAGE_SIZE = 500


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
}


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
    }
    record = {
        **view,
        "tool_name": view["tool"],
        "tool_description": None,
        "args_schema": None,
        "answer_schema": None,
        "rule": {key: value for key, value in rule.items() if value},
        "updated_at": view.get("decided_at") or view["created_at"],
        "decision": view.get("resolution"),
    }
    return request_from_record(record)


def _request(answer: Answer) -> Request:
    return read_request(answer.data)


def _requests(answer: Answer) -> list[Request]:
    return [read_request(item) for item in answer.data["items"]]


def read_execution(request_id: str, data: dict[str, Any]) -> Execution:
    return Execution(
        request_id=request_id,
        status=ExecutionStatus(data["status"]),
        attempts=int(data.get("attempts", 0)),
        owner=data.get("owner"),
        lease_until=_moment(data.get("lease_until")),
        started_at=_moment(data.get("started_at")),
        finished_at=_moment(data.get("finished_at")),
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


def _moment(value: Any) -> datetime | None:
    return from_iso(value) if isinstance(value, str) else None


def _path(*parts: str) -> str:
    return "/v1/" + "/".join(quote(part, safe="") for part in parts)


def _query(**values: Any) -> dict[str, str]:
    return {key: _text(value) for key, value in values.items() if value is not None}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    return str(value)


# -- requests ------------------------------------------------------------------------------------


def create_request(new: NewRequest) -> Call[tuple[Request, bool]]:
    seconds_left = (new.deadline - utcnow()).total_seconds()
    body = {
        "thread_id": new.thread_id,
        "tool_call_id": new.tool_call_id,
        "tool": new.tool_name,
        "args": new.args,
        "kind": new.kind,
        "description": new.description,
        "tool_description": new.tool_description,
        "args_schema": new.args_schema,
        "answer_schema": new.answer_schema,
        "agent": new.agent,
        "app": new.app,
        "requester": new.requester,
        "deadline": max(seconds_left, 0.001),
        "drafting": new.drafting,
        "rule": new.rule.snapshot(),
    }
    return Call("POST", _path("requests"), lambda answer: (_request(answer), answer.status == 201), body=body)


def find_request(thread_id: str, tool_call_id: str) -> Call[Request | None]:
    def read(answer: Answer) -> Request | None:
        items = answer.data["items"]
        if not items:
            return None
        if not isinstance(items[0].get("record"), dict):
            raise RequestConflict(
                f"thread {thread_id!r} already has a tool call {tool_call_id!r} from someone else"
            )
        return read_request(items[0])

    params = _query(thread_id=thread_id, tool_call_id=tool_call_id, limit=1)
    return Call("GET", _path("requests"), read, params=params)


def list_requests(
    *,
    status: str | list[str] | None = None,
    tool: str | None = None,
    agent: str | None = None,
    app: str | None = None,
    thread_id: str | None = None,
    tool_call_id: str | None = None,
    approver: str | None = None,
    search: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> Call[tuple[list[Request], str | None]]:
    """One page, newest first, and the cursor of the next page (None at the end)."""
    params = _query(
        status=status,
        tool=tool,
        agent=agent,
        app=app,
        thread_id=thread_id,
        tool_call_id=tool_call_id,
        approver=approver,
        q=search,
        limit=min(limit, PAGE_SIZE),
        cursor=cursor,
    )
    return Call(
        "GET",
        _path("requests"),
        lambda answer: (_requests(answer), answer.data.get("next_cursor")),
        params=params,
    )


def get_request(request_id: str) -> Call[Request]:
    return Call("GET", _path("requests", request_id), _request)


def decide(request_id: str, decision: Decision, *, on_behalf: bool = False) -> Call[Request]:
    body: dict[str, Any] = decision_to_dict(decision)
    if on_behalf:
        body["on_behalf"] = "unattended"
    return Call("POST", _path("requests", request_id, "decision"), _request, body=body)


def wait(request_id: str, timeout: float) -> Call[Request]:
    """The request once terminal, or as it is after `timeout` seconds (at most a minute)."""
    seconds = min(max(timeout, 0.0), MAX_WAIT_SECONDS)
    return Call(
        "GET",
        _path("requests", request_id, "wait"),
        _request,
        params=_query(timeout=seconds),
        holds=seconds,
    )


def expire(request_id: str) -> Call[Request | None]:
    """The server expires a request past its deadline when it is waited on; its clock decides."""
    call = wait(request_id, EXPIRE_GRACE_SECONDS)

    def read(answer: Answer) -> Request | None:
        request = _request(answer)
        return request if request.status is RequestStatus.EXPIRED else None

    return Call(call.method, call.path, read, params=call.params, holds=call.holds)


def cancel(request_id: str, *, reason: str | None) -> Call[Request]:
    return Call("POST", _path("requests", request_id, "cancel"), _request, body={"reason": reason})


def cancel_thread(thread_id: str, *, reason: str | None) -> Call[int]:
    return Call(
        "POST",
        _path("threads", thread_id, "cancel"),
        lambda answer: int(answer.data["cancelled"]),
        body={"reason": reason},
    )


def update_draft(request_id: str, *, args: dict[str, Any] | None, ready: bool) -> Call[Request]:
    return Call("PATCH", _path("requests", request_id), _request, body={"args": args, "ready": ready})


def count_auto_decisions(thread_id: str) -> Call[int]:
    return Call(
        "GET", _path("threads", thread_id, "auto-decisions"), lambda answer: int(answer.data["count"])
    )


def decisions(request_id: str) -> Call[list[DecisionRecord]]:
    return Call(
        "GET",
        _path("requests", request_id, "decisions"),
        lambda answer: [read_decision(request_id, item) for item in answer.data],
    )


def request_audit(request_id: str) -> Call[list[AuditEntry]]:
    return Call(
        "GET",
        _path("requests", request_id, "audit"),
        lambda answer: [read_audit_entry(item) for item in answer.data],
    )


# -- executions ----------------------------------------------------------------------------------


def claim_execution(
    request_id: str, *, lease: timedelta, idempotent: bool, owner: dict[str, Any]
) -> Call[Claim]:
    def read(answer: Answer) -> Claim:
        data = answer.data
        return Claim(data["kind"], read_execution(request_id, data["execution"]), data.get("token"))

    body = {
        "action": "claim",
        "lease_seconds": lease.total_seconds(),
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


# -- rules, memory, audit, identity --------------------------------------------------------------


def rules() -> Call[tuple[int, RuleSet]]:
    return Call(
        "GET",
        _path("rules"),
        lambda answer: (int(answer.data["version"]), RuleSet.from_dict(answer.data["rules"])),
    )


def replace_rules(ruleset: RuleSet) -> Call[None]:
    return Call("PUT", _path("rules"), lambda answer: None, body=ruleset.to_dict())


def _layer_name(name: str) -> str:
    return name or "-"


def get_layer(kind: LayerKind, name: str) -> Call[dict[str, Any] | None]:
    return Call(
        "GET", _path("rules", kind, _layer_name(name)), lambda answer: answer.data, absent_if_404=True
    )


def set_layer(kind: LayerKind, name: str, data: dict[str, Any]) -> Call[dict[str, Any]]:
    return Call("PUT", _path("rules", kind, _layer_name(name)), lambda answer: answer.data, body=data)


def delete_layer(kind: LayerKind, name: str) -> Call[bool]:
    return Call(
        "DELETE", _path("rules", kind, _layer_name(name)), lambda answer: bool(answer.data["deleted"])
    )


def remember(scope_key: str, fingerprint: str) -> Call[None]:
    return Call(
        "POST",
        _path("memory"),
        lambda answer: None,
        body={"scope_key": scope_key, "fingerprint": fingerprint},
    )


def recall(scope_key: str, fingerprint: str) -> Call[bool]:
    return Call(
        "GET",
        _path("memory"),
        lambda answer: bool(answer.data["remembered"]),
        params=_query(scope_key=scope_key, fingerprint=fingerprint),
    )


def audit_entries(
    *, action: str | None, actor: str | None, after: int, limit: int
) -> Call[tuple[list[AuditEntry], int | None]]:
    """One page of the whole log (admins), and where the next page starts (None at the end)."""
    return Call(
        "GET",
        _path("audit"),
        lambda answer: (
            [read_audit_entry(item) for item in answer.data["items"]],
            answer.data.get("next_after"),
        ),
        params=_query(action=action, actor=actor, after=after, limit=min(limit, 1000)),
    )


def verify_audit() -> Call[AuditReport]:
    def read(answer: Answer) -> AuditReport:
        data = answer.data
        problems = [AuditProblem(int(item["seq"]), item["problem"]) for item in data["problems"]]
        return AuditReport(entries=int(data["entries"]), head_seq=int(data["head_seq"]), problems=problems)

    return Call("GET", _path("audit", "verify"), read)


def me() -> Call[User]:
    def read(answer: Answer) -> User:
        data = answer.data
        return User(
            name=data["name"],
            role=data["role"],
            display_name=data.get("display_name"),
            email=data.get("email"),
            disabled=bool(data.get("disabled")),
            groups=tuple(data.get("groups") or ()),
        )

    return Call("GET", _path("me"), read)


def group_members() -> Call[dict[str, list[str]]]:
    return Call("GET", _path("groups"), lambda answer: answer.data)


def add_group_member(group: str, user: str) -> Call[None]:
    return Call("POST", _path("groups", group, "members"), lambda answer: None, body={"user": user})


def remove_group_member(group: str, user: str) -> Call[bool]:
    return Call(
        "DELETE", _path("groups", group, "members", user), lambda answer: bool(answer.data["removed"])
    )
