"""`signoff channels …`: the channels a server sends to, those of its channels file and those kept
in the database, which an admin adds, edits, disables and enables (also in the inbox, under
Admin → Channels, and through the API); a test message; what each sent and gave up.

On the database (`--db`) they act as `--as` with this machine's channels file (`--channels`),
secrets key (`--secrets-key-file`) and `--allow-private-webhooks`; through a server (`--url`),
as the token's user with the server's. Secrets are never given on the command line (others
see it): `--secret KEY` asks for the value, `KEY=@FILE` reads a file, `KEY=env:VAR` a variable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ..channels.sealing import SecretsKey
from ..visible import visible
from .channel_backing import JSON, channels_face
from .options import AllowPrivate, AsUser, JsonFlag, SecretsKeyFile
from .state import CliError, CliInputError

channels_app = typer.Typer(
    help="Channels: those of the server's channels file, and those kept in the database.",
    no_args_is_help=True,
)
ChannelsFile = Annotated[
    Path | None,
    typer.Option("--channels", help="The channels file (default: the file $SIGNOFF_CHANNELS names)."),
]
Name = Annotated[str, typer.Argument(help="The channel's name.")]
Settings = Annotated[list[str] | None, typer.Option("--set", help="A plain setting: KEY=VALUE (repeatable).")]
Secrets = Annotated[
    list[str] | None,
    typer.Option(
        "--secret",
        help="A secret: KEY (asked for, not shown), KEY=@FILE or KEY=env:VARIABLE (repeatable).",
    ),
]
Locale = Annotated[str | None, typer.Option("--locale", help="en or zh.")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds one send may take.")]
Concurrency = Annotated[int | None, typer.Option("--concurrency", help="Sends under way at once.")]


def _face(
    ctx: typer.Context,
    as_user: str | None = None,
    channels: Path | None = None,
    allow_private: bool = False,
    key_file: Path | None = None,
) -> Any:
    return channels_face(
        ctx, as_user=as_user, channels_file=channels, allow_private=allow_private, key_file=key_file
    )


@channels_app.command("list")
def channels_list(
    ctx: typer.Context,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_json: JsonFlag = False,
) -> None:
    """Every channel (secrets never shown, only which are set), where it comes from, and whether
    it is in use (checked as `signoff serve` checks them)."""
    found = _face(ctx, None, channels, allow_private_webhooks, secrets_key_file).channels()
    if as_json:
        typer.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        typer.echo("No channels: a channels file (signoff serve --channels FILE) or signoff channels add.")
    for view in found:
        typer.echo(visible(_line(view)))


def _line(view: JSON) -> str:
    source = "from the channels file" if view["source"] == "file" else f"stored, version {view['version']}"
    state = view["state"] + (f" ({view['problem']})" if view.get("problem") else "")
    secrets = ", ".join(view["secrets"]) or "none"
    settings = json.dumps(view["settings"], ensure_ascii=False)
    return f"{view['name']}  {view['kind']}  {source}  {state}  settings: {settings}  secrets set: {secrets}"


@channels_app.command("add")
def channels_add(
    ctx: typer.Context,
    name: Name,
    kind: Annotated[str, typer.Option("--kind", help="slack, wecom, feishu, email, text or recording.")],
    locale: Locale = None,
    timeout: Timeout = None,
    concurrency: Concurrency = None,
    settings: Settings = None,
    secrets: Secrets = None,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_user: AsUser = None,
) -> None:
    """Add a channel to the database: every server uses it from its next look (within a sweep)."""
    face = _face(ctx, as_user, channels, allow_private_webhooks, secrets_key_file)
    added = face.add_channel(
        name,
        kind,
        locale=locale or "en",
        timeout=timeout if timeout is not None else 10.0,
        concurrency=concurrency if concurrency is not None else 8,
        settings=_settings(settings),
        secrets={key: value for key, value in _secrets(secrets).items() if value is not None},
    )
    typer.echo(visible(f"Added {_line(added)}"))


@channels_app.command("edit")
def channels_edit(
    ctx: typer.Context,
    name: Name,
    locale: Locale = None,
    timeout: Timeout = None,
    concurrency: Concurrency = None,
    settings: Settings = None,
    unset: Annotated[
        list[str] | None, typer.Option("--unset", help="Remove a plain setting or a secret (repeatable).")
    ] = None,
    secrets: Secrets = None,
    version: Annotated[
        int | None, typer.Option("--version", help="Refused if the channel is no longer at this version.")
    ] = None,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_user: AsUser = None,
) -> None:
    """Change a stored channel: what is given changes, the rest stays (its secrets too, unless
    given anew)."""
    face = _face(ctx, as_user, channels, allow_private_webhooks, secrets_key_file)
    current = face.channel(name)
    plain: dict[str, Any] = dict(_settings(settings))
    hidden = _secrets(secrets)
    for key in unset or []:
        if key in current["secrets"]:
            hidden[key] = None
        else:
            plain[key] = None
    changed = face.edit_channel(
        name,
        version=version,
        locale=locale,
        timeout=timeout,
        concurrency=concurrency,
        settings=plain,
        secrets=hidden,
    )
    typer.echo(visible(f"Changed {_line(changed)}"))


@channels_app.command("disable")
def channels_disable(
    ctx: typer.Context,
    name: Name,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_user: AsUser = None,
) -> None:
    """Disable a stored channel: it sends nothing (what waits for it is dead-lettered) and its
    callbacks are refused, until it is enabled."""
    face = _face(ctx, as_user, channels, allow_private_webhooks, secrets_key_file)
    changed = face.disable_channel(name)
    typer.echo(visible(f"Disabled {_line(changed)}"))


@channels_app.command("enable")
def channels_enable(
    ctx: typer.Context,
    name: Name,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_user: AsUser = None,
) -> None:
    """Enable a disabled channel (its dead letters stay: signoff outbox retry ID sends one again)."""
    face = _face(ctx, as_user, channels, allow_private_webhooks, secrets_key_file)
    changed = face.enable_channel(name)
    typer.echo(visible(f"Enabled {_line(changed)}"))


@channels_app.command("test")
def channels_test(
    ctx: typer.Context,
    name: Name,
    to: Annotated[str | None, typer.Option("--to", help="A user: sent to their address there.")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Or the platform's address itself.")] = None,
    channels: ChannelsFile = None,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    as_user: AsUser = None,
) -> None:
    """Send a test message on a channel and report what came back."""
    if to is None and target is None:
        raise CliInputError("say whom to send it to: --to USER or --target ADDRESS")
    face = _face(ctx, as_user, channels, allow_private_webhooks, secrets_key_file)
    trial = face.send_channel_test(name, to=to, target=target)
    print_trial(trial)


def print_trial(trial: JSON) -> None:
    """What came of a test message; exit 1 if it failed."""
    verdict = "sent" if trial["ok"] else "FAILED"
    where = f"{trial['channel']} ({trial['kind']}) to {trial['target']}"
    typer.echo(visible(f"{verdict} on {where} in {trial['seconds']:.2f}s"))
    typer.echo(visible(f"the platform said: {trial['ref'] if trial['ok'] else trial['error']}"))
    if not trial["ok"]:
        raise typer.Exit(1)


@channels_app.command("deliveries")
def channels_deliveries(
    ctx: typer.Context, name: Name, channels: ChannelsFile = None, as_json: JsonFlag = False
) -> None:
    """A channel's latest messages (newest first) and its dead letters."""
    print_lane(_face(ctx, None, channels).channel_deliveries(name), as_json)


def print_lane(found: JSON, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found["recent"]:
        typer.echo("Nothing was sent here yet.")
    for row in found["recent"]:
        typer.echo(visible(_row(row)))
    if found["dead"]:
        typer.echo("Dead letters (signoff outbox retry ID sends one again):")
        for row in found["dead"]:
            typer.echo(visible("  " + _row(row)))


def _row(row: JSON) -> str:
    about = row["request_id"] or f"code for {row['recipient']}"
    where = row["target"] or row["recipient"] or "-"
    said = f"  ({row['last_error']})" if row["last_error"] else ""
    return f"#{row['id']}  {row['created_at']}  {about}  {row['event']}  → {where}  {row['state']}{said}"


@channels_app.command("new-key")
def channels_new_key() -> None:
    """Print a new secrets key (keep it in a file only the server reads: --secrets-key-file)."""
    typer.echo(SecretsKey.generate().text)


def _settings(given: list[str] | None) -> dict[str, str]:
    settings = {}
    for entry in given or []:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise CliInputError(f"--set takes KEY=VALUE, not {entry!r}")
        settings[key.strip()] = value
    return settings


def _secrets(given: list[str] | None) -> dict[str, str | None]:
    """Each `--secret`: KEY asked for (hidden), KEY=@FILE, KEY=env:VARIABLE; never the value."""
    secrets: dict[str, str | None] = {}
    for entry in given or []:
        key, sep, source = entry.partition("=")
        key = key.strip()
        if not key:
            raise CliInputError(f"--secret takes KEY, KEY=@FILE or KEY=env:VARIABLE, not {entry!r}")
        if not sep:
            secrets[key] = typer.prompt(f"{key}", hide_input=True)
        elif source.startswith("@"):
            try:
                secrets[key] = Path(source[1:]).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise CliError(f"--secret {key}: cannot read {source[1:]}: {exc.strerror or exc}") from None
        elif source.startswith("env:"):
            if source[4:] not in os.environ:
                raise CliError(f"--secret {key}: the environment variable {source[4:]} is not set")
            secrets[key] = os.environ[source[4:]]
        else:
            raise CliInputError(
                f"--secret {key}: a secret on the command line is seen by others (ps, shell history); "
                f"give --secret {key} (asked for), {key}=@FILE or {key}=env:VARIABLE"
            )
    return secrets
