"""`signoff demo`: a scripted agent calls tools through the gate; a person (or `--auto`) decides.

After each call the demo prints what the model is told. Running again with the same `--thread`
replays the run: decided calls are not asked again, and tools that ran are not run again.
"""

from __future__ import annotations

import itertools
import json
import secrets
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from ..backend import Backend
from ..calls import Scope
from ..console import ConfirmationUI, RichConsoleUI, SimpleConsoleUI
from ..gate import Gate
from ..outcome import Reply
from ..rules import RuleSet
from ..store import Store
from ..templates import redact_args
from .auto import ScriptedDecider
from .script import STEPS, Step
from .tools import make_tools

UiKind = Literal["rich", "simple", "none"]
"""`none`: no prompt here; people decide elsewhere (the web inbox under `signoff serve --demo`)."""
AGENT = "demo-agent"
APP = "demo"
INTRO = """[bold]signoff demo[/bold]: a scripted agent (no model) does a small job,
calling its tools through the gate.
  • [cyan]search[/cyan] runs freely
  • [cyan]delete_records[/cyan] asks only in prod (approve or reject; its db_url is masked)
  • [cyan]send_email[/cyan] asks (approve, edit, reject or respond)

Four calls stop for a decision. Try a different answer each time:"""
TERMINAL_ANSWERS = """  [bold]y[/bold]  approve: the tool runs
  [bold]m[/bold]  modify: change the arguments, then it runs
  [bold]n[/bold]  reject: it does not run, and the model is told why
  [bold]r[/bold]  respond: answer in the tool's place"""
INBOX_ANSWERS = """  [bold]Approve[/bold]  the tool runs
  [bold]Edit[/bold]     change the arguments, then it runs
  [bold]Reject[/bold]   it does not run, and the model is told why
  [bold]Respond[/bold]  answer in the tool's place"""


def rules_yaml() -> str:
    return resources.files("signoff.demo").joinpath("rules.yaml").read_text(encoding="utf-8")


def new_thread_id() -> str:
    return f"demo-{secrets.token_hex(3)}"


def run_demo(
    store: Store,
    *,
    backend: Backend | None = None,
    ui: UiKind = "rich",
    thread_id: str | None = None,
    auto: bool = False,
    db_hint: str | None = None,
    console: Console | None = None,
    inbox_url: str | None = None,
    replay: str | None = None,
) -> int:
    """Run the demo; returns the exit code (0, or 1/130 when stopped before the end).

    The gate runs over `store` with the demo's rules, or over `backend` (a `Client` of a server)
    with the server's rules; `store` is read for the closing summary either way. `replay`: the
    command that runs this thread again, which the summary ends with (default: `signoff demo
    --thread …`, true of a local run only: a server's demo agent is another agent, with its
    own threads)."""
    demo = Demo(
        store,
        backend=backend,
        ui=ui,
        thread_id=thread_id,
        auto=auto,
        db_hint=db_hint,
        console=console,
        inbox_url=inbox_url,
        replay=replay,
    )
    return demo.run()


class Demo:
    def __init__(
        self,
        store: Store,
        *,
        backend: Backend | None = None,
        ui: UiKind,
        thread_id: str | None,
        auto: bool,
        db_hint: str | None,
        console: Console | None,
        inbox_url: str | None = None,
        replay: str | None = None,
    ) -> None:
        self.store = store
        self.inbox_url = inbox_url
        self.replay = replay
        self.console = console or Console(highlight=False)
        self.thread_id = thread_id or new_thread_id()
        self.auto = auto
        self.db_hint = db_hint
        self.decider = ScriptedDecider(self.console) if auto else None
        self.gate = Gate(
            backend if backend is not None else store,
            rules=None if backend is not None else RuleSet.from_yaml(rules_yaml()),
            ui=self.decider or self._console_ui(ui),
            actor="demo" if auto else None,
        )
        tools = make_tools(self._tool_ran)
        self.tools = {name: self.gate.guard(fn) for name, fn in tools.items()}
        self.started = datetime.now(UTC)
        self.request_ids: list[str] = []

    def _console_ui(self, ui: UiKind) -> ConfirmationUI | None:
        if ui == "none":
            return None
        return RichConsoleUI(console=self.console) if ui == "rich" else SimpleConsoleUI()

    def run(self) -> int:
        self._intro()
        try:
            with self.gate.scope(Scope(thread_id=self.thread_id, agent=AGENT, app=APP)):
                for step in STEPS:
                    self._step(step)
        except (EOFError, KeyboardInterrupt) as exc:
            cancelled = self.gate.cancel(self.thread_id, reason="The demo was stopped.")
            why = "no more input" if isinstance(exc, EOFError) else "interrupted"
            self.console.print(f"\n[red]Stopped ({why}).[/red] Cancelled {cancelled} open request(s).")
            return 1 if isinstance(exc, EOFError) else 130
        self._summary()
        return 0

    # -- the steps ----------------------------------------------------------------------------

    def _step(self, step: Step) -> None:
        out = self.console
        explanation = self.gate.explain(step.tool, agent=AGENT, app=APP, args=step.args)
        out.print(f"\n🤖 [italic]{escape(step.says)}[/italic]")
        out.print(f"   → {step.tool}({escape(self._shown(step.tool, step.args))})", soft_wrap=True)
        if not explanation.ask:
            reason = explanation.trace[-1].said if explanation.trace else "no rule asks"
            out.print(f"   ✓ no approval needed ({explanation.layer}: {escape(reason)})", soft_wrap=True)
        if self.decider is not None:
            self.decider.upcoming = step.auto
        reply: Reply = self.tools[step.tool](**step.args)
        self._told(reply)

    def _tool_ran(self, name: str, args: dict[str, Any]) -> None:
        shown = escape(self._shown(name, args))
        self.console.print(f"   ⚙ {name} runs with {shown}", style="blue", soft_wrap=True)

    def _shown(self, tool: str, args: dict[str, Any]) -> str:
        """The args as the demo prints them: `key=json`, with the rule's redacted args masked."""
        redact = self.gate.explain(tool, agent=AGENT, app=APP, args=args).rule.redact
        masked = redact_args(args, redact)
        return ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in masked.items())

    def _told(self, reply: Reply) -> None:
        out = self.console
        outcome = reply.outcome
        if outcome.request_id is not None:
            self.request_ids.append(outcome.request_id)
            request = self.store.get_request(outcome.request_id)
            if request.decided_at is not None and request.decided_at < self.started:
                actor = request.decision.actor if request.decision else "nobody"
                out.print(
                    f"   ↺ decided in an earlier run ({request.status} by {escape(actor)}): not asked again",
                    soft_wrap=True,
                )
        if reply.replayed:
            out.print(
                "   ↺ the tool ran in an earlier run: its stored result is used; it does not run again",
                soft_wrap=True,
            )
        if outcome.decision == "respond":
            label = "a person's answer, as the tool's result"
        elif reply.is_error:
            label = "an error"
        elif outcome.decision == "edit":
            label = "a note about the change, then the tool's result"
        else:
            label = "the tool's result"
        out.print(f"   📨 the model is told ({label}):")
        style = "red" if reply.is_error else "green"
        for line in reply.content.splitlines() or [""]:
            out.print(f"      {line}", style=style, markup=False, soft_wrap=True)

    # -- around the steps ---------------------------------------------------------------------

    def _intro(self) -> None:
        answers = INBOX_ANSWERS if self.inbox_url is not None else TERMINAL_ANSWERS
        lines = [INTRO, answers, ""]
        if self.inbox_url is not None:
            lines.append(f"Decide in the web inbox, on each card: [bold]{escape(self.inbox_url)}[/bold]")
        elif self.auto:
            lines.append(
                "[bold]--auto[/bold]: the demo decides the four cards itself "
                "(approve, edit, reject, respond)."
            )
        else:
            lines.append(
                f"Or decide from another terminal: [bold]{escape(self._cli())} pending[/bold], "
                "then approve ID."
            )
        lines.append(f"[dim]thread {escape(self.thread_id)} · database {escape(self._where())}[/dim]")
        self.console.print(Panel("\n".join(lines), title="👋 welcome", title_align="left"))

    def _summary(self) -> None:
        out = self.console
        entries = sorted(
            itertools.chain.from_iterable(
                self.store.audit_entries(request_id=request_id)
                for request_id in dict.fromkeys(self.request_ids)
            ),
            key=lambda entry: entry.seq,
        )
        tools = {request_id: self.store.get_request(request_id).tool_name for request_id in self.request_ids}
        table = Table(title=f"Audit trail of this run ({len(entries)} entries)", title_justify="left")
        for column in ("seq", "action", "tool", "actor", "channel"):
            table.add_column(column)
        for entry in entries:
            tool = tools.get(entry.request_id or "", "")
            table.add_row(str(entry.seq), entry.action, tool, escape(entry.actor), escape(entry.channel))
        out.print()
        out.print(table)
        report = self.store.verify_audit()
        if report.ok:
            out.print(f"Audit chain verified: ok, {report.entries} entries.", style="green")
        else:
            out.print(f"Audit chain BROKEN: {len(report.problems)} problem(s).", style="red")
            for problem in report.problems:
                out.print(f"  entry {problem.seq}: {problem.problem}", style="red")
        replayed = "decided calls are not asked again, and tools that ran are not run again."
        if self.replay is not None:
            out.print(
                f"\nTo see replay, stop this server and start it as [bold]{escape(self.replay)}[/bold] "
                f"(with its other options): {replayed}",
                soft_wrap=True,
            )
            return
        again = f"{self._cli()} demo --thread {self.thread_id}{' --auto' if self.auto else ''}"
        out.print(f"\nRun [bold]{escape(again)}[/bold] to see replay: {replayed}")

    def _cli(self) -> str:
        if not self.db_hint:
            return "signoff"
        return f"signoff --db {self.store.url if self.store.url.startswith('sqlite') else 'URL'}"

    def _where(self) -> str:
        url = self.store.url
        return url if url.startswith("sqlite") else url.split("://", 1)[0] + "://…"
