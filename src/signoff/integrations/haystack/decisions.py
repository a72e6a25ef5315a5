"""signoff's outcomes in Haystack's shapes: `ToolExecutionDecision` and `ConfirmationUIResult`.

Texts follow `BlockingConfirmationStrategy`: a rejection is the rule's reject template plus the
person's feedback; an edit's note is the rule's modify template with `{final_tool_params}` written
as Haystack writes it (Python's `str` of the dict), plus the person's comment. An answer in the
tool's place (respond) is, in Haystack's terms, a call that does not run with the answer as its
result: the model gets it as the tool's (error-flagged) message, the only such shape Haystack has.
"""

from __future__ import annotations

from typing import Any

from haystack.hooks.human_in_the_loop import ConfirmationUIResult, ToolExecutionDecision

from signoff import Backend, Edit, Outcome, Reject


def execution_decision(outcome: Outcome, store: Backend) -> ToolExecutionDecision:
    """The decision `ConfirmationHook` applies to the chat history."""
    feedback = outcome.feedback
    if outcome.decision == "edit" and outcome.request_id is not None:
        feedback = modification_note(outcome, store)
    return ToolExecutionDecision(
        tool_name=outcome.tool_name,
        execute=outcome.execute,
        tool_call_id=outcome.tool_call_id,
        feedback=feedback,
        final_tool_params=outcome.final_tool_params,
    )


def modification_note(outcome: Outcome, store: Backend) -> str:
    assert outcome.request_id is not None
    request = store.get_request(outcome.request_id)
    rule = request.rule
    record = request.decision
    comment = record.decision.comment if record is not None and isinstance(record.decision, Edit) else None
    text = _fill(
        rule.modify_template,
        tool_name=outcome.tool_name,
        final_tool_params=str(outcome.final_tool_params or {}),
    )
    if comment:
        text += " " + _fill(rule.feedback_template, feedback=comment)
    return text


def ui_result(outcome: Outcome, store: Backend) -> ConfirmationUIResult:
    """What a person said, as a `ConfirmationUI` reports it to `BlockingConfirmationStrategy`
    (which writes the texts with its own templates)."""
    if outcome.decision == "edit":
        return ConfirmationUIResult(
            action="modify", new_tool_params=outcome.final_tool_params, feedback=_edit_comment(outcome, store)
        )
    if outcome.execute:
        return ConfirmationUIResult(action="confirm")
    if outcome.decision == "reject":
        return ConfirmationUIResult(action="reject", feedback=_reject_message(outcome, store))
    # an answer in the tool's place, an expiry or a cancellation: the call does not run, and
    # what replaced it is the feedback
    return ConfirmationUIResult(action="reject", feedback=outcome.model_text)


def _edit_comment(outcome: Outcome, store: Backend) -> str | None:
    record = _record(outcome, store)
    return record.comment if isinstance(record, Edit) else None


def _reject_message(outcome: Outcome, store: Backend) -> str | None:
    record = _record(outcome, store)
    if isinstance(record, Reject) and outcome.actor != "unattended":
        return record.message
    return outcome.model_text


def _record(outcome: Outcome, store: Backend) -> Any:
    if outcome.request_id is None:
        return None
    record = store.get_request(outcome.request_id).decision
    return record.decision if record is not None else None


def _fill(template: str, **values: str) -> str:
    """`str.format` for the named placeholders only: a template with other braces never raises."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template
