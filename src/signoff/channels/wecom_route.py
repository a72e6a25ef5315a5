"""WeCom's callback URL, `/channels/{name}/wecom` (GET and POST).

WeCom does not fit the shared `POST /channels/{name}/callback`: it signs in the query string
(`msg_signature`, `timestamp`, `nonce`), checks the URL with a GET whose answer is the decrypted
`echostr` as plain text, and takes XML (encrypted passive replies) back. So this route hands the
channel the query too and answers text; everything else is the shared route's: the same refusal
audit for a forged callback (401) and the same `act` deciding as the clicking person (only
approvers, the first decision wins).

The server adds it with `add_routes(app, wecom_route.router)`; this module imports no channel
library (it finds WeCom channels by their `takes_query`), so that costs nothing without WeCom.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import PlainTextResponse, Response

from ..errors import NotFound
from ..server.channel_routes import act, callback_channel, verified
from ..server.context import server_of

router = APIRouter(tags=["channels"])


@router.api_route(
    "/channels/{name}/wecom",
    methods=["GET", "POST"],
    include_in_schema=False,
    response_class=PlainTextResponse,
)
async def wecom_callback(name: str, http: HttpRequest) -> Response:
    """A WeCom channel's callback URL (GET: the URL check; POST: card clicks): WeCom's own
    formats, so not in the API's schema (as the shared callback route)."""
    server = server_of(http)
    channel = await callback_channel(server, name)
    if not getattr(channel, "takes_query", False):
        raise NotFound(f"no WeCom channel named {name!r} is configured on this server")
    body = await http.body() if http.method == "POST" else b""
    headers = {key.lower(): value for key, value in http.headers.items()}
    query = dict(http.query_params)
    inbound = await verified(server, channel, lambda: channel.verify(body, headers, query))  # type: ignore[call-arg]
    outcome = None if inbound.kind == "reply" else await server.write(act, server, channel, inbound)
    status, payload = channel.answer(inbound, outcome)
    text = str(payload)
    media = "application/xml" if text.startswith("<xml>") else "text/plain; charset=utf-8"
    return Response(text, status, media_type=media)
