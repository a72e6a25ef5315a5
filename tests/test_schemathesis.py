"""Schemathesis against the live server's own /openapi.json, as an admin and as an agent: no
answer is a 5xx, and every answer (status, content type, body) is one the schema documents.

A real server over HTTP (uvicorn on a loopback port, over a real SQLite file), not the app
in-process: what is checked is what a client gets, after the Door and the error middleware.
The schema is the one that server serves. Each operation gets a bounded, derandomized number
of cases, valid and invalid (schemathesis' positive and negative modes); where a path names a
request or a thread, part of the cases name one that exists, so that the cases reach past the
404 into deciding, editing, cancelling and executing. The inbox's HTML pages and forms are not in
the schema (`include_in_schema=False`), so they are not fuzzed here.

Schemathesis' own pytest loader (`schemathesis.pytest.from_fixture`) does not run on pytest 9
(it sets `Function._nodeid`, which pytest 9 no longer has), so the operations are driven here
with its Python API (`as_strategy`, `call_and_validate`), one subtest per operation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis import APIOperation, Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from signoff.identity import Role
from signoff.store import SQLiteStore

from .live import LiveServer
from .test_api import ask

pytestmark = pytest.mark.slow

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES_PER_OPERATION = 25
"""Per operation and caller, derandomized: the same cases on every run, both callers' runs in
well under a minute on two shared cores."""
NOT_FUZZED = {
    # A live stream that ends only when the client goes away: a case would never get its answer.
    "GET /v1/events",
}
THREAD = "fuzz-thread"
Operation = APIOperation[Any, Any, Any, Any]
_PATH_PARAMETER = re.compile(r"\{(\w+)\}")


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    store = SQLiteStore(Path(tmp_path_factory.mktemp("fuzz")) / "signoff.db")
    with LiveServer(store) as server:
        yield server
    store.close()


def existing_things(server: LiveServer, run: str) -> dict[str, str]:
    """Path parameters naming things that exist: an open request of the agent's that anyone may
    decide (and a drafting one in its thread), the thread, a layer kind."""
    with server.client(server.user("fuzz-agent", "agent")) as agent:
        open_request = ask(agent, thread_id=THREAD, tool_call_id=f"{run}-open", approvers=[])
        drafting = ask(agent, thread_id=THREAD, tool_call_id=f"{run}-drafting", approvers=[], drafting=True)
    assert open_request.status_code == drafting.status_code == 201
    return {"request_id": open_request.json()["id"], "thread_id": THREAD, "kind": "tool"}


def cases_for(operation: Operation, known: dict[str, str]) -> st.SearchStrategy[Case[Any]]:
    named = {name: known[name] for name in _PATH_PARAMETER.findall(operation.path) if name in known}
    extra: dict[str, Any] = {}
    if operation.path.endswith("/wait"):
        extra["query"] = {"timeout": 0}  # an open request: any other timeout is a wait, not a check
    strategies = []
    for mode in GenerationMode:
        strategies.append(operation.as_strategy(generation_mode=mode))
        if named:
            strategies.append(operation.as_strategy(generation_mode=mode, path_parameters=named, **extra))
    return st.one_of(*strategies)


@pytest.mark.parametrize("role", ["admin", "agent"])
def test_every_answer_is_documented(fuzzed_server: LiveServer, role: Role, subtests: pytest.Subtests) -> None:
    bearer = {"Authorization": f"Bearer {fuzzed_server.user(f'fuzz-{role}', role)}"}
    known = existing_things(fuzzed_server, role)
    config = schemathesis.Config.from_dict({"base-url": fuzzed_server.url})
    schema = schemathesis.openapi.from_url(f"{fuzzed_server.url}/openapi.json", config=config)
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            pytest.fail(f"the served schema is invalid: {result.err()}")
        operation = result.ok()
        if operation.label in NOT_FUZZED:
            continue

        @hypothesis.given(case=cases_for(operation, known))
        @hypothesis.settings(
            max_examples=EXAMPLES_PER_OPERATION,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )
        def answers_as_documented(case: Case[Any]) -> None:
            case.call_and_validate(headers=bearer, checks=CHECKS)

        with subtests.test(operation.label):
            answers_as_documented()
