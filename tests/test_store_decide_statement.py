"""PostgreSQL's decision in one statement (store/decide_statement.py).

Every case is decided twice on the same database: through the statement, and through the checked
path alone (read, check, write: what `decide` did before). Both must end alike: the same result or
the same error (type, message, audited), the same audit entries, the same request afterwards.
Successes must take one statement and nothing else; refusals change nothing in it and fall to the
checked path. The audit entry's shown args, written by the database, must be the canonical JSON
Python writes, or the hash chain would not verify.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from signoff import (
    AlreadyDecided,
    Approve,
    Decision,
    Edit,
    Reject,
    RequestNotFound,
    RequestStatus,
    Respond,
    SignoffError,
)
from signoff._util import canonical_json, utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import Store
from signoff.store.decide_statement import RULE_KEYS

pytestmark = pytest.mark.postgres

DEADLINE = utcnow() + timedelta(hours=1)
PAST = utcnow() - timedelta(minutes=5)
SCHEMA = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
ANSWER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
def pg(pg_store: Store) -> Store:
    """A store with a group, and a webhook that wants every event (a decision queues it a row)."""
    pg_store.add_group_member("ops", "olga", actor="admin")
    pg_store.add_webhook("http://127.0.0.1:9/hook", allow_private=True, actor="admin")
    return pg_store


def sql(store: Store, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run a statement on the store's database; its rows as tuples."""
    with store._pool.connection() as connection:  # type: ignore[attr-defined]
        cursor = connection.execute(statement, params)
        return [tuple(row.values()) for row in cursor.fetchall()] if cursor.description else []


@dataclass
class Case:
    """A request made by `make`, then `decide` on it (as `actor`, maybe after `before` ran)."""

    decision: Decision
    actor: str = "alice"
    rule: RequestRule = field(default_factory=lambda: RequestRule(approvers=("alice",)))
    args: dict[str, Any] | None = None
    requester: str | None = None
    deadline: Any = DEADLINE
    drafting: bool = False
    answer_schema: dict[str, Any] | None = None
    on_behalf: bool = False
    before: Callable[[Store, str], None] | None = None
    fast: bool = False
    """Whether the statement alone decides it."""


def decided_first(store: Store, request_id: str) -> None:
    store.decide(request_id, Approve(), actor="alice")


def cancelled(store: Store, request_id: str) -> None:
    store.cancel(request_id, actor="agent", reason="run aborted")


def one_vote(store: Store, request_id: str) -> None:
    store.decide(request_id, Approve(), actor="bob")


def older_rule(requester: str | None) -> Callable[[Store, str], None]:
    """A request stored before rules named the requester: no approvers at all."""

    def before(store: Store, request_id: str) -> None:
        sql(store, "UPDATE requests SET rule = '{}', requester = %s WHERE id = %s", requester, request_id)

    return before


def separation(store: Store, request_id: str) -> None:
    """A rule field the statement does not know (as a new check might add)."""
    sql(
        store,
        "UPDATE requests SET rule = CAST(jsonb_set(CAST(rule AS jsonb), '{separation}', %s) AS json)"
        " WHERE id = %s",
        '"requester"',
        request_id,
    )


CASES: dict[str, Case] = {
    "approve, with a comment": Case(Approve(comment="fine, ça va"), fast=True),
    "reject, with a message": Case(Reject(message="not today"), fast=True),
    "respond, a message and a value": Case(Respond(message="use 3", value={"n": 3}), fast=True),
    "approve, by a group's member": Case(
        Approve(), actor="olga", rule=RequestRule(approvers=("group:ops",)), fast=True
    ),
    "approve, by the requester named by the rule": Case(
        Approve(), actor="carol", rule=RequestRule(), requester="carol", fast=True
    ),
    "approve, on behalf (system)": Case(Approve(), actor="system", on_behalf=True, fast=True),
    "approve, args redacted": Case(
        Approve(),
        rule=RequestRule(approvers=("alice",), redact=("password", "absent")),
        args={"user": "root", "password": "hunter22", "note": "é😀\n"},
        fast=True,
    ),
    "reject, allowed": Case(
        Reject(), rule=RequestRule(approvers=("alice",), allowed_decisions=("reject",)), fast=True
    ),
    "older request, its requester": Case(Approve(), actor="carol", before=older_rule("carol"), fast=True),
    "older request without requester, anyone": Case(
        Approve(), actor="zoe", before=older_rule(None), fast=True
    ),
    "refused: not an approver": Case(Approve(), actor="mallory"),
    "refused: a group's non-member": Case(Approve(), actor="bob", rule=RequestRule(approvers=("group:ops",))),
    "refused: older request, not its requester": Case(Approve(), actor="zoe", before=older_rule("carol")),
    "refused: decided twice": Case(Reject(message="too late"), before=decided_first),
    "refused: past the deadline": Case(Approve(), deadline=PAST),
    "refused: cancelled": Case(Approve(), before=cancelled),
    "refused: still drafting": Case(Approve(), drafting=True),
    "refused: not allowed": Case(
        Respond(message="x"), rule=RequestRule(approvers=("alice",), allowed_decisions=("approve",))
    ),
    "refused: a value JSON cannot hold": Case(Respond(value=float("nan"))),
    "refused: an answer that breaks its schema": Case(Respond(value={"n": "three"}), answer_schema=ANSWER),
    "refused: edited args that break the schema": Case(Edit(args={"to": 3})),
    "refused: respond under a quorum": Case(
        Respond(message="x"), rule=RequestRule(approvers=("alice", "bob"), quorum=2)
    ),
    "refused: voted twice": Case(
        Approve(), actor="bob", rule=RequestRule(approvers=("alice", "bob"), quorum=2), before=one_vote
    ),
    "checked path: a response with an answer schema": Case(Respond(value={"n": 3}), answer_schema=ANSWER),
    "checked path: an edit": Case(Edit(args={"to": "bob@example.com"}, comment="to bob")),
    "checked path: an edit that changes nothing": Case(Edit(args={"to": "alice@example.com"})),
    "checked path: a quorum's last vote": Case(
        Approve(), rule=RequestRule(approvers=("alice", "bob"), quorum=2), before=one_vote
    ),
    "checked path: a rule field it does not know": Case(Approve(), before=separation),
}


def make(store: Store, case: Case, thread: str) -> str:
    request, _ = store.create_request(
        NewRequest(
            thread_id=thread,
            tool_call_id="call",
            tool_name="send_email",
            args=case.args if case.args is not None else {"to": "alice@example.com"},
            args_schema=SCHEMA if case.args is None else None,
            answer_schema=case.answer_schema,
            description="send a mail",
            deadline=case.deadline,
            rule=case.rule,
            requester=case.requester,
            drafting=case.drafting,
        )
    )
    if case.before is not None:
        case.before(store, request.id)
    return request.id


@pytest.fixture
def statements(pg: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The named statements the store runs, in order."""
    from signoff.store.postgres_tx import PostgresReads, PostgresTx

    ran: list[str] = []
    for kind in (PostgresTx, PostgresReads):
        real = kind._execute

        def execute(self: Any, query: str, params: dict[str, Any], real: Any = real) -> Any:
            ran.append(query)
            return real(self, query, params)

        monkeypatch.setattr(kind, "_execute", execute)
    return ran


def outcome(store: Store, request_id: str, case: Case, ran: list[str]) -> dict[str, Any]:
    """What deciding did, with the request's id (and the decision's) left out; `ran` is kept to
    the statements the decision ran."""
    seen = {entry.seq for entry in store.audit_entries(request_id=request_id)}
    ran.clear()
    result: Any = None
    try:
        decided = store.decide(
            request_id, case.decision, actor=case.actor, channel="api", on_behalf=case.on_behalf
        )
        result = request_summary(decided)
    except SignoffError as exc:
        result = (type(exc).__name__, str(exc).replace(request_id, "REQ"), getattr(exc, "audited", False))
    deciding = list(ran)
    store.seal_audit()
    entries = [
        (entry.action, entry.actor, entry.channel, entry.data)
        for entry in store.audit_entries(request_id=request_id)
        if entry.seq not in seen
    ]
    outbox = sql(
        store, "SELECT event, message, channel FROM outbox WHERE request_id = %s ORDER BY id", request_id
    )
    return {
        "result": result,
        "audit": entries,
        "request": request_summary(store.get_request(request_id)),
        "outbox": outbox,
        "ran": deciding,
    }


def request_summary(request: Any) -> dict[str, Any]:
    resolution = {key: value for key, value in (request.resolution or {}).items() if key not in ("id", "at")}
    decision = request.decision
    return {
        "status": request.status,
        "final_args": request.final_args,
        "decision": (decision.decision, decision.actor, decision.channel) if decision else None,
        "resolution": resolution,
        "approvals": request.approvals,
        "decided": request.decided_at is not None,
    }


@pytest.mark.parametrize("name", list(CASES))
def test_the_statement_ends_as_the_checked_path_does(
    pg: Store, statements: list[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    case = CASES[name]
    at_once = outcome(pg, make(pg, case, "at-once"), case, statements)
    with monkeypatch.context() as patch:
        patch.setattr(pg, "_decide_at_once", lambda *args, **kwargs: None)
        checked = outcome(pg, make(pg, case, "checked"), case, statements)
    deciding, checked_ran = at_once.pop("ran"), checked.pop("ran")
    assert at_once == checked
    assert "decide_at_once" not in checked_ran
    assert len(deciding) <= len(checked_ran), (deciding, checked_ran)  # never a round trip more
    if case.fast:
        assert deciding == ["decide_at_once"]
        assert at_once["request"]["status"] is not RequestStatus.PENDING
        assert ("request.decided", "event", "webhook") in at_once["outbox"]
    elif deciding[0] == "decide_at_once":  # the checked path goes on from the row it returned
        assert deciding[1:2] != ["get_request"], deciding
    assert pg.verify_audit().ok


def test_an_unknown_request_is_not_found_whatever_the_decision(pg: Store, statements: list[str]) -> None:
    with pytest.raises(RequestNotFound):
        pg.decide("req_missing", Respond(value=float("nan")), actor="alice")
    with pytest.raises(RequestNotFound):
        pg.decide("req_missing", Approve(), actor="alice")
    assert statements == ["get_request", "decide_at_once"]


def test_a_refusal_changes_nothing_before_the_checked_path_runs(pg: Store) -> None:
    request_id = make(pg, Case(Approve()), "refused")
    [before] = sql(pg, "SELECT row_to_json(r)::text FROM requests r WHERE id = %s", request_id)
    row = pg._fused("decide_at_once", _params(request_id, actor="mallory"))  # type: ignore[attr-defined]
    assert row is not None and row["decided_at_once"] is False and row["status"] == "pending"
    assert sql(pg, "SELECT row_to_json(r)::text FROM requests r WHERE id = %s", request_id) == [before]
    assert sql(
        pg,
        "SELECT count(*) FROM audit_queue WHERE request_id = %s AND action <> 'request.created'",
        request_id,
    ) == [(0,)]


def _params(request_id: str, *, actor: str) -> dict[str, Any]:
    from signoff.store.decide_statement import decide_params

    return decide_params(
        request_id, Approve(), decision_id="dec_x", actor=actor, channel="api", on_behalf=False, now=utcnow()
    )


def test_two_deciders_at_once_one_wins_and_the_other_is_refused(pg: Store) -> None:
    request_id = make(pg, Case(Approve(), rule=RequestRule(approvers=("alice", "bob"))), "race")
    results: dict[str, Any] = {}
    start = threading.Barrier(2)

    def decide(actor: str, decision: Decision) -> None:
        start.wait()
        try:
            results[actor] = pg.decide(request_id, decision, actor=actor).status
        except AlreadyDecided as exc:
            results[actor] = exc

    threads = [
        threading.Thread(target=decide, args=("alice", Approve())),
        threading.Thread(target=decide, args=("bob", Reject())),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [actor for actor, result in results.items() if isinstance(result, AlreadyDecided)]
    assert len(refused) == 1
    pg.seal_audit()
    decided = [
        entry for entry in pg.audit_entries(request_id=request_id) if entry.action == "request.decided"
    ]
    assert len(decided) == 1 and decided[0].actor != refused[0]
    assert pg.verify_audit().ok


TRICKY_ARGS: list[dict[str, Any]] = [
    {},
    {"b": 1, "a": 2, "A": 3, "é": 4, "\uffff": 5, "😀": 6, "a b": 7, "": 8},
    {"text": 'quote " backslash \\ slash / tab \t newline \n cr \r bell \x07 unit \x1f del \x7f'},
    {"text": "é ü 中文 😀 \u2028 \u2029 \ufeff"},
    {"numbers": [0, -0.0, 1.5, -2.25, 1e16, 1.0e-7, 12345678901234567890123, 3.141592653589793, 1e300]},
    {"nested": {"z": [{"b": None, "a": True}, [], {}], "y": False}, "list": [[[["deep"]]]]},
    {"n": None, "t": True, "f": False, "s": "", "e": [], "o": {}},
]


@pytest.mark.parametrize("args", TRICKY_ARGS, ids=range(len(TRICKY_ARGS)))
def test_the_database_writes_canonical_json_as_python_does(pg: Store, args: dict[str, Any]) -> None:
    from psycopg.types.json import Json as PgJson

    stored = json.loads(json.dumps(args))  # what the store writes, read back
    [(text,)] = sql(pg, "SELECT signoff_canonical_json(CAST(%s AS json))", PgJson(args))
    assert text == canonical_json(stored)


@pytest.mark.parametrize("args", TRICKY_ARGS, ids=range(len(TRICKY_ARGS)))
def test_decided_at_once_the_chain_verifies(pg: Store, statements: list[str], args: dict[str, Any]) -> None:
    rule = RequestRule(approvers=("alice",), redact=tuple(sorted(args)[:1]))
    request_id = make(pg, Case(Approve(comment="ok 😀"), rule=rule, args=args), "tricky")
    statements.clear()
    decided = pg.decide(request_id, Approve(comment="ok 😀"), actor="alice")
    assert statements == ["decide_at_once"]
    assert decided.final_args == args
    pg.seal_audit()
    [entry] = pg.audit_entries(request_id=request_id, action="request.decided")
    assert entry.data == {"type": "approve", "original_args": decided.shown_args(), "comment": "ok 😀"}
    assert pg.verify_audit().ok


def test_args_the_database_cannot_read_as_text_take_the_checked_path(
    pg: Store, statements: list[str]
) -> None:
    request_id = make(pg, Case(Approve(), args={"x": "a\x00b"}), "nul")
    statements.clear()
    decided = pg.decide(request_id, Approve(), actor="alice")
    assert decided.status is RequestStatus.APPROVED
    assert statements[0] == "decide_at_once" and "finish_request_audited" in statements
    assert pg.verify_audit().ok


def test_the_rule_fields_it_knows_are_rule_fields() -> None:
    from dataclasses import fields

    assert set(RULE_KEYS) <= {item.name for item in fields(RequestRule)}


def request_scans(plan: dict[str, Any]) -> list[str]:
    """How each step of a plan reads `requests`."""
    found = []
    if plan.get("Relation Name") == "requests" and plan["Node Type"] != "ModifyTable":
        found.append(f"{plan['Node Type']} {plan.get('Index Name', '')}".strip())
    for child in plan.get("Plans", []):
        found.extend(request_scans(child))
    return found


@pytest.mark.parametrize("query", ["decide_at_once", "finish_request_audited"])
def test_a_decision_finds_its_request_by_key_whatever_the_statistics(pg: Store, query: str) -> None:
    """Many pending requests in a table never analysed (as a new database is): the planner would
    rather read the pending ones by deadline, and a prepared statement keeps its plan."""
    from signoff.store.core import AuditNote
    from signoff.store.request_decisions import _decision_audit, _finish_params

    from .test_query_plans import explain_postgres, explain_postgres_generic

    ids = [make(pg, Case(Approve()), f"many-{index}") for index in range(300)]
    request = pg.get_request(ids[0])
    params = _params(request.id, actor="alice")
    if query == "finish_request_audited":
        note = AuditNote("request.decided", "alice", "api", request.id, _decision_audit(request, Approve()))
        params = {**_finish_params(request, Approve(), "dec_x", "alice", "api", utcnow()), **note.params()}
    with pg._read() as tx:
        plans = [explain_postgres(tx, query, params), explain_postgres_generic(tx, query, params)]
    for plan in plans:
        scans = request_scans(plan)
        assert scans and all(scan == "Index Scan requests_pkey" for scan in scans), scans
