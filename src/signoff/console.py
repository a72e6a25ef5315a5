"""Deciding in the terminal: `SimpleConsoleUI` (stdlib) and `RichConsoleUI` (a Rich panel).

The seed's behaviour (Haystack's console UIs): `y`/`yes` confirm, `n`/`no` reject with an
optional reason, `m`/`modify` edit argument by argument — strings typed raw, other types as JSON,
re-asked on bad JSON, Enter keeps the current value. As in Haystack, Enter alone at the choice
confirms in `RichConsoleUI` (its prompt's default, shown as `[y]`) and is asked again in
`SimpleConsoleUI` (Haystack's has no default); the end of input is never a choice. signoff
adds `r`/`respond` (answer in the tool's place) when the rule allows it, and offers only the
allowed decisions. One lock for the whole process keeps prompts from different threads from
interleaving. While a prompt waits, a decision made elsewhere (another terminal, the inbox)
ends it.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import weakref
from collections.abc import Callable
from typing import IO, Any, Protocol, Self

from ._util import as_text
from .decisions import Approve, Decision, Edit, Reject, Respond
from .requests import Request
from .rules.model import DEFAULT_DESCRIPTION_PREFIX
from .saved import init_parameters, saved
from .templates import REDACTED, card_head
from .visible import hidden_in, visible

_ui_lock = threading.Lock()

InputFn = Callable[[str], str]

CHOICES = {
    "approve": (("y", "yes"), "y=confirm"),
    "reject": (("n", "no"), "n=reject"),
    "edit": (("m", "modify"), "m=modify"),
    "respond": (("r", "respond"), "r=respond"),
}


class PromptInterrupted(Exception):
    """The prompt was ended because the request no longer needs an answer from here."""


class ConfirmationUI(Protocol):
    """Presents one request in this process and returns a person's decision."""

    channel: str

    def get_decision(
        self, request: Request, *, stop: threading.Event, error: str | None = None
    ) -> Decision | None:
        """Block until the person decides (a Decision) or `stop` is set (None)."""
        ...

    def show_message(self, text: str) -> None: ...

    def show_decided(self, request: Request) -> None: ...


class _StdinLines:
    """Reads lines from a file descriptor with `select`, so a prompt can be abandoned."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def readline(self, stop: threading.Event) -> str:
        while b"\n" not in self.buffer and not self.eof:
            if stop.is_set():
                raise PromptInterrupted
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                chunk = os.read(self.fd, 4096)
                if chunk:
                    self.buffer += chunk
                else:
                    self.eof = True
        if b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
        elif self.buffer:
            line, self.buffer = self.buffer, b""
        else:
            raise EOFError("no more input")
        return line.decode("utf-8", errors="replace")


# One reader per stream (its buffer outlives a prompt), forgotten with the stream: keyed by
# file descriptor, a closed stream's reader (at EOF) would be handed to the next stream that
# reuses the number.
_stdin_readers: weakref.WeakKeyDictionary[IO[str], _StdinLines] = weakref.WeakKeyDictionary()


def _default_reader(stream: IO[str]) -> Callable[[threading.Event], str] | None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    reader = _stdin_readers.get(stream)
    if reader is None or reader.fd != fd:
        reader = _stdin_readers[stream] = _StdinLines(fd)
    return reader.readline


def _read_line(stream: IO[str]) -> str:
    """A line from a stream without a file descriptor (a StringIO, say)."""
    line = stream.readline()
    if not line:
        raise EOFError("no more input")
    return line.rstrip("\r\n")


def shown_lines(request: Request) -> tuple[str, str, str | None, list[tuple[str, str]], str | None]:
    """What a prompt shows, as a person must read it: the title (the tool, or "Question"), the
    description, a note, (name, value) per argument, and a warning naming the hidden characters,
    which are written as escapes (a line break in an argument too: it would fake a line of the
    prompt). The description is the tool's own, as Haystack's console shows it; the card's text
    (without the tool and args it repeats) is the description when the tool has none, else the
    note when its rule wrote one."""
    question = request.kind == "input"
    title = "Question" if question else visible(request.tool_name)
    args = [
        (visible(key), visible(as_text(value)))
        for key, value in request.shown_args().items()
        if not (question and key == "question" and value == request.description)
    ]
    description, note = request.description, None
    if not question:
        head = card_head(request.description, tool_name=request.tool_name, shown_args=request.shown_args())
        written = head if head != DEFAULT_DESCRIPTION_PREFIX else None
        description, note = (request.tool_description, written) if request.tool_description else (head, None)
    texts = [description] + ([note] if note else [])
    hidden = dict.fromkeys(
        [name for text in texts for name in hidden_in(text, newlines=True)] + hidden_in(request.shown_args())
    )
    warning = f"⚠ Hidden characters, shown as escapes: {', '.join(hidden)}" if hidden else None
    shown_note = visible(note, newlines=True) if note else None
    return title, visible(description, newlines=True), shown_note, args, warning


class _ConsoleUI:
    channel = "console"
    default: str | None = None
    """The decision Enter alone makes at the choice, when the rule allows it (None: asked again)."""

    def __init__(self, *, input: InputFn | None = None, stdin: IO[str] | None = None) -> None:
        self._input = input
        self._stdin = stdin

    # rendering, overridden by each UI
    def _show_request(self, request: Request) -> None:
        raise NotImplementedError

    def _say(self, text: str, *, style: str | None = None) -> None:
        raise NotImplementedError

    def _ask(self, prompt: str, stop: threading.Event) -> str:
        if stop.is_set():
            raise PromptInterrupted
        self._write_prompt(prompt)
        if self._input is not None:
            return self._input("")
        stream = self._stdin or sys.stdin
        reader = _default_reader(stream)
        if reader is None:
            return _read_line(stream)
        return reader(stop)

    def _write_prompt(self, prompt: str) -> None:
        raise NotImplementedError

    # the flow, shared
    def get_decision(
        self, request: Request, *, stop: threading.Event, error: str | None = None
    ) -> Decision | None:
        with _ui_lock:
            try:
                if error:
                    self._say(f"❌ {error}", style="red")
                else:
                    self._show_request(request)
                if request.kind == "input":
                    return self._answer(request, stop)
                return self._choose(request, stop)
            except PromptInterrupted:
                self._say("")
                return None

    def _choose(self, request: Request, stop: threading.Event) -> Decision:
        allowed = [kind for kind in CHOICES if kind in request.rule.allowed_decisions]
        if request.rule.quorum > 1:  # several approvers must agree: approve or reject only
            allowed = [kind for kind in allowed if kind in ("approve", "reject")]
        by_key = {key: kind for kind in allowed for key in CHOICES[kind][0]}
        hint = " / ".join(CHOICES[kind][1] for kind in allowed)
        if self.default in allowed:
            by_key[""] = self.default
            hint += f") [{CHOICES[self.default][0][0]}]"
        else:
            hint += ")"
        while True:
            choice = self._ask(f"Confirm execution? ({hint}: ", stop).strip().lower()
            if choice in by_key:
                break
            keys = ", ".join(f"'{CHOICES[kind][0][0]}'" for kind in allowed)
            self._say(f"Invalid input. Please enter {keys}.")
        kind = by_key[choice]
        if kind == "approve":
            return Approve()
        if kind == "reject":
            feedback = self._ask("Feedback message (optional): ", stop).strip()
            return Reject(message=feedback or None)
        if kind == "respond":
            while True:
                message = self._ask("Response to the model: ", stop).strip()
                if message:
                    return Respond(message=message)
                self._say("A response cannot be empty.")
        new_args = self._modify(request, stop)
        if new_args == request.args:  # nothing changed: an approval, as in Haystack
            return Approve()
        return Edit(args=new_args)

    def _modify(self, request: Request, stop: threading.Event) -> dict[str, Any]:
        if not request.args:
            self._say("No parameters to modify, skipping modification.")
            return {}
        shown = request.shown_args()
        new_args: dict[str, Any] = {}
        for key, value in request.args.items():
            current = shown[key] if shown[key] == REDACTED else value
            current_text = visible(as_text(current))
            while True:
                typed = self._ask(f"Modify '{visible(key)}' (current: {current_text}): ", stop).strip()
                if not typed:
                    new_args[key] = value
                    break
                if isinstance(value, str):
                    new_args[key] = typed
                    break
                try:
                    new_args[key] = json.loads(typed)
                    break
                except json.JSONDecodeError:
                    self._say("❌ Invalid JSON, please try again.", style="red")
        return new_args

    def _answer(self, request: Request, stop: threading.Event) -> Decision:
        schema = request.answer_schema or {}
        structured = schema.get("type") not in (None, "string")
        while True:
            typed = self._ask("Your answer (JSON): " if structured else "Your answer: ", stop).strip()
            if not typed:
                self._say("An answer cannot be empty.")
                continue
            if not structured:
                return Respond(value=typed)
            try:
                return Respond(value=json.loads(typed))
            except json.JSONDecodeError:
                self._say("❌ Invalid JSON, please try again.", style="red")

    def show_message(self, text: str) -> None:
        with _ui_lock:
            self._say(text, style="yellow")

    def show_decided(self, request: Request) -> None:
        record = request.decision
        who = f" by {record.actor} ({record.channel})" if record else ""
        with _ui_lock:
            self._say(f"Request {request.id}: {request.status}{who}.", style="green")


class SimpleConsoleUI(_ConsoleUI):
    """Standard input and output only. `input=` replaces the keyboard (scripted tests)."""

    def __init__(
        self, *, input: InputFn | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None
    ) -> None:
        super().__init__(input=input, stdin=stdin)
        self._stdout = stdout

    def to_dict(self) -> dict[str, Any]:
        """Saved as Haystack saves its console UI: the streams and `input` are not kept."""
        return saved(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**init_parameters(cls, data))

    def _print(self, text: str = "", end: str = "\n") -> None:
        stream = self._stdout or sys.stdout
        stream.write(text + end)
        stream.flush()

    def _show_request(self, request: Request) -> None:
        title, description, note, args, warning = shown_lines(request)
        question = request.kind == "input"
        self._print(f"\nRequest: {request.id} (or decide elsewhere: signoff approve {request.id})")
        self._print("--- Question ---" if question else "--- Tool Execution Request ---")
        if question:
            self._print(f"Question: {description}")
        else:
            self._print(f"Tool: {title}")
            self._print(f"Description: {description}")
            if note:
                self._print(f"Note: {note}")
        if args or not question:
            self._print("Arguments:")
            for key, value in args:
                self._print(f"  {key}: {value}")
            if not args:
                self._print("  (No arguments)")
        if warning:
            self._print(warning)
        self._print("-" * 30)

    def _say(self, text: str, *, style: str | None = None) -> None:
        self._print(text)

    def _write_prompt(self, prompt: str) -> None:
        self._print(prompt, end="")


class RichConsoleUI(_ConsoleUI):
    """A Rich panel per request. `console=` to render elsewhere (a recording Console in tests).
    Enter alone confirms, as Haystack's `Prompt.ask(..., default="y")` does."""

    default = "approve"

    def __init__(
        self, *, console: Any = None, input: InputFn | None = None, stdin: IO[str] | None = None
    ) -> None:
        from rich.console import Console

        super().__init__(input=input, stdin=stdin)
        self.console = console or Console()

    def to_dict(self) -> dict[str, Any]:
        """Saved as Haystack saves its RichConsoleUI: a Console cannot be, so `console` is None."""
        return saved(self, console=None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**init_parameters(cls, data))

    def _show_request(self, request: Request) -> None:
        from rich.markup import escape
        from rich.panel import Panel

        title, description, note, args, warning = shown_lines(request)
        question = request.kind == "input"
        lines = [f"[bold yellow]Request:[/bold yellow] {request.id}"]
        if question:
            lines.append(f"[bold yellow]Question:[/bold yellow] {escape(description)}")
        else:
            lines.append(f"[bold yellow]Tool:[/bold yellow] {escape(title)}")
            lines.append(f"[bold yellow]Description:[/bold yellow] {escape(description)}")
            if note:
                lines.append(f"[bold yellow]Note:[/bold yellow] {escape(note)}")
        if args or not question:
            lines.append("\n[bold yellow]Arguments:[/bold yellow]")
            lines.extend(f"[cyan]{escape(key)}:[/cyan] {escape(value)}" for key, value in args)
            if not args:
                lines.append("  (No arguments)")
        if warning:
            lines.append(f"[bold red]{escape(warning)}[/bold red]")
        lines.append(f"\n[dim]Or decide from another terminal: signoff approve {request.id}[/dim]")
        heading = "❓ Question" if question else "🔧 Tool Execution Request"
        self.console.print(Panel("\n".join(lines), title=heading, title_align="left"))

    def _say(self, text: str, *, style: str | None = None) -> None:
        self.console.print(text, style=style, markup=False, highlight=False)

    def _write_prompt(self, prompt: str) -> None:
        self.console.print(prompt, end="", markup=False, highlight=False)
