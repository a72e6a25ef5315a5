"""`signoff config diff FILE`, `config history` and `config revert N`: what a rules file would
change (and a sample call under both), every change to the rules, and a change put back.
Locally on the database or through a server (`--url`), the same operations either way."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ..rules import RuleSet
from ..rules.history import LayerChange, RuleChange
from ..rules.preview import RulesPreview, SampleCall
from . import render
from .options import AsUser, JsonFlag
from .parsing import parse_json_object
from .state import CliInputError, acting_user, store_of
from .text import Readout, moment

RulesFile = Annotated[Path, typer.Argument(help="A rules YAML file (as `config export` writes it).")]
WHAT = {"added": "+", "removed": "-", "changed": "~", "unchanged": "="}


def config_diff(
    ctx: typer.Context,
    file: RulesFile,
    tool: Annotated[
        str | None, typer.Option(help="Explain a call to this tool under the rules in force and FILE's.")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="The sample call's agent.")] = None,
    app: Annotated[str | None, typer.Option(help="The sample call's app.")] = None,
    requester: Annotated[str | None, typer.Option(help="The end user the agent acts for.")] = None,
    args: Annotated[str | None, typer.Option(help="The sample call's arguments, a JSON object.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """What importing FILE would change: the entries that differ, and with --tool a call
    explained under both. Nothing is changed; `config import FILE --if-version N` applies it."""
    proposed = RuleSet.from_file(file)
    if tool is None and any(value is not None for value in (agent, app, requester, args)):
        raise CliInputError("--agent, --app, --requester and --args describe a sample call: give --tool too")
    sample = None
    if tool is not None:
        call_args = parse_json_object(args, option="--args") if args is not None else None
        sample = SampleCall(tool=tool, agent=agent, app=app, requester=requester, args=call_args)
    preview = store_of(ctx).preview_rules(proposed, sample)
    if as_json:
        render.print_json(preview.to_dict())
        return
    _show_preview(preview, file)


def _show_preview(preview: RulesPreview, file: Path) -> None:
    out, readout = render.console(), Readout()
    if preview.changes:
        out.print(f"Compared with the rules in force (version {preview.version}), {file} changes:")
        for change in preview.changes:
            _show_change(change, out, readout)
    else:
        out.print(f"{file} holds the rules in force (version {preview.version}): nothing would change.")
    if preview.sample is not None:
        for label, explained in (
            ("in force", preview.sample.in_force),
            ("proposed", preview.sample.proposed),
        ):
            out.print(f"{label + ':':<10} {readout.text(explained['sentence'], 'the sample call')}")
    if preview.changes:
        out.print(f"Apply with: signoff config import {file} --if-version {preview.version}", markup=False)
    render.warn(out, readout)


def _show_change(change: LayerChange, out: Console, readout: Readout) -> None:
    label = readout.text(change.label, "an entry's name")
    out.print(f"  {WHAT[change.what]} {label} ({change.what})")
    for line in change.diff():
        out.print(f"    {line[:1] or ' '} {readout.text(line[1:], label)}", style=_line_style(line))


def _line_style(line: str) -> str | None:
    return "green" if line.startswith("+") else "red" if line.startswith("-") else None


def config_history(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, max=200, help="How many changes.")] = 20,
    before: Annotated[
        int | None, typer.Option(min=1, help="Only changes before this one (the next page).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Every change to the rules, newest first: who, when, through what, and what it changed."""
    changes = store_of(ctx).rule_history(before=before, limit=limit)
    if as_json:
        render.print_json([change.to_dict() for change in changes])
        return
    out, readout = render.console(), Readout()
    if not changes:
        out.print("No changes to the rules." if before is None else "No older changes.")
        return
    for change in changes:
        _show_history_item(change, out, readout)
    if len(changes) == limit:
        out.print(f"Older: signoff config history --before {changes[-1].seq}", markup=False)
    render.warn(out, readout)


def _show_history_item(change: RuleChange, out: Console, readout: Readout) -> None:
    where = f"change {change.seq}"
    who = f"{readout.text(change.actor, where)} [dim]via[/dim] {readout.text(change.channel, where)}"
    version = f"  version {change.version}" if change.version is not None else ""
    reverted = f" (of change {change.reverted})" if change.reverted is not None else ""
    out.print(f"[bold]#{change.seq}[/bold]  {moment(change.at)}  {change.action}{reverted}  {who}{version}")
    if change.changes is None:
        out.print("      (recorded before signoff kept what a change replaced)", style="dim")
        return
    if not change.changes:
        out.print("      (changed nothing)", style="dim")
    for item in change.changes:
        _show_change(item, out, readout)


def config_revert(
    ctx: typer.Context,
    seq: Annotated[int, typer.Argument(metavar="N", min=1, help="The change (its # in `config history`).")],
    as_user: AsUser = None,
) -> None:
    """Put back what change N replaced, in the entries it changed; refused if a later change
    touched them. The revert is a change of its own (it can be reverted too)."""
    store = store_of(ctx)
    change = store.revert_rule_change(seq, actor=acting_user(ctx, as_user), channel="cli")
    out, readout = render.console(), Readout()
    out.print(f"Reverted change {seq}: now change #{change.seq}, version {change.version}.")
    for item in change.changes or []:
        _show_change(item, out, readout)
    render.warn(out, readout)
