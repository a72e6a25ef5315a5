"""Options several commands share."""

from __future__ import annotations

from typing import Annotated

import typer

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
