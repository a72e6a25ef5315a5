"""`signoff demo --auto`: a stand-in for the person, deciding each card as the script says."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from ..decisions import Decision
from ..requests import Request


class ScriptedDecider:
    """A `ConfirmationUI` that shows the card and answers with `upcoming`, set before each call."""

    channel = "demo"

    def __init__(self, console: Console) -> None:
        self.console = console
        self.upcoming: Decision | None = None

    def get_decision(
        self, request: Request, *, stop: threading.Event, error: str | None = None
    ) -> Decision | None:
        if error:
            self.console.print(f"❌ {escape(error)}", style="red")
            return None
        decision, self.upcoming = self.upcoming, None
        if decision is None:
            raise RuntimeError(f"the demo script has no decision for {request.tool_name}")
        self._show_card(request)
        details = {
            key: value for key, value in asdict(decision).items() if key != "type" and value is not None
        }
        shown = f" {json.dumps(details, ensure_ascii=False)}" if details else ""
        self.console.print(f"   🧑 demo decides: [bold]{decision.type}[/bold]{escape(shown)}", soft_wrap=True)
        return decision

    def _show_card(self, request: Request) -> None:
        lines = [
            f"[bold]{escape(request.description)}[/bold]",
            *(
                f"[cyan]{escape(key)}[/cyan]: {escape(json.dumps(value, ensure_ascii=False))}"
                for key, value in request.shown_args().items()
            ),
            f"[dim]allowed: {', '.join(request.rule.allowed_decisions)}  ·  {request.id}[/dim]",
        ]
        self.console.print(Panel("\n".join(lines), title="🔔 approval needed", title_align="left"))

    def show_message(self, text: str) -> None:
        self.console.print(escape(text), style="yellow")

    def show_decided(self, request: Request) -> None:
        record = request.decision
        who = f" by {record.actor} ({record.channel})" if record else ""
        self.console.print(f"   Request {request.id}: {request.status}{escape(who)}.", style="green")
