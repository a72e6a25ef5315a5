"""`signoff demo`: watch the gate at work with a scripted agent."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from ..demo import rules_yaml, run_demo
from .state import state_of


class UiKind(StrEnum):
    rich = "rich"
    simple = "simple"


def demo(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option("--db", help="The database (as for `signoff --db`).")] = None,
    ui: Annotated[UiKind, typer.Option(help="The console prompt: rich or simple.")] = UiKind.rich,
    thread: Annotated[
        str | None, typer.Option(help="The run's thread id; reuse one to see replay (default: a new one).")
    ] = None,
    auto: Annotated[bool, typer.Option("--auto", help="Decide the four cards without a person.")] = False,
    show_rules: Annotated[
        bool, typer.Option("--show-rules", help="Print the demo's rules and exit.")
    ] = False,
) -> None:
    """A scripted agent calls search, send_email and delete_records; you approve, edit, reject or respond."""
    if show_rules:
        typer.echo(rules_yaml(), nl=False)
        return
    state = state_of(ctx)
    if db is not None:
        state.db_url = db
    code = run_demo(state.local_store("demo"), ui=ui.value, thread_id=thread, auto=auto, db_hint=state.db_url)
    if code:
        raise typer.Exit(code)
