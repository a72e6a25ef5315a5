"""Stored requests, their lifecycle, and execution records (DESIGN §2, §7).

drafting ──▶ pending ──▶ approved | edited | rejected | responded | expired | cancelled
approved/edited: execution  not_started ──▶ running ──▶ succeeded | failed
                                            └─(process died)──▶ in_doubt
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from ._util import from_iso
from .decisions import DecisionRecord, parse_decision
from .jsonvalues import check as check_json
from .jsonvalues import checked_text
from .rules.effective import RequestRule, separation_words
from .templates import redact_args
from .visible import check_name


class RequestStatus(StrEnum):
    """Where a request stands: drafting, pending, or how it ended."""

    DRAFTING = "drafting"
    PENDING = "pending"
    APPROVED = "approved"
    EDITED = "edited"
    REJECTED = "rejected"
    RESPONDED = "responded"
    EXPIRED = "expired"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self not in (RequestStatus.DRAFTING, RequestStatus.PENDING)

    @property
    def in_words(self) -> str:
        """How a person says it: 'approved with changes', 'answered' (for edited, responded)."""
        return _STATUS_WORDS.get(self, self.value)


_STATUS_WORDS = {RequestStatus.EDITED: "approved with changes", RequestStatus.RESPONDED: "answered"}

STATUS_FOR_DECISION = {
    "approve": RequestStatus.APPROVED,
    "edit": RequestStatus.EDITED,
    "reject": RequestStatus.REJECTED,
    "respond": RequestStatus.RESPONDED,
}


class ExecutionStatus(StrEnum):
    """Where an approved call's run stands."""

    NOT_STARTED = "not_started"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    IN_DOUBT = "in_doubt"
    ABANDONED = "abandoned"
    """Approved, and the process that waited to run it stopped before it did: nothing ran."""


RequestKind = Literal["tool", "input"]
LOCAL_CREATOR = "agent"
"""Who creates the requests of a gate over a local store. Through a server, the creator is the
agent's user; each creator has its own thread ids."""


@dataclass(frozen=True, kw_only=True)
class NewRequest:
    """What the gate asks the store to create (or find, by its creator, thread_id and tool_call_id)."""

    thread_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    description: str
    deadline: datetime
    rule: RequestRule = field(default_factory=RequestRule)
    kind: RequestKind = "tool"
    tool_description: str | None = None
    args_schema: dict[str, Any] | None = None
    answer_schema: dict[str, Any] | None = None
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    round: str | None = None
    """The model turn the call came from (`ToolCall.round`)."""
    client: str | None = None
    """The program the agent runs in, as it names itself (`Scope.client`): recorded and shown."""
    tool_annotations: dict[str, Any] | None = None
    """What the tool says of itself (MCP annotations): sent to a server so that its rules see
    them as the gate's did; not kept with the request, except that a `destructiveHint: true`
    makes its rule `confirm` (`RequestRule.for_annotations`)."""
    runner: dict[str, Any] | None = None
    """The process that waits to run the call once it is approved (`gate.run`, not suspending):
    its execution is recorded from the start (`not_started`, this owner), so that an approval
    nobody runs is noticed (`abandoned`)."""
    drafting: bool = False
    actor: str = LOCAL_CREATOR
    """Who asks: the request's creator."""
    creator_owner: str | None = None
    """Who owns the token the creator asked with (through a server): a rule's `separation:
    requester_and_creator` keeps them from approving (`RequestRule.for_separation`)."""
    channel: str = "gate"
    args_text: str | None = field(default=None, init=False, repr=False, compare=False)
    """`args` as the store writes them (compact JSON, key order kept), encoded by the check."""

    def __post_init__(self) -> None:
        """Names a person reads as labels may not hide characters (a bidi override, a line break
        that fakes a second line): refused here, so the library, the API and every other way in
        refuse them alike (InvalidInput, 422)."""
        check_name(self.tool_name, "tool")
        named = (
            ("agent", self.agent),
            ("app", self.app),
            ("requester", self.requester),
            ("client", self.client),
        )
        for what, name in named:
            if name is not None:
                check_name(name, what)
        # NaN, infinities, lone surrogates: refused before anything is stored
        object.__setattr__(self, "args_text", checked_text(self.args, "args"))
        if self.tool_annotations is not None:
            check_json(self.tool_annotations, "tool_annotations")


@dataclass(frozen=True, kw_only=True)
class Request:
    """One call waiting for, or given, a person's decision: what was asked, by whom, and how it ended."""

    id: str
    thread_id: str
    tool_call_id: str
    kind: RequestKind
    tool_name: str
    tool_description: str | None
    args: dict[str, Any]
    args_schema: dict[str, Any] | None
    answer_schema: dict[str, Any] | None
    agent: str | None
    app: str | None
    requester: str | None
    status: RequestStatus
    description: str
    rule: RequestRule
    created_at: datetime
    updated_at: datetime
    deadline: datetime
    decided_at: datetime | None = None
    decision: DecisionRecord | None = None
    """The decision that ended the request (for a quorum, the vote that completed it)."""
    final_args: dict[str, Any] | None = None
    resolution: dict[str, Any] | None = None
    """How it ended, as stored: the decision, or who cancelled it and why."""
    approvals: tuple[str, ...] = ()
    """Who has approved so far, when a quorum is needed."""
    created_by: str | None = None
    """Who asked: the agent's user (or the local actor)."""
    round: str | None = None
    """The model turn the call came from: an unattended run's cap counts rounds."""
    client: str | None = None
    """The program the agent ran in, as it named itself (an MCP client's `clientInfo`)."""

    @property
    def is_terminal(self) -> bool:
        return self.status.is_terminal

    @property
    def approvers(self) -> tuple[str, ...]:
        return self.rule.approvers

    def four_eyes(self) -> str | None:
        """Who four eyes keep from approving, in words (None: the rule has no separation)."""
        separation = self.rule.separation
        if separation is None:
            return None
        named = f" ({', '.join(self.rule.separated)})" if self.rule.separated else ""
        return f"{separation_words(separation)}{named}"

    @property
    def grant_id(self) -> str | None:
        """The standing grant it was approved through (`signoff.grants`), if any."""
        grant = (self.resolution or {}).get("grant")
        return grant if isinstance(grant, str) else None

    @property
    def granted_id(self) -> str | None:
        """The standing grant its approver gave with the decision, if any."""
        granted = (self.resolution or {}).get("granted")
        return granted if isinstance(granted, str) else None

    def shown_args(self) -> dict[str, Any]:
        """The args as cards, notifications and logs may show them (redacted)."""
        return redact_args(self.args, self.rule.redact)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as people may see it: redacted args."""
        rule = self.rule
        return {
            "id": self.id,
            "status": self.status.value,
            "kind": self.kind,
            "tool": self.tool_name,
            "description": self.description,
            "args": self.shown_args(),
            "final_args": redact_args(self.final_args, rule.redact) if self.final_args is not None else None,
            "thread_id": self.thread_id,
            "tool_call_id": self.tool_call_id,
            "agent": self.agent,
            "app": self.app,
            "requester": self.requester,
            "approvers": list(rule.approvers),
            "allowed_decisions": list(rule.allowed_decisions),
            "quorum": rule.quorum,
            "confirm": rule.confirm,
            "separation": rule.separation,
            "separated": list(rule.separated),
            "batch": rule.batch,
            "approvals": list(self.approvals),
            "rule_origin": rule.origin.to_dict() if rule.origin is not None else None,
            "created_at": _iso(self.created_at),
            "deadline": _iso(self.deadline),
            "decided_at": _iso(self.decided_at),
            "decision": self.decision.to_dict(rule.redact) if self.decision else None,
            "resolution": _redacted_resolution(self.resolution, rule.redact),
            "created_by": self.created_by,
            "client": self.client,
            "grant_id": self.grant_id,
            "granted_id": self.granted_id,
        }

    def to_record(self) -> dict[str, Any]:
        """Everything, unredacted, in the stored row's shape: for the agent that asked (the remote
        client rebuilds the request with `request_from_record`)."""
        return {
            "id": self.id,
            "thread_id": self.thread_id,
            "tool_call_id": self.tool_call_id,
            "kind": self.kind,
            "tool_name": self.tool_name,
            "tool_description": self.tool_description,
            "args": self.args,
            "args_schema": self.args_schema,
            "answer_schema": self.answer_schema,
            "agent": self.agent,
            "app": self.app,
            "requester": self.requester,
            "status": self.status.value,
            "description": self.description,
            "rule": self.rule.snapshot(),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "deadline": _iso(self.deadline),
            "decided_at": _iso(self.decided_at),
            "decision": self.resolution,
            "final_args": self.final_args,
            "created_by": self.created_by,
            "approvals": list(self.approvals),
            "round": self.round,
            "client": self.client,
        }


_REQUEST_FIELDS = frozenset(each.name for each in fields(Request))
_REQUEST_DEFAULTS = {each.name: each.default for each in fields(Request) if each.default is not MISSING}
_REQUEST_REQUIRED = _REQUEST_FIELDS - _REQUEST_DEFAULTS.keys()


def trusted_request(**values: Any) -> Request:
    """`Request(**values)`, for values the library made or read back from its own store: the same
    object, made without the frozen dataclass's `__init__`, which sets each of its fields through
    `object.__setattr__` (as long as the rest of building a request from its row). Request has no
    `__post_init__` to skip; a name that is not a field, or a field without a default left out,
    is a TypeError as it would be there."""
    if not (values.keys() <= _REQUEST_FIELDS and values.keys() >= _REQUEST_REQUIRED):
        unknown = sorted(values.keys() - _REQUEST_FIELDS)
        missing = sorted(_REQUEST_REQUIRED - values.keys())
        raise TypeError(f"Request fields unknown: {unknown}, missing: {missing}")
    request = object.__new__(Request)
    request.__dict__.update(_REQUEST_DEFAULTS)
    request.__dict__.update(values)
    return request


def changed_request(request: Request, **changes: Any) -> Request:
    """`dataclasses.replace(request, **changes)`, made as `trusted_request` makes a request."""
    return trusted_request(**{**request.__dict__, **changes})


def request_from_record(
    row: dict[str, Any], approvals: tuple[str, ...] | None = None, *, rule: RequestRule | None = None
) -> Request:
    """A `Request` from a stored row or from `Request.to_record()` (times as datetimes or ISO text);
    `rule`: its rule, already read from the row's (then unread)."""
    decision = None
    stored = row.get("decision")
    if stored and stored.get("type") in STATUS_FOR_DECISION:
        payload = {
            key: stored[key] for key in ("type", "args", "comment", "message", "value") if key in stored
        }
        decision = DecisionRecord(
            id=stored["id"],
            request_id=row["id"],
            decision=parse_decision(payload),
            actor=stored["actor"],
            channel=stored["channel"],
            created_at=_moment(stored["at"]),
        )
    if approvals is None:
        approvals = tuple(row.get("approvals") or ())
    return trusted_request(
        id=row["id"],
        thread_id=row["thread_id"],
        tool_call_id=row["tool_call_id"],
        kind=row["kind"],
        tool_name=row["tool_name"],
        tool_description=row["tool_description"],
        args=row["args"],
        args_schema=row["args_schema"],
        answer_schema=row["answer_schema"],
        agent=row["agent"],
        app=row["app"],
        requester=row["requester"],
        status=RequestStatus(row["status"]),
        description=row["description"],
        rule=RequestRule.from_snapshot(row["rule"]) if rule is None else rule,
        created_at=_moment(row["created_at"]),
        updated_at=_moment(row["updated_at"]),
        deadline=_moment(row["deadline"]),
        decided_at=_moment(row["decided_at"]) if row.get("decided_at") is not None else None,
        decision=decision,
        final_args=row["final_args"],
        resolution=stored,
        approvals=approvals,
        created_by=row.get("created_by"),
        round=row.get("round"),
        client=row.get("client"),
    )


@dataclass(frozen=True, kw_only=True)
class Execution:
    """Whether an approved call ran: claimed once, then succeeded or failed (nothing runs twice)."""

    request_id: str
    status: ExecutionStatus
    attempts: int = 0
    owner: dict[str, Any] | None = None
    lease_until: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "attempts": self.attempts,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "lease_until": _iso(self.lease_until),
            "result": self.result,
            "error": self.error,
        }


def _redacted_resolution(resolution: dict[str, Any] | None, redact: tuple[str, ...]) -> dict[str, Any] | None:
    if resolution is None or not isinstance(resolution.get("args"), dict):
        return resolution
    return {**resolution, "args": redact_args(resolution["args"], redact)}


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else from_iso(value)
