"""What a gate asks for: the `NewRequest` for a tool call under its rule, or for a question."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ._util import as_text, utcnow
from .calls import Scope, ToolCall
from .requests import NewRequest
from .rules.callables import DescriptionInput
from .rules.effective import RequestRule, Rule, RuleOrigin
from .running import jsonable, waiting_runner
from .templates import redact_args, render_description
from .validation import check_schema
from .visible import visible


def request_for_call(
    call: ToolCall, scope: Scope, rule: Rule, origin: RuleOrigin, *, drafting: bool = False
) -> NewRequest:
    assert call.id is not None
    if call.schema is not None:
        check_schema(call.schema)
    return NewRequest(
        thread_id=scope.thread_id,
        tool_call_id=call.id,
        tool_name=call.name,
        args=jsonable(call.args),
        description=card_text(call, scope, rule),
        deadline=utcnow() + rule.deadline,
        rule=rule.for_request(origin),
        tool_description=call.description,
        args_schema=call.schema,
        agent=scope.agent,
        app=scope.app,
        requester=scope.requester,
        round=call.round,
        client=scope.client,
        tool_annotations=jsonable(dict(call.annotations)) if call.annotations is not None else None,
        runner=waiting_runner(),
        drafting=drafting,
    )


def card_text(call: ToolCall, scope: Scope, rule: Rule) -> str:
    """The card's description: the rule's template filled in, or what its callable wrote (given
    the args redacted; shown as written, its hidden characters escaped, line breaks kept)."""
    if not callable(rule.description):
        return render_description(
            rule.description,
            tool_name=call.name,
            args=call.args,
            redact=rule.redact,
            prefix=rule.description_prefix,
        )
    written = rule.description(
        DescriptionInput(
            args=redact_args(call.args, rule.redact),
            tool=call.name,
            agent=scope.agent,
            app=scope.app,
            requester=scope.requester,
            prefix=rule.description_prefix,
            tool_annotations=dict(call.annotations or {}),
        )
    )
    return visible(as_text(written), newlines=True)


def request_for_question(
    call: ToolCall,
    scope: Scope,
    question: str,
    *,
    schema: dict[str, Any] | None,
    approvers: tuple[str, ...],
    deadline: timedelta,
) -> NewRequest:
    """An input request: `question` for a person, answered by a value valid against `schema`."""
    assert call.id is not None
    if schema is not None:
        check_schema(schema)
    return NewRequest(
        thread_id=scope.thread_id,
        tool_call_id=call.id,
        tool_name=call.name,
        args=call.args,
        kind="input",
        description=question,
        deadline=utcnow() + deadline,
        rule=RequestRule(
            allowed_decisions=("respond", "reject"),
            approvers=tuple(approvers),
            origin=RuleOrigin(source="code", layer="ask"),
        ),
        answer_schema=schema,
        agent=scope.agent,
        app=scope.app,
        requester=scope.requester,
    )
