"""The three rule layers from the terminal (seed 004's CLI): tool, service, agent, app.

`set` merges into the stored entry: flags not given leave their fields as they are; an empty
text (`--when ""`) removes that field. `--interrupt-on T` sets `T: true`, `--interrupt-off T`
sets `T: false`, a `*-json` option replaces the whole per-tool dict.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..rules.model import LayerKind
from . import render
from .options import AsUser, JsonFlag
from .parsing import parse_json_object, split_list
from .state import CliError, CliInputError, acting_user, store_of

tool_app = typer.Typer(
    help="Layer 1: a tool's own default (is it dangerous for everyone?).", no_args_is_help=True
)
service_app = typer.Typer(
    help="Layer 1 for a group of tools named SERVICE.<tool> (an MCP server).", no_args_is_help=True
)
agent_app = typer.Typer(
    help="Layer 2: an agent's per-tool rules and its silence switch.", no_args_is_help=True
)
app_app = typer.Typer(
    help="Layer 3: a deployment's overrides, silence switch and hitl_required.", no_args_is_help=True
)

Name = Annotated[str, typer.Argument(help="The entry's name (a tool name, a glob, or *).")]
RequiresApproval = Annotated[
    bool | None,
    typer.Option(
        "--requires-approval/--no-requires-approval", help="Ask before it runs.", show_default=False
    ),
]
ApprovalDecisions = Annotated[
    str | None,
    typer.Option(help="Allowed decisions, e.g. approve,reject,edit,respond (approve is always allowed)."),
]
ApprovalDescription = Annotated[
    str | None, typer.Option(help="Card text; placeholders {tool_name}, {tool_args}, {<arg>}.")
]
Approvers = Annotated[str | None, typer.Option(help="Who may decide: users and group:NAME, comma-separated.")]
Deadline = Annotated[str | None, typer.Option(help="How long a request waits, e.g. 15m, 1h, 7d.")]
OnExpire = Annotated[str | None, typer.Option(help="At the deadline: reject, approve or fail.")]
Quorum = Annotated[int | None, typer.Option(min=1, help="Distinct approvers needed.")]
Redact = Annotated[str | None, typer.Option(help="Arguments masked on cards and logs, comma-separated.")]
Separation = Annotated[
    str | None,
    typer.Option(
        help="Four eyes: requester (the person the agent acts for may not approve), "
        "requester_and_creator (nor the owner of the agent's token), or none."
    ),
]
When = Annotated[
    str | None, typer.Option(help='Ask only if this CEL condition holds, e.g. args.env == "prod".')
]
HitlDisabled = Annotated[
    bool | None,
    typer.Option("--hitl-disabled/--no-hitl-disabled", help="Silence every rule here.", show_default=False),
]
Names = list[str] | None


def _settings(
    entry: dict[str, Any],
    *,
    approval_decisions: str | None,
    approval_description: str | None,
    approvers: str | None,
    deadline: str | None,
    on_expire: str | None,
    quorum: int | None,
    redact: str | None,
    when: str | None,
    separation: str | None = None,
) -> None:
    """Merge the rule-settings flags given into `entry`; an empty text removes the field."""
    texts = {
        "description": approval_description,
        "deadline": deadline,
        "on_expire": on_expire,
        "when": when,
        "separation": separation,
    }
    lists = {"allowed_decisions": approval_decisions, "approvers": approvers, "redact": redact}
    for key, text in texts.items():
        _put(entry, key, text, text)
    for key, text in lists.items():
        _put(entry, key, text, split_list(text) if text is not None else None)
    if quorum is not None:
        entry["quorum"] = quorum


def _put(entry: dict[str, Any], key: str, given: str | None, value: Any) -> None:
    if given is None:
        return
    if given.strip() == "":
        entry.pop(key, None)
    else:
        entry[key] = value


def _without_empty(entry: dict[str, Any]) -> dict[str, Any]:
    """Drop empty per-tool dicts and lists: an explicit empty value would be stored as set."""
    return {key: value for key, value in entry.items() if value != {} and value != []}


def _save(ctx: typer.Context, kind: LayerKind, name: str, entry: dict[str, Any], as_user: str | None) -> None:
    saved = store_of(ctx).set_layer(kind, name, entry, actor=acting_user(ctx, as_user), channel="cli")
    render.layer_block(kind, name.strip(), saved)


def _current(ctx: typer.Context, kind: LayerKind, name: str) -> dict[str, Any]:
    return dict(store_of(ctx).get_layer(kind, name) or {})


def _info(ctx: typer.Context, kind: LayerKind, name: str, as_json: bool) -> None:
    data = store_of(ctx).get_layer(kind, name)
    if data is None:
        raise CliError(f"no {kind} settings named {name!r} (create them with: signoff {kind} set {name} ...)")
    if as_json:
        render.print_json(data)
    else:
        render.layer_block(kind, name, data)


def _delete(ctx: typer.Context, kind: LayerKind, name: str, as_user: str | None) -> None:
    if not store_of(ctx).delete_layer(kind, name, actor=acting_user(ctx, as_user), channel="cli"):
        raise CliError(f"no {kind} settings named {name!r}")
    render.console().print(f"Deleted the {kind} settings for {name}.")


def _switches(
    rules: dict[str, Any],
    *,
    clear: bool,
    replace_json: str | None,
    json_option: str,
    on: Names,
    off: Names,
    unset: Names,
    on_option: str,
    off_option: str,
) -> dict[str, Any]:
    """Seed 004's per-tool switches: clear, then replace, then on (true) / off (false) / unset."""
    both = set(on or ()) & set(off or ())
    if both:
        raise CliInputError(f"{', '.join(sorted(both))} given to both {on_option} and {off_option}")
    result = {} if clear else dict(rules)
    if replace_json is not None:
        result = parse_json_object(replace_json, option=json_option)
    result.update(dict.fromkeys(on or (), True))
    result.update(dict.fromkeys(off or (), False))
    for tool in unset or ():
        result.pop(tool, None)
    return result


# -- tool ------------------------------------------------------------------------------------


@tool_app.command("set")
def tool_set(
    ctx: typer.Context,
    name: Name,
    requires_approval: RequiresApproval = None,
    approval_decisions: ApprovalDecisions = None,
    approval_description: ApprovalDescription = None,
    approvers: Approvers = None,
    deadline: Deadline = None,
    on_expire: OnExpire = None,
    quorum: Quorum = None,
    redact: Redact = None,
    when: When = None,
    separation: Separation = None,
    as_user: AsUser = None,
) -> None:
    """Create or update a tool's HITL settings."""
    entry = _current(ctx, "tool", name)
    if requires_approval is not None:
        entry["requires_approval"] = requires_approval
    _settings(
        entry,
        approval_decisions=approval_decisions,
        approval_description=approval_description,
        approvers=approvers,
        deadline=deadline,
        on_expire=on_expire,
        quorum=quorum,
        redact=redact,
        when=when,
        separation=separation,
    )
    _save(ctx, "tool", name, entry, as_user)


@tool_app.command("info")
def tool_info(ctx: typer.Context, name: Name, as_json: JsonFlag = False) -> None:
    """Show a tool's HITL settings."""
    _info(ctx, "tool", name, as_json)


@tool_app.command("delete")
def tool_delete(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Remove a tool's HITL settings."""
    _delete(ctx, "tool", name, as_user)


# -- service ---------------------------------------------------------------------------------


@service_app.command("set")
def service_set(
    ctx: typer.Context,
    name: Name,
    approval_mode: Annotated[
        str | None,
        typer.Option(
            help="all, whitelist, blacklist or unless_read_only (all but the tools marked readOnlyHint)."
        ),
    ] = None,
    tools: Annotated[
        str | None, typer.Option(help="The listed tools (short names), comma-separated.")
    ] = None,
    requires_approval: RequiresApproval = None,
    approval_decisions: ApprovalDecisions = None,
    approval_description: ApprovalDescription = None,
    approvers: Approvers = None,
    deadline: Deadline = None,
    on_expire: OnExpire = None,
    quorum: Quorum = None,
    redact: Redact = None,
    when: When = None,
    separation: Separation = None,
    as_user: AsUser = None,
) -> None:
    """Create or update a service: all its tools ask, only the listed ones (whitelist), or all but them."""
    entry = _current(ctx, "service", name)
    if requires_approval is not None:
        entry["requires_approval"] = requires_approval
    if approval_mode is not None:
        entry["approval_mode"] = approval_mode
    if tools is not None:
        entry["tools"] = split_list(tools)
    _settings(
        entry,
        approval_decisions=approval_decisions,
        approval_description=approval_description,
        approvers=approvers,
        deadline=deadline,
        on_expire=on_expire,
        quorum=quorum,
        redact=redact,
        when=when,
        separation=separation,
    )
    _save(ctx, "service", name, entry, as_user)


@service_app.command("info")
def service_info(ctx: typer.Context, name: Name, as_json: JsonFlag = False) -> None:
    """Show a service's HITL settings."""
    _info(ctx, "service", name, as_json)


@service_app.command("delete")
def service_delete(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Remove a service's HITL settings."""
    _delete(ctx, "service", name, as_user)


# -- agent -----------------------------------------------------------------------------------


@agent_app.command("set")
def agent_set(
    ctx: typer.Context,
    name: Name,
    hitl_disabled: HitlDisabled = None,
    interrupt_on: Annotated[Names, typer.Option(help="Ask before TOOL (TOOL: true); repeatable.")] = None,
    interrupt_off: Annotated[
        Names, typer.Option(help="Never ask before TOOL (TOOL: false); repeatable.")
    ] = None,
    interrupt_unset: Annotated[Names, typer.Option(help="Drop TOOL's rule (the tool layer decides).")] = None,
    interrupt_on_json: Annotated[
        str | None, typer.Option(help='Replace all per-tool rules: {"send_email": true, "ls": false, ...}.')
    ] = None,
    clear_interrupt_on: Annotated[bool, typer.Option(help="Remove all per-tool rules.")] = False,
    description_prefix: Annotated[
        str | None, typer.Option(help="The first line of this agent's cards ('' goes back to the defaults').")
    ] = None,
    as_user: AsUser = None,
) -> None:
    """Create or update an agent's HITL settings."""
    entry = _current(ctx, "agent", name)
    if hitl_disabled is not None:
        entry["hitl_disabled"] = hitl_disabled
    if description_prefix:
        entry["description_prefix"] = description_prefix
    elif description_prefix is not None:
        entry.pop("description_prefix", None)
    entry["interrupt_on"] = _switches(
        entry.get("interrupt_on") or {},
        clear=clear_interrupt_on,
        replace_json=interrupt_on_json,
        json_option="--interrupt-on-json",
        on=interrupt_on,
        off=interrupt_off,
        unset=interrupt_unset,
        on_option="--interrupt-on",
        off_option="--interrupt-off",
    )
    _save(ctx, "agent", name, _without_empty(entry), as_user)


@agent_app.command("info")
def agent_info(ctx: typer.Context, name: Name, as_json: JsonFlag = False) -> None:
    """Show an agent's HITL block: hitl_disabled and the per-tool rules."""
    _info(ctx, "agent", name, as_json)


@agent_app.command("delete")
def agent_delete(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Remove an agent's HITL settings."""
    _delete(ctx, "agent", name, as_user)


# -- app -------------------------------------------------------------------------------------


@app_app.command("set")
def app_set(
    ctx: typer.Context,
    name: Name,
    hitl_disabled: HitlDisabled = None,
    interrupt_override: Annotated[Names, typer.Option(help="Force asking before TOOL; repeatable.")] = None,
    interrupt_override_off: Annotated[
        Names, typer.Option(help="Force not asking before TOOL; repeatable.")
    ] = None,
    interrupt_override_unset: Annotated[Names, typer.Option(help="Drop TOOL's override.")] = None,
    interrupt_overrides_json: Annotated[
        str | None,
        typer.Option(help='Replace all overrides: {"delete_db": {"allowed_decisions": ["approve"]}}.'),
    ] = None,
    clear_interrupt_overrides: Annotated[bool, typer.Option(help="Remove all overrides.")] = False,
    hitl_required: Annotated[
        Names, typer.Option(help="Always ask before TOOL, whatever else says; repeatable.")
    ] = None,
    remove_hitl_required: Annotated[
        Names, typer.Option(help="Take TOOL off hitl_required; repeatable.")
    ] = None,
    clear_hitl_required: Annotated[bool, typer.Option(help="Empty hitl_required.")] = False,
    as_user: AsUser = None,
) -> None:
    """Create or update an app's (deployment's) HITL settings."""
    entry = _current(ctx, "app", name)
    if hitl_disabled is not None:
        entry["hitl_disabled"] = hitl_disabled
    entry["interrupt_overrides"] = _switches(
        entry.get("interrupt_overrides") or {},
        clear=clear_interrupt_overrides,
        replace_json=interrupt_overrides_json,
        json_option="--interrupt-overrides-json",
        on=interrupt_override,
        off=interrupt_override_off,
        unset=interrupt_override_unset,
        on_option="--interrupt-override",
        off_option="--interrupt-override-off",
    )
    required = [] if clear_hitl_required else list(entry.get("hitl_required") or [])
    required += [tool for tool in hitl_required or () if tool not in required]
    entry["hitl_required"] = [tool for tool in required if tool not in (remove_hitl_required or ())]
    _save(ctx, "app", name, _without_empty(entry), as_user)


@app_app.command("info")
def app_info(ctx: typer.Context, name: Name, as_json: JsonFlag = False) -> None:
    """Show an app's HITL settings."""
    _info(ctx, "app", name, as_json)


@app_app.command("delete")
def app_delete(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Remove an app's HITL settings."""
    _delete(ctx, "app", name, as_user)
