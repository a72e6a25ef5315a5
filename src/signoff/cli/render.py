"""Rich output for people; `--json` output goes through `print_json` instead.

Every text that comes from data (names, descriptions, args, audit data) goes through a
`Readout`, which escapes hidden characters and Rich markup; what it found is printed as a
warning under the output.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table

from .._util import format_duration, format_span
from ..audit import AuditEntry
from ..decisions import DecisionRecord
from ..outcome import outcome_for
from ..requests import Execution, Request
from .text import Readout, json_text, moment, with_times

if TYPE_CHECKING:
    from ..rules import Explanation
    from ..rules.effective import Rule


def console() -> Console:
    return Console(highlight=False)


def print_json(data: Any) -> None:
    typer.echo(json_text(data))


def countdown(deadline: datetime, now: datetime | None = None) -> str:
    seconds = (deadline - (now or datetime.now(UTC))).total_seconds()
    return f"{format_span(seconds)} left" if seconds >= 1 else "past its deadline"


def warn(out: Console, readout: Readout) -> None:
    warning = readout.warning()
    if warning is not None:
        out.print(warning, soft_wrap=True)


def approvers_text(request: Request) -> str:
    return ", ".join(request.approvers) or "anyone"


PENDING_COLUMNS = ("id", "tool", "description", "agent / app", "deadline", "approvers")
DESCRIPTION_WIDTH = 48
"""The pending table cuts a description's first line here (`show` has it whole)."""
UNLIMITED = 1 << 16
"""A width no table reaches: measuring with it gives the table's unwrapped width."""


def pending_table(requests: list[Request]) -> None:
    """The open requests: a table when it fits the terminal unwrapped, else one block per request;
    either way an id is never broken over lines (it is what people copy)."""
    out = console()
    if not requests:
        out.print("No open requests.")
        return
    readout = Readout()
    rows = [_pending_row(request, readout) for request in requests]
    out.print(f"{len(requests)} open request(s)")
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in PENDING_COLUMNS:
        table.add_column(
            column,
            no_wrap=True,
            overflow="ellipsis",
            max_width=DESCRIPTION_WIDTH if column == "description" else None,
        )
    for row in rows:
        table.add_row(*row)
    if Measurement.get(out, out.options.update(max_width=UNLIMITED), table).maximum <= out.width:
        out.print(table)
    else:
        for request_id, tool, description, where, deadline, approvers in rows:
            out.print(f"[bold]{request_id}[/bold]  {tool}  {deadline}", soft_wrap=True)
            for line in (description, f"{where} · approvers: {approvers}"):
                out.print(Padding(line, (0, 0, 0, 2), expand=False))
    warn(out, readout)


def _pending_row(request: Request, readout: Readout) -> tuple[str, ...]:
    description = request.description.strip()
    first_line = description.splitlines()[0] if description else ""
    where = " / ".join(part or "-" for part in (request.agent, request.app))
    deadline = countdown(request.deadline)
    if request.status.value == "drafting":
        deadline += " (drafting)"
    named = f"request {request.id}"
    for key, value in request.shown_args().items():  # not listed, but a description may quote them
        readout.value(value, f"{named}: argument {key!r}")
    return (
        readout.text(request.id, named),
        readout.text(request.tool_name, f"{named}: tool"),
        readout.text(first_line, f"{named}: description"),
        readout.text(where, f"{named}: agent / app"),
        deadline,
        readout.text(approvers_text(request), f"{named}: approvers"),
    )


EXECUTION_NOTES = {
    "in_doubt": "may or may not have run: its process stopped while running it",
    "abandoned": "approved, never ran: the process waiting to run it stopped first",
}


def executions_table(found: list[tuple[Execution, Request]]) -> None:
    """Executions with their requests, one line each: what happened and what to do."""
    out = console()
    if not found:
        out.print("No tool call to check.")
        return
    readout = Readout()
    for execution, request in found:
        named = f"request {request.id}"
        status = execution.status.value
        note = EXECUTION_NOTES.get(status, status)
        tool = readout.text(request.tool_name, f"{named}: tool")
        agent = readout.text(request.agent or "-", f"{named}: agent")
        out.print(f"[bold]{request.id}[/bold]  {tool}  {status}  agent {agent}", soft_wrap=True)
        out.print(Padding(f"{note}; decided {moment(request.decided_at)}", (0, 0, 0, 2), expand=False))
    out.print("Check where each tool acts; to let one run: signoff rerun ID (its next replay runs it).")
    warn(out, readout)


def request_details(
    request: Request,
    decisions: list[DecisionRecord],
    execution: Execution | None,
    audit: list[AuditEntry],
    *,
    steps_said: str | None = None,
) -> None:
    out = console()
    readout = Readout()
    read = readout.text
    rule = request.rule
    approvals = ", ".join(request.approvals) or "none"
    lines = [
        f"[bold]status:[/bold] {request.status.value}",
        f"[bold]tool:[/bold] {read(request.tool_name, 'the tool')}",
        f"[bold]thread / call:[/bold] {read(request.thread_id, 'the thread')} / "
        f"{read(request.tool_call_id, 'the call id')}",
        "[bold]agent / app / requester:[/bold] "
        + " / ".join(
            read(part or "-", label)
            for part, label in (
                (request.agent, "the agent"),
                (request.app, "the app"),
                (request.requester, "the requester"),
            )
        ),
        f"[bold]approvers:[/bold] {read(approvers_text(request), 'the approvers')}"
        + (
            f" (quorum {rule.quorum}, approvals: {read(approvals, 'the approvals')})"
            if rule.quorum > 1
            else ""
        ),
        *(
            [f"[bold]four eyes:[/bold] {read(request.four_eyes() or '', 'the separation')}"]
            if rule.separation is not None
            else []
        ),
        f"[bold]allowed decisions:[/bold] {', '.join(rule.allowed_decisions)}"
        + ("" if rule.batch else " (decided alone: batch: false)"),
        f"[bold]created:[/bold] {moment(request.created_at)}",
        f"[bold]deadline:[/bold] {moment(request.deadline)}"
        + ("" if request.is_terminal else f" ({countdown(request.deadline)})"),
        *([f"[bold]reminders:[/bold] {read(steps_said, 'the reminders')}"] if steps_said else []),
        "",
        read(request.description, "the description", newlines=True),
        "",
        "[bold]arguments:[/bold]",
    ]
    shown = request.shown_args()
    lines += [
        f"  [cyan]{read(key, f'argument {key!r}')}[/cyan]: {readout.value(value, f'argument {key!r}')}"
        for key, value in shown.items()
    ]
    if not shown:
        lines.append("  (none)")
    out.print(Panel("\n".join(lines), title=f"Request {read(request.id, 'the id')}", title_align="left"))
    if decisions:
        table = Table(title="Decisions", title_justify="left")
        for column in ("at", "actor", "channel", "decision"):
            table.add_column(column, overflow="fold")
        for record in decisions:
            data = record.to_dict(rule.redact)
            details = {
                key: value for key, value in data.items() if key not in ("id", "actor", "channel", "at")
            }
            table.add_row(
                moment(record.created_at),
                read(record.actor, "a decision's actor"),
                read(record.channel, "a decision's channel"),
                readout.value(details, "a decision"),
            )
        out.print(table)
    if request.is_terminal:
        out.print(outcome_text(request, readout), soft_wrap=True)
    if execution is not None:
        out.print(
            f"[bold]Execution:[/bold] {readout.value(with_times(execution.to_dict()), 'the execution')}"
        )
    audit_trail(audit, out, readout)
    warn(out, readout)


def audit_trail(entries: Iterable[AuditEntry], out: Console, readout: Readout) -> None:
    out.print("[bold]Audit trail[/bold]")
    for entry in entries:
        where = f"audit entry {entry.seq}"
        action, actor, channel = (
            readout.text(part, where) for part in (entry.action, entry.actor, entry.channel)
        )
        who = f"[dim]by[/dim] {actor} [dim]via[/dim] {channel}"
        out.print(f"  {entry.seq:>5}  {moment(entry.at)}  [bold]{action}[/bold]  {who}")
        if entry.data:
            out.print(f"         {readout.value(with_times(entry.data), where)}", style="dim", soft_wrap=True)


def outcome_text(request: Request, readout: Readout) -> str:
    """What the agent does and what the model is told, for a decided request."""
    if not request.is_terminal:
        if request.rule.quorum > 1:
            return (
                f"Still pending: {len(request.approvals)} of {request.rule.quorum} approvals "
                f"({readout.text(', '.join(request.approvals), 'the approvals')})."
            )
        return "Still pending."
    outcome = outcome_for(request)
    if outcome.execute and outcome.decision == "edit":
        return (
            "The tool runs with the edited arguments; the model is told:\n"
            f"{readout.text(outcome.feedback or '', 'what the model is told', newlines=True)}\n"
            "(followed by the tool's result)"
        )
    if outcome.execute:
        return "The tool runs with the original arguments; the model is told the tool's result."
    kind = "an error" if outcome.is_error else "the tool's result"
    told = readout.text(outcome.model_text or "", "what the model is told", newlines=True)
    return f"The tool does not run; the model is told ({kind}):\n{told}"


def decided(request: Request) -> None:
    readout = Readout()
    resolution = request.resolution or {}
    actor, channel = resolution.get("actor"), resolution.get("channel")
    who = f" by {actor} ({channel})" if actor and request.is_terminal else ""
    out = console()
    out.print(f"Request {request.id}: [bold]{request.status.value}[/bold]{readout.text(who, 'who decided')}.")
    out.print(outcome_text(request, readout), soft_wrap=True)
    warn(out, readout)


@cache
def layer_defaults() -> dict[str, dict[str, Any]]:
    """Shown even when not stored, so `info` always answers "does it ask?"."""
    from ..rules.model import ServiceEntry, ToolEntry

    return {
        "tool": ToolEntry().model_dump(mode="json", include={"requires_approval"}),
        "service": ServiceEntry().model_dump(
            mode="json", include={"requires_approval", "approval_mode", "tools"}
        ),
    }


def layer_block(kind: str, name: str, data: dict[str, Any]) -> None:
    """A layer entry as seed 004's `info` shows it: an HITL Approval block."""
    readout = Readout()
    per_tool_key = {"agent": "interrupt_on", "app": "interrupt_overrides"}.get(kind)
    data = {**layer_defaults().get(kind, {}), **data}
    lines: list[str] = []
    if per_tool_key is not None:
        silenced = bool(data.get("hitl_disabled"))
        note = " [yellow](silenced: none of the rules below apply)[/yellow]" if silenced else ""
        lines.append(f"[bold]hitl_disabled:[/bold] {str(silenced).lower()}{note}")
    for key, value in data.items():
        if key not in (per_tool_key, "hitl_disabled"):
            lines.append(f"[bold]{readout.text(key, key)}:[/bold] {readout.value(value, key)}")
    if per_tool_key is not None:
        rules: dict[str, Any] = data.get(per_tool_key) or {}
        lines.append(f"[bold]{per_tool_key}:[/bold]" + ("" if rules else " (none)"))
        lines += [
            f"  [cyan]{readout.text(tool, per_tool_key)}[/cyan]: {_switch_text(switch, readout, tool)}"
            for tool, switch in rules.items()
        ]
    out = console()
    title = f"HITL Approval: {kind} {readout.text(name, 'the name')}"
    out.print(Panel("\n".join(lines), title=title, title_align="left"))
    warn(out, readout)


def _switch_text(switch: Any, readout: Readout, tool: str) -> str:
    if switch is True:
        return "on (with the settings beneath)"
    if switch is False:
        return "off"
    return "on with " + readout.value(switch, tool)


def grants_text(rule: Rule) -> str:
    """Whether the rule lets its approvers give standing grants, and why not."""
    if rule.max_grant is not None:
        return f"up to {format_duration(rule.max_grant)} (max_grant)"
    if rule.quorum > 1:
        return f"none: {rule.quorum} approvers must agree"
    return "none (no max_grant, or a hitl_required tool without the app's grants_for_required)"


def explanation(result: Explanation, requester: str | None = None) -> None:
    from ..rules.effective import separation_words
    from ..rules.schedule import schedule_words

    out = console()
    readout = Readout()
    if result.ask:
        answer = "[bold yellow]ASK[/bold yellow] a person before this call runs"
    else:
        answer = "[bold green]DON'T ASK[/bold green]: the call runs without approval"
    where = " / ".join(
        f"{label}={value or '-'}" for label, value in (("agent", result.agent), ("app", result.app))
    )
    out.print(f"{readout.text(result.tool, 'the tool')} ({readout.text(where, 'the agent / app')}): {answer}")
    out.print(f"decided by: [bold]{result.layer}[/bold]")
    if result.ask:
        rule = result.rule
        out.print(f"allowed decisions: {', '.join(result.allowed_decisions)}")
        out.print(f"approvers: {readout.text(', '.join(rule.approvers) or 'none named', 'the approvers')}")
        out.print(f"who decides: {readout.text(result.who_decides(requester), 'who decides')}")
        out.print(separation_words(rule.separation))
        out.print(f"channels: {readout.text(', '.join(rule.channels), 'the channels')}")
        for line in schedule_words(rule.remind, rule.escalate, rule.deadline):
            out.print(readout.text(line, "the reminders and escalations"))
        if rule.required:
            out.print("required: the app's hitl_required lists it; nothing can silence it")
        if not rule.batch:
            out.print("batch: false: decided one at a time, never in a batch")
        out.print(f"standing grants: {grants_text(rule)}")
    table = Table(title="trace", title_justify="left")
    for column in ("layer", "key", "said"):
        table.add_column(column, overflow="fold")
    for step in result.trace:
        table.add_row(
            step.layer, readout.text(step.key or "-", "the trace"), readout.text(step.said, "the trace")
        )
    out.print(table)
    warn(out, readout)
