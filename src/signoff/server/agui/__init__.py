"""`POST /agui`: signoff's requests for any AG-UI front end (CopilotKit, `@ag-ui/client`).

A person's run streams the requests they may decide as tool calls and finishes with an
interrupt per request; the next run's `resume` entries or tool messages decide them (see
`run`, `answers`, `ids`). People only: an agent's token is refused (403), as everywhere a
decision is made. The endpoint needs the `agui` extra (`ag-ui-protocol`); without it the server
still starts and `/agui` answers 501 saying what to install. This module never imports it.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ...errors import PermissionDenied
from ..access import authenticate
from ..errors import API_ERRORS, error_body

MISSING_EXTRA = "the AG-UI endpoint needs the agui extra: pip install 'signoff[agui]'"

router = APIRouter(tags=["agui"])


@router.post(
    "/agui",
    summary="AG-UI run: your pending requests as tool calls and interrupts; answers decide them",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The run's AG-UI events (Server-Sent Events)",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **API_ERRORS,
        501: {"description": "The server was installed without the `agui` extra"},
    },
)
async def agui(http: HttpRequest) -> Response:
    """The body is an AG-UI `RunAgentInput`. Answers (`resume` entries, tool messages) are
    decided first and answered with TOOL_CALL_RESULT; a malformed one ends the run with
    RUN_ERROR and decides nothing. `forwardedProps.signoff` may set `wait`, `draft_wait` and
    `outcome` (see the README)."""
    caller = await authenticate(http)
    if caller.user.is_agent:
        raise PermissionDenied(
            f"{caller.user.name} is an agent; only people decide, so only people run /agui"
        )
    try:
        from .endpoint import start_run
    except ImportError:
        return JSONResponse(error_body("NotImplemented", MISSING_EXTRA), 501)
    return await start_run(http, caller)
