"""What the agent receives (`Outcome`) and what the model is shown after a run (`Reply`)."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from ._util import as_text
from .changes import changes
from .decisions import Edit, Reject, Respond
from .execution import decided_args
from .requests import Request, RequestStatus
from .templates import fill, modification_text, rejection_text

CANCELLED_MESSAGE = "The approval request was cancelled."
UNATTENDED_CHANNEL = "unattended"
"""The channel of an unattended run's auto-decision (nobody was asked)."""
UNATTENDED_REJECT_TEMPLATE = (
    "Tool execution for '{tool_name}' was rejected automatically: this run is unattended, "
    "so nobody could be asked, and the rule rejects such calls."
)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """The shape of Haystack's `ToolExecutionDecision`, plus what signoff knows.

    `execute`: run the tool with `final_tool_params`. Otherwise `tool_result` is what the model
    gets instead: the rejection text (`is_error`) or the person's answer.
    """

    tool_name: str
    execute: bool
    tool_call_id: str | None = None
    feedback: str | None = None
    final_tool_params: dict[str, Any] | None = None
    decision: str | None = None
    """approve, edit, reject, respond; None when nobody was asked or nobody decided."""
    status: str = "not_required"
    """The request's final status, or `not_required` when no request was made."""
    request_id: str | None = None
    tool_result: Any = None
    is_error: bool = False
    actor: str | None = None
    changes: list[dict[str, Any]] | None = None
    """For an edit, what the person changed, field by field: `{"field": "to", "change":
    "changed", "before": …, "after": …}` (see `signoff.changes`)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """The inverse of `to_dict`."""
        return cls(**data)

    def tool_execution_decision(self) -> dict[str, Any]:
        """Exactly the fields of Haystack's `ToolExecutionDecision`."""
        return {
            "tool_name": self.tool_name,
            "execute": self.execute,
            "tool_call_id": self.tool_call_id,
            "feedback": self.feedback,
            "final_tool_params": self.final_tool_params,
        }

    @property
    def model_text(self) -> str | None:
        """The text the model sees in place of the tool's result, when the tool does not run."""
        if self.execute:
            return None
        return as_text(self.tool_result)


def not_required(tool_name: str, tool_call_id: str | None, args: dict[str, Any]) -> Outcome:
    """`Outcome(tool_name=..., execute=True, tool_call_id=..., final_tool_params=args)`, filled in
    directly: a frozen dataclass's `__init__` sets each field through `object.__setattr__`, and
    this is the outcome of every call nobody is asked about (the gate's fast path)."""
    outcome = object.__new__(Outcome)
    fields_now = _OUTCOME_DEFAULTS.copy()
    fields_now["tool_name"] = tool_name
    fields_now["execute"] = True
    fields_now["tool_call_id"] = tool_call_id
    fields_now["final_tool_params"] = args
    object.__setattr__(outcome, "__dict__", fields_now)
    return outcome


_OUTCOME_DEFAULTS = {item.name: item.default for item in fields(Outcome) if item.default is not MISSING}


def outcome_for(request: Request) -> Outcome:
    """The outcome of a terminal request. Pending requests have none (see `Pending`)."""
    base: dict[str, Any] = {
        "tool_name": request.tool_name,
        "tool_call_id": request.tool_call_id,
        "request_id": request.id,
    }
    status = request.status.value
    rule = request.rule
    record = request.decision
    actor = record.actor if record else None
    if status == RequestStatus.APPROVED:
        return Outcome(
            **base,
            execute=True,
            final_tool_params=decided_args(request),
            decision="approve",
            status=status,
            actor=actor,
        )
    if status == RequestStatus.EDITED and record is not None and isinstance(record.decision, Edit):
        final = record.decision.args
        if final == request.args:  # a modify that changes nothing is an approval (Haystack's rule)
            return Outcome(
                **base, execute=True, final_tool_params=final, decision="approve", status=status, actor=actor
            )
        feedback = modification_text(
            rule.modify_template,
            rule.feedback_template,
            tool_name=request.tool_name,
            final_args=final,
            feedback=record.decision.comment,
        )
        return Outcome(
            **base,
            execute=True,
            final_tool_params=final,
            feedback=feedback,
            decision="edit",
            status=status,
            actor=actor,
            changes=[change.to_dict() for change in changes(request.args, final)],
        )
    if status == RequestStatus.REJECTED and record is not None and isinstance(record.decision, Reject):
        if record.channel == UNATTENDED_CHANNEL:  # nobody rejected it, as the reject template would say
            text = fill(UNATTENDED_REJECT_TEMPLATE, {"tool_name": request.tool_name})
        else:
            text = rejection_text(
                rule.reject_template,
                rule.feedback_template,
                tool_name=request.tool_name,
                feedback=record.decision.message,
            )
        return Outcome(
            **base,
            execute=False,
            feedback=text,
            tool_result=text,
            is_error=True,
            decision="reject",
            status=status,
            actor=actor,
        )
    if status == RequestStatus.RESPONDED and record is not None and isinstance(record.decision, Respond):
        answer = record.decision.answer
        return Outcome(
            **base,
            execute=False,
            feedback=as_text(answer),
            tool_result=answer,
            decision="respond",
            status=status,
            actor=actor,
        )
    if status == RequestStatus.EXPIRED:
        if rule.on_expire == "approve":
            return Outcome(**base, execute=True, final_tool_params=request.args, status=status)
        return Outcome(
            **base,
            execute=False,
            feedback=rule.expire_message,
            tool_result=rule.expire_message,
            is_error=True,
            status=status,
        )
    if status == RequestStatus.CANCELLED:
        reason = (request.resolution or {}).get("reason")
        text = CANCELLED_MESSAGE + (f" Reason: {reason}" if reason else "")
        return Outcome(
            **base,
            execute=False,
            feedback=text,
            tool_result=text,
            is_error=True,
            status=status,
            actor=(request.resolution or {}).get("actor"),
        )
    raise ValueError(f"request {request.id} is {status}: it has no outcome yet")


@dataclass(slots=True, kw_only=True)
class Reply:
    """What a guarded call gives back: the tool's value, or what replaced it, and the model's text.

    `content` is what to put in the tool message: the tool's result (after the modify note when a
    person edited the args), the rejection text (`is_error`), or the person's answer.
    """

    outcome: Outcome
    value: Any = None
    executed: bool = False
    replayed: bool = False
    """True when the result came from the store: the tool had already run."""

    @property
    def is_error(self) -> bool:
        return self.outcome.is_error

    @property
    def content(self) -> str:
        if not self.executed and not self.replayed:
            return self.outcome.model_text or ""
        result = as_text(self.value)
        if self.outcome.decision == "edit" and self.outcome.feedback:
            return f"{self.outcome.feedback}\n\n{result}"
        return result
