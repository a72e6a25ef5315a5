"""Card texts a person can act on: a call whose description says only "Tool execution requires
approval" is shown as a line made from its tool, its (redacted) args and the tool's JSON Schema,
on every card people read (the inbox, the request page, chat notices, mail), while the request's
own `description`, what the framework adapters show the model, stays as its template wrote it.
The request page shows the tool's result whole and redacted, as the follow-up shows it cut."""

from __future__ import annotations

from datetime import timedelta

from signoff import Approve, Scope, ToolCall
from signoff._util import utcnow
from signoff.asking import request_for_call
from signoff.channels import build_notice
from signoff.channels.email_render import Sender, notice_mail
from signoff.presentation.cards import Card
from signoff.requests import NewRequest
from signoff.rules.effective import DEFAULT_DESCRIPTION_PREFIX, RequestRule, Rule, RuleOrigin
from signoff.store import Store
from signoff.summary import SUMMARY_ARGS, VALUE_CHARS, call_summary
from tests.helpers import decided_digest

from .live import LiveServer

SCHEMA = {
    "type": "object",
    "properties": {
        "body": {"type": "string"},
        "subject": {"type": "string"},
        "to": {"type": "string", "format": "email"},
        "priority": {"enum": ["low", "normal", "high"], "default": "normal"},
        "cc": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["to", "subject"],
}
ARGS = {
    "body": "Numbers attached.",
    "subject": "Q3",
    "to": "all-staff@example.com",
    "priority": "normal",
    "cc": [],
}


def test_required_args_first_then_the_schemas_order_leaving_out_what_says_nothing() -> None:
    assert call_summary("send_email", ARGS, SCHEMA) == (
        "send_email to all-staff@example.com subject 'Q3' body 'Numbers attached.'"
    )
    # without a schema: the args' own order; addresses and paths bare, words quoted
    assert call_summary("copy", {"src": "/etc/passwd", "url": "https://x.example/a", "mode": "fast"}) == (
        "copy src /etc/passwd url https://x.example/a mode 'fast'"
    )
    assert call_summary("send_email", {**ARGS, "priority": "high"}, SCHEMA).endswith("priority high")
    assert call_summary("ping", {}) == "ping"


def test_values_are_one_line_cut_escaped_and_counted_when_too_many() -> None:
    many = {f"arg{n}": n for n in range(SUMMARY_ARGS + 3)}
    assert call_summary("f", many) == "f arg0 0 arg1 1 arg2 2 arg3 3 (+3 more)"
    long = call_summary("write", {"text": "x" * 500})
    assert long == f"write text '{'x' * (VALUE_CHARS - 1)}…'"
    hidden = call_summary("rm", {"path": "/home/u/\u202etxt.hsab", "note": "a\nb"})
    assert hidden == "rm path /home/u/\\u202etxt.hsab note 'a\\nb'"
    assert call_summary(
        "deploy", {"services": ["api", "web"], "replicas": 3, "force": True, "env": {"a": 1}}
    ) == ('deploy services api, web replicas 3 force true env {"a": 1}')


def new_request(**fields: object) -> NewRequest:
    values: dict[str, object] = {
        "thread_id": "t",
        "tool_call_id": "c1",
        "tool_name": "send_email",
        "args": {"to": "all-staff@example.com", "subject": "Q3", "password": "hunter2"},
        "args_schema": SCHEMA,
        "description": "",
        "deadline": utcnow() + timedelta(hours=1),
        "rule": RequestRule(redact=("password",)),
    }
    values.update(fields)
    call = ToolCall(name=str(values["tool_name"]), id="c1", args=dict(values["args"]))  # type: ignore[call-overload]
    if not values["description"]:
        rule = Rule(ask=True, redact=("password",))
        values["description"] = request_for_call(
            call, Scope(thread_id="t"), rule, RuleOrigin(source="code")
        ).description
    return NewRequest(**values)  # type: ignore[arg-type]


def test_the_card_shows_the_summary_where_the_description_says_nothing(sqlite_store: Store) -> None:
    request, _ = sqlite_store.create_request(new_request())
    assert request.description.startswith(DEFAULT_DESCRIPTION_PREFIX + "\n\nTool: send_email")
    card = Card(request=request)
    assert card.description_text == "send_email to all-staff@example.com subject 'Q3' password ***"
    notice = build_notice(request, approver="alice", link=None, request_url="http://x/requests/1")
    assert notice.description == card.description_text
    mail = notice_mail(notice, Sender("approvals@example.com", "example.com"), "alice@example.com")
    plain = mail.get_body(("plain",))
    assert plain is not None and card.description_text in plain.get_content()
    assert "hunter2" not in mail.as_string()


def test_an_agents_own_prefix_stays_above_the_summary_and_a_written_description_wins(
    sqlite_store: Store,
) -> None:
    prefixed, _ = sqlite_store.create_request(
        new_request(
            tool_call_id="c2",
            description="Mail going out\n\nTool: send_email\nArgs: "
            '{"to": "all-staff@example.com", "subject": "Q3", "password": "***"}',
            rule=RequestRule(redact=("password",), description_prefix="Mail going out"),
        )
    )
    assert Card(request=prefixed).description_text == (
        "Mail going out\nsend_email to all-staff@example.com subject 'Q3' password ***"
    )
    written, _ = sqlite_store.create_request(
        new_request(tool_call_id="c3", description="Send the Q3 numbers to everyone")
    )
    assert Card(request=written).description_text == "Send the Q3 numbers to everyone"
    question, _ = sqlite_store.create_request(
        new_request(
            tool_call_id="c4", kind="input", description="Which account?", args={"question": "Which account?"}
        )
    )
    assert Card(request=question).description_text == "Which account?"


def test_the_inbox_and_request_page_show_it_and_the_result_redacted(sqlite_server: LiveServer) -> None:
    store = sqlite_server.store
    request, _ = store.create_request(new_request())
    with sqlite_server.client(sqlite_server.user("alice", "admin")) as alice:
        page = alice.get("/")
        assert "send_email to all-staff@example.com subject &#39;Q3&#39; password ***" in page.text
        assert "Tool execution requires approval" not in page.text
        store.decide(request.id, Approve(), actor="alice")
        claim = store.claim_execution(
            request.id, args_digest=decided_digest(store, request.id), lease=timedelta(minutes=1)
        )
        assert claim is not None
        store.finish_execution(
            request.id,
            claim.token,
            succeeded=True,
            result={"sent": 3, "password": "hunter2", "log": "as hunter2"},
        )
        shown = alice.get(f"/requests/{request.id}")
        assert shown.status_code == 200
        assert "&#34;password&#34;: &#34;***&#34;" in shown.text and "as ***" in shown.text
        assert "hunter2" not in shown.text
        # the API's own view of the request keeps the template's words
        assert alice.get(f"/v1/requests/{request.id}").json()["description"] == request.description
