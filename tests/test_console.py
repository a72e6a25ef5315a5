"""The console UIs (Haystack's SimpleConsoleUI / RichConsoleUI behaviour, DESIGN §9), scripted."""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from rich.console import Console

from signoff import (
    Approve,
    Decision,
    Edit,
    Gate,
    Pending,
    Reject,
    Request,
    RequestStatus,
    Respond,
    RichConsoleUI,
    RuleSet,
    Scope,
    SimpleConsoleUI,
    Store,
    ToolCall,
)
from signoff._util import utcnow
from signoff.console import ConfirmationUI
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule


class Script:
    """A scripted keyboard: each call returns the next answer; asking for more is a test failure."""

    def __init__(self, answers: list[str], *, before: Callable[[int], None] | None = None) -> None:
        self.answers = list(answers)
        self.asked = 0
        self.before = before

    def __call__(self, prompt: str) -> str:
        if self.before is not None:
            self.before(self.asked)
        self.asked += 1
        if not self.answers:
            raise AssertionError(f"the UI asked for input #{self.asked}, but the script has no more answers")
        return self.answers.pop(0)

    def done(self) -> bool:
        return not self.answers


class Harness:
    """One UI kind with its captured output."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.buffer = io.StringIO()
        self.console = Console(file=self.buffer, width=140, color_system=None, force_terminal=False)

    def ui(self, input: Callable[[str], str] | None = None, **kw: Any) -> SimpleConsoleUI | RichConsoleUI:
        if self.kind == "simple":
            return SimpleConsoleUI(input=input, stdout=self.buffer, **kw)
        return RichConsoleUI(input=input, console=self.console, **kw)

    @property
    def output(self) -> str:
        return self.buffer.getvalue()

    @property
    def enter(self) -> str:
        """How the choice prompt shows what Enter alone does: Rich confirms (Haystack's
        `Prompt.ask` default), the simple UI has no default (as Haystack's)."""
        return " [y]" if self.kind == "rich" else ""


@pytest.fixture(params=["simple", "rich"])
def harness(request: pytest.FixtureRequest) -> Harness:
    return Harness(request.param)


_counter = iter(range(1_000_000))


def make_request(
    store: Store,
    args: dict[str, Any] | None = None,
    *,
    tool: str = "send_email",
    schema: dict[str, Any] | None = None,
    **entry: Any,
) -> Request:
    """A pending request created the way an agent creates one: through the gate."""
    rules = RuleSet.from_dict({"tools": {tool: {"requires_approval": True, **entry}}})
    call = ToolCall(
        name=tool, args=args if args is not None else {}, id=f"call-{next(_counter)}", schema=schema
    )
    pending = Gate(store, rules=rules).submit(call, Scope(thread_id="console-tests"))
    assert isinstance(pending, Pending)
    return pending.request


def decide(ui: ConfirmationUI, request: Request, error: str | None = None) -> Decision | None:
    return ui.get_decision(request, stop=threading.Event(), error=error)


EMAIL = {"body": "Hello", "count": 3, "flags": {"urgent": True}, "to": "alice@example.com"}


# -- showing the request ------------------------------------------------------------------------


def test_the_request_is_shown(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL, description="Mail {to}")
    assert decide(harness.ui(Script(["y"])), request) == Approve()
    out = harness.output
    assert "Tool Execution Request" in out
    assert "Tool: send_email" in out
    assert "Description: Mail alice@example.com" in out
    assert "to: alice@example.com" in out
    assert "count: 3" in out
    assert 'flags: {"urgent": true}' in out
    assert request.id in out
    assert f"Confirm execution? (y=confirm / n=reject / m=modify / r=respond){harness.enter}: " in out


def test_no_arguments(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, {})
    assert decide(harness.ui(Script(["y"])), request) == Approve()
    assert "(No arguments)" in harness.output


def test_markup_in_arguments_is_shown_literally(sqlite_store: Store) -> None:
    harness = Harness("rich")
    request = make_request(sqlite_store, {"query": "[bold]x[/bold] [red]"})
    assert decide(harness.ui(Script(["y"])), request) == Approve()
    assert "query: [bold]x[/bold] [red]" in harness.output


# -- approve / reject -----------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["y", "yes", "Y", " YES "])
def test_yes_approves(harness: Harness, sqlite_store: Store, answer: str) -> None:
    script = Script([answer])
    assert decide(harness.ui(script), make_request(sqlite_store, EMAIL)) == Approve()
    assert script.done()


@pytest.mark.parametrize("answer", ["n", "no", "N"])
def test_no_rejects_without_a_reason(harness: Harness, sqlite_store: Store, answer: str) -> None:
    script = Script([answer, ""])
    assert decide(harness.ui(script), make_request(sqlite_store, EMAIL)) == Reject(message=None)
    assert "Feedback message (optional): " in harness.output
    assert script.done()


def test_no_rejects_with_a_reason(harness: Harness, sqlite_store: Store) -> None:
    script = Script(["no", "  the recipient is external  "])
    decision = decide(harness.ui(script), make_request(sqlite_store, EMAIL))
    assert decision == Reject(message="the recipient is external")


def test_invalid_choice_is_asked_again(harness: Harness, sqlite_store: Store) -> None:
    script = Script(["maybe", "yess", "  n o ", "y"])
    assert decide(harness.ui(script), make_request(sqlite_store, EMAIL)) == Approve()
    assert harness.output.count("Invalid input. Please enter 'y', 'n', 'm', 'r'.") == 3
    assert harness.output.count("Confirm execution?") == 4


def test_enter_alone_at_the_choice(harness: Harness, sqlite_store: Store) -> None:
    """Haystack's RichConsoleUI asks with `Prompt.ask(..., default="y")`, so Enter confirms; its
    SimpleConsoleUI has no default, so Enter is asked again. signoff's UIs do the same."""
    script = Script(["", "n", ""]) if harness.kind == "simple" else Script([""])
    decision = decide(harness.ui(script), make_request(sqlite_store, EMAIL))
    assert script.done()
    if harness.kind == "rich":
        assert decision == Approve()
        assert "Confirm execution? (y=confirm / n=reject / m=modify / r=respond) [y]: " in harness.output
        assert "Invalid input" not in harness.output
    else:
        assert decision == Reject(message=None)
        assert harness.output.count("Invalid input. Please enter 'y', 'n', 'm', 'r'.") == 1


def test_enter_confirms_only_where_the_rule_allows_approve(sqlite_store: Store) -> None:
    """A framework drop-in keeps its author's decisions as given: without approve, Enter
    alone is no choice in the Rich UI either."""
    harness = Harness("rich")
    request, _ = sqlite_store.create_request(
        NewRequest(
            thread_id="console-tests",
            tool_call_id=f"call-{next(_counter)}",
            tool_name="send_email",
            args=EMAIL,
            description="Mail",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(allowed_decisions=("reject", "respond")),
        )
    )
    script = Script(["", "r", "Done already."])
    assert decide(harness.ui(script), request) == Respond(message="Done already.")
    assert "Confirm execution? (n=reject / r=respond): " in harness.output
    assert "[y]" not in harness.output
    assert harness.output.count("Invalid input. Please enter 'n', 'r'.") == 1


def test_the_end_of_input_is_not_enter(sqlite_store: Store) -> None:
    """A closed stdin (EOF) is an error in the Rich UI too, never its default confirmation."""
    ui = Harness("rich").ui(stdin=io.StringIO(""))
    with pytest.raises(EOFError):
        ui.get_decision(make_request(sqlite_store, EMAIL), stop=threading.Event())


def test_only_allowed_decisions_are_offered(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL, allowed_decisions=["approve", "reject"])
    script = Script(["m", "modify", "r", "n", "no thanks"])
    assert decide(harness.ui(script), request) == Reject(message="no thanks")
    out = harness.output
    assert f"Confirm execution? (y=confirm / n=reject){harness.enter}: " in out
    assert "m=modify" not in out
    assert out.count("Invalid input. Please enter 'y', 'n'.") == 3
    assert "Modify '" not in out


def test_a_quorum_offers_only_approve_and_reject(harness: Harness, sqlite_store: Store) -> None:
    """With several approvers, edit and respond are refused by the store: not offered either."""
    request = make_request(sqlite_store, EMAIL, quorum=2)
    script = Script(["m", "r", "y"])
    assert decide(harness.ui(script), request) == Approve()
    assert f"Confirm execution? (y=confirm / n=reject){harness.enter}: " in harness.output
    assert harness.output.count("Invalid input. Please enter 'y', 'n'.") == 2


def test_respond_when_allowed(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL, allowed_decisions=["respond"])
    script = Script(["r", "  ", "Already sent yesterday."])
    assert decide(harness.ui(script), request) == Respond(message="Already sent yesterday.")
    out = harness.output
    assert f"Confirm execution? (y=confirm / r=respond){harness.enter}: " in out
    assert "A response cannot be empty." in out


def test_respond_long_form(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL)
    assert decide(harness.ui(Script(["respond", "42"])), request) == Respond(message="42")


# -- modify ---------------------------------------------------------------------------------------


def test_modify_edits_argument_by_argument(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL)
    # the arguments in the request's order: body, count, flags, to
    assert list(request.args) == ["body", "count", "flags", "to"]
    script = Script(["m", '"quoted" stays raw', "{not json", "[1, 2", "5", "", "bob@example.com"])
    decision = decide(harness.ui(script), request)
    assert decision == Edit(
        args={"body": '"quoted" stays raw', "count": 5, "flags": {"urgent": True}, "to": "bob@example.com"}
    )
    assert script.done()
    out = harness.output
    assert out.count("Invalid JSON, please try again.") == 2
    assert out.count("Modify 'count' (current: 3): ") == 3  # asked again after each bad JSON
    assert "Modify 'body' (current: Hello): " in out
    assert "Modify 'flags' (current: {\"urgent\": true}): " in out
    assert "Modify 'to' (current: alice@example.com): " in out


def test_modify_strings_are_typed_raw_other_types_as_json(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(
        sqlite_store, {"a_text": "x", "b_number": 1, "c_list": [], "d_flag": True, "e_null": None}
    )
    script = Script(["modify", "42", "2.5", '["a", {"b": null}]', "false", '"now a string"'])
    decision = decide(harness.ui(script), request)
    assert decision == Edit(
        args={
            "a_text": "42",
            "b_number": 2.5,
            "c_list": ["a", {"b": None}],
            "d_flag": False,
            "e_null": "now a string",
        }
    )


def test_modify_enter_keeps_every_value(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL)
    decision = decide(harness.ui(Script(["m", "", "", "", ""])), request)
    assert decision == Approve()  # a modify that changes nothing is an approval (Haystack's rule)


def test_modify_without_arguments(harness: Harness, sqlite_store: Store) -> None:
    decision = decide(harness.ui(Script(["m"])), make_request(sqlite_store, {}))
    assert decision == Approve()
    assert "No parameters to modify, skipping modification." in harness.output


def test_redacted_arguments_are_masked_but_enter_keeps_the_real_value(
    harness: Harness, sqlite_store: Store
) -> None:
    request = make_request(sqlite_store, {"password": "hunter2", "user": "bob"}, redact=["password"])
    decision = decide(harness.ui(Script(["m", "", "carol"])), request)
    assert decision == Edit(args={"password": "hunter2", "user": "carol"})
    out = harness.output
    assert "hunter2" not in out
    assert "password: ***" in out
    assert "Modify 'password' (current: ***): " in out


def test_redacted_argument_can_be_replaced(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, {"password": "hunter2"}, redact=["password"])
    assert decide(harness.ui(Script(["m", "s3cret"])), request) == Edit(args={"password": "s3cret"})


# -- input requests -------------------------------------------------------------------------------


def input_request(store: Store, schema: dict[str, Any] | None) -> Request:
    request, created = store.create_request(
        NewRequest(
            thread_id="console-tests",
            tool_call_id=f"ask-{next(_counter)}",
            tool_name="signoff.ask",
            args={"question": "How many?"},
            kind="input",
            description="How many rows may be deleted?",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(allowed_decisions=("respond", "reject")),
            answer_schema=schema,
        )
    )
    assert created
    return request


def test_input_request_answers_with_json(harness: Harness, sqlite_store: Store) -> None:
    schema = {"type": "object", "properties": {"rows": {"type": "integer"}}, "required": ["rows"]}
    script = Script(["", "{rows: 5}", '{"rows": 5}'])
    decision = decide(harness.ui(script), input_request(sqlite_store, schema))
    assert decision == Respond(value={"rows": 5})
    out = harness.output
    assert "How many rows may be deleted?" in out
    assert "An answer cannot be empty." in out
    assert out.count("Invalid JSON, please try again.") == 1
    assert out.count("Your answer (JSON): ") == 3
    assert "Confirm execution?" not in out


def test_input_request_integer_schema(harness: Harness, sqlite_store: Store) -> None:
    decision = decide(harness.ui(Script(["7"])), input_request(sqlite_store, {"type": "integer"}))
    assert decision == Respond(value=7)


@pytest.mark.parametrize("schema", [None, {"type": "string"}], ids=["no-schema", "string-schema"])
def test_input_request_text_answer_is_raw(
    harness: Harness, sqlite_store: Store, schema: dict[str, Any] | None
) -> None:
    decision = decide(harness.ui(Script(['{"not": "parsed"}'])), input_request(sqlite_store, schema))
    assert decision == Respond(value='{"not": "parsed"}')
    assert "Your answer: " in harness.output


# -- errors and stopping ----------------------------------------------------------------------------


def test_error_is_shown_before_asking_again(harness: Harness, sqlite_store: Store) -> None:
    request = make_request(sqlite_store, EMAIL)
    decision = decide(harness.ui(Script(["y"])), request, error="count: 0 is less than the minimum of 1")
    assert decision == Approve()
    assert "❌ count: 0 is less than the minimum of 1" in harness.output


def test_stop_already_set_returns_none_without_asking(harness: Harness, sqlite_store: Store) -> None:
    script = Script(["y"])
    stop = threading.Event()
    stop.set()
    assert harness.ui(script).get_decision(make_request(sqlite_store, EMAIL), stop=stop) is None
    assert script.asked == 0


def test_stop_between_prompts_returns_none(harness: Harness, sqlite_store: Store) -> None:
    stop = threading.Event()
    # decided elsewhere while the person types the second answer
    script = Script(["m", "x", "never"], before=lambda asked: stop.set() if asked == 1 else None)
    assert harness.ui(script).get_decision(make_request(sqlite_store, EMAIL), stop=stop) is None
    assert script.asked == 2  # the third prompt was never shown
    assert "Modify 'count'" not in harness.output


@pytest.fixture
def pipe() -> Iterator[tuple[io.TextIOWrapper, int]]:
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    yield reader, write_fd
    reader.close()
    with contextlib.suppress(OSError):
        os.close(write_fd)


def test_stop_while_waiting_for_the_keyboard(
    harness: Harness, sqlite_store: Store, pipe: tuple[io.TextIOWrapper, int]
) -> None:
    reader, _ = pipe
    ui = harness.ui(stdin=reader)
    stop = threading.Event()
    result: list[Decision | None] = []
    thread = threading.Thread(
        target=lambda: result.append(ui.get_decision(make_request(sqlite_store, EMAIL), stop=stop))
    )
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()  # waiting for a line that never comes
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert result == [None]


def test_reads_lines_from_a_stdin_pipe(
    harness: Harness, sqlite_store: Store, pipe: tuple[io.TextIOWrapper, int]
) -> None:
    reader, write_fd = pipe
    os.write(write_fd, b"n\nnot today\n")
    decision = harness.ui(stdin=reader).get_decision(
        make_request(sqlite_store, EMAIL), stop=threading.Event()
    )
    assert decision == Reject(message="not today")


def test_a_new_stream_on_a_reused_descriptor_is_read_afresh(harness: Harness, sqlite_store: Store) -> None:
    """A stream that ended must not poison the next stream that gets the same fd number."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"maybe\n")
    os.close(write_fd)
    with os.fdopen(read_fd, "r") as ended, pytest.raises(EOFError):
        harness.ui(stdin=ended).get_decision(make_request(sqlite_store, EMAIL), stop=threading.Event())
    again_read, again_write = os.pipe()
    with os.fdopen(again_read, "r") as fresh:
        os.write(again_write, b"y\n")
        decision = harness.ui(stdin=fresh).get_decision(
            make_request(sqlite_store, EMAIL), stop=threading.Event()
        )
        os.close(again_write)
    assert decision == Approve()


def test_reads_lines_from_a_stdin_without_a_file_descriptor(harness: Harness, sqlite_store: Store) -> None:
    ui = harness.ui(stdin=io.StringIO("m\n\n\n\nbob@example.com\n"))
    decision = ui.get_decision(make_request(sqlite_store, EMAIL), stop=threading.Event())
    assert decision == Edit(args={**EMAIL, "to": "bob@example.com"})


def test_end_of_input_is_an_error_not_a_decision(harness: Harness, sqlite_store: Store) -> None:
    ui = harness.ui(stdin=io.StringIO("maybe\n"))
    with pytest.raises(EOFError):
        ui.get_decision(make_request(sqlite_store, EMAIL), stop=threading.Event())


# -- the prompt lock --------------------------------------------------------------------------------


def test_two_threads_never_interleave(harness: Harness, sqlite_store: Store) -> None:
    first = make_request(sqlite_store, {"first_arg": 1})
    second = make_request(sqlite_store, {"second_arg": 2})
    first_waiting = threading.Event()
    release_first = threading.Event()

    def hold(asked: int) -> None:
        if asked == 1:  # while the first UI waits for its value
            first_waiting.set()
            assert release_first.wait(10)

    results: dict[str, Decision | None] = {}
    ui_first = harness.ui(Script(["m", "10"], before=hold))
    ui_second = harness.ui(Script(["m", "20"]))
    threads = [
        threading.Thread(target=lambda: results.update(first=decide(ui_first, first))),
        threading.Thread(target=lambda: results.update(second=decide(ui_second, second))),
    ]
    threads[0].start()
    assert first_waiting.wait(10)
    threads[1].start()
    time.sleep(0.3)
    assert second.id not in harness.output  # held at the lock while the first prompt waits
    release_first.set()
    for thread in threads:
        thread.join(timeout=10)
    assert results == {"first": Edit(args={"first_arg": 10}), "second": Edit(args={"second_arg": 20})}
    out = harness.output
    first_block = out[: out.index(second.id)]
    second_block = out[out.index(second.id) :]
    assert "Modify 'first_arg'" in first_block
    assert "first_arg" not in second_block
    assert "Modify 'second_arg'" in second_block


def test_many_threads_each_block_is_contiguous(harness: Harness, sqlite_store: Store) -> None:
    count = 6
    requests = [
        make_request(sqlite_store, {f"r{index}_a": "x", f"r{index}_b": "y", f"r{index}_c": "z"})
        for index in range(count)
    ]
    results: dict[int, Decision | None] = {}

    def run(index: int) -> None:
        script = Script(["m", "1", "2", "3"], before=lambda _: time.sleep(0.005))
        results[index] = decide(harness.ui(script), requests[index])

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert results == {
        index: Edit(args={f"r{index}_a": "1", f"r{index}_b": "2", f"r{index}_c": "3"})
        for index in range(count)
    }
    # every mention of an argument, in output order, comes in runs of one request at a time
    owners = [int(found) for found in re.findall(r"\br(\d+)_[abc]\b", harness.output)]
    runs = [owner for position, owner in enumerate(owners) if position == 0 or owners[position - 1] != owner]
    assert sorted(runs) == list(range(count)), f"output interleaved: {runs}"


# -- through the gate ----------------------------------------------------------------------------


class RecordingUI(SimpleConsoleUI):
    """A SimpleConsoleUI that remembers the `error` it was shown each time."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.errors: list[str | None] = []

    def get_decision(
        self, request: Request, *, stop: threading.Event, error: str | None = None
    ) -> Decision | None:
        self.errors.append(error)
        return super().get_decision(request, stop=stop, error=error)


GATE_RULES = RuleSet.from_yaml(
    """
    tools:
      send_email: {requires_approval: true}
      delete_rows: {requires_approval: true, allowed_decisions: [approve, reject]}
    """
)


@pytest.mark.parametrize(
    ("answers", "execute", "decision", "status"),
    [
        pytest.param(["y"], True, "approve", "approved", id="approve"),
        pytest.param(["n", "too many"], False, "reject", "rejected", id="reject"),
        pytest.param(["m", "", "", "", "bob@example.com"], True, "edit", "edited", id="edit"),
        pytest.param(["r", "Sent already."], False, "respond", "responded", id="respond"),
    ],
)
def test_gate_review_returns_the_scripted_choice(
    sqlite_store: Store, answers: list[str], execute: bool, decision: str, status: str
) -> None:
    out = io.StringIO()
    gate = Gate(
        sqlite_store, rules=GATE_RULES, ui=SimpleConsoleUI(input=Script(answers), stdout=out), actor="tester"
    )
    outcome = gate.review(ToolCall(name="send_email", args=EMAIL, id="c1"), Scope(thread_id="t"))
    assert (outcome.execute, outcome.decision, outcome.status, outcome.actor) == (
        execute,
        decision,
        status,
        "tester",
    )
    request = sqlite_store.find_request("t", "c1")
    assert request is not None
    assert request.decision is not None
    assert request.decision.channel == "console"
    assert request.status == status
    # decided here: no "decided by" notice (that is for decisions made elsewhere)
    assert f"Request {request.id}: {status}" not in out.getvalue()
    if decision == "reject":
        assert (
            outcome.tool_result
            == "Tool execution for 'send_email' was rejected by the user. With user feedback: too many"
        )
    if decision == "edit":
        assert outcome.final_tool_params == {**EMAIL, "to": "bob@example.com"}
    if decision == "respond":
        assert outcome.tool_result == "Sent already."


def test_gate_offers_only_the_rules_decisions(sqlite_store: Store) -> None:
    out = io.StringIO()
    gate = Gate(sqlite_store, rules=GATE_RULES, ui=SimpleConsoleUI(input=Script(["m", "r", "y"]), stdout=out))
    outcome = gate.review(
        ToolCall(name="delete_rows", args={"table": "users"}, id="c1"), Scope(thread_id="t")
    )
    assert outcome.decision == "approve"
    assert out.getvalue().count("Invalid input. Please enter 'y', 'n'.") == 2


def test_gate_refuses_an_edit_that_breaks_the_schema(store: Store) -> None:
    schema = {
        "type": "object",
        "properties": {"table": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["table", "limit"],
        "additionalProperties": False,
    }
    statuses: list[RequestStatus] = []

    def look(asked: int) -> None:
        if asked == 3:  # the first prompt after the refusal
            found = store.find_request("t", "c1")
            assert found is not None
            statuses.append(found.status)

    out = io.StringIO()
    ui = RecordingUI(input=Script(["m", "0", "", "m", "25", ""], before=look), stdout=out)
    gate = Gate(store, rules=GATE_RULES, ui=ui, actor="tester")
    call = ToolCall(name="send_email", args={"limit": 100, "table": "users"}, id="c1", schema=schema)
    outcome = gate.review(call, Scope(thread_id="t"))
    assert statuses == [RequestStatus.PENDING]  # still pending while asked again
    assert ui.errors[0] is None
    assert ui.errors[1] is not None
    assert "limit: 0 is less than the minimum of 1" in ui.errors[1]
    assert len(ui.errors) == 2
    assert f"❌ {ui.errors[1]}" in out.getvalue()
    assert (outcome.execute, outcome.decision) == (True, "edit")
    assert outcome.final_tool_params == {"limit": 25, "table": "users"}
    assert len(store.decisions(outcome.request_id or "")) == 1


def test_gate_refuses_an_answer_that_breaks_the_schema(sqlite_store: Store) -> None:
    out = io.StringIO()
    ui = RecordingUI(input=Script(['{"rows": "five"}', '{"rows": 5}']), stdout=out)
    gate = Gate(sqlite_store, ui=ui, rules=RuleSet())
    schema = {"type": "object", "properties": {"rows": {"type": "integer"}}, "required": ["rows"]}
    outcome = gate.ask("How many rows?", schema=schema, scope=Scope(thread_id="t"), id="q1")
    assert outcome.tool_result == {"rows": 5}
    assert ui.errors[1] is not None
    assert "rows: 'five' is not of type 'integer'" in ui.errors[1]


def test_gate_with_rich_ui(sqlite_store: Store) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=140, color_system=None, force_terminal=False)
    ui = RichConsoleUI(input=Script(["n", ""]), console=console)
    gate = Gate(sqlite_store, rules=GATE_RULES, ui=ui)
    outcome = gate.review(
        ToolCall(name="delete_rows", args={"table": "users"}, id="c1"), Scope(thread_id="t")
    )
    assert outcome.tool_result == "Tool execution for 'delete_rows' was rejected by the user."
    assert "🔧 Tool Execution Request" in buffer.getvalue()
    assert "Feedback message (optional): " in buffer.getvalue()


def test_gate_ui_is_not_shown_when_no_approval_is_needed(sqlite_store: Store) -> None:
    script = Script([])
    out = io.StringIO()
    gate = Gate(sqlite_store, rules=GATE_RULES, ui=SimpleConsoleUI(input=script, stdout=out))
    outcome = gate.review(ToolCall(name="read_file", args={"path": "x"}, id="c1"), Scope(thread_id="t"))
    assert (outcome.execute, outcome.status) == (True, "not_required")
    assert script.asked == 0
    assert out.getvalue() == ""


def test_gate_prompt_ends_when_decided_elsewhere(sqlite_store: Store) -> None:
    """While the console waits, a decision from another channel ends the prompt."""
    read_fd, write_fd = os.pipe()
    stdin = os.fdopen(read_fd, "r")
    try:
        out = io.StringIO()
        gate = Gate(sqlite_store, rules=GATE_RULES, ui=SimpleConsoleUI(stdin=stdin, stdout=out))
        result: list[Any] = []
        thread = threading.Thread(
            target=lambda: result.append(
                gate.review(ToolCall(name="send_email", args=EMAIL, id="c1"), Scope(thread_id="t"))
            )
        )
        thread.start()
        deadline = time.monotonic() + 10
        while sqlite_store.find_request("t", "c1") is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        request = sqlite_store.find_request("t", "c1")
        assert request is not None
        sqlite_store.decide(request.id, Reject(message="from the inbox"), actor="alice", channel="web")
        thread.join(timeout=10)
        assert not thread.is_alive()
        assert result[0].decision == "reject"
        assert result[0].actor == "alice"
        assert "rejected by alice (web)" in out.getvalue()
    finally:
        stdin.close()
        os.close(write_fd)


def test_hidden_characters_are_shown_as_escapes_with_a_warning(harness: Harness, sqlite_store: Store) -> None:
    args = {"path": "/home/user/\u202etxt.hsab_ekam", "note": "fine\nApproved by admin"}
    request = make_request(sqlite_store, args, tool="write_file")
    assert decide(harness.ui(Script(["y"])), request) == Approve()
    out = harness.output
    assert "\u202e" not in out
    assert "path: /home/user/\\u202etxt.hsab_ekam" in out
    assert "note: fine\\nApproved by admin" in out, "a line break in an argument must not fake a line"
    assert "Hidden characters, shown as escapes: U+202E RIGHT-TO-LEFT OVERRIDE, U+000A LINE FEED" in out


def test_a_question_is_shown_as_a_question_once(harness: Harness, sqlite_store: Store) -> None:
    request, _ = sqlite_store.create_request(
        NewRequest(
            thread_id="console-tests",
            tool_call_id=f"ask-{next(_counter)}",
            tool_name="signoff.ask",
            args={"question": "Deploy to prod?"},
            kind="input",
            description="Deploy to prod?",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(allowed_decisions=("respond", "reject")),
        )
    )
    decide(harness.ui(Script(["yes"])), request)
    out = harness.output
    assert "signoff.ask" not in out
    assert "Question: Deploy to prod?" in out
    assert out.count("Deploy to prod?") == 1
