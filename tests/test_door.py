"""What is let in at the server's door (issue 8, items 9, 12 and 13): bodies over the limit get
413, JSON signoff cannot store (NaN, Infinity, 1e400, nesting thousands deep) gets 422, numbers
too large for a timedelta, a datetime or a database integer get 422; nothing is stored."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.requests import RequestStatus
from signoff.server import ServerSettings
from signoff.server.limits import parse_size
from signoff.server.serve import login_link
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .test_inbox import sign_in
from .test_serve import serving

REQUEST: dict[str, Any] = {
    "thread_id": "t1",
    "tool_call_id": "call-1",
    "tool": "send_email",
    "args": {"to": "bob@example.com"},
}
MiB = 1024 * 1024


@pytest.fixture
def agent(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client(live_server.user("bot", "agent")) as client:
        yield client


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client(live_server.user("root", "admin")) as client:
        yield client


def error_of(response: httpx.Response) -> tuple[str, str]:
    error = response.json()["error"]
    return error["type"], error["message"]


def raw_json(client: httpx.Client, method: str, path: str, text: str | bytes) -> httpx.Response:
    content = text.encode() if isinstance(text, str) else text
    return client.request(method, path, content=content, headers={"Content-Type": "application/json"})


def request_text(args: str) -> str:
    """A create body whose args are `args`, written as JSON text (so that NaN stays NaN)."""
    return '{"thread_id": "t1", "tool_call_id": "call-1", "tool": "send_email", "args": ' + args + "}"


# -- item 9: body size -----------------------------------------------------------------------------


def test_a_body_over_the_limit_gets_413_and_nothing_is_stored(agent: httpx.Client, store: Store) -> None:
    big = {**REQUEST, "args": {"blob": "x" * (2 * MiB)}}
    response = agent.post("/v1/requests", json=big)
    assert response.status_code == 413
    kind, message = error_of(response)
    assert kind == "PayloadTooLarge"
    assert "1 MiB" in message and "--max-body" in message
    assert store.list_requests() == []


def test_a_declared_50_mb_body_is_refused_before_it_is_read(live_server: LiveServer, store: Store) -> None:
    token = live_server.user("bot", "agent")
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=10) as sock:
        head = (
            f"POST /v1/requests HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {50 * MiB}\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"args": {"blob": "' + b"x" * 1000)  # the other 50 MB never come
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert b" 413 " in status_line
    assert json.loads(rest.partition(b"\r\n\r\n")[2])["error"]["type"] == "PayloadTooLarge"
    assert store.list_requests() == []


def test_a_streamed_body_is_counted_as_it_arrives(agent: httpx.Client, store: Store) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer encoding
        yield b'{"thread_id": "t1", "tool_call_id": "c", "tool": "t", "args": {"blob": "'
        for _ in range(200):
            yield b"x" * 10_000
        yield b'"}}'

    response = agent.post("/v1/requests", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert store.list_requests() == []


def test_form_posts_have_the_same_limit(live_server: LiveServer, agent: httpx.Client, store: Store) -> None:
    request_id = agent.post("/v1/requests", json=REQUEST).json()["id"]
    live_server.user("alice")
    link = login_link(store, live_server.settings, "alice")
    with live_server.client() as browser:
        assert sign_in(browser, live_server, link).status_code == 303
        declared = browser.post(
            f"/inbox/cards/{request_id}/decide", data={"type": "reject", "message": "x" * 2 * MiB}
        )
        assert declared.status_code == 413

        def form() -> Iterator[bytes]:  # streamed: the form parser reads it until the limit
            yield b"type=reject&message="
            for _ in range(200):
                yield b"x" * 10_000

        streamed = browser.post(
            f"/inbox/cards/{request_id}/decide",
            content=form(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    assert streamed.status_code == 413
    assert error_of(streamed)[0] == "PayloadTooLarge"
    assert store.get_request(request_id).status is RequestStatus.PENDING


def test_the_limit_is_configurable(store: Store) -> None:
    settings = ServerSettings(sweep_interval=0.2, max_body=2000)
    with LiveServer(store, settings) as server, server.client(server.user("bot", "agent")) as agent:
        small = agent.post("/v1/requests", json={**REQUEST, "args": {"note": "x" * 1000}})
        assert small.status_code == 201
        large = agent.post("/v1/requests", json={**REQUEST, "tool_call_id": "c2", "args": {"n": "x" * 3000}})
        assert large.status_code == 413
        assert "2,000 bytes" in error_of(large)[1]


# -- item 12: non-finite numbers -----------------------------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_non_finite_numbers_are_refused_at_the_door(agent: httpx.Client, store: Store, number: str) -> None:
    body = request_text('{"to": "bob@example.com", "amounts": [1, ' + number + "]}")
    created = raw_json(agent, "POST", "/v1/requests", body)
    assert created.status_code == 422
    kind, message = error_of(created)
    assert kind == "InvalidInput"
    assert message.startswith("body.args.amounts[1]: ")
    retried = raw_json(agent, "POST", "/v1/requests", body)  # the same body again: the same answer
    assert retried.status_code == 422
    assert store.list_requests() == []


def test_a_decision_with_a_non_finite_number_is_refused_and_changes_nothing(
    live_server: LiveServer, agent: httpx.Client, store: Store
) -> None:
    request_id = agent.post("/v1/requests", json=REQUEST).json()["id"]
    with live_server.client(live_server.user("alice")) as alice:
        for body in (
            '{"type": "edit", "args": {"to": NaN}}',
            '{"type": "respond", "message": "x", "value": 1e999}',
        ):
            refused = raw_json(alice, "POST", f"/v1/requests/{request_id}/decision", body)
            assert refused.status_code == 422, body
        assert store.get_request(request_id).status is RequestStatus.PENDING
        assert alice.get(f"/v1/requests/{request_id}").status_code == 200


def test_bodies_that_fastapi_parses_are_checked_too(
    agent: httpx.Client, admin: httpx.Client, store: Store
) -> None:
    token = raw_json(agent, "POST", "/v1/tokens", '{"label": "x", "expires_in": Infinity}')
    assert token.status_code == 422
    assert "expires_in" in error_of(token)[1]
    rules = raw_json(admin, "PUT", "/v1/rules/tool/send_email", '{"requires_approval": true, "x": NaN}')
    assert rules.status_code == 422
    assert store.get_layer("tool", "send_email") is None


def test_json_nested_thousands_deep_is_refused(
    agent: httpx.Client, admin: httpx.Client, store: Store
) -> None:
    deep = "[" * 5000 + "]" * 5000
    created = raw_json(agent, "POST", "/v1/requests", request_text('{"x": ' + deep + "}"))
    assert created.status_code == 422
    assert "nested more than 100 levels deep" in error_of(created)[1]
    rules = raw_json(admin, "PUT", "/v1/rules", '{"defaults": ' + "[" * 150 + "]" * 150 + "}")
    assert rules.status_code == 422
    assert "nested more than 100 levels deep" in error_of(rules)[1]
    assert store.list_requests() == []


def test_malformed_json_is_still_a_clear_422(agent: httpx.Client) -> None:
    response = raw_json(agent, "POST", "/v1/requests", '{"thread_id": ')
    assert response.status_code == 422
    assert error_of(response)[1].startswith("malformed JSON body")


# -- item 13: overflows ----------------------------------------------------------------------------


@pytest.mark.parametrize("deadline", ["1e308", '"99999999999d"', "1e20"])
def test_a_deadline_no_datetime_can_hold_gets_422(agent: httpx.Client, store: Store, deadline: str) -> None:
    body = request_text("{}")[:-1] + ', "deadline": ' + deadline + "}"
    response = raw_json(agent, "POST", "/v1/requests", body)
    assert response.status_code == 422
    assert "deadline: a duration can be at most 365,000 days" in error_of(response)[1]
    assert store.list_requests() == []


def test_an_infinite_deadline_gets_422(agent: httpx.Client) -> None:
    response = raw_json(agent, "POST", "/v1/requests", request_text("{}")[:-1] + ', "deadline": Infinity}')
    assert response.status_code == 422
    assert "body.deadline" in error_of(response)[1]


def test_a_token_lifetime_no_datetime_can_hold_gets_422(agent: httpx.Client, store: Store) -> None:
    response = agent.post("/v1/tokens", json={"label": "forever", "expires_in": "3000000d"})
    assert response.status_code == 422
    assert "expires_in: a duration can be at most" in error_of(response)[1]
    assert [token.label for token in store.list_credentials("token", "bot")] == [None]


@pytest.mark.parametrize(
    "path", ["/v1/audit?after=9223372036854775808", "/v1/events?after=9223372036854775808"]
)
def test_integer_parameters_past_64_bits_get_422(admin: httpx.Client, path: str) -> None:
    response = admin.get(path)
    assert response.status_code == 422
    assert "after" in error_of(response)[1]


def test_a_last_event_id_past_64_bits_starts_the_stream_from_now(admin: httpx.Client) -> None:
    headers = {"Last-Event-ID": str(2**63), "Accept": "text/event-stream"}
    with admin.stream("GET", "/v1/events", headers=headers) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        opening = [next(lines) for _ in range(4)]
    assert any(line.startswith("id: ") for line in opening), opening


def test_explain_args_nested_5000_deep_get_422(agent: httpx.Client) -> None:
    response = agent.get("/v1/explain", params={"tool": "send_email", "args": "[" * 5000 + "]" * 5000})
    assert response.status_code == 422
    assert "args is nested more than 100 levels deep" in error_of(response)[1]
    nan = agent.get("/v1/explain", params={"tool": "send_email", "args": '{"x": NaN}'})
    assert nan.status_code == 422
    assert error_of(nan)[1].startswith("args.x: NaN")


# -- signoff serve --max-body --------------------------------------------------------------------


@pytest.mark.slow
def test_serve_takes_the_limit_from_max_body(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    store = SQLiteStore(db)
    store.add_user("bot", role="agent", actor="test")
    token, _ = store.issue_credential("token", "bot", actor="test")
    store.close()
    with serving(db, "--max-body", "2KiB") as (url, _), httpx.Client(base_url=url, timeout=30) as client:
        headers = {"Authorization": f"Bearer {token}"}
        large = client.post("/v1/requests", json={**REQUEST, "args": {"n": "x" * 3000}}, headers=headers)
        assert large.status_code == 413
        assert "2 KiB" in error_of(large)[1]
        assert client.post("/v1/requests", json=REQUEST, headers=headers).status_code == 201


def test_serve_refuses_a_max_body_that_is_not_a_size(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    result = subprocess.run(
        [sys.executable, "-m", "signoff.cli", "serve", "--db", f"sqlite:///{db}", "--max-body", "lots"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 2
    assert "not a size: 'lots'" in result.stderr
    assert not db.exists()


@pytest.mark.parametrize(
    ("text", "size"), [("1048576", MiB), ("512KiB", 512 * 1024), ("1MiB", MiB), ("2m", 2 * MiB)]
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_a_request_stored_with_nan_before_the_fix_can_still_be_answered(sqlite_store: SQLiteStore) -> None:
    """No answer fails after its commit: rows an older signoff wrote with NaN are sent as null; an
    approval, whose final args would keep the NaN, is refused before anything is committed."""
    with LiveServer(sqlite_store) as server, server.client(server.user("bot", "agent")) as agent:
        request_id = agent.post("/v1/requests", json=REQUEST).json()["id"]
        sqlite_store._connection.execute(
            "UPDATE requests SET args = ? WHERE id = ?", ('{"x": NaN, "y": [Infinity]}', request_id)
        )
        assert agent.get(f"/v1/requests/{request_id}").json()["args"] == {"x": None, "y": [None]}
        with server.client(server.user("alice")) as alice:
            path = f"/v1/requests/{request_id}/decision"
            approved = alice.post(path, json={"type": "approve"})
            assert approved.status_code == 422
            assert sqlite_store.get_request(request_id).status is RequestStatus.PENDING
            rejected = alice.post(path, json={"type": "reject", "message": "no"})
        assert rejected.status_code == 200
        assert rejected.json()["status"] == "rejected"
        assert rejected.json()["args"] == {"x": None, "y": [None]}
