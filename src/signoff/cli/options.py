"""Options several commands share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..channels.sealing import KEY_ENV, KEY_FILE_ENV, SecretsKey, key_from_env

AsUser = Annotated[
    str | None, typer.Option("--as", help="Act as this user (default: the OS user).", show_default=False)
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
RequestId = Annotated[str, typer.Argument(metavar="ID", help="The request's id.")]
ALLOW_PRIVATE_ENV = "SIGNOFF_ALLOW_PRIVATE_WEBHOOKS"
AllowPrivate = Annotated[
    bool,
    typer.Option(
        "--allow-private-webhooks",
        envvar=ALLOW_PRIVATE_ENV,
        help="Let webhooks and the text channel's send_url reach loopback, private, link-local and "
        "other non-public addresses (tests, everything on one host). Default: public addresses only.",
    ),
]
SecretsKeyFile = Annotated[
    Path | None,
    typer.Option(
        "--secrets-key-file",
        envvar=KEY_FILE_ENV,
        help="The key that seals the secrets of channels kept in the database (make one: signoff "
        f"channels new-key > FILE), or the key itself in ${KEY_ENV}. Every server of one database "
        "needs the same.",
        show_default=False,
    ),
]


def secrets_key(path: Path | None) -> SecretsKey | None:
    """The key in the file `--secrets-key-file` names, else `$SIGNOFF_SECRETS_KEY`'s, else None."""
    return SecretsKey.from_file(path) if path is not None else key_from_env()
