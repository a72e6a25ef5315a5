"""Options several commands share."""

from __future__ import annotations

from typing import Annotated

import typer

AsUser = Annotated[
    str | None, typer.Option("--as", help="Act as this user (default: the OS user).", show_default=False)
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
RequestId = Annotated[str, typer.Argument(metavar="ID", help="The request's id.")]
