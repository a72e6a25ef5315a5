"""The endpoints called straight from their routes (`server.routing.direct`: POST /v1/requests
and POST /v1/requests/{id}/decision) answer as FastAPI's handler did: the route still checks the
method, the path parameter arrives decoded, errors reach the app's handlers, and /openapi.json
still documents the body and the header."""

from __future__ import annotations

import httpx

from signoff.server.api import requests as request_routes
from signoff.server.routing import DIRECT

from .live import LiveServer


def test_the_hot_endpoints_are_direct() -> None:
    assert getattr(request_routes.decide, DIRECT, False)
    assert getattr(request_routes.create_request, DIRECT, False)


def test_a_direct_route_still_checks_the_method(sqlite_server: LiveServer) -> None:
    with sqlite_server.client(sqlite_server.user("alice")) as alice:
        response = alice.put("/v1/requests/r_1/decision", json={"type": "approve"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def test_the_path_parameter_arrives_decoded(sqlite_server: LiveServer) -> None:
    with sqlite_server.client(sqlite_server.user("alice")) as alice:
        response = alice.post("/v1/requests/no%20such/decision", json={"type": "approve"})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "RequestNotFound"
    assert "no such" in response.json()["error"]["message"]


def test_errors_of_a_direct_endpoint_reach_the_handlers(sqlite_server: LiveServer) -> None:
    with httpx.Client(base_url=sqlite_server.url, timeout=10) as anonymous:
        unauthenticated = anonymous.post("/v1/requests/r_1/decision", json={"type": "approve"})
    assert unauthenticated.status_code == 401
    assert unauthenticated.headers["www-authenticate"] == "Bearer"
    with sqlite_server.client(sqlite_server.user("alice")) as alice:
        malformed = alice.post("/v1/requests/r_1/decision", json={"type": 5})
        person_asking = alice.post("/v1/requests", json={"thread_id": "t", "tool_call_id": "c", "tool": "x"})
    assert malformed.status_code == 422
    assert malformed.json()["error"]["type"] == "InvalidInput"
    assert person_asking.status_code == 403
    assert person_asking.json()["error"]["type"] == "PermissionDenied"


def test_openapi_still_documents_the_direct_endpoints(sqlite_server: LiveServer) -> None:
    with httpx.Client(base_url=sqlite_server.url, timeout=10) as anonymous:
        paths = anonymous.get("/openapi.json").json()["paths"]
    for path in ("/v1/requests", "/v1/requests/{request_id}/decision"):
        post = paths[path]["post"]
        assert "application/json" in post["requestBody"]["content"]
        assert "Idempotency-Key" in [parameter["name"] for parameter in post["parameters"]]
    decide_parameters = paths["/v1/requests/{request_id}/decision"]["post"]["parameters"]
    assert {"name": "request_id", "in": "path"}.items() <= decide_parameters[0].items()
