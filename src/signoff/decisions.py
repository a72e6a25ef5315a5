"""What a person said: approve, edit, reject or respond.

Decisions are small keyword-only dataclasses discriminated by `type`; `parse_decision` turns JSON
(ours, or LangChain's `{"type": "edit", "edited_action": {...}}`) into one, with clear errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from .errors import InvalidDecision

if TYPE_CHECKING:
    import pydantic

_FORBID_EXTRA: pydantic.ConfigDict = {"extra": "forbid"}
"""Pydantic's configuration of the decisions (a plain dict: pydantic loads when a decision is parsed)."""

DecisionType: TypeAlias = Literal["approve", "edit", "reject", "respond"]
DECISION_TYPES: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Run the tool with the original arguments."""

    __pydantic_config__ = _FORBID_EXTRA

    type: Literal["approve"] = "approve"
    comment: str | None = None


@dataclass(frozen=True, kw_only=True)
class Edit:
    """Run the tool with these arguments (the full object) instead."""

    __pydantic_config__ = _FORBID_EXTRA

    type: Literal["edit"] = "edit"
    args: dict[str, Any]
    comment: str | None = None
    """Optional feedback for the model, appended to the modify note."""


@dataclass(frozen=True, kw_only=True)
class Reject:
    """Don't run the tool; tell the model why."""

    __pydantic_config__ = _FORBID_EXTRA

    type: Literal["reject"] = "reject"
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class Respond:
    """Don't run the tool; answer in its place with a message or a structured value."""

    __pydantic_config__ = _FORBID_EXTRA

    type: Literal["respond"] = "respond"
    message: str | None = None
    value: Any = None

    def __post_init__(self) -> None:
        if not self.message and self.value is None:
            raise ValueError("respond needs a message or a value")

    @property
    def answer(self) -> Any:
        return self.value if self.value is not None else self.message


Decision: TypeAlias = Approve | Edit | Reject | Respond


@cache
def _decision_adapter() -> pydantic.TypeAdapter[Decision]:
    """Built on first use: building it (and loading pydantic) costs more CPU than a command's start."""
    import pydantic

    return pydantic.TypeAdapter(
        Annotated[Approve | Edit | Reject | Respond, pydantic.Field(discriminator="type")]
    )


def parse_decision(data: Any, *, tool_name: str | None = None) -> Decision:
    """Build a decision from JSON-like data, accepting LangChain's `edited_action` form.

    Raises `InvalidDecision` naming what is wrong. An `edited_action.name` that differs from
    `tool_name` is refused: an edit may change the arguments, never the tool.
    """
    if not isinstance(data, dict):
        raise InvalidDecision(f"a decision must be a JSON object, got {type(data).__name__}")
    data = dict(data)
    kind = data.get("type")
    if kind not in DECISION_TYPES:
        raise InvalidDecision(f"decision type must be one of {', '.join(DECISION_TYPES)}; got {kind!r}")
    if kind == "edit" and "edited_action" in data:
        action = data.pop("edited_action")
        if not isinstance(action, dict):
            raise InvalidDecision("edited_action must be an object with 'name' and 'args'")
        name = action.get("name")
        if name is not None and tool_name is not None and name != tool_name:
            raise InvalidDecision(f"an edit cannot change the tool (from {tool_name!r} to {name!r})")
        if "args" in data:
            raise InvalidDecision("an edit gives its args once: in 'args' or in 'edited_action', not both")
        data["args"] = action.get("args")
    import pydantic

    try:
        return _decision_adapter().validate_python(data)
    except pydantic.ValidationError as exc:
        raise InvalidDecision(_explain_validation(kind, exc)) from None


def _explain_validation(kind: str, exc: pydantic.ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"][1:]) or kind
        problems.append(f"{where}: {error['msg']}")
    return f"invalid {kind} decision: " + "; ".join(problems)


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """The JSON form, without empty optional fields."""
    return {key: value for key, value in vars(decision).items() if value is not None}


@dataclass(frozen=True, kw_only=True)
class DecisionRecord:
    """A decision as stored: who said it, where, and when."""

    id: str
    request_id: str
    decision: Decision
    actor: str
    channel: str
    created_at: datetime
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, redact: tuple[str, ...] = ()) -> dict[str, Any]:
        """JSON-ready; edited args named in `redact` are masked."""
        fields = decision_to_dict(self.decision)
        if "args" in fields and redact:
            fields["args"] = {key: "***" if key in redact else value for key, value in fields["args"].items()}
        return {
            "id": self.id,
            **fields,
            "actor": self.actor,
            "channel": self.channel,
            "at": self.created_at.isoformat(),
        }
