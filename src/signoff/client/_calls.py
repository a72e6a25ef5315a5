"""The REST calls of a signoff server, without I/O.

Each function builds one `Call` (see `_wire`): its method, path, query and body, and how to
read the answer into signoff's own types. `Client` and `AsyncClient` only send them, so a gate
behaves the same over a client as over a local store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .._util import from_iso, utcnow
from ..audit import AuditAnchor, AuditEntry, AuditReport
from ..decisions import Decision, DecisionRecord, decision_to_dict
from ..errors import RequestConflict
from ..grants import Grant, GrantAsk
from ..identity import User
from ..requests import NewRequest, Request, RequestStatus
from ..store.run_state_ops import RunStateRecord
from ._wire import (
    Answer,
    Call,
    read_audit_entry,
    read_decision,
    read_one,
    read_request,
    read_requests,
)

if TYPE_CHECKING:
    from ..request_steps import RequestStep

MAX_WAIT_SECONDS = 60.0
"""The longest a server holds a long-poll (`GET /v1/requests/{id}/wait`)."""
EXPIRE_GRACE_SECONDS = 2.0
"""How long `expire` lets the server wait for the deadline by its own clock."""
PAGE_SIZE = 500


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
        "round": new.round,
        "deadline": max(seconds_left, 0.001),
        "drafting": new.drafting,
        "rule": new.rule.snapshot(),
    }
    # each only when known: a server from before it refuses the field
    if new.tool_annotations is not None:
        body["tool_annotations"] = new.tool_annotations
    if new.client is not None:
        body["client"] = new.client
    if new.runner is not None:
        body["runner"] = {key: value for key, value in new.runner.items() if key != "token"}
    return Call("POST", _path("requests"), lambda answer: (read_one(answer), answer.status == 201), body=body)


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
        lambda answer: (read_requests(answer), answer.data.get("next_cursor")),
        params=params,
    )


def get_request(request_id: str) -> Call[Request]:
    return Call("GET", _path("requests", request_id), read_one)


def request_steps(request_id: str) -> Call[list[RequestStep]]:
    """The request's reminders and escalations, as its view lists them (none from a server
    that lists none)."""
    from ..request_steps import step_from_dict

    return Call(
        "GET",
        _path("requests", request_id),
        lambda answer: [step_from_dict(request_id, item) for item in answer.data.get("steps") or []],
    )


def decide(
    request_id: str, decision: Decision, *, on_behalf: bool = False, grant: GrantAsk | None = None
) -> Call[Request]:
    body: dict[str, Any] = decision_to_dict(decision)
    if on_behalf:
        body["on_behalf"] = "unattended"
    if grant is not None:
        body["grant"] = grant.to_dict()
    return Call("POST", _path("requests", request_id, "decision"), read_one, body=body)


def wait(request_id: str, timeout: float) -> Call[Request]:
    """The request once terminal, or as it is after `timeout` seconds (at most a minute)."""
    seconds = min(max(timeout, 0.0), MAX_WAIT_SECONDS)
    return Call(
        "GET",
        _path("requests", request_id, "wait"),
        read_one,
        params=_query(timeout=seconds),
        holds=seconds,
    )


def expire(request_id: str) -> Call[Request | None]:
    """The server expires a request past its deadline when it is waited on; its clock decides."""
    call = wait(request_id, EXPIRE_GRACE_SECONDS)

    def read(answer: Answer) -> Request | None:
        request = read_one(answer)
        return request if request.status is RequestStatus.EXPIRED else None

    return Call(call.method, call.path, read, params=call.params, holds=call.holds)


def cancel(request_id: str, *, reason: str | None) -> Call[Request]:
    return Call("POST", _path("requests", request_id, "cancel"), read_one, body={"reason": reason})


def cancel_thread(thread_id: str, *, reason: str | None) -> Call[int]:
    return Call(
        "POST",
        _path("threads", thread_id, "cancel"),
        lambda answer: int(answer.data["cancelled"]),
        body={"reason": reason},
    )


def update_draft(request_id: str, *, args: dict[str, Any] | None, ready: bool) -> Call[Request]:
    return Call("PATCH", _path("requests", request_id), read_one, body={"args": args, "ready": ready})


def count_auto_decisions(thread_id: str) -> Call[int]:
    return Call(
        "GET", _path("threads", thread_id, "auto-decisions"), lambda answer: int(answer.data["count"])
    )


def count_auto_rounds(thread_id: str, besides: str | None) -> Call[int]:
    return Call(
        "GET",
        _path("threads", thread_id, "auto-rounds"),
        lambda answer: int(answer.data["count"]),
        params=_query(besides=besides),
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


# -- standing grants -----------------------------------------------------------------------------


def list_grants(include_ended: bool = False) -> Call[list[Grant]]:
    return Call(
        "GET",
        _path("grants"),
        lambda answer: [Grant.from_dict(item) for item in answer.data["grants"]],
        params=_query(all=include_ended or None),
    )


def revoke_grant(grant_id: str) -> Call[Grant]:
    return Call("DELETE", _path("grants", grant_id), lambda answer: Grant.from_dict(answer.data))


# -- rules, memory, audit, identity --------------------------------------------------------------


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


# -- run states ----------------------------------------------------------------------------------


def _read_run_state(data: dict[str, Any] | None) -> RunStateRecord | None:
    if data is None:
        return None
    return RunStateRecord(
        thread_id=data["thread_id"],
        kind=data["kind"],
        state=data["state"],
        created_by=data["created_by"],
        created_at=from_iso(data["created_at"]),
        updated_at=from_iso(data["updated_at"]),
    )


def save_run_state(thread_id: str, state: str, *, kind: str) -> Call[RunStateRecord]:
    def read(answer: Answer) -> RunStateRecord:
        record = _read_run_state(answer.data)
        assert record is not None
        return record

    return Call("PUT", _path("threads", thread_id, "run-state"), read, body={"kind": kind, "state": state})


def load_run_state(thread_id: str) -> Call[RunStateRecord | None]:
    return Call(
        "GET",
        _path("threads", thread_id, "run-state"),
        lambda answer: _read_run_state(answer.data["run_state"]),
    )


def delete_run_state(thread_id: str) -> Call[None]:
    return Call("DELETE", _path("threads", thread_id, "run-state"), lambda answer: None)


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


def verify_audit(anchor: AuditAnchor | None = None) -> Call[AuditReport]:
    return Call(
        "GET",
        _path("audit", "verify"),
        lambda answer: AuditReport.from_dict(answer.data),
        params=_query(anchor=str(anchor) if anchor is not None else None),
    )


def audit_anchor() -> Call[AuditAnchor]:
    return Call(
        "GET",
        _path("audit", "anchor"),
        lambda answer: AuditAnchor(int(answer.data["seq"]), str(answer.data["hash"])),
    )


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


def add_group_member(group: str, user: str) -> Call[bool]:
    return Call("POST", _path("groups", group, "members"), lambda answer: True, body={"user": user})


def remove_group_member(group: str, user: str) -> Call[bool]:
    return Call(
        "DELETE", _path("groups", group, "members", user), lambda answer: bool(answer.data["removed"])
    )
