"""`signoff plugins`: the channels and adapters installed (signoff's own and other packages'),
where each comes from, and which cannot be loaded and why."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Annotated

import typer

from ..plugins import discover
from ..visible import visible, visible_json
from .options import JsonFlag


def plugins(
    as_json: JsonFlag = False,
    check: Annotated[
        bool,
        typer.Option("--check/--no-check", help="Import each plugin to tell the broken (the default)."),
    ] = True,
) -> None:
    """Every plugin of the entry-point groups signoff.channels and signoff.integrations: group,
    name, module, distribution and version; one that cannot be loaded is marked BROKEN with why
    (it is skipped: nothing else stops for it)."""
    logging.getLogger("signoff.plugins").setLevel(logging.ERROR)  # the listing says it already
    found = discover(check=check)
    if as_json:
        typer.echo(visible_json([{**asdict(plugin), "module": plugin.module} for plugin in found], indent=2))
        return
    if not found:
        typer.echo("No plugins are installed (not even signoff's own: is signoff installed?).")
    for plugin in found:
        state = f"BROKEN: {plugin.error}" if plugin.error else ("ok" if check else "not checked")
        line = (
            f"{plugin.group}  {plugin.name}  {plugin.module}  {plugin.distribution} {plugin.version}  {state}"
        )
        typer.echo(visible(line))
    broken = sum(plugin.broken for plugin in found)
    if broken:
        typer.echo(f"{broken} of {len(found)} plugins cannot be loaded and are skipped.", err=True)
