"""`signoff users set-address`, `signoff webhooks …`, `signoff deliveries ID`, `signoff outbox …`
and `signoff channels …`: where people are told, and what happened to each notification."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from .._util import utcnow
from ..channels.contract import Channel
from ..channels.notice import build_notice
from ..channels.registry import ChannelRegistry
from ..destinations import Destinations
from ..errors import SignoffError
from ..requests import Request, RequestStatus
from ..rules.effective import RequestRule
from ..visible import visible
from .options import AllowPrivate
from .state import CliError, CliInputError, acting_user, local_store_of
from .users import AsUser, users_app

webhooks_app = typer.Typer(help="Webhooks: signed events out, signed decisions in.", no_args_is_help=True)
outbox_app = typer.Typer(help="What the outbox gave up sending, and sending it again.", no_args_is_help=True)
channels_app = typer.Typer(
    help="The channels `signoff serve --channels FILE` sends to.", no_args_is_help=True
)
ChannelsFile = Annotated[
    Path | None,
    typer.Option("--channels", help="The channels file (default: the file $SIGNOFF_CHANNELS names)."),
]


@users_app.command("set-address")
def set_address(
    ctx: typer.Context,
    user: Annotated[str, typer.Argument(help="Whose addresses.")],
    slack: Annotated[str | None, typer.Option("--slack", help="Slack user id (U123…).")] = None,
    wecom: Annotated[str | None, typer.Option("--wecom", help="WeCom user id.")] = None,
    feishu: Annotated[str | None, typer.Option("--feishu", help="Feishu open id (ou_…).")] = None,
    email: Annotated[str | None, typer.Option("--email", help="Email address.")] = None,
    text: Annotated[
        list[str] | None, typer.Option("--text", help="A text chat's id: PLATFORM:ID (repeatable).")
    ] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", help="Remove the address of this kind (repeatable).")
    ] = None,
    as_user: AsUser = None,
) -> None:
    """Set (or --remove) a person's addresses on the channels: verified at once (the CLI works on
    the database itself, as an admin; a person's own address set in the inbox waits for a code)."""
    store = local_store_of(ctx, "users set-address")
    actor = acting_user(ctx, as_user)
    given = [
        (kind, value)
        for kind, value in (("slack", slack), ("wecom", wecom), ("feishu", feishu), ("email", email))
        if value
    ]
    for entry in text or []:
        platform, sep, address = entry.partition(":")
        if not sep or not platform or not address:
            raise CliInputError(f"--text takes PLATFORM:ID (e.g. wechat:wxid_123), not {entry!r}")
        given.append((f"text:{platform}", address))
    if not given and not remove:
        raise CliInputError(
            "give at least one address (--slack, --wecom, --feishu, --email, --text) or --remove"
        )
    for kind, value in given:
        store.set_address(user, kind, value, actor=actor)
        typer.echo(visible(f"{user}: {kind} = {value} (verified)"))
    for kind in remove or []:
        removed = store.remove_address(user, kind, actor=actor)
        typer.echo(visible(f"{user}: {kind} {'removed' if removed else 'was not set'}"))


@users_app.command("addresses")
def addresses(
    ctx: typer.Context, user: str, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """A person's addresses on the channels, and whether each is verified (only a verified one
    is sent to, and decides)."""
    found = local_store_of(ctx, "users addresses").address_states(user)
    if as_json:
        typer.echo(json.dumps({state.kind: state.to_dict() for state in found}, indent=2))
        return
    for state in found:
        shown = f"verified ({state.verified_by})" if state.verified else "NOT verified (sent nothing)"
        typer.echo(visible(f"{state.kind}  {state.address}  {shown}"))


# -- webhooks ------------------------------------------------------------------------------------


@webhooks_app.command("add")
def webhooks_add(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="Where events are POSTed.")],
    events: Annotated[
        str | None, typer.Option("--events", help="Comma-separated events (default: all of them).")
    ] = None,
    inbound_as: Annotated[
        str | None, typer.Option("--inbound-as", help="Take signed decisions from it, made as this person.")
    ] = None,
    description: Annotated[str | None, typer.Option("--description")] = None,
    allow_private_webhooks: AllowPrivate = False,
    as_user: AsUser = None,
) -> None:
    """Add a webhook and print its signing secret (only now)."""
    chosen = [event.strip() for event in (events or "").split(",") if event.strip()]
    webhook, secret = local_store_of(ctx, "webhooks add").add_webhook(
        url,
        events=chosen,
        inbound_as=inbound_as,
        description=description,
        allow_private=allow_private_webhooks,
        actor=acting_user(ctx, as_user),
    )
    typer.echo(f"Added webhook {webhook.id} for {', '.join(webhook.events)}")
    typer.echo(f"Its signing secret (shown once, keep it safe): {secret}")
    if webhook.inbound:
        typer.echo(f"Signed decisions: POST /v1/webhooks/{webhook.id}/decisions (as {webhook.actor})")


@webhooks_app.command("list")
def webhooks_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List webhooks (never their secrets)."""
    found = local_store_of(ctx, "webhooks list").list_webhooks()
    if as_json:
        typer.echo(json.dumps([webhook.to_dict() for webhook in found], indent=2))
        return
    for webhook in found:
        inbound = f"  decisions as {webhook.actor}" if webhook.inbound else ""
        rotating = f"  ({len(webhook.secrets)} secrets sign: rotating)" if len(webhook.secrets) > 1 else ""
        line = f"{webhook.id}  {webhook.shown_url}  {','.join(webhook.events)}{inbound}{rotating}"
        typer.echo(visible(line))


@webhooks_app.command("remove")
def webhooks_remove(ctx: typer.Context, webhook_id: str, as_user: AsUser = None) -> None:
    """Remove a webhook (its pending events are skipped)."""
    local_store_of(ctx, "webhooks remove").remove_webhook(webhook_id, actor=acting_user(ctx, as_user))
    typer.echo(f"Removed {webhook_id}")


@webhooks_app.command("rotate")
def webhooks_rotate(
    ctx: typer.Context,
    webhook_id: str,
    drop_old: Annotated[
        bool, typer.Option("--drop-old", help="Stop signing with the previous secret(s) now.")
    ] = False,
    as_user: AsUser = None,
) -> None:
    """A new signing secret (printed once). The previous one keeps signing too, until a rotation
    with --drop-old, so the receiver can switch over."""
    secret = local_store_of(ctx, "webhooks rotate").rotate_webhook_secret(
        webhook_id, keep_old=not drop_old, actor=acting_user(ctx, as_user)
    )
    typer.echo(f"New signing secret for {webhook_id} (shown once): {secret}")


# -- the delivery log and dead letters ----------------------------------------------------------


def deliveries(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="The request.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Where a request was sent, every attempt, and what the outbox still holds for it."""
    store = local_store_of(ctx, "deliveries")
    store.get_request(request_id)
    attempts = store.delivery_attempts(request_id)
    rows = store.outbox_for(request_id)
    if as_json:
        typer.echo(
            json.dumps(
                {"attempts": [a.to_dict() for a in attempts], "outbox": [row.to_dict() for row in rows]},
                indent=2,
            )
        )
        return
    if not rows and not attempts:
        typer.echo(
            "Nothing was sent for this request: its rule names no channel but the inbox, "
            "and no webhook wants its events."
        )
        return
    for row in rows:
        where = row.target or row.recipient or "-"
        line = f"#{row.id}  {row.event}  {row.message}  {row.channel} → {where}  {row.state}"
        line += f"  attempts: {row.attempts}"
        if row.state == "pending" and row.attempts:
            line += f"  next: {row.next_at.isoformat(timespec='seconds')}"
        if row.last_error:
            line += f"  ({row.last_error})"
        typer.echo(visible(line))
        for attempt in attempts:
            if attempt.outbox_id == row.id:
                said = f": {attempt.error}" if attempt.error else ""
                stamp = attempt.attempted_at.isoformat(timespec="seconds")
                typer.echo(visible(f"    {attempt.attempt}. {stamp}  {attempt.outcome}{said}"))


@outbox_app.command("dead")
def outbox_dead(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """What the outbox gave up sending, newest first."""
    rows = local_store_of(ctx, "outbox dead").dead_letters()
    if as_json:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    for row in rows:
        where = row.target or row.recipient or "-"
        about = row.request_id or f"code for {row.recipient}"
        typer.echo(visible(f"#{row.id}  {about}  {row.event}  {row.channel} → {where}  ({row.last_error})"))


@outbox_app.command("retry")
def outbox_retry(ctx: typer.Context, outbox_id: int, as_user: AsUser = None) -> None:
    """Send a dead letter again (after fixing what made it fail)."""
    row = local_store_of(ctx, "outbox retry").retry_dead_letter(outbox_id, actor=acting_user(ctx, as_user))
    typer.echo(f"#{row.id} is pending again: the server's delivery worker sends it")


# -- channels ----------------------------------------------------------------------------------


@channels_app.command("list")
def channels_list(channels: ChannelsFile = None, allow_private_webhooks: AllowPrivate = False) -> None:
    """The configured channels (secrets hidden), checked as `signoff serve` checks them."""
    registry = ChannelRegistry.load(channels, destinations=Destinations(allow_private=allow_private_webhooks))
    if not len(registry):
        typer.echo("No channels are configured (signoff serve --channels FILE, or $SIGNOFF_CHANNELS).")
    for described in registry.describe():
        typer.echo(visible(json.dumps(described, ensure_ascii=False)))


@channels_app.command("test")
def channels_test(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The channel's name.")],
    to: Annotated[str | None, typer.Option("--to", help="A user: sent to their address there.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Or the platform's address itself.")] = None,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
) -> None:
    """Send a test message on a channel and report what came back."""
    registry = ChannelRegistry.load(channels, destinations=Destinations(allow_private=allow_private_webhooks))
    channel = registry.get(name)
    if channel is None:
        known = ", ".join(registry.names()) or "none"
        raise CliError(f"no channel named {name!r} is configured (configured: {known})")
    if target is None:
        if to is None:
            raise CliInputError("say whom to send it to: --to USER or --target ADDRESS")
        store = local_store_of(ctx, "channels test")
        target = store.address_of(to, channel.address_kind)
        if target is None:
            raise CliError(
                f"{to} has no verified {channel.address_kind} address (signoff users addresses {to}; "
                f"signoff users set-address {to} …)"
            )
    ok, said, seconds = asyncio.run(_try(channel, target, to))
    typer.echo(f"{'sent' if ok else 'FAILED'} on {name} ({channel.kind}) to {target} in {seconds:.2f}s")
    typer.echo(visible(f"the platform said: {said}"))
    if not ok:
        raise typer.Exit(1)


async def _try(channel: Channel, target: str, person: str | None) -> tuple[bool, Any, float]:
    started = time.perf_counter()
    try:
        ref = await asyncio.wait_for(channel.send(_test_notice(person), target), channel.timeout)
        return True, ref, time.perf_counter() - started
    except TimeoutError:
        return False, f"no answer within {channel.timeout:g}s", time.perf_counter() - started
    except (SignoffError, Exception) as exc:
        return False, f"{type(exc).__name__}: {exc}", time.perf_counter() - started
    finally:
        await channel.close()


def _test_notice(person: str | None) -> Any:
    now = utcnow()
    request = Request(
        id="req_test",
        thread_id="signoff-channels-test",
        tool_call_id="test",
        kind="tool",
        tool_name="signoff.test",
        tool_description=None,
        args={"note": "A test message from `signoff channels test`: nothing to decide."},
        args_schema=None,
        answer_schema=None,
        agent=None,
        app=None,
        requester=None,
        status=RequestStatus.PENDING,
        description="A test message from signoff: if you can read this, the channel works.",
        rule=RequestRule(allowed_decisions=("approve", "reject")),
        created_at=now,
        updated_at=now,
        deadline=now,
    )
    return build_notice(request, approver=person, link=None, request_url="")
