"""The JSON of everything but requests (identity, rules, audit, an agent's counters and run
states), as `/openapi.json` documents it. These models only document (see `shown`); the routes
send the dicts they build."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ...decisions import DecisionType
from ...identity import CredentialKind, Role
from ...rules.effective import OnExpire
from .request_views import Moment


class UserView(BaseModel):
    name: str
    role: Role
    display_name: str | None
    email: str | None
    disabled: bool
    groups: list[str]


class TokenView(BaseModel):
    id: str
    kind: CredentialKind
    user: str
    label: str | None
    request_id: str | None
    created_at: Moment
    expires_at: Moment | None
    used_at: Moment | None = Field(description="Its last use (written at most once a minute).")
    revoked: bool
    owner: str | None = Field(
        default=None,
        description="Who holds its secret: a person's own token, them; an agent's, the admin who issued it.",
    )


class NewToken(TokenView):
    token: str = Field(description="The secret: shown this once, never again.")


class Revoked(BaseModel):
    revoked: bool


class GroupMember(BaseModel):
    group: str
    user: str


class Removed(BaseModel):
    removed: bool


class Remembered(BaseModel):
    remembered: bool


class Count(BaseModel):
    count: int


class RulesView(BaseModel):
    version: int = Field(description="Bumped by every change to the rules.")
    rules: dict[str, Any] = Field(description="Every layer, as `signoff rules` reads and writes them.")
    shadows: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The rules tried in shadow beside them (see `/v1/rules/shadow`); gates record "
        "the calls these would answer differently.",
    )
    shadows_version: int = Field(
        default=0,
        description="Bumped when a shadow is added, promoted or dropped (a shadow leaves `version` "
        "alone: it changes no answer).",
    )
    shadow: dict[str, Any] | None = Field(
        default=None,
        description="From `PUT /v1/rules`: the shadow it added (`?mode=shadow`, or entries marked "
        "`mode: shadow`), if any.",
    )


class DeclaredRuleView(BaseModel):
    created_by: str
    tool: str
    agent: str | None
    app: str | None
    rule: dict[str, Any] = Field(
        description="The rule last sent (its settings that differ from the defaults)."
    )
    first_seen: Moment
    last_seen: Moment
    decides: Literal["server", "agent", "defaults"] = Field(
        description="Whose rule decides who decides here."
    )
    server_when: str | None = Field(
        description="The server's `when` condition, when its rules cover the tool."
    )


class Deleted(BaseModel):
    deleted: bool


class TraceStepView(BaseModel):
    layer: str
    key: str | None
    said: str


class ExplanationView(BaseModel):
    tool: str
    agent: str | None
    app: str | None
    ask: bool
    allowed_decisions: list[DecisionType]
    layer: str = Field(description="The layer whose word decided.")
    trace: list[TraceStepView]
    description: str | None
    approvers: list[str]
    who_decides: str | None = Field(
        description="Who may decide the call's request, in words (the requester when the rule names no "
        "approvers); null when nobody is asked."
    )
    quorum: int
    separation: Literal["requester", "requester_and_creator"] | None = Field(
        default=None, description="Four eyes: who the rule keeps from approving their own request."
    )
    four_eyes: str | None = Field(
        default=None,
        description="The separation in words (or that there is none); null when nobody is asked.",
    )
    deadline_seconds: float
    on_expire: OnExpire
    when: str | None
    batch: bool = Field(
        default=True, description="False: its requests are decided one at a time, never in a batch."
    )


class AuditEntryView(BaseModel):
    seq: int
    at: Moment
    actor: str
    channel: str
    action: str
    request_id: str | None
    data: dict[str, Any] = Field(description="What the action carried; its keys depend on the action.")
    prev_hash: str
    hash: str


class AuditPage(BaseModel):
    items: list[AuditEntryView]
    next_after: int | None = Field(description="`after=` for the next page; null on the last one.")
    next_before: int | None = Field(
        default=None, description="Newest first: `before=` for the next page; null on the last one."
    )


class AuditProblemView(BaseModel):
    seq: int = Field(description="The entry the problem is about (0: not about one entry).")
    problem: str
    request_id: str | None = None


class AuditReportView(BaseModel):
    ok: bool
    entries: int
    head_seq: int
    requests: int
    anchor: str | None
    problems: list[AuditProblemView]
    problems_left_out: int
    unsealed: int = Field(
        0, description="Entries written but not yet sealed into the chain (PostgreSQL), not checked."
    )
    unsealed_since: str | None = Field(None, description="When the oldest unsealed entry was written.")
    requests_unsealed: int = Field(
        0, description="Requests left out of the cross-check: an entry of theirs is not sealed yet."
    )


class AnchorView(BaseModel):
    seq: int
    hash: str
    anchor: str = Field(description="SEQ:HASH, to keep where the database's writers cannot reach it.")


class RunStateView(BaseModel):
    thread_id: str
    kind: str
    created_by: str
    state: str
    created_at: Moment
    updated_at: Moment


class KeptRunState(BaseModel):
    run_state: RunStateView | None
