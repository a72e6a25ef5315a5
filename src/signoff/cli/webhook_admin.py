"""`signoff webhooks …`: signed events out, signed decisions in. Add, list, edit, disable and
enable, send a test, read what each sent and gave up, rotate the secret, remove; on the database
(`--db`, acting as `--as`) or through a server (`--url`), as `signoff channels` does."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..visible import visible
from .channel_admin import print_lane, print_trial
from .channel_backing import JSON, channels_face
from .options import AllowPrivate, AsUser, JsonFlag

webhooks_app = typer.Typer(help="Webhooks: signed events out, signed decisions in.", no_args_is_help=True)
WebhookId = Annotated[str, typer.Argument(metavar="ID", help="The webhook's id (whk_…).")]
Events = Annotated[
    str | None, typer.Option("--events", help="Comma-separated events (default: all of them).")
]
InboundAs = Annotated[
    str | None, typer.Option("--inbound-as", help="Take signed decisions from it, made as this person.")
]


def _events(text: str | None) -> list[str] | None:
    return None if text is None else [event.strip() for event in text.split(",") if event.strip()]


def _line(webhook: JSON) -> str:
    inbound = f"  decisions as {webhook['actor']}" if webhook["inbound"] else ""
    rotating = f"  ({webhook['secrets']} secrets sign: rotating)" if webhook["secrets"] > 1 else ""
    disabled = "  DISABLED" if webhook["disabled"] else ""
    return f"{webhook['id']}  {webhook['url']}  {','.join(webhook['events'])}{inbound}{rotating}{disabled}"


@webhooks_app.command("add")
def webhooks_add(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="Where events are POSTed.")],
    events: Events = None,
    inbound_as: InboundAs = None,
    description: Annotated[str | None, typer.Option("--description")] = None,
    allow_private_webhooks: AllowPrivate = False,
    as_user: AsUser = None,
) -> None:
    """Add a webhook and print its signing secret (only now)."""
    face = channels_face(ctx, as_user=as_user, allow_private=allow_private_webhooks)
    added = face.create_webhook(url, events=_events(events), inbound_as=inbound_as, description=description)
    typer.echo(f"Added webhook {added['id']} for {', '.join(added['events'])}")
    typer.echo(f"Its signing secret (shown once, keep it safe): {added['secret']}")
    if added["inbound"]:
        typer.echo(f"Signed decisions: POST /v1/webhooks/{added['id']}/decisions (as {added['actor']})")


@webhooks_app.command("list")
def webhooks_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List webhooks (never their secrets)."""
    found = channels_face(ctx).webhooks()
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    for webhook in found:
        typer.echo(visible(_line(webhook)))


@webhooks_app.command("edit")
def webhooks_edit(
    ctx: typer.Context,
    webhook_id: WebhookId,
    url: Annotated[str | None, typer.Option("--url", help="Where events are POSTed now.")] = None,
    events: Events = None,
    inbound_as: Annotated[
        str | None, typer.Option("--inbound-as", help='Whom its signed decisions are made as ("": none).')
    ] = None,
    description: Annotated[str | None, typer.Option("--description", help='"": none.')] = None,
    allow_private_webhooks: AllowPrivate = False,
    as_user: AsUser = None,
) -> None:
    """Change a webhook's URL, events, inbound person or description (its secrets stay)."""
    face = channels_face(ctx, as_user=as_user, allow_private=allow_private_webhooks)
    changed = face.edit_webhook(
        webhook_id, url=url, events=_events(events), inbound_as=inbound_as, description=description
    )
    typer.echo(visible(f"Changed {_line(changed)}"))


@webhooks_app.command("disable")
def webhooks_disable(ctx: typer.Context, webhook_id: WebhookId, as_user: AsUser = None) -> None:
    """Disable a webhook: nothing is sent to it (its waiting events are dead-lettered)."""
    changed = channels_face(ctx, as_user=as_user).disable_webhook(webhook_id)
    typer.echo(visible(f"Disabled {_line(changed)}"))


@webhooks_app.command("enable")
def webhooks_enable(ctx: typer.Context, webhook_id: WebhookId, as_user: AsUser = None) -> None:
    """Enable a disabled webhook again."""
    changed = channels_face(ctx, as_user=as_user).enable_webhook(webhook_id)
    typer.echo(visible(f"Enabled {_line(changed)}"))


@webhooks_app.command("test")
def webhooks_test(
    ctx: typer.Context,
    webhook_id: WebhookId,
    allow_private_webhooks: AllowPrivate = False,
    as_user: AsUser = None,
) -> None:
    """POST a signed `webhook.test` event to it now, and report what the receiver answered."""
    face = channels_face(ctx, as_user=as_user, allow_private=allow_private_webhooks)
    print_trial(face.send_webhook_test(webhook_id))


@webhooks_app.command("deliveries")
def webhooks_deliveries(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonFlag = False) -> None:
    """A webhook's latest events (newest first) and its dead letters."""
    print_lane(channels_face(ctx).webhook_deliveries(webhook_id), as_json)


@webhooks_app.command("remove")
def webhooks_remove(ctx: typer.Context, webhook_id: WebhookId, as_user: AsUser = None) -> None:
    """Remove a webhook (its pending events are skipped)."""
    channels_face(ctx, as_user=as_user).delete_webhook(webhook_id)
    typer.echo(f"Removed {webhook_id}")


@webhooks_app.command("rotate")
def webhooks_rotate(
    ctx: typer.Context,
    webhook_id: WebhookId,
    drop_old: Annotated[
        bool, typer.Option("--drop-old", help="Stop signing with the previous secret(s) now.")
    ] = False,
    as_user: AsUser = None,
) -> None:
    """A new signing secret (printed once). The previous one keeps signing too, until a rotation
    with --drop-old, so the receiver can switch over."""
    rotated = channels_face(ctx, as_user=as_user).rotate_webhook(webhook_id, keep_old=not drop_old)
    typer.echo(f"New signing secret for {webhook_id} (shown once): {rotated['secret']}")
