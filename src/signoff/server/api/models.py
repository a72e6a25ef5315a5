"""Request bodies of the REST API (they document themselves in `/openapi.json`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...decisions import DECISION_TYPES
from ...identity import USER_NAME


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewRequestBody(Body):
    """Ask for a decision. Get-or-create by (thread_id, tool_call_id)."""

    thread_id: str = Field(min_length=1, max_length=512)
    tool_call_id: str = Field(min_length=1, max_length=512)
    tool: str = Field(min_length=1, max_length=256, description="The tool's name.")
    args: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["tool", "input"] = "tool"
    description: str | None = Field(
        default=None, description="What people see; by default the rule's template rendered with the args."
    )
    tool_description: str | None = None
    args_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema of the args (checks edits)."
    )
    answer_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema of a respond answer.")
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    round: str | None = Field(
        default=None,
        max_length=512,
        description="The model turn the call came from: an unattended run's cap counts rounds.",
    )
    client: str | None = Field(
        default=None,
        max_length=256,
        description="The program the agent runs in, as it names itself (an MCP client's clientInfo "
        "name): recorded and shown to people, never used to choose rules.",
    )
    runner: dict[str, Any] | None = Field(
        default=None,
        description="The process that waits to run the call once it is approved (as a claim's "
        "`owner`): its execution is recorded from the start, and marked `abandoned` if the call is "
        "approved and this process stops before claiming it.",
    )
    approvers: list[str] | None = Field(
        default=None, description="Users or `group:NAME`; used when the rule names none."
    )
    deadline: str | float | None = Field(
        default=None, description="A duration: seconds, or `15m`, `24h`, `7d`."
    )
    drafting: bool = Field(default=False, description="Args are still streaming: shown, not yet decidable.")
    rule: dict[str, Any] | None = Field(
        default=None,
        description="The rule the agent's gate resolved (a request snapshot); else the server's rules.",
    )
    tool_annotations: (
        dict[
            Annotated[str, Field(max_length=64)],
            bool | Annotated[str, Field(max_length=512)] | int | float | None,
        ]
        | None
    ) = Field(
        default=None,
        max_length=32,
        description="What the tool says of itself (MCP tool annotations: readOnlyHint, destructiveHint, "
        "idempotentHint, openWorldHint, title): `tool_annotations` in the server's `when` conditions, "
        "and what a service's `approval_mode: unless_read_only` looks at. Not kept with the request; "
        "`destructiveHint: true` makes its rule `confirm`.",
    )


class DecisionBody(BaseModel):
    """`{"type": "approve"|"edit"|"reject"|"respond", ...}`; the fields are those of the decision."""

    model_config = ConfigDict(extra="allow")

    # Documented, not parsed, as an enum: the decision's own check names the types allowed.
    type: str = Field(json_schema_extra={"enum": list(DECISION_TYPES)})
    on_behalf: Literal["unattended"] | None = Field(
        default=None, description="An agent's unattended auto-decision on its own request."
    )
    grant: dict[str, Any] | None = Field(
        default=None,
        description=(
            "With an approval: approve calls like this for a while, `{minutes, scope?: agent|app|thread, "
            "when?: CEL}` (`when` unset: the same args). Only where the request's rule has `max_grant`."
        ),
    )


class CancelBody(Body):
    reason: str | None = Field(default=None, max_length=2000)


class DraftBody(Body):
    args: dict[str, Any] | None = Field(default=None, description="Merged into the args so far.")
    ready: bool = Field(default=False, description="The args are complete: the request becomes pending.")


class ExecutionBody(Body):
    action: Literal["claim", "renew", "finish", "reset"]
    lease_seconds: float = Field(default=60.0, gt=0, le=86400)
    args_digest: str | None = Field(
        default=None,
        max_length=100,
        description="claim: `sha256:` and the hex sha256 of the canonical JSON of the args the call will "
        "run with (signoff.args_digest); a claim whose digest is not the decided args' is refused (409)",
    )
    idempotent: bool = False
    owner: dict[str, Any] | None = None
    token: str | None = None
    succeeded: bool | None = None
    result: Any = None
    error: str | None = None


class MemoryBody(Body):
    scope_key: str = Field(min_length=1)
    fingerprint: str = Field(min_length=1)


class ThreadCancelBody(Body):
    reason: str | None = None


class UserBody(Body):
    # Documented, not parsed, as a pattern: the store's check says what a name may be.
    name: str = Field(json_schema_extra={"pattern": USER_NAME.pattern})
    role: Literal["admin", "member", "agent"] = "member"
    display_name: str | None = None
    email: str | None = None


class TokenBody(Body):
    user: str | None = Field(default=None, description="Whose token; yourself by default (admins: anyone).")
    label: str | None = None
    expires_in: str | float | None = Field(
        default=None,
        description="A duration (e.g. 30d, or seconds); the server's default lifetime if not given "
        "(90 days unless `signoff serve --token-ttl` says otherwise), never past its maximum "
        "(`--token-max-ttl`, 365 days by default).",
    )


class GroupMemberBody(Body):
    user: str
