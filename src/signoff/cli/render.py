"""Rich output for people; `--json` output goes through `print_json` instead."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .._util import as_text
from ..audit import AuditEntry
from ..decisions import DecisionRecord
from ..outcome import outcome_for
from ..requests import Execution, Request
from ..rules import Explanation, ServiceEntry, ToolEntry


def console() -> Console:
    return Console(highlight=False)


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def countdown(deadline: datetime, now: datetime | None = None) -> str:
    seconds = int((deadline - (now or datetime.now(UTC))).total_seconds())
    if seconds <= 0:
        return "overdue"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {seconds:02d}s"


def approvers_text(request: Request) -> str:
    return ", ".join(request.approvers) or "anyone"


def pending_table(requests: list[Request]) -> None:
    out = console()
    if not requests:
        out.print("No open requests.")
        return
    table = Table(title=f"{len(requests)} open request(s)", title_justify="left")
    for column in ("id", "tool", "description", "agent/app", "deadline", "approvers"):
        table.add_column(column, overflow="fold")
    for request in requests:
        first_line = request.description.strip().splitlines()[0] if request.description.strip() else ""
        where = " / ".join(part or "-" for part in (request.agent, request.app))
        deadline = countdown(request.deadline)
        if request.status.value == "drafting":
            deadline += " (drafting)"
        table.add_row(
            request.id,
            escape(request.tool_name),
            escape(first_line),
            escape(where),
            deadline,
            escape(approvers_text(request)),
        )
    out.print(table)


def request_details(
    request: Request,
    decisions: list[DecisionRecord],
    execution: Execution | None,
    audit: list[AuditEntry],
) -> None:
    out = console()
    rule = request.rule
    lines = [
        f"[bold]status:[/bold] {request.status.value}",
        f"[bold]tool:[/bold] {escape(request.tool_name)}",
        f"[bold]thread / call:[/bold] {escape(request.thread_id)} / {escape(request.tool_call_id)}",
        "[bold]agent / app / requester:[/bold] "
        + " / ".join(escape(part or "-") for part in (request.agent, request.app, request.requester)),
        f"[bold]approvers:[/bold] {escape(approvers_text(request))}"
        + (
            f" (quorum {rule.quorum}, approvals: {', '.join(request.approvals) or 'none'})"
            if rule.quorum > 1
            else ""
        ),
        f"[bold]allowed decisions:[/bold] {', '.join(rule.allowed_decisions)}",
        f"[bold]created:[/bold] {request.created_at.isoformat()}",
        f"[bold]deadline:[/bold] {request.deadline.isoformat()}"
        + ("" if request.is_terminal else f" (in {countdown(request.deadline)})"),
        "",
        escape(request.description),
        "",
        "[bold]arguments:[/bold]",
    ]
    shown = request.shown_args()
    lines += [f"  [cyan]{escape(key)}[/cyan]: {escape(as_text(value))}" for key, value in shown.items()]
    if not shown:
        lines.append("  (none)")
    out.print(Panel("\n".join(lines), title=f"Request {request.id}", title_align="left"))
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
                record.created_at.isoformat(),
                escape(record.actor),
                escape(record.channel),
                escape(as_text(details)),
            )
        out.print(table)
    if request.is_terminal:
        out.print(outcome_text(request), soft_wrap=True)
    if execution is not None:
        out.print(f"[bold]Execution:[/bold] {escape(as_text(execution.to_dict()))}")
    audit_trail(audit)


def audit_trail(entries: Iterable[AuditEntry]) -> None:
    out = console()
    out.print("[bold]Audit trail[/bold]")
    for entry in entries:
        out.print(
            f"  {entry.seq:>5}  {entry.at}  [bold]{entry.action}[/bold]  "
            f"[dim]by[/dim] {escape(entry.actor)} [dim]via[/dim] {escape(entry.channel)}"
        )
        if entry.data:
            out.print(f"         {escape(as_text(entry.data))}", style="dim", soft_wrap=True)


def outcome_text(request: Request) -> str:
    """What the agent does and what the model is told, for a decided request."""
    if not request.is_terminal:
        if request.rule.quorum > 1:
            return (
                f"Still pending: {len(request.approvals)} of {request.rule.quorum} approvals "
                f"({', '.join(request.approvals)})."
            )
        return "Still pending."
    outcome = outcome_for(request)
    if outcome.execute and outcome.decision == "edit":
        return (
            "The tool runs with the edited arguments; the model is told:\n"
            f"{escape(outcome.feedback or '')}\n(followed by the tool's result)"
        )
    if outcome.execute:
        return "The tool runs with the original arguments; the model is told the tool's result."
    kind = "an error" if outcome.is_error else "the tool's result"
    return f"The tool does not run; the model is told ({kind}):\n{escape(outcome.model_text or '')}"


def decided(request: Request) -> None:
    resolution = request.resolution or {}
    actor, channel = resolution.get("actor"), resolution.get("channel")
    who = f" by {actor} ({channel})" if actor and request.is_terminal else ""
    out = console()
    out.print(f"Request {request.id}: [bold]{request.status.value}[/bold]{escape(who)}.")
    out.print(outcome_text(request), soft_wrap=True)


LAYER_DEFAULTS: dict[str, dict[str, Any]] = {
    "tool": ToolEntry().model_dump(mode="json", include={"requires_approval"}),
    "service": ServiceEntry().model_dump(
        mode="json", include={"requires_approval", "approval_mode", "tools"}
    ),
}
"""Shown even when not stored, so `info` always answers "does it ask?"."""


def layer_block(kind: str, name: str, data: dict[str, Any]) -> None:
    """A layer entry as seed 004's `info` shows it: an HITL Approval block."""
    per_tool_key = {"agent": "interrupt_on", "app": "interrupt_overrides"}.get(kind)
    data = {**LAYER_DEFAULTS.get(kind, {}), **data}
    lines: list[str] = []
    if per_tool_key is not None:
        silenced = bool(data.get("hitl_disabled"))
        note = " [yellow](silenced: none of the rules below apply)[/yellow]" if silenced else ""
        lines.append(f"[bold]hitl_disabled:[/bold] {str(silenced).lower()}{note}")
    for key, value in data.items():
        if key not in (per_tool_key, "hitl_disabled"):
            lines.append(f"[bold]{key}:[/bold] {escape(as_text(value))}")
    if per_tool_key is not None:
        rules: dict[str, Any] = data.get(per_tool_key) or {}
        lines.append(f"[bold]{per_tool_key}:[/bold]" + ("" if rules else " (none)"))
        lines += [
            f"  [cyan]{escape(tool)}[/cyan]: {escape(_switch_text(switch))}" for tool, switch in rules.items()
        ]
    console().print(
        Panel("\n".join(lines), title=f"HITL Approval: {kind} {escape(name)}", title_align="left")
    )


def _switch_text(switch: Any) -> str:
    if switch is True:
        return "on (with the settings beneath)"
    if switch is False:
        return "off"
    return "on with " + as_text(switch)


def explanation(result: Explanation) -> None:
    out = console()
    if result.ask:
        answer = "[bold yellow]ASK[/bold yellow] a person before this call runs"
    else:
        answer = "[bold green]DON'T ASK[/bold green]: the call runs without approval"
    where = " / ".join(
        f"{label}={value or '-'}" for label, value in (("agent", result.agent), ("app", result.app))
    )
    out.print(f"{escape(result.tool)} ({escape(where)}): {answer}")
    out.print(f"decided by: [bold]{result.layer}[/bold]")
    if result.ask:
        rule = result.rule
        out.print(f"allowed decisions: {', '.join(result.allowed_decisions)}")
        out.print(f"approvers: {escape(', '.join(rule.approvers) or 'anyone')}")
        if rule.required:
            out.print("required: the app's hitl_required lists it; nothing can silence it")
    table = Table(title="trace", title_justify="left")
    for column in ("layer", "key", "said"):
        table.add_column(column, overflow="fold")
    for step in result.trace:
        table.add_row(step.layer, escape(step.key or "-"), escape(step.said))
    out.print(table)
