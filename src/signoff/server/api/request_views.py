"""The JSON of a request and what hangs off it, as `/openapi.json` documents it.

These models only document: the routes send the dicts that `Request.to_dict()`, `to_record()`,
`DecisionRecord.to_dict()`, `Execution.to_dict()` and `Delivery.to_dict()` build (see `shown`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ...decisions import DecisionType
from ...execution import ClaimKind
from ...requests import ExecutionStatus, RequestKind, RequestStatus
from ...rules.effective import Authority, OriginSource
from ...store.report_ops import DeliveryResult

Moment = str
"""An ISO 8601 time with its offset."""


class RuleOriginView(BaseModel):
    """Where the request's rule came from; only the parts known are sent."""

    source: OriginSource
    layer: str | None = None
    key: str | None = None
    path: str | None = None
    authority: Authority | None = None


class DecisionView(BaseModel):
    """One decision: its type's own fields (those given), who said it, where, when."""

    id: str
    type: DecisionType
    args: dict[str, Any] | None = Field(default=None, description="edit: the args to run with.")
    comment: str | None = None
    message: str | None = None
    value: Any = None
    actor: str
    channel: str
    at: Moment


class RequestRecord(BaseModel):
    """The stored request, unredacted: only for the agent that asked (a remote gate replays from it)."""

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
    rule: dict[str, Any] = Field(description="The rule's settings that differ from the defaults.")
    created_at: Moment
    updated_at: Moment
    deadline: Moment
    decided_at: Moment | None
    decision: dict[str, Any] | None = Field(description="The deciding decision as stored.")
    final_args: dict[str, Any] | None
    created_by: str | None
    approvals: list[str]
    round: str | None
    client: str | None = None


class RequestFields(BaseModel):
    """What every view of a request has."""

    id: str
    status: RequestStatus
    kind: RequestKind
    tool: str
    description: str
    args: dict[str, Any] = Field(description="Redacted for people.")
    final_args: dict[str, Any] | None = Field(description="The args the tool runs with, once decided.")
    thread_id: str
    tool_call_id: str
    agent: str | None
    app: str | None
    requester: str | None
    approvers: list[str]
    allowed_decisions: list[DecisionType]
    quorum: int
    confirm: bool = Field(
        default=False,
        description="A destructive call (the rule's `confirm`, or the tool's `destructiveHint`): "
        "the inbox asks once more before a keyboard approval.",
    )
    separation: Literal["requester", "requester_and_creator"] | None = Field(
        default=None,
        description="Four eyes: `requester` keeps the person the agent acts for from approving; "
        "`requester_and_creator` also the owner of the agent's token. They may still reject.",
    )
    separated: list[str] = Field(
        default_factory=list, description="The people four eyes keep from approving this request."
    )
    batch: bool = Field(
        default=True,
        description="False when the rule says `batch: false`: decided one at a time, never in a "
        "batch (`POST /v1/requests/decide` skips it).",
    )
    approvals: list[str]
    rule_origin: RuleOriginView | None
    created_at: Moment
    deadline: Moment
    decided_at: Moment | None
    resolution: dict[str, Any] | None = Field(description="The deciding decision as stored, redacted.")
    created_by: str | None
    client: str | None = Field(
        default=None, description="The program the agent ran in, as it named itself (an MCP client)."
    )
    record: RequestRecord | None = Field(default=None, description="Sent only to the agent that asked.")


class StepView(BaseModel):
    """A planned reminder or escalation (the rule's `remind` and `escalate`) and what came of it."""

    kind: Literal["remind", "escalate"]
    due_at: Moment
    at: str | None = Field(default=None, description="remind: as the rule wrote it (30m, 50%).")
    after: str | None = Field(default=None, description="escalate: as the rule wrote it (4h, 50%).")
    to: list[str] | None = Field(default=None, description="escalate: the people and groups it adds.")
    done_at: Moment | None
    outcome: Literal["done", "superseded", "skipped"] | None = Field(
        description="done; superseded by a later reminder (the sweeper came late); skipped: the "
        "request had ended. None until it is due."
    )


class RequestView(RequestFields):
    """A request in full."""

    decision: DecisionView | None
    truncated: Literal[False]
    steps: list[StepView] | None = Field(
        default=None, description="One request's view only: its reminders and escalations."
    )
    steps_summary: str | None = Field(
        default=None, description="The steps in words: 'reminded 2×, escalated to group:oncall at …'."
    )


class RequestBrief(RequestFields):
    """A request in a list: long values cut (a cut object keeps its first keys), and said so."""

    decision: dict[str, Any] | None = Field(description="The decision, its long values cut.")
    truncated: bool
    full_view: str | None = Field(default=None, description="Where the whole request is, when it was cut.")


class RequestPage(BaseModel):
    items: list[RequestBrief]
    next_cursor: str | None


class ExecutionView(BaseModel):
    status: ExecutionStatus
    attempts: int
    started_at: Moment | None
    finished_at: Moment | None
    lease_until: Moment | None
    result: Any
    error: str | None


class OwnedExecution(ExecutionView):
    owner: dict[str, Any] | None = Field(description="What the claim said about who runs it.")


class Claimed(BaseModel):
    """`claim`: `claimed` with the token to renew and finish with, or the state someone else left."""

    kind: ClaimKind
    token: str | None
    execution: OwnedExecution


class Renewed(BaseModel):
    renewed: bool


class ExecutionAnswer(BaseModel):
    """`finish` (with the owner), and `reset` (without)."""

    execution: OwnedExecution | ExecutionView


ExecutionActionAnswer = Claimed | Renewed | ExecutionAnswer


class ExecutionItem(BaseModel):
    request_id: str
    execution: ExecutionView
    request: RequestView


class ExecutionPage(BaseModel):
    items: list[ExecutionItem]
    next_cursor: str | None


class AttemptView(BaseModel):
    """One attempt of the outbox to deliver a message (a notice, its update, a follow-up, a
    webhook's event) to this channel and target."""

    channel: str
    target: str
    message: str = Field(description="notice, update, follow_up, or the webhook's event")
    attempt: int
    result: Literal["sent", "retrying", "failed", "skipped"]
    error: str | None
    at: Moment
    outbox_id: int | None


class DeliveryView(BaseModel):
    id: str
    channel: str
    target: str
    result: DeliveryResult
    attempts: int
    detail: str | None
    created_at: Moment
    updated_at: Moment
    history: list[AttemptView]


class OutboxRowView(BaseModel):
    """A message the outbox holds for a request (or a verification code, about none): pending
    (with when it is next tried), sent, dead (given up: `last_error` says why) or skipped."""

    id: int
    request_id: str | None
    event: str
    message: Literal["notice", "update", "follow_up", "event", "code"]
    channel: str
    recipient: str | None
    target: str | None
    state: Literal["pending", "sent", "dead", "skipped"]
    attempts: int
    next_at: Moment
    last_error: str | None
    created_at: Moment
    updated_at: Moment


class CancelledCount(BaseModel):
    cancelled: int
