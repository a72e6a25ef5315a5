"""The server's failures as clients see them: a store that cannot write answers JSON 503s (the
same body as every error, on a connection that stays open), a bug answers a JSON 500 logged with
its traceback, a failed group commit fails every caller in it, and `/healthz` writes to tell."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest

from signoff.store import SQLiteStore

from .live import LiveServer
from .test_api import ask
from .test_store_failures import FailsLikeAFullDisk
from .test_store_grouped import status_outside


@pytest.fixture
def agent(sqlite_server: LiveServer) -> Iterator[httpx.Client]:
    with sqlite_server.client(sqlite_server.user("bot", "agent")) as client:
        yield client


@pytest.fixture
def alice(sqlite_server: LiveServer) -> Iterator[httpx.Client]:
    with sqlite_server.client(sqlite_server.user("alice")) as client:
        yield client


def connection_of(response: httpx.Response) -> Any:
    """The client's end of the TCP connection the response came on."""
    return response.extensions["network_stream"].get_extra_info("client_addr")


def error_of(response: httpx.Response) -> tuple[str, str]:
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    return error["type"], error["message"]


def test_a_store_that_cannot_write_answers_json_503s_on_the_same_connection(
    sqlite_store: SQLiteStore, agent: httpx.Client, alice: httpx.Client
) -> None:
    decided = ask(agent, tool_call_id="before").json()["id"]
    sqlite_store._connection.execute("PRAGMA query_only = ON")  # SQLite refuses writes: SQLITE_READONLY
    try:
        answers = [
            ask(agent, tool_call_id="refused"),  # a grouped write
            ask(agent, tool_call_id="refused-again"),
            agent.get("/v1/requests"),  # reads still work
            agent.get("/healthz"),
        ]
        decision = alice.post(f"/v1/requests/{decided}/decision", json={"type": "approve"})
    finally:
        sqlite_store._connection.execute("PRAGMA query_only = OFF")

    created, again, listed, health = answers
    for refused in (created, again, decision):
        assert refused.status_code == 503
        kind, message = error_of(refused)
        assert kind == "StoreUnavailable"
        assert "the database is read-only" in message
    assert listed.status_code == 200 and [item["id"] for item in listed.json()["items"]] == [decided]
    assert health.status_code == 503
    assert health.json()["ok"] is False
    assert health.json()["error"]["type"] == "StoreUnavailable"
    assert "the database is read-only" in health.json()["error"]["message"]
    assert len({connection_of(answer) for answer in answers}) == 1, "an error answer closed the connection"
    assert status_outside(sqlite_store, decided) == "pending"
    assert sqlite_store.find_request("t1", "refused") is None

    assert ask(agent, tool_call_id="refused").status_code == 201  # writable again: no restart
    assert alice.post(f"/v1/requests/{decided}/decision", json={"type": "approve"}).status_code == 200
    assert agent.get("/healthz").json()["ok"] is True
    assert sqlite_store.verify_audit().ok


def test_an_unexpected_error_is_a_json_500_logged_with_its_traceback_on_an_open_connection(
    sqlite_store: SQLiteStore,
    agent: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = agent.get("/healthz")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the listing")

    monkeypatch.setattr(sqlite_store, "list_requests", broken)
    with caplog.at_level(logging.ERROR, logger="signoff.server"):
        failed = agent.get("/v1/requests")
    assert failed.status_code == 500
    assert error_of(failed) == ("InternalError", "the server met an unexpected error; it has been logged")
    logged = [record for record in caplog.records if record.exc_info]
    assert logged and "a bug in the listing" in str(logged[0].exc_info[1])  # type: ignore[index]
    after = agent.get("/healthz")
    assert after.status_code == 200
    assert connection_of(before) == connection_of(failed) == connection_of(after)


def test_a_failed_group_commit_fails_every_caller_in_it_and_nothing_else(
    sqlite_store: SQLiteStore, sqlite_server: LiveServer, agent: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [ask(agent, tool_call_id=f"c{n}").json()["id"] for n in range(24)]
    alice = sqlite_server.user("alice")
    bursts_commit = FailsLikeAFullDisk(  # the grouped writer's next commit, not the sweeper's
        sqlite_store._connection,
        when=lambda sql: sql == "COMMIT" and threading.current_thread().name == "signoff-writer",
    )
    monkeypatch.setattr(sqlite_store, "_connection", bursts_commit)

    async def decide_all() -> list[httpx.Response]:
        headers = {"Authorization": f"Bearer {alice}"}
        async with httpx.AsyncClient(base_url=sqlite_server.url, headers=headers, timeout=30) as client:
            calls = [client.post(f"/v1/requests/{rid}/decision", json={"type": "approve"}) for rid in ids]
            return await asyncio.gather(*calls)

    answers = dict(zip(ids, asyncio.run(decide_all()), strict=True))
    refused = [rid for rid, answer in answers.items() if answer.status_code == 503]
    assert refused, "the failing commit refused nobody"
    for rid, answer in answers.items():
        if answer.status_code == 503:
            assert error_of(answer)[0] == "StoreUnavailable"
            assert "the disk is full" in error_of(answer)[1]
            assert status_outside(sqlite_store, rid) == "pending"
        else:
            assert answer.status_code == 200, answer.text
            assert status_outside(sqlite_store, rid) == "approved"
    with sqlite_server.client(alice) as client:  # asked again, they land
        for rid in refused:
            assert client.post(f"/v1/requests/{rid}/decision", json={"type": "approve"}).status_code == 200
    assert sqlite_store.verify_audit().ok


def test_healthz_makes_a_real_write(sqlite_store: SQLiteStore, agent: httpx.Client) -> None:
    commits = sqlite_store.commits
    first = agent.get("/healthz").json()
    agent.get("/healthz")
    assert first["ok"] is True and first["audit_head"] == sqlite_store.audit_head_seq()
    assert sqlite_store.commits == commits + 2
    with sqlite_store._read() as tx:
        row = tx.one("get_counter", name="health_checks")
    assert row is not None and row["value"] == 2


def test_a_sweeper_that_cannot_use_the_store_says_so_once_not_every_interval(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    from dataclasses import replace

    from signoff.errors import StoreUnavailable
    from signoff.server import ServerSettings

    failing = threading.Event()
    failing.set()
    sweeps = threading.Semaphore(0)
    real_expire_due = sqlite_store.expire_due

    def expire_due(**kwargs: Any) -> Any:
        sweeps.release()
        if failing.is_set():
            raise StoreUnavailable("the database file is read-only")
        return real_expire_due(**kwargs)

    sqlite_store.expire_due = expire_due  # type: ignore[method-assign]
    caplog.set_level(logging.WARNING, logger="signoff.server")
    with LiveServer(sqlite_store, replace(ServerSettings(), sweep_interval=0.01)):
        for _ in range(20):
            assert sweeps.acquire(timeout=10)
        failing.clear()
        for _ in range(5):
            assert sweeps.acquire(timeout=10)
    said = [record.getMessage() for record in caplog.records if "sweep" in record.getMessage()]
    assert said[:2] == [
        "the sweep cannot use the store (the database file is read-only); trying again until it can",
        "the sweep can use the store again",
    ]
    assert len(said) == 2
    assert not any(record.exc_info for record in caplog.records if "sweep" in record.getMessage())


def test_the_schema_documents_every_error_answer_with_the_body_the_server_gives(
    sqlite_server: LiveServer, agent: httpx.Client
) -> None:
    spec = httpx.get(f"{sqlite_server.url}/openapi.json").json()
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, operations in spec["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            for status in ("401", "403", "404", "409", "413", "422", "503"):
                answer = operation["responses"].get(status)
                assert answer is not None, f"{method.upper()} {path} does not document {status}"
                assert answer["content"] == {"application/json": {"schema": error_ref}}, (method, path)
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    decision = spec["paths"]["/v1/requests/{request_id}/decision"]["post"]["responses"]
    assert decision["410"]["content"]["application/json"]["schema"] == error_ref
    assert "200" in spec["paths"]["/v1/requests"]["post"]["responses"]  # get-or-create: the one before
    for path, media_types in (
        ("/v1/events", ["text/event-stream"]),
        ("/v1/audit/export", ["application/x-ndjson", "text/csv"]),
    ):
        assert list(spec["paths"][path]["get"]["responses"]["200"]["content"]) == media_types

    validator = jsonschema.Draft202012Validator({**error_ref, "components": spec["components"]})
    invalid = agent.get("/v1/requests", params={"limit": "many"})
    assert invalid.status_code == 422
    unknown = agent.get("/v1/requests/req_nope")
    assert unknown.status_code == 404
    for answer in (invalid, unknown):
        validator.validate(answer.json())


OPEN_BY_NATURE = {
    # A layer entry is the rule settings an admin wrote: any of the layer's keys, none required.
    "GET /v1/rules/{kind}/{name}",
    "PUT /v1/rules/{kind}/{name}",
    "PATCH /v1/rules/{kind}/{name}",
    # Group name -> its members: the keys are the groups.
    "GET /v1/groups",
}


def _shapes(schema: dict[str, Any], components: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The object schemas a JSON answer may be: through $ref, nullable or alternative shapes, arrays."""
    if "$ref" in schema:
        yield from _shapes(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    elif "anyOf" in schema:
        for alternative in schema["anyOf"]:
            if alternative != {"type": "null"}:
                yield from _shapes(alternative, components)
    elif schema.get("type") == "array":
        yield from _shapes(schema["items"], components)
    else:
        yield schema


def test_the_schema_documents_every_success_body_with_its_keys(
    sqlite_server: LiveServer, agent: httpx.Client
) -> None:
    spec = httpx.get(f"{sqlite_server.url}/openapi.json").json()
    components = spec["components"]["schemas"]
    checked = 0
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            label = f"{method.upper()} {path}"
            if not path.startswith("/v1/") or label in OPEN_BY_NATURE:
                continue
            for status, answer in operation["responses"].items():
                content = answer.get("content", {})
                if not status.startswith("2") or "application/json" not in content:
                    continue
                for shape in _shapes(content["application/json"]["schema"], components):
                    assert shape.get("type") == "object" and shape.get("properties"), (label, status, shape)
                    assert shape.get("required"), (label, status, "no required keys")
                    assert set(shape["required"]) <= set(shape["properties"]), (label, status)
                checked += 1
    assert checked >= 35

    created = ask(agent, tool_call_id="shaped")
    assert created.status_code == 201
    request_id = created.json()["id"]
    for answer, schema in (
        (created, spec["paths"]["/v1/requests"]["post"]["responses"]["201"]),
        (
            agent.get(f"/v1/requests/{request_id}"),
            spec["paths"]["/v1/requests/{request_id}"]["get"]["responses"]["200"],
        ),
        (agent.get("/v1/requests"), spec["paths"]["/v1/requests"]["get"]["responses"]["200"]),
    ):
        assert answer.status_code == 200 or answer is created
        document = {**schema["content"]["application/json"]["schema"], "components": spec["components"]}
        jsonschema.Draft202012Validator(document).validate(answer.json())
    assert created.json()["record"]["tool_name"] == "send_email"  # the asking agent's own record, documented
    view = components["RequestView"]
    assert "record" in view["properties"] and "record" not in view["required"]
    assert components["RequestStatus"]["enum"] == [
        "drafting",
        "pending",
        "approved",
        "edited",
        "rejected",
        "responded",
        "expired",
        "cancelled",
    ]
