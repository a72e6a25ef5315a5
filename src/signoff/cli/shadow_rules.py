"""`signoff rules shadow` (rules tried in shadow: list, show, add, promote, drop) and `signoff rules
preview FILE --days N` (recorded calls replayed through proposed rules). Locally on the database
or through a server (`--url`, `/v1/rules/shadow`), the same operations either way."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..rules import RuleSet
from ..rules.replay import CHANGES, ReplayReport
from ..shadow import ShadowHit, ShadowRules
from . import render
from .options import AsUser, JsonFlag
from .state import acting_user, store_of
from .text import Readout, moment

rules_app = typer.Typer(help="Rules tried in shadow, and proposed rules replayed.", no_args_is_help=True)
shadow_app = typer.Typer(
    help="Rules tried in shadow: calls they would answer differently are recorded, not changed."
)
rules_app.add_typer(shadow_app, name="shadow")

RulesFile = Annotated[Path, typer.Argument(help="A rules YAML file (as `config export` writes it).")]
ShadowId = Annotated[int, typer.Argument(metavar="ID", min=1, help="The shadow's number.")]
LABELS = {
    "newly_asked": "newly asked",
    "no_longer_asked": "no longer asked",
    "other_approvers": "asked of other approvers",
    "other_deadline": "another deadline or on_expire",
    "unchanged": "unchanged",
}


@shadow_app.callback(invoke_without_command=True)
def shadow_list(
    ctx: typer.Context,
    everything: Annotated[bool, typer.Option("--all", help="Promoted and dropped ones too.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """The rules tried in shadow, with their hits: calls newly asked (they ran) and no longer asked
    (they were asked)."""
    if ctx.invoked_subcommand is not None:
        return
    shadows = store_of(ctx).shadow_rules(everything=everything)
    if as_json:
        render.print_json([shadow.to_dict() for shadow in shadows])
        return
    out, readout = render.console(), Readout()
    if not shadows:
        out.print("No rules in shadow." + ("" if everything else " (--all: promoted and dropped ones)"))
        return
    for shadow in shadows:
        out.print(_line(shadow, readout), markup=False)
    render.warn(out, readout)


def _line(shadow: ShadowRules, readout: Readout) -> str:
    where = f"shadow {shadow.id}"
    return (
        f"#{shadow.id}  {shadow.status:<8}  {readout.text(shadow.label, where)}  "
        f"{shadow.newly_asked} newly asked, {shadow.no_longer_asked} no longer asked  "
        f"(added by {readout.text(shadow.created_by, where)}, {moment(shadow.created_at)})"
    )


@shadow_app.command("show")
def shadow_show(
    ctx: typer.Context,
    shadow_id: ShadowId,
    limit: Annotated[int, typer.Option(min=1, max=500, help="How many hits, newest first.")] = 20,
    as_json: JsonFlag = False,
) -> None:
    """One shadow: what it changes, and its latest hits."""
    store = store_of(ctx)
    shadow = store.get_shadow_rules(shadow_id)
    hits = store.shadow_hits(shadow_id, limit=limit)
    by_rule = store.shadow_hits_by_rule(shadow_id)
    if as_json:
        render.print_json(
            {
                **shadow.to_dict(),
                "by_rule": [item.to_dict() for item in by_rule],
                "hits": [hit.to_dict() for hit in hits],
            }
        )
        return
    out, readout = render.console(), Readout()
    out.print(_line(shadow, readout), markup=False)
    if by_rule:
        out.print("Per rule of the shadow:")
    for item in by_rule:
        rule = readout.text(item.rule, f"shadow {shadow.id}")
        out.print(f"  {item.hits:>6}  {LABELS[item.direction]:<16} {rule}", markup=False)
    if hits:
        out.print("Latest hits:")
    if not hits:
        out.print("  no hits yet")
    for hit in hits:
        out.print(_hit_line(hit, readout), markup=False)
    if shadow.status == "active":
        out.print(
            f"Promote with: signoff rules shadow promote {shadow.id}   "
            f"drop with: signoff rules shadow drop {shadow.id}",
            markup=False,
        )
    render.warn(out, readout)


def _hit_line(hit: ShadowHit, readout: Readout) -> str:
    where = f"hit {hit.id}"
    call = readout.text(hit.tool, where)
    if hit.agent:
        call += f" by {readout.text(hit.agent, where)}"
    if hit.app:
        call += f" in {readout.text(hit.app, where)}"
    rule = f"{hit.rule.get('layer')} {hit.rule.get('key') or ''}".strip()
    return (
        f"  {moment(hit.at)}  {LABELS[hit.direction]:<16} {call}  "
        f"args {readout.value(hit.args, where)}  ({readout.text(rule, where)})"
    )


@shadow_app.command("add")
def shadow_add(
    ctx: typer.Context,
    file: RulesFile,
    label: Annotated[str | None, typer.Option(help="What it tries (default: the file's name).")] = None,
    as_user: AsUser = None,
) -> None:
    """Try FILE's rules in shadow beside the rules in force: nothing changes for the agents."""
    proposed = RuleSet.from_file(file)
    store = store_of(ctx)
    shadow = store.add_shadow_rules(
        proposed, label=label or file.name, actor=acting_user(ctx, as_user), channel="cli"
    )
    render.console().print(
        f"Shadow #{shadow.id} added: calls these rules would answer differently are recorded "
        f"(see: signoff rules shadow show {shadow.id}).",
        markup=False,
    )


@shadow_app.command("promote")
def shadow_promote(ctx: typer.Context, shadow_id: ShadowId, as_user: AsUser = None) -> None:
    """Make the shadow's rules the rules in force (refused if those changed since it was added)."""
    store = store_of(ctx)
    version = store.promote_shadow_rules(shadow_id, actor=acting_user(ctx, as_user), channel="cli")
    render.console().print(f"Shadow #{shadow_id} promoted: the rules in force are at version {version}.")


@shadow_app.command("drop")
def shadow_drop(ctx: typer.Context, shadow_id: ShadowId, as_user: AsUser = None) -> None:
    """Stop trying the shadow; its hits stay until purged."""
    store = store_of(ctx)
    shadow = store.drop_shadow_rules(shadow_id, actor=acting_user(ctx, as_user), channel="cli")
    render.console().print(f"Shadow #{shadow.id} dropped ({shadow.hits} hits kept until purged).")


@rules_app.command("preview")
def rules_preview(
    ctx: typer.Context,
    file: RulesFile,
    days: Annotated[float, typer.Option(min=0.01, max=366, help="How far back to replay.")] = 7.0,
    as_json: JsonFlag = False,
) -> None:
    """Replay the calls recorded in the last N days (requests, and shadow hits of calls that ran
    unasked) through FILE's rules and the rules in force: what would have changed."""
    proposed = RuleSet.from_file(file)
    report = store_of(ctx).replay_rules(proposed, days=days)
    if as_json:
        render.print_json(report.to_dict())
        return
    _show_replay(report, file, days)


def _show_replay(report: ReplayReport, file: Path, days: float) -> None:
    out, readout = render.console(), Readout()
    out.print(
        f"{report.calls} calls recorded in the last {days:g} days; under {file}, {report.changed} "
        "would have been answered differently:",
        markup=False,
    )
    for kind in CHANGES:
        out.print(f"  {LABELS[kind]:<30} {report.counts[kind]}", markup=False)
    if report.unreadable:
        out.print(f"  {'could not be resolved':<30} {report.unreadable}", markup=False)
    for change, items in report.examples.items():
        out.print(f"{LABELS[change].capitalize()}, for example:", markup=False)
        for item in items:
            where = f"a call of {item.call.tool}"
            out.print(
                f"  {moment(item.call.at)}  now:      {readout.text(item.in_force, where)}", markup=False
            )
            out.print(
                f"  {'':<{len(moment(item.call.at))}}  proposed: {readout.text(item.proposed, where)}",
                markup=False,
            )
    render.warn(out, readout)
