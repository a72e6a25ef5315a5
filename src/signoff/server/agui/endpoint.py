"""Starting a run from its HTTP request (this module needs the `agui` extra)."""

from __future__ import annotations

from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from fastapi import Request as HttpRequest
from fastapi.responses import StreamingResponse

from ..access import SESSION_COOKIE, Caller
from ..api.bodies import read_body
from ..context import server_of
from .options import options_of
from .run import AguiRun


async def start_run(http: HttpRequest, caller: Caller) -> StreamingResponse:
    """The run's event stream; 422 before it starts for a body that is no RunAgentInput."""
    run_input = await read_body(http, RunAgentInput)
    options = options_of(run_input.forwarded_props)
    credentials = (http.headers.get("authorization"), http.cookies.get(SESSION_COOKIE))
    encoder = EventEncoder(accept=http.headers.get("accept", "text/event-stream"))
    run = AguiRun(server_of(http), caller.user, credentials, run_input, options, encoder=encoder)
    return StreamingResponse(
        run.events(),
        media_type=encoder.get_content_type(),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
