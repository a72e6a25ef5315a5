"""A Slack interaction, start to end, through what the server offers (`SlackChannel.handle`).

Slack sends every click and every modal submission to the one Interactivity Request URL and
wants an answer within 3 seconds. What happens:

1. the server's callback route checks the signature first (`SlackChannel.verify`): a forged or
   stale callback is a 401 and an audit row, an unreadable one a 400; nothing else is read then;
2. approve, and a submitted reject, decide through the server's shared path
   (`CallbackHost.decide`: the Slack user mapped to a person by their `slack` address, the
   approver check, the first decision wins, audited); a refused click is answered with an
   ephemeral message only the clicker sees, after the ack;
3. edit, answer and reject first open a modal (`views.open`, after the ack, while the 3-second
   trigger lasts), but only for an approver of a request still open: anyone else gets the
   ephemeral refusal, audited, and no modal;
4. "All like this…" opens the batch modal (`slack_batch`) for an approver alike; its submit
   approves the requests it listed (`CallbackHost.decide_batch`: the batch's own path), each
   with its own checks;
5. a submitted edit (or answer) is read against the request's schema with the inbox's own form
   rules (strings as typed, everything else as JSON; redacted values left empty are kept):
   what breaks it is shown in the modal next to its field (`response_action: errors`), and
   nothing is decided until it fits.

Each inbound action is one structured log line (`inbound_log.log_inbound`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from slack_sdk.errors import SlackObjectFormationError

from .. import Request
from ..errors import SignoffError
from ..presentation import REDACTED
from ..presentation.decision_form import answer_fields, edit_fields
from ..presentation.form_fields import FieldProblems, FormField, field_problems, read_fields
from .contract import CallbackHost, Inbound, InboundOutcome
from .inbound_log import log_inbound
from .slack import NO_FORM, SlackChannel
from .slack_batch import MAX_LISTED, modal_for, read_submission, result_view
from .slack_blocks import BATCH_VIEW, COMMENT_BLOCK, EDIT_VIEW, MESSAGE_BLOCK, form_view, reject_view
from .texts import Locale


async def handle(host: CallbackHost, channel: SlackChannel, inbound: Inbound) -> tuple[int, Any]:
    """A verified interaction (the server's callback route checked its signature, refusing and
    auditing a forged or stale one)."""
    if inbound.kind == "decide":
        outcome = await host.decide(channel, inbound)
        return channel.answer(inbound, outcome)
    if inbound.extra.get("open"):
        await _open_modal(host, channel, inbound)
        return 200, None
    if inbound.extra.get("view") == BATCH_VIEW:
        return await _submitted_batch(host, channel, inbound)
    if inbound.extra.get("type") == "view_submission":
        return await _submitted_form(host, channel, inbound)
    return channel.answer(inbound, None)


# -- a modal to open --------------------------------------------------------------------------


async def _open_modal(host: CallbackHost, channel: SlackChannel, inbound: Inbound) -> None:
    decision = str(inbound.extra["open"])
    checked = await host.request_to_decide(channel, inbound)  # refusals are audited
    if isinstance(checked, InboundOutcome):
        channel.later(channel.ephemeral(inbound, checked.message))
        return
    request = checked
    ref = {"channel": inbound.extra.get("slack_channel"), "ts": inbound.extra.get("ts")}
    locale = channel.locale
    candidates = None
    if decision == "batch":
        candidates = await host.batch_candidates(channel, inbound, request, limit=MAX_LISTED)
    try:
        if candidates is not None:
            view = modal_for(*candidates, channel, inbound, request)
        elif decision == "reject":
            view = reject_view(tool=request.tool_name, request_id=request.id, ref=ref, locale=locale)
        else:
            fields = slack_edit_fields(request) if decision == "edit" else slack_answer_fields(request)
            view = form_view(
                decision, fields, tool=request.tool_name, request_id=request.id, ref=ref, locale=locale
            )
        shown = view.to_dict()
    except SlackObjectFormationError as exc:  # a schema Block Kit cannot show (a 300-character key)
        log_inbound(channel, inbound, request.id, "modal_failed", thread=request.thread_id, why=str(exc))
        channel.later(channel.ephemeral(inbound, NO_FORM[locale]))
        return
    log_inbound(channel, inbound, request.id, f"modal:{decision}", thread=request.thread_id)
    channel.later(_views_open(channel, inbound, shown))


async def _views_open(channel: SlackChannel, inbound: Inbound, view: dict[str, Any]) -> None:
    try:
        await channel.call("views.open", trigger_id=inbound.extra.get("trigger_id"), view=view)
    except Exception as exc:  # the click was acked already: say so in the log, and to the person
        log_inbound(channel, inbound, inbound.request_id, "modal_failed", why=str(exc))
        await channel.ephemeral(inbound, f"The form could not be opened ({exc}); try again.")


# -- a batch ----------------------------------------------------------------------------------


async def _submitted_batch(host: CallbackHost, channel: SlackChannel, inbound: Inbound) -> tuple[int, Any]:
    """Approve the requests the batch modal listed (see `slack_batch`); the modal then says what
    was decided and skipped, or, refused whole, why (next to its reason)."""
    read = read_submission(inbound, channel.locale)
    if isinstance(read, str):
        return 200, {"response_action": "errors", "errors": {MESSAGE_BLOCK: read}}
    ids, decision = read
    done = await host.decide_batch(channel, inbound, ids, decision)
    if isinstance(done, InboundOutcome):
        return 200, {"response_action": "errors", "errors": {MESSAGE_BLOCK: done.message}}
    return 200, {"response_action": "update", "view": result_view(done, channel.locale).to_dict()}


# -- fields, as a modal shows them ------------------------------------------------------------


def for_slack(fields: list[FormField]) -> list[FormField]:
    """The inbox's form fields as text inputs: a checkbox becomes JSON `true` / `false` (the
    rest already read back from text: numbers, selects as JSON, JSON as JSON)."""
    shown = []
    for field in fields:
        if field.kind == "checkbox":
            raw = "true" if field.checked else "false"
            field = replace(field, kind="json", raw=raw, shown=raw)
        shown.append(field)
    return shown


def slack_edit_fields(request: Request) -> list[FormField]:
    return for_slack(edit_fields(request))


def slack_answer_fields(request: Request) -> list[FormField]:
    """The answer schema's fields; none when the answer is a message (the modal's own input)."""
    fields = answer_fields(request)
    return for_slack(fields) if fields is not None else []


# -- a submitted form -------------------------------------------------------------------------


async def _submitted_form(host: CallbackHost, channel: SlackChannel, inbound: Inbound) -> tuple[int, Any]:
    read = await _read_form(host, channel, inbound)
    if isinstance(read, FieldProblems):
        log_inbound(channel, inbound, inbound.request_id, "invalid", why=read.summary)
        return 200, {"response_action": "errors", "errors": dict(read)}
    decision, error_block = read
    deciding = replace(
        inbound, kind="decide", decision=decision, extra={**inbound.extra, "error_block": error_block}
    )
    outcome = await host.decide(channel, deciding)
    return channel.answer(deciding, outcome)


async def _read_form(
    host: CallbackHost, channel: SlackChannel, inbound: Inbound
) -> FieldProblems | tuple[dict[str, Any], str]:
    """The decision the submitted modal says, and the block to show a refusal on; or what is
    wrong with its fields."""
    values: dict[str, str] = dict(inbound.extra.get("values") or {})
    assert inbound.request_id is not None
    try:
        request = await host.request(inbound.request_id)
    except SignoffError as exc:
        return _problem(
            MESSAGE_BLOCK if inbound.extra.get("view") != EDIT_VIEW else COMMENT_BLOCK, exc.message
        )
    if inbound.extra.get("view") == EDIT_VIEW:
        return _edit(request, values, channel.locale)
    return _answer(request, values)


def _edit(
    request: Request, values: dict[str, str], locale: Locale
) -> FieldProblems | tuple[dict[str, Any], str]:
    fields = slack_edit_fields(request)
    args, problems = read_fields(fields, values, original=request.args)
    if problems:
        return problems
    if not isinstance(args, dict):
        return _problem(fields[0].name, "The arguments must be a JSON object")
    for key in request.rule.redact:
        if args.get(key) == REDACTED and key in request.args:
            args[key] = request.args[key]
    problems = field_problems(fields, request.args_schema, args)
    if problems:
        return problems
    decision: dict[str, Any] = {"type": "edit", "args": args}
    if values.get(COMMENT_BLOCK, "").strip():
        decision["comment"] = values[COMMENT_BLOCK].strip()
    return decision, fields[0].name if fields else COMMENT_BLOCK


def _answer(request: Request, values: dict[str, str]) -> FieldProblems | tuple[dict[str, Any], str]:
    fields = slack_answer_fields(request)
    if not fields:
        message = values.get(MESSAGE_BLOCK, "").strip()
        if not message:
            return _problem(MESSAGE_BLOCK, "Write an answer first")
        return {"type": "respond", "message": message}, MESSAGE_BLOCK
    value, problems = read_fields(fields, values)
    if problems:
        return problems
    problems = field_problems(fields, request.answer_schema, value)
    if problems:
        return problems
    return {"type": "respond", "value": value}, fields[0].name


def _problem(block: str, message: str) -> FieldProblems:
    problems = FieldProblems()
    problems[block] = message
    return problems
