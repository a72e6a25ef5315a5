"""Looking after the installation: rules files, the audit log, approver groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .. import people_admin
from ..audit import AuditAnchor
from ..errors import ConfigError, InvalidInput
from ..rules import RuleSet
from ..rules.shadow_marks import MarkedRules, read_marks
from . import audit_log, render, rule_changes
from .options import AsUser, JsonFlag
from .people_backing import people_face
from .state import CliError, CliInputError, acting_user, local_store_of, store_of
from .text import Readout

config_app = typer.Typer(
    help="All rule layers as YAML (import, export, diff), and every change to them (history, revert).",
    no_args_is_help=True,
)
audit_app = typer.Typer(help="The hash-chained audit log.", no_args_is_help=True)
groups_app = typer.Typer(help="Approver groups (name them in rules as group:NAME).", no_args_is_help=True)


# -- config ----------------------------------------------------------------------------------


@config_app.command("import")
def config_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A rules YAML file.")],
    if_version: Annotated[
        int | None,
        typer.Option(
            "--if-version",
            min=0,
            help="Change nothing unless the rules are still at this version (as `config diff` said).",
        ),
    ] = None,
    as_user: AsUser = None,
) -> None:
    """Make the stored rules exactly those of FILE (all layers are replaced). Entries marked
    `mode: shadow` are tried in shadow instead (see `signoff rules shadow`)."""
    marks = read_marks(_read_text(file))
    if marks.marked:
        _import_with_shadow(ctx, file, marks, if_version=if_version, as_user=as_user)
        return
    rules = RuleSet.from_dict(marks.live)
    version = store_of(ctx).replace_rules(
        rules, actor=acting_user(ctx, as_user), channel="cli", if_version=if_version
    )
    counts = ", ".join(
        f"{len(entries)} {label}"
        for label, entries in (
            ("tools", rules.tools),
            ("services", rules.services),
            ("agents", rules.agents),
            ("apps", rules.apps),
        )
    )
    render.console().print(f"Imported {file}: {counts} (version {version}).")


def _read_text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read rules file {file}: {exc.strerror}") from None


def _import_with_shadow(
    ctx: typer.Context, file: Path, marks: MarkedRules, *, if_version: int | None, as_user: str | None
) -> None:
    """Apply FILE's unmarked entries (the marked ones keep what the rules in force hold) and try
    FILE as written in shadow, in one transaction (on the database, or the server's)."""
    store = store_of(ctx)
    actor = acting_user(ctx, as_user)
    label = f"{file.name}: {', '.join(marks.labels)}"
    applied, shadow = store.import_with_shadow(
        marks, label=label, actor=actor, channel="cli", if_version=if_version
    )
    out = render.console()
    out.print(f"Imported {file} without its entries in mode: shadow (version {applied}).", markup=False)
    out.print(
        f"Shadow #{shadow.id} tries {', '.join(marks.labels)}: signoff rules shadow show {shadow.id}",
        markup=False,
    )


config_app.command("diff")(rule_changes.config_diff)
config_app.command("history")(rule_changes.config_history)
config_app.command("revert")(rule_changes.config_revert)


@config_app.command("export")
def config_export(
    ctx: typer.Context,
    file: Annotated[Path | None, typer.Argument(help="Write here (default: standard output).")] = None,
) -> None:
    """The stored rules as YAML (`config import` reads it back)."""
    text = store_of(ctx).load_rules().to_yaml()
    if file is None:
        typer.echo(text, nl=False)
        return
    try:
        file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {file}: {exc.strerror}") from None
    render.console().print(f"Exported the rules to {file}.")


# -- audit -----------------------------------------------------------------------------------


@audit_app.command("verify")
def audit_verify(
    ctx: typer.Context,
    anchor: Annotated[
        str | None,
        typer.Option(
            "--anchor",
            metavar="SEQ:HASH",
            help="Also check that the log still extends this anchor (as `signoff audit anchor` printed it).",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="Check this export of the whole log (`audit export`, JSON Lines) instead of the database.",
        ),
    ] = None,
    exports: Annotated[
        list[Path] | None,
        typer.Option(
            "--export",
            help="A purge's export (`signoff purge --export`): checked against what the purge "
            "recorded, and an --anchor older than the purge is checked in it. Repeat for several.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check the hash chain, the triggers guarding it, and every request against its entries (or,
    with --file, an export's hashes and links); exit code 1 if anything was edited, deleted, cut
    off or rewound. After a purge the live log is checked from where the purge ended."""
    if file is not None and exports:
        raise CliInputError("give either --file or --export, not both")
    if file is not None:
        report = audit_log.verify_file(file, _anchor(anchor))
    elif exports:
        try:
            report = local_store_of(ctx, "audit verify --export").verify_audit(
                anchor=_anchor(anchor), exports=exports
            )
        except InvalidInput as exc:
            raise CliInputError(f"--export: {exc.message}") from None
    else:
        report = store_of(ctx).verify_audit(anchor=_anchor(anchor))
    if as_json:
        render.print_json(report.to_dict())
    elif report.ok:
        against = f"; it extends the anchor at entry {report.anchor.seq}" if report.anchor else ""
        checked = f"{report.requests} request{'' if report.requests == 1 else 's'}"
        if file is not None:
            checked = f"every hash and link in {file}"
        if report.purged_through:
            checked += f"; the live log from entry {report.purged_through + 1} (purged before it)"
        if report.exported:
            checked += f"; {report.exported} exported entries"
        render.console().print(f"ok, {report.entries} entries, {checked}{against}", markup=False)
    else:
        out = render.console()
        count = len(report.problems) + report.left_out
        out.print(f"[bold red]BROKEN[/bold red]: {count} problem(s) in {report.entries} entries")
        for problem in report.problems:
            where = f"entry {problem.seq}" if problem.seq else "log"
            out.print(f"  {where}: {problem.problem}", markup=False, highlight=False)
        if report.left_out:
            out.print(f"  … and {report.left_out} more (see --json)")
    if report.unsealed and not as_json:
        render.console().print(
            f"{report.unsealed} entr{'y' if report.unsealed == 1 else 'ies'} written since "
            f"{report.unsealed_since} not sealed yet, so not checked "
            f"({report.requests_unsealed} request(s) left out); `signoff audit seal` seals them",
            markup=False,
        )
    if not report.ok:
        raise typer.Exit(1)


@audit_app.command("seal")
def audit_seal(ctx: typer.Context) -> None:
    """Seal the entries written so far into the hash chain now (PostgreSQL queues them and every
    running server seals them within a second; SQLite seals each as it commits)."""
    sealed = local_store_of(ctx, "audit seal").seal_audit()
    render.console().print(f"sealed {sealed} entr{'y' if sealed == 1 else 'ies'}", markup=False)


@audit_app.command("anchor")
def audit_anchor(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print the log's head as SEQ:HASH. Keep it somewhere the database's writers cannot reach
    (a ticket, a mail, another system); `signoff audit verify --anchor SEQ:HASH` then proves that
    nothing up to it was rewritten or cut off since."""
    anchor = store_of(ctx).audit_anchor()
    if as_json:
        render.print_json(anchor.to_dict())
    else:
        typer.echo(str(anchor))


def _anchor(text: str | None) -> AuditAnchor | None:
    if text is None:
        return None
    try:
        return AuditAnchor.parse(text)
    except ValueError as exc:
        raise CliInputError(f"--anchor: {exc}") from None


audit_app.command("list")(audit_log.audit_list)
audit_app.command("export")(audit_log.audit_export)


# -- groups ----------------------------------------------------------------------------------


@groups_app.command("add")
def groups_add(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="The group (without group:).")],
    user: Annotated[str, typer.Argument(help="The user to add.")],
    as_user: AsUser = None,
) -> None:
    """Add USER to GROUP."""
    name = _group_name(group)
    people_face(ctx, as_user=as_user).join_group(name, user)
    render.console().print(f"{user} is in group {name}.", markup=False)


@groups_app.command("remove")
def groups_remove(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="The group (without group:).")],
    user: Annotated[str, typer.Argument(help="The user to remove.")],
    as_user: AsUser = None,
) -> None:
    """Remove USER from GROUP."""
    name = _group_name(group)
    people_face(ctx, as_user=as_user).leave_group(name, user)
    render.console().print(f"{user} is no longer in group {name}.", markup=False)


@groups_app.command("list")
def groups_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Every group and its members."""
    members = people_face(ctx).group_members()
    if as_json:
        render.print_json(members)
        return
    if not members:
        render.console().print("No groups.")
        return
    readout = Readout()
    table = Table("group", "members")
    for group, users in sorted(members.items()):
        table.add_row(
            readout.text(f"group:{group}", "a group"), readout.text(", ".join(sorted(users)), group)
        )
    out = render.console()
    out.print(table)
    render.warn(out, readout)


def _group_name(group: str) -> str:
    try:
        return people_admin.group_name(group)
    except InvalidInput as exc:
        raise CliError(exc.message) from None
